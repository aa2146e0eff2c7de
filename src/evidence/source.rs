//! What a source tree declares about the members of some structs: where
//! each is declared, the context-analysis annotations on the members (`__guarded_by(&lock)`,
//! `__pt_guarded_by`, Linux 7.0 and later), and in the functions, every
//! write to a member with how it is made (an assignment, `WRITE_ONCE`, an
//! atomic or a bit operation, a release store) and the locks held there
//! (taken before it in the function, `lockdep_assert_held`, `guard()`, or
//! through a header's wrapper such as `mmap_write_lock(mm)`), and every
//! member taken as a lock.
//!
//! Function bodies are read with tree-sitter's C grammar, which is
//! tolerant of the kernel's macros; the member annotations with the
//! scanner of [`crate::csource`] (tree-sitter reads a macro after a
//! member's name as a function declarator). A member access is resolved
//! through the function's declared variables and the build's own types
//! (`lruvec->lrugen.max_seq` is `lru_gen_folio.max_seq`): no preprocessor,
//! so a write through a macro that hides the member is not seen.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use tree_sitter::{Node, Parser};

use super::callers::Call;
use crate::error::{Error, Result};

/// Files read at most: a kernel tree has about 60,000 C files and headers.
const MAX_FILES: usize = 200_000;

/// Rounds of reading the headers for lock wrappers: a wrapper of a
/// wrapper (`rq_lock` of `raw_spin_rq_lock`) is found in the second.
const WRAPPER_ROUNDS: usize = 2;

/// What a call of a lock wrapper does: takes or releases the lock that
/// is member `member` of its argument `param` (`mmap_write_lock(mm)`
/// takes `&mm->mmap_lock`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Effect {
    param: usize,
    member: String,
    release: bool,
    /// Taken shared (see [`Held::shared`]).
    shared: bool,
}

/// The lock wrappers of a tree's headers, by name: functions whose body
/// takes (and does not release), asserts or releases a lock that is a
/// member of one of their parameters. A name defined twice with different
/// effects is no wrapper.
#[derive(Clone, Debug, Default)]
pub(crate) struct Wrappers {
    known: HashMap<String, Vec<Effect>>,
    ambiguous: HashSet<String>,
}

impl Wrappers {
    /// Adds wrapper `name` with `effects`: a name seen before with other
    /// effects is no wrapper.
    fn add(&mut self, name: String, effects: Vec<Effect>) {
        if self.ambiguous.contains(&name) {
            return;
        }
        match self.known.get(&name) {
            Some(known) if *known != effects => {
                self.known.remove(&name);
                self.ambiguous.insert(name);
            }
            Some(_) => {}
            None => {
                self.known.insert(name, effects);
            }
        }
    }

    /// Adds the wrappers `other` found.
    fn merge(mut self, other: Wrappers) -> Wrappers {
        for name in other.ambiguous {
            self.known.remove(&name);
            self.ambiguous.insert(name);
        }
        for (name, effects) in other.known {
            self.add(name, effects);
        }
        self
    }

    fn get(&self, name: &str) -> Option<&Vec<Effect>> {
        self.known.get(name)
    }
}

/// How a member is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Write {
    /// `x->f = v`, `x->f += v`, `x->f++`.
    Assign,
    /// `WRITE_ONCE(x->f, v)`: a plain store others read locklessly.
    Once,
    /// `smp_store_release(&x->f, v)`, `rcu_assign_pointer(x->f, v)`: a
    /// release store, by name.
    Release(String),
    /// A write inside `data_race(...)`: racy on purpose, lockless.
    DataRace,
    /// An atomic or bit operation on it (`atomic_long_add`, `set_bit`,
    /// `xchg`), by name.
    Atomic(String),
}

impl Write {
    /// True for a write many CPUs may make at once.
    pub fn lockless(&self) -> bool {
        matches!(self, Write::Atomic(_) | Write::DataRace)
    }

    /// How the source writes it, in words.
    pub fn describe(&self) -> String {
        match self {
            Write::Assign => "assigned".into(),
            Write::Once => "WRITE_ONCE".into(),
            Write::Release(name) => name.clone(),
            Write::DataRace => "written in data_race()".into(),
            Write::Atomic(name) => format!("{name}()"),
        }
    }
}

/// A lock held at a point of a function: the struct it is a member of and
/// its path there (`lruvec`, `lru_lock`), or, for a lock that is no member
/// of a known struct (a global, a pointer's target), only its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held {
    /// The lock's struct and path in it, when resolved.
    pub member: Option<(String, String)>,
    /// The expression as written (`&lruvec->lru_lock`).
    pub text: String,
    /// How it is held (`spin_lock_irq`, `lockdep_assert_held`).
    pub how: String,
    /// Held shared (`down_read`, `read_lock`, `mmap_read_lock`): other
    /// holders run at the same time, so it serialises no writer.
    pub shared: bool,
}

impl Held {
    /// How it was taken, in words: the call (`spin_lock_irq()`), or what
    /// says it is held (`spin_lock_irq() in every caller of f, 2 calls
    /// seen`).
    pub fn taken(&self) -> String {
        match self
            .how
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            true => format!("{}()", self.how),
            false => self.how.clone(),
        }
    }
}

/// One thing the source says of a member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Said {
    /// `__guarded_by(EXPR)` (or `__pt_guarded_by`) on its declaration.
    GuardedBy {
        /// The lock expressions, as written.
        locks: Vec<String>,
        /// `__pt_guarded_by`: what it points to is guarded, not itself.
        pointee: bool,
    },
    /// Written in a function, with these locks held.
    Written(Write, Vec<Held>),
    /// Taken as a lock (`spin_lock(&x->f)`).
    Locked(String),
    /// Declared here, in its struct's body.
    Member,
    /// A per-CPU pointer, its data reached with `this_cpu_*` or
    /// `per_cpu_ptr` (by name).
    PerCpu(String),
}

/// A declaration in the source about member `path` of struct `ty`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declaration {
    /// The struct (its tag or typedef name).
    pub ty: String,
    /// The member's path in it (`evicted`, `lrugen.max_seq`).
    pub path: String,
    /// What is said.
    pub said: Said,
    /// The function saying it (none for a member annotation).
    pub function: Option<String>,
    /// The file, relative to the tree.
    pub file: PathBuf,
    /// Its line (1-based).
    pub line: usize,
}

/// The build's types as the source reader needs them.
pub trait Types: Sync {
    /// The struct (tag or typedef name) of member `member` of struct `ty`,
    /// through pointers, arrays and typedefs; `None` when it is no struct
    /// or the build does not know `ty`.
    fn member_type(&self, ty: &str, member: &str) -> Option<String>;

    /// The struct's tag for a typedef name (`pg_data_t` → `pglist_data`);
    /// the name itself otherwise.
    fn canonical(&self, ty: &str) -> String;
}

/// The declarations about the members of `types` (and of the structs
/// their writers' locks are members of) in the C files and headers of
/// `tree` that mention one of them.
pub fn declarations(tree: &Path, types: &[String], build: &dyn Types) -> Result<Vec<Declaration>> {
    if !tree.is_dir() {
        return Err(Error::Usage(format!(
            "--source-tree {}: not a directory",
            tree.display()
        )));
    }
    let files = c_files(tree)?;
    let finders: Vec<memchr::memmem::Finder<'_>> = types
        .iter()
        .map(|t| memchr::memmem::Finder::new(t.as_bytes()))
        .collect();
    // The files that mention a struct, read once.
    let texts: Vec<(&PathBuf, String)> = files
        .par_iter()
        .map(|rel| -> Result<Option<(&PathBuf, String)>> {
            let path = tree.join(rel);
            let bytes = crate::input::read_limited(&path, 64 << 20, "a C file")?;
            if !finders.iter().any(|f| f.find(&bytes).is_some()) {
                return Ok(None);
            }
            Ok(Some((rel, String::from_utf8_lossy(&bytes).into_owned())))
        })
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let texts: Vec<(&Path, &str)> = texts
        .iter()
        .map(|(rel, text)| (rel.as_path(), text.as_str()))
        .collect();
    Ok(read_all(&texts, types, build))
}

/// The declarations about the members of `types` in the C files `texts`
/// (each a path in the tree and its text): the headers' lock wrappers
/// first, then every file with them known, then the locks callers hold.
pub(crate) fn read_all(
    texts: &[(&Path, &str)],
    types: &[String],
    build: &dyn Types,
) -> Vec<Declaration> {
    let mut wrappers = Wrappers::default();
    for _ in 0..WRAPPER_ROUNDS {
        wrappers = texts
            .par_iter()
            .filter(|(rel, _)| rel.extension().is_some_and(|e| e == "h"))
            .map(|(_, text)| wrappers_in(text, build, &wrappers))
            .reduce(Wrappers::default, Wrappers::merge);
    }
    let read: Vec<Bodies> = texts
        .par_iter()
        .map(|(rel, text)| read_file(text, rel, types, build, &wrappers))
        .collect();
    let mut out = Vec::new();
    let mut calls = Vec::new();
    let mut defined: HashMap<String, usize> = HashMap::new();
    for b in read {
        out.extend(b.declarations);
        calls.extend(b.calls);
        for name in b.defined {
            *defined.entry(name).or_default() += 1;
        }
    }
    // A write in a function is under the locks its callers hold.
    super::callers::add_callers_locks(&mut out, &calls, &defined);
    out.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    out
}

/// What one file gives: its declarations, and of its function bodies the
/// lock wrappers, the calls and the names defined.
#[derive(Default)]
struct Bodies {
    declarations: Vec<Declaration>,
    wrappers: Wrappers,
    calls: Vec<Call>,
    defined: Vec<String>,
}

/// [`Bodies`] of C text `text` (the file `file`) about the members of
/// `types`, with the lock wrappers `wrappers` known.
fn read_file(
    text: &str,
    file: &Path,
    types: &[String],
    build: &dyn Types,
    wrappers: &Wrappers,
) -> Bodies {
    let mut read = functions(text, file, types, build, wrappers);
    let mut found = members(text, file, types);
    found.append(&mut read.declarations);
    read.declarations = found;
    read
}

/// The lock wrappers defined in C text `text`, with `known` known.
fn wrappers_in(text: &str, build: &dyn Types, known: &Wrappers) -> Wrappers {
    functions(text, Path::new(""), &[], build, known).wrappers
}

/// Every `.c` and `.h` file of `tree` outside the directories that hold
/// no kernel code and hidden ones, relative to `tree`, in name order.
fn c_files(tree: &Path) -> Result<Vec<PathBuf>> {
    let enter = |d: &Path| {
        let name = d
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let top = d.parent() == Some(tree);
        !name.starts_with('.')
            && !(top && (crate::csource::NO_KERNEL_CODE.contains(&&*name) || name == "debian"))
    };
    let is_c = |p: &Path| p.extension().is_some_and(|e| e == "c" || e == "h");
    let mut files = crate::csource::files_under(tree, &enter, &is_c, MAX_FILES);
    if files.len() > MAX_FILES {
        return Err(Error::Usage(format!(
            "--source-tree {}: more than {MAX_FILES} C files; is it a kernel tree?",
            tree.display()
        )));
    }
    for f in &mut files {
        *f = f.strip_prefix(tree).unwrap_or(f).to_owned();
    }
    files.sort();
    Ok(files)
}

/// `__guarded_by` and `__pt_guarded_by` on the members of the bodies of
/// `types` in `text`.
fn members(text: &str, file: &Path, types: &[String]) -> Vec<Declaration> {
    let lines = crate::csource::scan(text);
    let mut out = Vec::new();
    for body in crate::csource::bodies(text) {
        if !types.contains(&body.name) {
            continue;
        }
        // The member a line's annotation belongs to: the last name before
        // it on the line, else that of the statement it ends.
        let mut last_name: Option<(String, usize)> = None;
        // Inside `[...]`: array bounds, never a name.
        let mut brackets = 0usize;
        for (i, line) in lines.iter().enumerate().take(body.last).skip(body.first) {
            let tokens = crate::csource::tokens(&line.code);
            let mut j = 0;
            while j < tokens.len() {
                let t = &tokens[j];
                let pointee = t == "__pt_guarded_by";
                if (t == "__guarded_by" || pointee) && tokens.get(j + 1).is_some_and(|p| p == "(") {
                    let (locks, end) = arguments(&tokens, j + 1);
                    if let Some((name, _)) = &last_name {
                        out.push(Declaration {
                            ty: body.name.clone(),
                            path: name.clone(),
                            said: Said::GuardedBy { locks, pointee },
                            function: None,
                            file: file.to_owned(),
                            line: i + 1,
                        });
                    }
                    j = end;
                    continue;
                }
                match t.as_str() {
                    "[" => brackets += 1,
                    "]" => brackets = brackets.saturating_sub(1),
                    _ => {}
                }
                if t == ";" || t == "{" || t == "}" {
                    // A member ends: its name was declared where it was
                    // seen, and the next annotation is the next one's.
                    if let Some((name, at)) = last_name.take().filter(|_| t == ";") {
                        out.push(Declaration {
                            ty: body.name.clone(),
                            path: name,
                            said: Said::Member,
                            function: None,
                            file: file.to_owned(),
                            line: at,
                        });
                    }
                } else if brackets == 0
                    && is_identifier(t)
                    && !is_attribute(t)
                    && tokens.get(j + 1).is_none_or(|n| n != "(")
                {
                    last_name = Some((t.clone(), i + 1));
                }
                j += 1;
            }
        }
    }
    out
}

/// The comma-separated arguments of the call whose `(` is at `open`, as
/// text, and the index after its `)`.
fn arguments(tokens: &[String], open: usize) -> (Vec<String>, usize) {
    let (mut depth, mut args, mut current) = (0usize, Vec::new(), String::new());
    for (k, t) in tokens.iter().enumerate().skip(open) {
        match t.as_str() {
            "(" => {
                depth += 1;
                if depth == 1 {
                    continue;
                }
            }
            ")" => {
                depth -= 1;
                if depth == 0 {
                    if !current.is_empty() {
                        args.push(std::mem::take(&mut current));
                    }
                    return (args, k + 1);
                }
            }
            "," if depth == 1 => {
                args.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push_str(t);
    }
    (args, tokens.len())
}

/// An attribute macro written after a member's name without arguments
/// (`____cacheline_aligned_in_smp`, `__randomize_layout`, `__packed`).
fn is_attribute(t: &str) -> bool {
    t.starts_with("__")
        && [
            "cacheline_aligned",
            "randomize_layout",
            "packed",
            "aligned_largest",
        ]
        .iter()
        .any(|a| t.contains(a))
}

/// A C identifier that is not a keyword of a declaration.
fn is_identifier(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && !matches!(
            t,
            "struct" | "union" | "enum" | "const" | "volatile" | "unsigned" | "signed"
        )
}

/// The writes and lock uses in the function bodies of `text` about the
/// members of `types`, the lock wrappers among them, the calls made and
/// the functions defined.
fn functions(
    text: &str,
    file: &Path,
    types: &[String],
    build: &dyn Types,
    wrappers: &Wrappers,
) -> Bodies {
    let mut bodies = Bodies::default();
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .is_err()
    {
        return bodies;
    }
    let Some(tree) = parser.parse(text, None) else {
        return bodies;
    };
    let mut stack = vec![tree.root_node()];
    let read = Reading {
        text,
        file,
        types,
        build,
        wrappers,
    };
    while let Some(node) = stack.pop() {
        // A system call's body (`SYSCALL_DEFINE1(brk, ...) { ... }`) the
        // grammar reads as a call and a block.
        let syscall = match node.kind() {
            "compound_statement" => syscall_name(node, text),
            _ => None,
        };
        let wrapper = match (node.kind(), syscall) {
            ("function_definition", _) => Function::read(node, &read, &mut bodies),
            (_, Some(name)) => Function::read_parts(name, None, node, "", &read, &mut bodies),
            _ => {
                let mut cursor = node.walk();
                stack.extend(node.children(&mut cursor));
                continue;
            }
        };
        if let Some((name, effects)) = wrapper {
            bodies.wrappers.add(name, effects);
        }
    }
    bodies
}

/// What every function of one file is read with.
struct Reading<'a> {
    text: &'a str,
    file: &'a Path,
    types: &'a [String],
    build: &'a dyn Types,
    wrappers: &'a Wrappers,
}

/// One function being read.
struct Function<'a> {
    text: &'a str,
    file: &'a Path,
    name: String,
    types: &'a [String],
    build: &'a dyn Types,
    wrappers: &'a Wrappers,
    /// Variables and parameters: name → struct.
    variables: Vec<(String, String)>,
    /// The parameters' names, in order (empty for an unnamed one).
    params: Vec<String>,
    /// Locks held at the current point.
    held: Vec<Held>,
    /// Locks released that were not taken here, members of a parameter:
    /// (parameter, member), for a wrapper's effects.
    released: Vec<(usize, String)>,
    /// The calls made, with the locks held exclusively at each.
    calls: Vec<Call>,
}

impl<'a> Function<'a> {
    /// Reads function definition `node` into `bodies` (its declarations,
    /// its calls, its name); its name and effects when it is a lock
    /// wrapper.
    fn read(
        node: Node<'_>,
        read: &Reading<'a>,
        bodies: &mut Bodies,
    ) -> Option<(String, Vec<Effect>)> {
        let declarator = node.child_by_field_name("declarator")?;
        let name = declared_name(declarator, read.text).unwrap_or_default();
        let body = node.child_by_field_name("body")?;
        // `__must_hold(&x->lock)` after the parameters: held throughout.
        let between = &read.text[node.start_byte()..body.start_byte()];
        Function::read_parts(name, Some(declarator), body, between, read, bodies)
    }

    /// Reads function `name`: its parameters from `declarator`, its
    /// `__must_hold` from `between` (the text before the body), then
    /// `body`.
    fn read_parts(
        name: String,
        declarator: Option<Node<'_>>,
        body: Node<'_>,
        between: &str,
        read: &Reading<'a>,
        bodies: &mut Bodies,
    ) -> Option<(String, Vec<Effect>)> {
        let out = &mut bodies.declarations;
        let text = read.text;
        let mut f = Function {
            text,
            file: read.file,
            name,
            types: read.types,
            build: read.build,
            wrappers: read.wrappers,
            variables: Vec::new(),
            params: declarator.map_or_else(Vec::new, |d| parameters(d, text)),
            held: Vec::new(),
            released: Vec::new(),
            calls: Vec::new(),
        };
        if let Some(declarator) = declarator {
            f.declare(declarator);
        }
        for held in must_hold(between) {
            let member = f.lock_member(f.resolve_text(&held));
            f.held.push(Held {
                member,
                text: held,
                how: "__must_hold".into(),
                shared: false,
            });
        }
        let must = f.held.len();
        f.visit(body, out);
        // Held at its end (taken or asserted here), or released: the
        // locks a wrapper takes or releases for its caller.
        let mut effects: Vec<Effect> = f.held[must.min(f.held.len())..]
            .iter()
            .filter_map(|h| {
                let (param, member) = f.param_member(&h.text)?;
                Some(Effect {
                    param,
                    member,
                    release: false,
                    shared: h.shared,
                })
            })
            .collect();
        effects.extend(f.released.iter().map(|(param, member)| Effect {
            param: *param,
            member: member.clone(),
            release: true,
            shared: false,
        }));
        effects.dedup();
        if !f.name.is_empty() {
            bodies.defined.push(f.name.clone());
        }
        bodies.calls.append(&mut f.calls);
        (!effects.is_empty() && !f.name.is_empty()).then(|| (f.name.clone(), effects))
    }

    /// Lock expression `text` as a member of a parameter (`&mm->mmap_lock`
    /// in `f(struct mm_struct *mm)`): the parameter and the member.
    fn param_member(&self, text: &str) -> Option<(usize, String)> {
        let text = text.trim().trim_start_matches('&').trim();
        let at = text.find("->")?;
        let (base, member) = (text[..at].trim(), text[at + 2..].trim());
        let simple = |s: &str| {
            !s.is_empty()
                && s.split("->")
                    .flat_map(|p| p.split('.'))
                    .all(|p| is_identifier(p.trim()))
        };
        if !simple(member) {
            return None;
        }
        let param = self.params.iter().position(|p| p == base)?;
        Some((param, member.to_owned()))
    }

    /// A lock expression through wrapper argument `arg`: `&ARG->MEMBER`,
    /// or `&VAR.MEMBER` for an argument `&VAR`.
    fn through(&self, arg: Node<'_>, member: &str) -> String {
        let a = self.of(arg).trim();
        match a.strip_prefix('&') {
            Some(var) => format!("&{}.{member}", var.trim()),
            None => format!("&{a}->{member}"),
        }
    }

    fn of(&self, n: Node<'_>) -> &'a str {
        &self.text[n.byte_range()]
    }

    /// Records the variables that `node` (a parameter list, a declaration)
    /// declares with a struct type.
    fn declare(&mut self, node: Node<'_>) {
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            if matches!(n.kind(), "parameter_declaration" | "declaration")
                && let Some(ty) = n.child_by_field_name("type")
                && let Some(name) = self.struct_name(ty)
            {
                let mut cursor = n.walk();
                for d in n.children_by_field_name("declarator", &mut cursor) {
                    if let Some(var) = declared_name(d, self.text) {
                        self.variables.retain(|(v, _)| *v != var);
                        self.variables.push((var, self.build.canonical(&name)));
                    }
                }
                continue;
            }
            if n.kind() == "compound_statement" {
                continue;
            }
            let mut cursor = n.walk();
            stack.extend(n.children(&mut cursor));
        }
    }

    /// `struct lruvec` → `lruvec`; a typedef name as it is.
    fn struct_name(&self, ty: Node<'_>) -> Option<String> {
        match ty.kind() {
            "struct_specifier" | "union_specifier" => ty
                .child_by_field_name("name")
                .map(|n| self.of(n).to_owned()),
            "type_identifier" => Some(self.of(ty).to_owned()),
            _ => None,
        }
    }

    /// Reads `node` in source order: declarations, lock calls, writes.
    fn visit(&mut self, node: Node<'_>, out: &mut Vec<Declaration>) {
        match node.kind() {
            "declaration" => self.declare(node),
            "call_expression" if self.call(node, out) => return,
            "assignment_expression" => {
                if let Some(left) = node.child_by_field_name("left") {
                    self.written(left, Write::Assign, out);
                }
            }
            "update_expression" => {
                if let Some(arg) = node.child_by_field_name("argument") {
                    self.written(arg, Write::Assign, out);
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        for child in children {
            self.visit(child, out);
        }
    }

    /// A call: a lock taken or released, or a write through a macro or
    /// an atomic. True when its arguments need no further reading.
    fn call(&mut self, node: Node<'_>, out: &mut Vec<Declaration>) -> bool {
        let Some(function) = node.child_by_field_name("function") else {
            return false;
        };
        let args: Vec<Node<'_>> = node
            .child_by_field_name("arguments")
            .map(|a| {
                let mut c = a.walk();
                a.named_children(&mut c).collect()
            })
            .unwrap_or_default();
        // `guard(spinlock_irq)(&x->lock)`, `scoped_guard(spinlock, &x->lock)`.
        if function.kind() == "call_expression"
            && let Some(inner) = function.child_by_field_name("function")
            && self.of(inner) == "guard"
        {
            if let Some(lock) = args.first() {
                self.take(*lock, "guard", out);
            }
            return true;
        }
        let name = self.of(function);
        if function.kind() == "identifier" {
            self.calls.push(Call {
                callee: name.to_owned(),
                caller: self.name.clone(),
                held: self.held.iter().filter(|h| !h.shared).cloned().collect(),
            });
        }
        if name == "scoped_guard" {
            if let Some(lock) = args.get(1) {
                self.take(*lock, "scoped_guard", out);
            }
            return false;
        }
        if let Some(effects) = self.wrappers.get(name) {
            for e in effects {
                let Some(arg) = args.get(e.param) else {
                    continue;
                };
                let text = self.through(*arg, &e.member);
                match e.release {
                    true if leaves_after(node) => {}
                    true => self.release(text),
                    false => {
                        let member = self.lock_member(self.resolve_text(&text));
                        self.hold(text, member, name, e.shared, node, out);
                    }
                }
            }
            return true;
        }
        if is_assertion(name) || is_lock(name) {
            if let Some(lock) = args.first() {
                self.take(*lock, name, out);
            }
            return true;
        }
        if is_unlock(name) {
            // An unlock on a path that then leaves (`unlock; goto
            // restart;`) releases nothing for the code after its block.
            if leaves_after(node) {
                return true;
            }
            if let Some(lock) = args.first() {
                let text = self.of(*lock).to_owned();
                self.release(text);
            }
            return true;
        }
        if name == "data_race" {
            for arg in &args {
                let target = match arg.kind() {
                    "assignment_expression" => arg.child_by_field_name("left"),
                    "update_expression" => arg.child_by_field_name("argument"),
                    _ => None,
                };
                if let Some(t) = target {
                    self.written(t, Write::DataRace, out);
                    return true;
                }
            }
            return false;
        }
        if name.starts_with("this_cpu_")
            || name.starts_with("raw_cpu_")
            || name.starts_with("per_cpu_ptr")
        {
            if let Some(arg) = args.first() {
                for (ty, path) in self.resolve(*arg) {
                    if self.types.contains(&ty) {
                        out.push(self.declaration(&ty, &path, Said::PerCpu(name.to_owned()), *arg));
                    }
                }
            }
            return false;
        }
        let write = match name {
            "WRITE_ONCE" | "__WRITE_ONCE" => Some((0, Write::Once)),
            "smp_store_release" | "store_release" | "rcu_assign_pointer" => {
                Some((0, Write::Release(name.to_owned())))
            }
            _ if is_atomic_write(name) => {
                // The address is whichever argument is one (`atomic_inc(v)`,
                // `atomic_long_add(i, v)`, `set_bit(nr, addr)`).
                for arg in args.iter().filter(|a| self.of(**a).starts_with('&')) {
                    self.written(*arg, Write::Atomic(name.to_owned()), out);
                }
                None
            }
            _ => None,
        };
        if let Some((at, write)) = write
            && let Some(arg) = args.get(at)
        {
            self.written(*arg, write, out);
        }
        false
    }

    /// A lock taken (or asserted held) through expression `lock`.
    fn take(&mut self, lock: Node<'_>, how: &str, out: &mut Vec<Declaration>) {
        let text = self.of(lock).to_owned();
        let member = self.lock_member(self.resolve(lock));
        self.hold(text, member, how, is_shared(how), lock, out);
    }

    /// Of the structs a lock expression goes through (`&current->mm->
    /// mmap_lock`: `task_struct`, then `mm_struct`), the first that is
    /// one read for, else the outermost: the lock's member there.
    fn lock_member(&self, found: Vec<(String, String)>) -> Option<(String, String)> {
        let wanted = found.iter().position(|(ty, _)| self.types.contains(ty));
        found.into_iter().nth(wanted.unwrap_or(0))
    }

    /// Lock `text` (member `member`, when resolved) held from `at` on,
    /// taken as `how`, `shared` or not.
    fn hold(
        &mut self,
        text: String,
        member: Option<(String, String)>,
        how: &str,
        shared: bool,
        at: Node<'_>,
        out: &mut Vec<Declaration>,
    ) {
        if let Some((ty, path)) = &member
            && self.types.contains(ty)
        {
            out.push(self.declaration(ty, path, Said::Locked(how.to_owned()), at));
        }
        self.held.push(Held {
            member,
            text,
            how: how.to_owned(),
            shared,
        });
    }

    /// Lock `text` released: no longer held, or, when this function did
    /// not take it and it is a member of a parameter, a wrapper's release.
    fn release(&mut self, text: String) {
        match self.held.iter().rposition(|h| h.text == text) {
            Some(k) => {
                self.held.remove(k);
            }
            None => {
                if let Some(p) = self.param_member(&text) {
                    self.released.push(p);
                }
            }
        }
    }

    /// Member access `target` written as `write`.
    fn written(&self, target: Node<'_>, write: Write, out: &mut Vec<Declaration>) {
        for (ty, path) in self.resolve(target) {
            if self.types.contains(&ty) {
                let said = Said::Written(write.clone(), self.held.clone());
                out.push(self.declaration(&ty, &path, said, target));
            }
        }
    }

    fn declaration(&self, ty: &str, path: &str, said: Said, at: Node<'_>) -> Declaration {
        Declaration {
            ty: ty.to_owned(),
            path: path.to_owned(),
            said,
            function: Some(self.name.clone()),
            file: self.file.to_owned(),
            line: at.start_position().row + 1,
        }
    }

    /// [`Function::resolve`] of an expression written as text
    /// (`&x->lock`, `x->a.b`), for one outside the parsed body.
    fn resolve_text(&self, text: &str) -> Vec<(String, String)> {
        let text = text.trim().trim_start_matches('&').trim();
        let mut parts = text.split("->").flat_map(|p| p.split('.'));
        let Some(base) = parts.next() else {
            return Vec::new();
        };
        let fields: Vec<String> = parts.map(|p| p.trim().to_owned()).collect();
        self.chain(base.trim(), fields)
    }

    /// The struct members expression `node` names: for `lruvec->lrugen.
    /// max_seq`, (`lruvec`, `lrugen.max_seq`) and (`lru_gen_folio`,
    /// `max_seq`). Addresses, subscripts and parentheses are seen through.
    fn resolve(&self, node: Node<'_>) -> Vec<(String, String)> {
        let mut fields = Vec::new();
        let mut n = node;
        let base = loop {
            match n.kind() {
                "field_expression" => {
                    let (Some(arg), Some(field)) = (
                        n.child_by_field_name("argument"),
                        n.child_by_field_name("field"),
                    ) else {
                        return Vec::new();
                    };
                    fields.push(self.of(field).to_owned());
                    n = arg;
                }
                "subscript_expression" => match n.child_by_field_name("argument") {
                    Some(a) => n = a,
                    None => return Vec::new(),
                },
                "pointer_expression" | "parenthesized_expression" | "cast_expression" => {
                    match n
                        .child_by_field_name("argument")
                        .or_else(|| n.named_child(n.named_child_count().saturating_sub(1) as u32))
                    {
                        Some(a) => n = a,
                        None => return Vec::new(),
                    }
                }
                "identifier" => break self.of(n),
                _ => return Vec::new(),
            }
        };
        fields.reverse();
        self.chain(base, fields)
    }

    /// The members `base` (a variable) then `fields` name, from each struct
    /// on the way: (`lruvec`, `lrugen.max_seq`), (`lru_gen_folio`, `max_seq`).
    fn chain(&self, base: &str, fields: Vec<String>) -> Vec<(String, String)> {
        if fields.is_empty() || fields.iter().any(|f| f.is_empty()) {
            return Vec::new();
        }
        // `current` is the kernel's running task, a macro no declaration
        // names.
        let declared = self
            .variables
            .iter()
            .rev()
            .find(|(v, _)| v == base)
            .map(|(_, ty)| ty.clone());
        let Some(mut ty) =
            declared.or_else(|| (base == "current").then(|| "task_struct".to_owned()))
        else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for (i, field) in fields.iter().enumerate() {
            out.push((ty.clone(), fields[i..].join(".")));
            match self.build.member_type(&ty, field) {
                Some(next) => ty = next,
                None => break,
            }
        }
        out
    }
}

/// Is statement-level call `node` followed in its block (a block inside
/// the function's body) by a `goto`, `return`, `break` or `continue`?
fn leaves_after(node: Node<'_>) -> bool {
    let Some(statement) = node.parent().filter(|p| p.kind() == "expression_statement") else {
        return false;
    };
    // In the function's own body the code after it is the function's:
    // its final `return` leaves nothing held.
    if statement
        .parent()
        .and_then(|block| block.parent())
        .is_some_and(|p| p.kind() == "function_definition")
    {
        return false;
    }
    let mut next = statement.next_sibling();
    while let Some(n) = next {
        if matches!(
            n.kind(),
            "goto_statement" | "return_statement" | "break_statement" | "continue_statement"
        ) {
            return true;
        }
        next = n.next_sibling();
    }
    false
}

/// The lock expressions of the `__must_hold(...)` annotations in `text`.
fn must_hold(text: &str) -> Vec<String> {
    let tokens = crate::csource::tokens(text);
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if t == "__must_hold" && tokens.get(i + 1).is_some_and(|p| p == "(") {
            out.extend(arguments(&tokens, i + 1).0);
        }
    }
    out
}

/// The name a declarator declares (`*lruvec`, `x = ...`, `f(args)`).
fn declared_name(node: Node<'_>, text: &str) -> Option<String> {
    let mut n = node;
    for _ in 0..32 {
        match n.kind() {
            "identifier" | "field_identifier" => return Some(text[n.byte_range()].to_owned()),
            _ => n = n.child_by_field_name("declarator")?,
        }
    }
    None
}

/// The function a block is the body of when it is a system call's
/// (`SYSCALL_DEFINE1(brk, unsigned long, brk) { ... }`, `COMPAT_SYSCALL_
/// DEFINE2(...)`): `sys_brk`, `compat_sys_brk`.
fn syscall_name(block: Node<'_>, text: &str) -> Option<String> {
    let call = block
        .prev_named_sibling()
        .filter(|s| s.kind() == "expression_statement")?
        .named_child(0)
        .filter(|c| c.kind() == "call_expression")?;
    let macro_name = &text[call.child_by_field_name("function")?.byte_range()];
    let prefix = match macro_name {
        m if m.starts_with("SYSCALL_DEFINE") => "sys_",
        m if m.starts_with("COMPAT_SYSCALL_DEFINE") => "compat_sys_",
        _ => return None,
    };
    let args = call.child_by_field_name("arguments")?;
    let first = args.named_child(0).filter(|a| a.kind() == "identifier")?;
    Some(format!("{prefix}{}", &text[first.byte_range()]))
}

/// Asserts a lock held: `lockdep_assert_held`, `rwsem_assert_held_write`.
fn is_assertion(name: &str) -> bool {
    name.starts_with("lockdep_assert_held") || name.starts_with("rwsem_assert_held")
}

/// Takes or asserts a lock shared: `down_read`, `read_lock`,
/// `lockdep_assert_held_read`; `rwsem_assert_held` (either way).
fn is_shared(name: &str) -> bool {
    let words: Vec<&str> = name.split('_').collect();
    words.contains(&"read") || name.starts_with("rwsem_assert_held") && !words.contains(&"write")
}

/// The names of the parameters of function declarator `node`, in order
/// (empty for an unnamed one).
fn parameters(node: Node<'_>, text: &str) -> Vec<String> {
    let mut n = node;
    for _ in 0..32 {
        if n.kind() == "function_declarator" {
            let Some(list) = n.child_by_field_name("parameters") else {
                return Vec::new();
            };
            let mut cursor = list.walk();
            return list
                .named_children(&mut cursor)
                .filter(|p| p.kind() == "parameter_declaration")
                .map(|p| {
                    p.child_by_field_name("declarator")
                        .and_then(|d| declared_name(d, text))
                        .unwrap_or_default()
                })
                .collect();
        }
        match n.child_by_field_name("declarator") {
            Some(d) => n = d,
            None => return Vec::new(),
        }
    }
    Vec::new()
}

/// Takes a lock: `spin_lock_irq`, `mutex_lock`, `down_write`, ...
fn is_lock(name: &str) -> bool {
    const PREFIXES: [&str; 12] = [
        "spin_lock",
        "raw_spin_lock",
        "read_lock",
        "write_lock",
        "mutex_lock",
        "down_read",
        "down_write",
        "local_lock",
        "spin_trylock",
        "raw_spin_trylock",
        "mutex_trylock",
        "pthread_mutex_lock",
    ];
    PREFIXES.iter().any(|p| name.starts_with(p))
        && !name.contains("unlock")
        && !name.ends_with("_init")
        && !name.contains("_is_")
}

/// Releases one.
fn is_unlock(name: &str) -> bool {
    name.contains("_unlock") || name == "up_read" || name == "up_write" || name == "up"
}

/// An atomic or bit operation that writes (not `atomic_read`, `test_bit`).
fn is_atomic_write(name: &str) -> bool {
    let atomic = [
        "atomic_",
        "atomic64_",
        "atomic_long_",
        "refcount_",
        "local_",
        "local64_",
    ]
    .iter()
    .any(|p| name.starts_with(p))
        && !name.ends_with("_read")
        && !name.contains("_read_")
        && !name.starts_with("local_lock")
        && !name.starts_with("local_irq")
        && !name.starts_with("local_bh");
    atomic
        || is_bitop(name) && !name.trim_start_matches('_').starts_with("test_bit")
        || matches!(
            name,
            "xchg" | "cmpxchg" | "try_cmpxchg" | "cmpxchg64" | "xchg_relaxed"
        )
}

/// `set_bit(nr, addr)` and its kin: the address is the second argument.
fn is_bitop(name: &str) -> bool {
    let n = name.trim_start_matches('_');
    [
        "set_bit",
        "clear_bit",
        "change_bit",
        "test_and_set_bit",
        "test_and_clear_bit",
        "test_and_change_bit",
        "test_bit",
    ]
    .iter()
    .any(|b| n.starts_with(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct NoTypes;
    impl Types for NoTypes {
        fn member_type(&self, ty: &str, member: &str) -> Option<String> {
            (ty == "lruvec" && member == "lrugen").then(|| "lru_gen_folio".to_owned())
        }
        fn canonical(&self, ty: &str) -> String {
            ty.to_owned()
        }
    }

    /// The declarations of the function bodies of `code` (file `file`)
    /// about `types`, no wrapper known.
    fn read(code: &str, file: &str, types: &[String]) -> Vec<Declaration> {
        functions(code, Path::new(file), types, &NoTypes, &Wrappers::default()).declarations
    }

    #[test]
    fn writes_locks_and_annotations_are_read() {
        let text = "struct kcov {\n\tspinlock_t lock;\n\tunsigned int size __guarded_by(&lock);\n\tvoid *l2\n\t\t__guarded_by(&a, &b->c);\n};\n\
            static void f(struct lruvec *lruvec, int d)\n{\n\tstruct lru_gen_folio *lrugen = &lruvec->lrugen;\n\
            \tspin_lock_irq(&lruvec->lru_lock);\n\tWRITE_ONCE(lrugen->max_seq, 1);\n\tspin_unlock_irq(&lruvec->lru_lock);\n\
            \tatomic_long_add(d, &lruvec->lrugen.evicted[0][1]);\n\tlrugen->gen++;\n}\n";
        let types = [
            "kcov".to_owned(),
            "lru_gen_folio".to_owned(),
            "lruvec".to_owned(),
        ];
        let mut got = members(text, Path::new("a.c"), &types);
        got.extend(read(text, "a.c", &types));
        let said: Vec<String> = got
            .iter()
            .map(|d| format!("{}:{}.{} {:?}", d.line, d.ty, d.path, d.said))
            .collect();
        let joined = said.join("\n");
        assert!(
            joined.contains("3:kcov.size GuardedBy { locks: [\"&lock\"], pointee: false }"),
            "{joined}"
        );
        assert!(
            joined.contains("5:kcov.l2 GuardedBy { locks: [\"&a\", \"&b->c\"]"),
            "{joined}"
        );
        assert!(
            joined.contains("10:lruvec.lru_lock Locked(\"spin_lock_irq\")"),
            "{joined}"
        );
        assert!(
            joined.contains("11:lru_gen_folio.max_seq Written(Once, [Held { member: Some((\"lruvec\", \"lru_lock\"))"),
            "{joined}"
        );
        assert!(
            joined.contains("13:lru_gen_folio.evicted Written(Atomic(\"atomic_long_add\"), [])"),
            "{joined}"
        );
        assert!(
            joined.contains("13:lruvec.lrugen.evicted Written(Atomic"),
            "{joined}"
        );
        assert!(
            joined.contains("14:lru_gen_folio.gen Written(Assign, [])"),
            "{joined}"
        );
    }

    #[test]
    fn must_hold_data_race_and_per_cpu_are_read() {
        let text = "static void g(struct lruvec *lruvec)\n\t__must_hold(&lruvec->lru_lock)\n{\n\
            \tlruvec->lrugen.gen = 1;\n\tdata_race(lruvec->lrugen.seg++);\n\tthis_cpu_inc(lruvec->lrugen.stats->n);\n}\n";
        let types = ["lru_gen_folio".to_owned(), "lruvec".to_owned()];
        let got = read(text, "b.c", &types);
        let said: Vec<String> = got
            .iter()
            .filter(|d| d.ty == "lru_gen_folio")
            .map(|d| format!("{}:{} {:?}", d.line, d.path, d.said))
            .collect();
        let joined = said.join("\n");
        assert!(
            joined.contains("4:gen Written(Assign, [Held { member: Some((\"lruvec\", \"lru_lock\")), text: \"&lruvec->lru_lock\", how: \"__must_hold\", shared: false }])"),
            "{joined}"
        );
        assert!(joined.contains("5:seg Written(DataRace,"), "{joined}");
        assert!(
            joined.contains("6:stats.n PerCpu(\"this_cpu_inc\")"),
            "{joined}"
        );
    }

    #[test]
    fn a_headers_lock_wrappers_take_and_release_their_arguments_lock() {
        // mmap_lock.h's shapes: a wrapper, a killable one, an assertion, a
        // release, and a wrapper of a wrapper (found in the second round).
        let header = "static inline void mmap_write_lock(struct mm_struct *mm)\n{\n\ttrace(mm);\n\tdown_write(&mm->mmap_lock);\n}\n\
            static inline int mmap_write_lock_killable(struct mm_struct *mm)\n{\n\tint ret;\n\tret = down_write_killable(&mm->mmap_lock);\n\treturn ret;\n}\n\
            static inline void mmap_assert_write_locked(const struct mm_struct *mm)\n{\n\trwsem_assert_held_write(&mm->mmap_lock);\n}\n\
            static inline void mmap_write_unlock(struct mm_struct *mm)\n{\n\tup_write(&mm->mmap_lock);\n}\n\
            static inline void task_mm_lock(int flags, struct task_struct *t)\n{\n\tmmap_write_lock(t->mm);\n}\n\
            static inline void balanced(struct mm_struct *mm)\n{\n\tdown_write(&mm->mmap_lock);\n\tup_write(&mm->mmap_lock);\n}\n\
            static inline bool mmap_read_trylock(struct mm_struct *mm)\n{\n\treturn down_read_trylock(&mm->mmap_lock) != 0;\n}\n";
        let mut wrappers = Wrappers::default();
        for _ in 0..WRAPPER_ROUNDS {
            wrappers = wrappers_in(header, &NoTypes, &wrappers);
        }
        let effect = |name: &str| wrappers.get(name).cloned().unwrap_or_default();
        let take = |param, member: &str| Effect {
            param,
            member: member.to_owned(),
            release: false,
            shared: false,
        };
        assert_eq!(effect("mmap_write_lock"), [take(0, "mmap_lock")]);
        assert_eq!(effect("mmap_write_lock_killable"), [take(0, "mmap_lock")]);
        assert_eq!(effect("mmap_assert_write_locked"), [take(0, "mmap_lock")]);
        assert_eq!(
            effect("mmap_write_unlock"),
            [Effect {
                release: true,
                ..take(0, "mmap_lock")
            }]
        );
        assert_eq!(effect("task_mm_lock"), [take(1, "mm->mmap_lock")]);
        assert!(effect("balanced").is_empty());
        // spin_lock_init() takes nothing; pthread_mutex_lock has "read" in
        // it, not as a word.
        assert!(
            !is_lock("spin_lock_init") && !is_lock("spin_is_locked") && is_lock("spin_lock_irq")
        );
        assert!(!is_shared("pthread_mutex_lock") && is_shared("down_read_trylock"));
        assert_eq!(
            effect("mmap_read_trylock"),
            [Effect {
                shared: true,
                ..take(0, "mmap_lock")
            }]
        );

        // A caller: the write between the wrappers is under mm's lock, the
        // one after is not; the wrapper is the lock's taker.
        let code = "void set(struct mm_struct *mm, void *f)\n{\n\tmmap_write_lock(mm);\n\trcu_assign_pointer(mm->exe_file, f);\n\tmmap_write_unlock(mm);\n\tmm->flags = 0;\n}\n";
        let types = ["mm_struct".to_owned()];
        let got = functions(code, Path::new("fork.c"), &types, &NoTypes, &wrappers).declarations;
        let said: Vec<String> = got
            .iter()
            .map(|d| format!("{}:{} {:?}", d.line, d.path, d.said))
            .collect();
        assert_eq!(
            said,
            [
                "3:mmap_lock Locked(\"mmap_write_lock\")",
                "4:exe_file Written(Release(\"rcu_assign_pointer\"), [Held { member: Some((\"mm_struct\", \"mmap_lock\")), text: \"&mm->mmap_lock\", how: \"mmap_write_lock\", shared: false }])",
                "6:flags Written(Assign, [])",
            ],
            "{said:#?}"
        );
        // Two definitions of one name that disagree make no wrapper.
        let other = "static void mmap_write_lock(struct mm_struct *mm, struct x *y)\n{\n\tspin_lock(&y->lock);\n}\n";
        let merged = wrappers.merge(wrappers_in(other, &NoTypes, &Wrappers::default()));
        assert!(merged.get("mmap_write_lock").is_none());
        assert!(merged.get("mmap_write_unlock").is_some());
    }

    #[test]
    fn an_unlock_then_leaving_keeps_the_lock_only_inside_the_function() {
        let code = "int f(struct lruvec *s, int x)\n{\n\tspin_lock(&s->l);\n\tif (x) {\n\t\tspin_unlock(&s->l);\n\t\tgoto out;\n\t}\n\
            \ts->c = 3;\n\tspin_unlock(&s->l);\n\ts->b = 2;\n\treturn 0;\nout:\n\treturn 1;\n}\n";
        let types = ["lruvec".to_owned()];
        let got = read(code, "f.c", &types);
        let held = |path: &str| -> Vec<String> {
            got.iter()
                .find_map(|d| match &d.said {
                    Said::Written(_, held) if d.path == path => {
                        Some(held.iter().map(|h| h.text.clone()).collect())
                    }
                    _ => None,
                })
                .unwrap()
        };
        // The branch that unlocks and leaves releases nothing after it; the
        // unlock in the body itself releases, its final return
        // notwithstanding.
        assert_eq!(held("c"), ["&s->l"]);
        assert!(held("b").is_empty());
    }

    #[test]
    fn a_system_calls_body_is_read_as_a_function() {
        let code = "SYSCALL_DEFINE1(brk, unsigned long, brk)\n{\n\tstruct lruvec *s = get();\n\tspin_lock(&s->l);\n\ts->b = brk;\n\tspin_unlock(&s->l);\n\treturn 0;\n}\n";
        let types = ["lruvec".to_owned()];
        let got = functions(
            code,
            Path::new("mmap.c"),
            &types,
            &NoTypes,
            &Wrappers::default(),
        );
        let said: Vec<String> = got
            .declarations
            .iter()
            .map(|d| format!("{}:{} {:?} in {:?}", d.line, d.path, d.said, d.function))
            .collect();
        assert!(
            said.iter().any(|d| d
                .starts_with("5:b Written(Assign, [Held { member: Some((\"lruvec\", \"l\"))")
                && d.ends_with("in Some(\"sys_brk\")")),
            "{said:#?}"
        );
        assert_eq!(got.defined, ["sys_brk"]);
    }

    #[test]
    fn a_members_line_is_its_names_not_a_bound_or_an_attribute() {
        let text = "struct a {\n\tlong ev[N][M];\n\tspinlock_t lock ____cacheline_aligned_in_smp;\n\tint b : 3;\n};\n";
        let got = members(text, Path::new("a.h"), &["a".to_owned()]);
        let declared: Vec<(String, usize)> = got.iter().map(|d| (d.path.clone(), d.line)).collect();
        assert_eq!(
            declared,
            [
                ("ev".to_owned(), 2),
                ("lock".to_owned(), 3),
                ("b".to_owned(), 4)
            ]
        );
    }
}

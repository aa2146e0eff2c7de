//! The walk of function bodies, read with tree-sitter's C grammar: each
//! write to a member of the wanted structs with the locks held there,
//! the locks taken, the calls made (for the callers' locks) and the
//! functions that are lock wrappers.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use tree_sitter::{Node, Parser};

use super::callers::{Call, Passed, Test, rebase};
use super::members::{arguments, is_identifier};
use super::vocabulary::*;
use super::wrappers::{Act, Effect, Wrappers};
use super::{Bodies, Declaration, Held, Role, Said, Types, Wanted, Write};

mod calls;
mod macros;
mod needless;
mod on_change;
mod rare;

/// The writes and lock uses in the function bodies of `text` about the
/// members of `types`, the lock wrappers among them, the calls made and
/// the functions defined.
pub(super) fn functions(
    text: &str,
    file: &Path,
    types: Wanted<'_>,
    build: &dyn Types,
    wrappers: &Wrappers,
) -> Bodies {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_c::LANGUAGE.into())
        .is_err()
    {
        return Bodies::default();
    }
    let Some(tree) = parser.parse(text, None) else {
        return Bodies::default();
    };
    let global_mutexes = global_mutexes(text);
    // The file's functions, needed only where other files' wrappers are
    // known or this `.c` file's own are read (not for a header's rounds).
    let is_c = !types.is_empty() && file.extension().is_some_and(|e| e == "c");
    let top = match wrappers.exports() || is_c {
        true => top_functions(tree.root_node(), text),
        false => Vec::new(),
    };
    // A function the file defines is its own, whatever another file
    // exports under that name.
    let own: HashSet<&str> = match wrappers.exports() {
        true => top.iter().map(|(name, _)| name.as_str()).collect(),
        false => HashSet::new(),
    };
    let mut read = Reading {
        text,
        file,
        global_mutexes: &global_mutexes,
        types: Wanted::Only(&[]),
        build,
        wrappers,
        local: None,
        own: &own,
        taking_only: true,
        takers: &[],
    };
    // A `.c` file's own wrappers, read first from the same tree.
    let local = match is_c {
        true => Some(local_wrappers(tree.root_node(), &read)),
        false => None,
    };
    read.types = types;
    read.local = local.as_ref();
    read.taking_only = false;
    let mut bodies = walk_tree(tree.root_node(), &read);
    // Exported, the wrappers named for a lock: a long function of a `.c`
    // file that takes and drops locks on its paths (`iput()` drops an
    // `i_lock` that `atomic_dec_and_lock()` took) may read as one, as
    // its own file's may, but not for the hundreds of files that call it.
    if let Some(local) = &local {
        let external: HashSet<&str> = top
            .iter()
            .filter(|(name, external)| *external && named_for_a_lock(name))
            .map(|(name, _)| name.as_str())
            .collect();
        bodies.exported = local.only(&external);
    }
    bodies
}

/// The functions defined at the top of `root` (or in a preprocessor
/// conditional there), each with whether it is external: not `static`,
/// so that other files may call it.
fn top_functions(root: Node<'_>, text: &str) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "function_definition" => {
                    let Some(name) = child
                        .child_by_field_name("declarator")
                        .and_then(|d| declared_name(d, text))
                    else {
                        continue;
                    };
                    let mut c = child.walk();
                    let external = !child.named_children(&mut c).any(|n| {
                        n.kind() == "storage_class_specifier" && &text[n.byte_range()] == "static"
                    });
                    out.push((name, external));
                }
                kind if kind.starts_with("preproc_if") || kind.starts_with("preproc_el") => {
                    stack.push(child)
                }
                _ => {}
            }
        }
    }
    out
}

/// How many times a `.c` file is read for its own wrappers: those that
/// take a lock with the kernel's own call, then those that call one of
/// them, and so on (`super_lock_excl()` calls `super_lock()`, which
/// calls `__super_lock()`, which calls `down_write(&sb->s_umount)`).
const LOCAL_WRAPPER_ROUNDS: usize = 4;

/// The wrappers a `.c` file defines, read from `root` with `read` (for
/// wrappers only) until a round finds what the one before it did. Each
/// round reads with the last one's wrappers known: a function that calls
/// one that takes a lock takes it too, and one that takes a lock and
/// calls the file's own unlock function takes none.
fn local_wrappers(root: Node<'_>, read: &Reading<'_>) -> Wrappers {
    let mut found = walk_tree(root, read).wrappers;
    for _ in 1..LOCAL_WRAPPER_ROUNDS {
        let takers = found.takers();
        if takers.is_empty() {
            break;
        }
        let round = Reading {
            local: Some(&found),
            takers: &takers,
            ..*read
        };
        let next = walk_tree(root, &round).wrappers;
        if next.same_as(&found) {
            break;
        }
        found = next;
    }
    found
}

/// What a file's bodies name as values, kept at the file's end for the
/// names it defines: a function is named in the file that defines it
/// (a static callback), and every local variable passed to a call would
/// be kept otherwise.
#[derive(Default)]
struct Values<'a> {
    /// Identifiers passed as arguments or assigned (see
    /// [`Bodies::named`]).
    named: Vec<&'a str>,
    /// An iterator's callbacks (`netdev_for_each_tx_queue(dev, f, arg)`):
    /// calls of them, there and then.
    iterated: Vec<Call>,
}

/// Every function body under `root`, read with `read`.
fn walk_tree<'a>(root: Node<'_>, read: &Reading<'a>) -> Bodies {
    let mut bodies = Bodies::default();
    let mut values = Values::default();
    // Named as a value at file scope: kept whoever defines them.
    let mut file_scope = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        // A system call's body (`SYSCALL_DEFINE1(brk, ...) { ... }`) the
        // grammar reads as a call and a block.
        let syscall = match node.kind() {
            "compound_statement" => syscall_name(node, read.text),
            _ => None,
        };
        bodies.syscalls.extend(syscall.iter().cloned());
        let wrapper = match (node.kind(), syscall) {
            // Only wrappers are wanted: a function that cannot be one is
            // not read (a third of the walk of a tree's `.c` files).
            ("function_definition", None) if read.cannot_wrap(node, None) => None,
            (_, Some(name)) if read.cannot_wrap(node, Some(&name)) => None,
            ("function_definition", _) => Function::read(node, read, &mut bodies, &mut values),
            // Wrappers are read only while no struct is wanted.
            ("preproc_function_def", _) if read.types.is_empty() => macros::wrapper(node, read),
            (_, Some(name)) => {
                Function::read_parts(name, None, node, "", read, &mut bodies, &mut values)
            }
            _ => {
                if node.kind() == "initializer_pair" {
                    bodies.calls.extend(dispatched(node, read.text));
                    file_scope.extend(
                        node.child_by_field_name("value")
                            .filter(|v| v.kind() == "identifier")
                            .and_then(|v| read.text.get(v.byte_range()))
                            .map(str::to_owned),
                    );
                }
                let mut cursor = node.walk();
                stack.extend(node.children(&mut cursor));
                continue;
            }
        };
        // The kernel's own words (`spin_lock()`, itself a function of
        // spinlock.h taking `&lock->rlock`) are read as the vocabulary
        // says, never as a wrapper of what they call.
        match wrapper {
            Some((name, _)) if is_vocabulary(&name) => {}
            Some((name, effects)) if effects.is_empty() => bodies.wrappers.add_plain(name),
            Some((name, effects)) => bodies.wrappers.add(name, effects),
            None => {}
        }
    }
    bodies.defined.sort_unstable();
    bodies.defined.dedup();
    bodies.external.sort_unstable();
    bodies.external.dedup();
    let defined: HashSet<&str> = bodies.defined.iter().map(String::as_str).collect();
    let mut named: Vec<String> = values
        .named
        .into_iter()
        .filter(|n| defined.contains(n))
        .map(str::to_owned)
        .chain(file_scope)
        .collect();
    named.sort_unstable();
    named.dedup();
    let iterated = values
        .iterated
        .into_iter()
        .filter(|c| defined.contains(c.callee.as_str()));
    bodies.calls.extend(iterated);
    bodies.named = named;
    bodies
}

/// An ops table's member initialized at file scope with a function the
/// kernel calls through it on a network path (`.ndo_start_xmit =
/// e1000_xmit_frame`): a call from the function that calls through the
/// pointer, for reach.
fn dispatched(pair: Node<'_>, text: &str) -> Option<Call> {
    let field = pair.child_by_field_name("designator")?;
    let value = pair
        .child_by_field_name("value")
        .filter(|v| v.kind() == "identifier")?;
    let name = text.get(field.byte_range())?.trim_start_matches('.').trim();
    Some(Call::dispatch(
        super::reach::dispatcher_of_member(name)?,
        text.get(value.byte_range())?,
    ))
}

/// The mutexes and rw_semaphores `text` defines at file scope with the
/// kernel's macros (`static DEFINE_MUTEX(shrinker_mutex)`,
/// `DECLARE_RWSEM(namespace_sem)`).
fn global_mutexes(text: &str) -> Vec<String> {
    if !text.contains("DEFINE_MUTEX") && !text.contains("DECLARE_RWSEM") {
        return Vec::new();
    }
    let tokens = crate::csource::tokens(text);
    tokens
        .windows(3)
        .filter(|w| matches!(w[0].as_str(), "DEFINE_MUTEX" | "DECLARE_RWSEM") && w[1] == "(")
        .map(|w| w[2].clone())
        .collect()
}

/// What every function of one file is read with.
struct Reading<'a> {
    text: &'a str,
    file: &'a Path,
    /// The file's own mutexes of the whole system: see [`global_mutexes`].
    global_mutexes: &'a [String],
    types: Wanted<'a>,
    build: &'a dyn Types,
    wrappers: &'a Wrappers,
    /// The wrappers the file itself defines (a `.c` file's static
    /// `backlog_lock_irq_disable()`), looked up first.
    local: Option<&'a Wrappers>,
    /// The functions the file defines, when other files' wrappers are
    /// known (see [`Wrappers::exported`]): none of those is another's.
    own: &'a HashSet<&'a str>,
    /// Wrappers are functions that take a lock with the kernel's own call
    /// (`spin_lock_irq()`), or release one, not those that assert it or
    /// call another wrapper (a `.c` file's helpers with
    /// `lockdep_assert_held()`, whose callers' own locks say more).
    taking_only: bool,
    /// The file's own wrappers that take a lock (see [`local_wrappers`]):
    /// a call of one takes it as the kernel's own call does.
    takers: &'a [String],
}

impl Reading<'_> {
    /// Is function `node` (a definition, or the body of system call
    /// `syscall`) read for wrappers only, and unable to be one (see
    /// [`Wrappers::may_lock_in`])?
    fn cannot_wrap(&self, node: Node<'_>, syscall: Option<&str>) -> bool {
        let text = &self.text[node.byte_range()];
        self.taking_only
            && !syscall.is_some_and(may_lock)
            && !self.wrappers.may_lock_in(text)
            && !self.takers.iter().any(|n| text.contains(n.as_str()))
    }
}

/// Where an access is made: its role, and the parameter it starts from.
#[derive(Clone, Copy)]
struct Placed {
    role: Role,
    param: Option<usize>,
}

/// One function being read.
struct Function<'a> {
    text: &'a str,
    file: &'a Path,
    global_mutexes: &'a [String],
    name: String,
    types: Wanted<'a>,
    build: &'a dyn Types,
    wrappers: &'a Wrappers,
    local: Option<&'a Wrappers>,
    own: &'a HashSet<&'a str>,
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
    /// What it tests before its calls (see [`Call::tested`]).
    tests: Vec<Box<[Test]>>,
    /// The variables whose object this function builds (see
    /// [`Role::Construction`]).
    built: Vec<String>,
    /// A control-path function (see [`Role::Control`]).
    control: bool,
    /// A function that tears its objects down (see [`Role::Teardown`]).
    teardown: bool,
    /// A failure's handler (see [`Role::Failure`]).
    failure: bool,
    /// An `__init` function: all it writes is construction.
    boot: bool,
    /// The expressions written (their nodes' ids): not also reads.
    targets: HashSet<usize>,
    /// Local pointers to members (see [`Alias`]).
    aliases: Vec<Alias>,
    /// The members read, each once: the first read, marked when any is.
    reads: BTreeMap<(String, String), Declaration>,
    /// Variables that point at another CPU's per-CPU object (`rq =
    /// cpu_rq(cpu)`, `sd = &per_cpu(softnet_data, cpu)`).
    remote: Vec<String>,
    /// Iteration states a macro declares on an object (`XA_STATE(xas,
    /// &mapping->i_pages, index)`): the variable, its member pointing at
    /// the object, and the object (`xas`, `xa`, `mapping->i_pages`).
    states: Vec<(String, &'static str, String)>,
    /// Identifiers passed as arguments or assigned, and iterators'
    /// callbacks, for the file's [`Values`].
    values: Values<'a>,
    /// Its body says `likely(` or `unlikely(` somewhere: only then may
    /// code in it be marked rare (see [`rare`]).
    hinted: bool,
    /// Its jumps, read when first asked (see [`rare`]).
    jumps: std::cell::OnceCell<rare::Jumps>,
    /// Its body says `test_bit` (`_test_`) somewhere: only then may it
    /// test a bit (ask a twin) before a call (see [`Call::tested`]).
    tests_bits: bool,
    asks_twins: bool,
}

/// A local pointer to a member: `lru_size = &mz->lru_zone_size[z][l]`,
/// whose `*p` and `p[j]` are writes of the member, or a lock reached
/// through an accessor (`root_lock = qdisc_lock(q)`, see
/// [`Function::lock_alias`]).
struct Alias {
    variable: String,
    /// The member's expression (`&q->q.lock`).
    text: String,
    /// The members it names (see [`Function::resolve`]).
    chain: Vec<(String, String)>,
}

impl<'a> Function<'a> {
    /// Reads function definition `node` into `bodies` (its declarations,
    /// its calls, its name); its name and effects when it is a lock
    /// wrapper.
    fn read(
        node: Node<'_>,
        read: &Reading<'a>,
        bodies: &mut Bodies,
        values: &mut Values<'a>,
    ) -> Option<(String, Vec<Effect>)> {
        let declarator = node.child_by_field_name("declarator")?;
        let name = declared_name(declarator, read.text)
            .or_else(|| macro_defined(node, declarator, read.text))
            .unwrap_or_default();
        let body = node.child_by_field_name("body")?;
        // `__must_hold(&x->lock)` after the parameters: held throughout.
        let between = &read.text[node.start_byte()..body.start_byte()];
        Function::read_parts(name, Some(declarator), body, between, read, bodies, values)
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
        values: &mut Values<'a>,
    ) -> Option<(String, Vec<Effect>)> {
        let out = &mut bodies.declarations;
        let text = read.text;
        let teardown = is_teardown(&name);
        let mut f = Function {
            text,
            file: read.file,
            global_mutexes: read.global_mutexes,
            name,
            types: read.types,
            build: read.build,
            wrappers: read.wrappers,
            local: read.local,
            own: read.own,
            variables: Vec::new(),
            params: declarator.map_or_else(Vec::new, |d| parameters(d, text)),
            held: Vec::new(),
            released: Vec::new(),
            calls: Vec::new(),
            tests: Vec::new(),
            built: Vec::new(),
            control: false,
            teardown,
            failure: false,
            boot: false,
            targets: HashSet::new(),
            aliases: Vec::new(),
            reads: BTreeMap::new(),
            remote: Vec::new(),
            states: Vec::new(),
            values: Values::default(),
            hinted: text[body.byte_range()].contains("likely("),
            jumps: std::cell::OnceCell::new(),
            tests_bits: text[body.byte_range()].contains("test_bit"),
            asks_twins: text[body.byte_range()].contains("_test_"),
        };
        if let Some(declarator) = declarator {
            f.declare(declarator);
            f.control = is_control(&f.name, f.of(declarator));
        }
        f.control |= is_control_syscall(&f.name);
        f.failure = is_failure(&f.name);
        // `__init` code runs once, at boot, before anyone shares a thing;
        // `__exit` code once, when the module goes.
        let tokens = crate::csource::tokens(between);
        // Not `static`: other files may call it by its name.
        let external = !between.is_empty() && !tokens.iter().any(|t| t == "static");
        f.boot = tokens.iter().any(|t| t == "__init" || t == "__meminit");
        f.teardown |= tokens.iter().any(|t| t == "__exit");
        if !f.types.is_empty() {
            let (built, control) = built(body, text);
            f.built = built;
            f.control |= control;
        }
        for held in must_hold(between) {
            let chain = f.resolve_text(&held);
            f.held.push(Held {
                member: f.lock_member(&chain),
                chain,
                global_mutex: f.is_global_mutex(&held),
                text: held,
                how: "__must_hold".into(),
                shared: false,
            });
        }
        let must = f.held.len();
        f.visit(body, out);
        out.extend(std::mem::take(&mut f.reads).into_values());
        // Released, then held at its end (taken or asserted here): the
        // locks a wrapper releases or takes for its caller, in the order
        // its caller applies them (a wrapper that drops its caller's lock
        // and takes it again leaves it held).
        let mut effects: Vec<Effect> = f
            .released
            .iter()
            .map(|(param, member)| Effect {
                param: *param,
                member: member.clone(),
                act: Act::Release,
            })
            .collect();
        effects.extend(
            f.held[must.min(f.held.len())..]
                .iter()
                .filter(|h| !read.taking_only || is_lock(&h.how) || read.takers.contains(&h.how))
                .filter_map(|h| {
                    let (param, member) = f.param_member(&h.text)?;
                    Some(Effect {
                        param,
                        member,
                        act: Act::Take { shared: h.shared },
                    })
                }),
        );
        effects.dedup();
        if effects.is_empty()
            && let Some((param, member)) = f.returned_address(body)
        {
            effects.push(Effect {
                param,
                member,
                act: Act::Address,
            });
        }
        if !f.name.is_empty() {
            bodies.defined.push(f.name.clone());
            if external {
                bodies.external.push(f.name.clone());
            }
            if one_expression(body) {
                bodies.one_liners.push(f.name.clone());
            }
        }
        rebase(&mut f.calls, &mut bodies.tests, &mut f.tests);
        bodies.calls.append(&mut f.calls);
        values.named.append(&mut f.values.named);
        values.iterated.append(&mut f.values.iterated);
        // A function named for a lock that does nothing to one is told
        // too (see [`Wrappers::add_plain`]).
        (!f.name.is_empty() && (!effects.is_empty() || may_lock(&f.name)))
            .then(|| (f.name.clone(), effects))
    }

    /// The lock whose address a function named for a lock returns, as
    /// its whole body (`return &qdisc->q.lock;`, `return &h->locks[i &
    /// mask];`): the parameter and the member (an array's element is its
    /// array's).
    fn returned_address(&self, body: Node<'_>) -> Option<(usize, String)> {
        if !may_lock(&self.name) || body.kind() != "compound_statement" {
            return None;
        }
        let mut cursor = body.walk();
        let statements: Vec<Node<'_>> = body
            .named_children(&mut cursor)
            .filter(|n| n.kind() != "comment")
            .collect();
        let [statement] = statements[..] else {
            return None;
        };
        let value = strip_parentheses(
            statement
                .named_child(0)
                .filter(|_| statement.kind() == "return_statement")?,
        );
        let text = self.of(value).trim().strip_prefix('&')?.trim();
        // `&h->locks[i & mask]`: the subscript ends the expression.
        let text = match text.split_once('[') {
            Some((array, index)) if index.ends_with(']') && balanced(index) => array,
            Some(_) => return None,
            None => text,
        };
        self.param_member(&format!("&{text}"))
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
            "declaration" => {
                self.declare(node);
                let mut cursor = node.walk();
                let inits: Vec<Node<'_>> = node
                    .children_by_field_name("declarator", &mut cursor)
                    .filter(|d| d.kind() == "init_declarator")
                    .collect();
                for d in inits {
                    if let (Some(var), Some(value)) = (
                        d.child_by_field_name("declarator"),
                        d.child_by_field_name("value"),
                    ) {
                        self.alias(var, value);
                    }
                }
            }
            "call_expression" if self.call(node, out) => return,
            "assignment_expression" => {
                if let Some(left) = node.child_by_field_name("left") {
                    let op = node.child_by_field_name("operator").map(|o| self.of(o));
                    // `x->on = true`, `x->flags |= F`: made only on a
                    // change when a test of the same comes first.
                    let write = match (op, node.child_by_field_name("right")) {
                        (Some("=" | "|=" | "&="), Some(right)) => {
                            self.on_change(left, on_change::Stored::Value(right), Write::Assign)
                        }
                        _ => Write::Assign,
                    };
                    self.written(left, write, out);
                    let plain = op == Some("=");
                    if plain
                        && !self.types.is_empty()
                        && let Some(right) = node.child_by_field_name("right")
                    {
                        self.needless_store(left, right, "=", out);
                    }
                    if left.kind() == "identifier"
                        && let Some(right) = node.child_by_field_name("right")
                    {
                        self.alias(left, right);
                    }
                    if let Some(right) = node
                        .child_by_field_name("right")
                        .filter(|r| r.kind() == "identifier")
                    {
                        self.values.named.push(self.of(right));
                    }
                }
            }
            "update_expression" => {
                if let Some(arg) = node.child_by_field_name("argument") {
                    self.written(arg, Write::Assign, out);
                }
            }
            // What a branch that always leaves takes or releases stays in
            // it (`if (nolock) { if (spin_trylock(l)) return true; ...;
            // return spin_trylock(l); }`): the code after the `if` runs
            // only when the branch was not taken. So does what a trylock
            // in the condition of such a branch takes (`if
            // (spin_trylock(l)) return true;`).
            "if_statement" | "compound_statement"
                if taken_only_inside(node, self.text) || leaving_branch(node) =>
            {
                let held = self.held.clone();
                let mut cursor = node.walk();
                let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
                for child in children {
                    self.visit(child, out);
                }
                self.held = held;
                return;
            }
            "if_statement" if node.child_by_field_name("alternative").is_some() => {
                self.branches(node, out);
                return;
            }
            "field_expression" if !self.types.is_empty() && self.is_read(node) => {
                self.loaded(node, false);
            }
            // `.rmap_one = folio_referenced_one`: called later through
            // the pointer, on this function's path.
            "initializer_pair" => {
                if let Some(value) = node
                    .child_by_field_name("value")
                    .filter(|v| v.kind() == "identifier")
                {
                    self.calls.push(Call {
                        control: self.control,
                        pointer: true,
                        ..Call::between(&self.name, self.of(value))
                    });
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

    /// An `if` with an `else`: the `else` starts from the locks held
    /// where the `if` did, not from those its first branch left
    /// (`__remove_mapping()` releases the page cache's lock at the end of
    /// each branch, and the second branch's stores are under it). After
    /// it, the locks of the branch that goes on when the other leaves,
    /// else those either branch holds, as after an `if` with no `else`
    /// that takes one (`if (IS_ENABLED(CONFIG_RPS)) spin_lock(l); else
    /// local_irq_disable();` in `backlog_lock_irq_disable()`; `if (excl)
    /// down_write(l); else down_read(l);` holds `l` in either mode).
    fn branches(&mut self, node: Node<'_>, out: &mut Vec<Declaration>) {
        let (Some(consequence), Some(alternative)) = (
            node.child_by_field_name("consequence"),
            node.child_by_field_name("alternative"),
        ) else {
            return;
        };
        if let Some(condition) = node.child_by_field_name("condition") {
            self.visit(condition, out);
        }
        let before = self.held.clone();
        self.visit(consequence, out);
        let first = std::mem::replace(&mut self.held, before);
        self.visit(alternative, out);
        let second_leaves = alternative.named_child(0).is_some_and(leaves);
        match (leaves(consequence), second_leaves) {
            (true, _) => {}
            (false, true) => self.held = first,
            (false, false) => {
                let second = std::mem::replace(&mut self.held, first);
                for h in second {
                    if !self
                        .held
                        .iter()
                        .any(|k| k.text == h.text && k.shared == h.shared)
                    {
                        self.held.push(h);
                    }
                }
            }
        }
    }

    /// A lock taken (or asserted held) through expression `lock`.
    fn take(&mut self, lock: Node<'_>, how: &str, out: &mut Vec<Declaration>) {
        let (text, chain) = self
            .lock_alias(lock)
            .unwrap_or_else(|| (self.of(lock).to_owned(), self.resolve(lock)));
        self.hold(text, chain, how, is_shared(how), lock, out);
    }

    /// Of the structs a lock expression goes through (`&current->mm->
    /// mmap_lock`: `task_struct`, then `mm_struct`), the first that is
    /// one read for, else the outermost: the lock's member there.
    fn lock_member(&self, chain: &[(String, String)]) -> Option<(String, String)> {
        super::lock_member(chain, |ty| self.types.contains(ty))
    }

    /// Lock `text` (a member of each struct of `chain` its expression goes
    /// through, when resolved) held from `at` on, taken as `how`, `shared`
    /// or not.
    fn hold(
        &mut self,
        text: String,
        chain: Vec<(String, String)>,
        how: &str,
        shared: bool,
        at: Node<'_>,
        out: &mut Vec<Declaration>,
    ) {
        for (ty, path) in chain.iter().filter(|(ty, _)| self.types.contains(ty)) {
            out.push(self.declaration(ty, path, Said::Locked(how.to_owned()), at));
        }
        // Held already (asserted by a helper the holder calls, taken in
        // both arms of `if (!spin_trylock(l)) spin_lock(l)`): held once,
        // by its taker, one release lets it go; the latest taken still
        // comes last.
        if let Some(k) = self
            .held
            .iter()
            .position(|h| h.text == text && h.shared == shared)
        {
            let again = self.held.remove(k);
            self.held.push(again);
            return;
        }
        self.held.push(Held {
            member: self.lock_member(&chain),
            chain,
            global_mutex: self.is_global_mutex(&text),
            text,
            how: how.to_owned(),
            shared,
        });
    }

    /// Is lock `text` (`&shrinker_mutex`) one of the file's mutexes of the
    /// whole system?
    fn is_global_mutex(&self, text: &str) -> bool {
        let name = text.strip_prefix('&').unwrap_or(text).trim();
        self.global_mutexes.iter().any(|m| m == name)
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
    fn written(&mut self, target: Node<'_>, write: Write, out: &mut Vec<Declaration>) {
        self.targets.insert(strip_address(target).id());
        // `*x->p = v` writes what `p` points to, not `p`; `*p = v` and
        // `p[i] = v` for `p = &x->m` write `x->m`.
        let through = match target.kind() {
            "pointer_expression" if self.of(target).starts_with('*') => {
                target.child_by_field_name("argument")
            }
            "subscript_expression" => target.child_by_field_name("argument"),
            _ => None,
        };
        if let Some(pointer) = through.filter(|p| p.kind() == "identifier") {
            let name = self.of(pointer);
            if let Some(alias) = self.aliases.iter().rev().find(|a| a.variable == name) {
                for (ty, path) in alias.chain.clone() {
                    if self.types.contains(&ty) {
                        let said = Said::Written(write.clone(), self.held.clone());
                        out.push(self.declaration(&ty, &path, said, target));
                    }
                }
            }
            return;
        }
        if through.is_some() && target.kind() == "pointer_expression" {
            return;
        }
        // `!p->n++` is `!(p->n++)`, which the grammar reads as `(!p->n)++`.
        let target = match target.kind() {
            "unary_expression" => target.child_by_field_name("argument").unwrap_or(target),
            _ => target,
        };
        self.targets.insert(target.id());
        for (ty, path) in self.resolve(target) {
            if self.types.contains(&ty) {
                let said = Said::Written(write.clone(), self.held.clone());
                out.push(self.declaration(&ty, &path, said, target));
            }
        }
    }

    fn declaration(&self, ty: &str, path: &str, said: Said, at: Node<'_>) -> Declaration {
        let Placed { role, param } = self.placed(at);
        Declaration {
            ty: ty.to_owned(),
            path: path.to_owned(),
            said,
            function: Some(self.name.clone()),
            file: self.file.to_owned(),
            line: at.start_position().row + 1,
            role,
            param,
            entry: None,
            callers: 0,
            hot_callers: 0,
            paths: Vec::new(),
        }
    }

    /// What argument `arg` passes: an object this function builds, one it
    /// tears down (any object a teardown function passes), one of its
    /// parameters, or something else.
    fn passed(&self, arg: Node<'_>) -> Passed {
        if arg.kind() != "identifier" {
            return Passed::Other;
        }
        let name = self.of(arg);
        if self.boot || self.built.iter().any(|b| b == name) {
            return Passed::Built;
        }
        if self.teardown && !self.control {
            return Passed::Dying;
        }
        match self.params.iter().position(|p| p == name) {
            Some(i) => Passed::Param(i),
            None => Passed::Other,
        }
    }

    /// Where access `at` is made (while its object is built or torn down,
    /// on the control path, or on a fast path) and the parameter it starts
    /// from. A member reached through a pointer member (`inode->i_sb->
    /// s_remove_count`) is another object's, which lives on: neither built
    /// nor torn down with the variable's, nor passed with it; it is built
    /// when this function allocates it (`ssp->srcu_sup = kzalloc(...)`).
    fn placed(&self, at: Node<'_>) -> Placed {
        let object = object_of(at, self.text);
        let own = object.as_ref().is_none_or(|o| o.own);
        let base = object.as_ref().filter(|o| o.own).map(|o| o.base);
        let built = self.boot
            || object
                .as_ref()
                .is_some_and(|o| self.built.contains(&o.spelled));
        // A lock of the object held says it is still shared: a teardown
        // function that takes one (`xprt_destroy_bc()` under `&xprt->
        // bc_pa_lock`) tears down a part of an object that lives on.
        let teardown = self.teardown && own && !base.is_some_and(|b| self.holds_lock_of(b));
        Placed {
            role: match (built, self.control, teardown) {
                (true, _, _) => Role::Construction,
                (false, true, _) => Role::Control,
                (false, false, true) => Role::Teardown,
                (false, false, false) if self.failure => Role::Failure,
                (false, false, false) => Role::Fast,
            },
            param: base.and_then(|v| self.params.iter().position(|p| p == v)),
        }
    }

    /// Is a lock reached from `variable` held here (`&xprt->bc_pa_lock`,
    /// `&sk->sk_lock.slock`)?
    fn holds_lock_of(&self, variable: &str) -> bool {
        self.held.iter().any(|h| {
            let lock = h.text.trim().trim_start_matches('&').trim_start();
            lock.strip_prefix(variable)
                .is_some_and(|rest| rest.starts_with("->") || rest.starts_with('.'))
        })
    }

    /// Is member access `node` a load: not written, and not only the
    /// address of an embedded struct's member (`x->a` in `x->a.b`)?
    fn is_read(&self, node: Node<'_>) -> bool {
        if self.targets.contains(&node.id()) {
            return false;
        }
        match node.parent() {
            Some(p) if p.kind() == "field_expression" => match p.child_by_field_name("field") {
                Some(field) => self.text[node.end_byte()..field.start_byte()].contains("->"),
                None => false,
            },
            // `&x->m`, `&x->m[i]`: an address, no load (a pointer to it
            // may be kept, see `aliases`).
            _ => {
                let mut up = node;
                while let Some(p) = up.parent().filter(|p| p.kind() == "subscript_expression") {
                    up = p;
                }
                !up.parent().is_some_and(|p| {
                    p.kind() == "pointer_expression" && self.of(p).starts_with('&')
                })
            }
        }
    }

    /// `p = &x->m[i]` (or `T *p = &x->m`): writes through `*p` and `p[j]`
    /// are writes of `x->m`, and `spin_lock(p)` takes it; `p =
    /// qdisc_lock(q)` points to the lock the accessor returns.
    fn alias(&mut self, variable: Node<'_>, value: Node<'_>) {
        let Some(name) = declared_name(variable, self.text) else {
            return;
        };
        self.aliases.retain(|a| a.variable != name);
        self.remote.retain(|v| *v != name);
        if another_cpus(strip_address(value), self.text) {
            self.remote.push(name.clone());
        }
        let pointed = match strip_parentheses(value) {
            v if v.kind() == "pointer_expression" && self.of(v).starts_with('&') => {
                Some((self.of(v).to_owned(), self.resolve(strip_address(v))))
            }
            v => self.lock_alias(v),
        };
        if let Some((text, chain)) = pointed {
            self.aliases.push(Alias {
                variable: name,
                text,
                chain,
            });
        }
    }

    /// Member access `node` read (`once`: a marked read).
    fn loaded(&mut self, node: Node<'_>, once: bool) {
        let remote =
            base_variable(node, self.text).is_some_and(|v| self.remote.iter().any(|r| r == v));
        for (ty, path) in self.resolve(node) {
            if self.types.contains(&ty) {
                let said = Said::Read { once, remote };
                let first = self.declaration(&ty, &path, said, node);
                if let Said::Read {
                    once: any,
                    remote: any_remote,
                } = &mut self.reads.entry((ty, path)).or_insert(first).said
                {
                    *any |= once;
                    *any_remote |= remote;
                }
            }
        }
    }

    /// The pointer a member access goes through last (`x->stats` of
    /// `x->stats->n`), or the expression itself.
    fn pointer_of(&self, node: Node<'a>) -> Node<'a> {
        let mut n = node;
        for _ in 0..64 {
            match n.kind() {
                "field_expression" => {
                    let (Some(arg), Some(field)) = (
                        n.child_by_field_name("argument"),
                        n.child_by_field_name("field"),
                    ) else {
                        break;
                    };
                    if self.text[arg.end_byte()..field.start_byte()].contains("->") {
                        return match arg.kind() {
                            "field_expression" => arg,
                            _ => n,
                        };
                    }
                    n = arg;
                }
                "pointer_expression" | "parenthesized_expression" | "subscript_expression" => {
                    match n.child_by_field_name("argument") {
                        Some(a) => n = a,
                        None => break,
                    }
                }
                _ => break,
            }
        }
        node
    }

    /// [`Function::resolve`] of an expression written as text
    /// (`&x->lock`, `x->a.b`), for one outside the parsed body.
    fn resolve_text(&self, text: &str) -> Vec<(String, String)> {
        let text = text.trim().trim_start_matches('&').trim();
        let mut steps = Vec::new();
        let mut rest = text;
        let mut arrow = false;
        let mut base = None;
        loop {
            let (at, len, next_arrow) = match (rest.find("->"), rest.find('.')) {
                (Some(a), Some(d)) if d < a => (d, 1, false),
                (Some(a), _) => (a, 2, true),
                (None, Some(d)) => (d, 1, false),
                (None, None) => (rest.len(), 0, false),
            };
            let word = rest[..at].trim().to_owned();
            match base {
                None => base = Some(word),
                Some(_) => steps.push((word, arrow)),
            }
            if len == 0 {
                break;
            }
            arrow = next_arrow;
            rest = &rest[at + len..];
        }
        self.chain(&base.unwrap_or_default(), steps)
    }

    /// The struct members expression `node` names: for `lruvec->lrugen.
    /// max_seq`, (`lruvec`, `lrugen.max_seq`) and (`lru_gen_folio`,
    /// `max_seq`). Addresses, subscripts and parentheses are seen through;
    /// a member reached through a pointer (`skb->sk->sk_lock`) is the
    /// pointed-to struct's (`sock`, `sk_lock`), not the pointer's holder's.
    fn resolve(&self, node: Node<'_>) -> Vec<(String, String)> {
        access(node, self.text).map_or_else(Vec::new, |(base, fields)| self.chain(base, fields))
    }

    /// The members `base` (a variable) then `fields` name (each with
    /// whether `->` reaches it), from each struct on the way whose path to
    /// the last field goes through no pointer: (`lruvec`, `lrugen.
    /// max_seq`), (`lru_gen_folio`, `max_seq`).
    fn chain(&self, base: &str, fields: Vec<(String, bool)>) -> Vec<(String, String)> {
        if fields.is_empty() || fields.iter().any(|(f, _)| f.is_empty()) {
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
        let fields = self.unaliased(&ty, fields);
        // The first field from which no `->` follows.
        let own_from = fields
            .iter()
            .rposition(|(_, arrow)| *arrow)
            .filter(|&k| k > 0)
            .unwrap_or(0);
        let names: Vec<&str> = fields.iter().map(|(f, _)| f.as_str()).collect();
        let mut out = Vec::new();
        for (i, field) in names.iter().enumerate() {
            if i >= own_from {
                out.push((ty.clone(), names[i..].join(".")));
            }
            match self.build.member_type(&ty, field) {
                Some(next) => ty = next,
                None => break,
            }
        }
        out
    }

    /// `fields` from struct `ty` on, each member alias (see
    /// [`super::wrappers::member_aliases`]) that is no member of its
    /// struct replaced by the members it stands for (`dentry->d_lock`
    /// is `dentry->d_lockref.lock`), as the preprocessor does.
    fn unaliased(&self, ty: &str, fields: Vec<(String, bool)>) -> Vec<(String, bool)> {
        // Every member access comes here: most name no alias at all.
        if !fields.iter().any(|(f, _)| self.wrappers.alias(f).is_some()) {
            return fields;
        }
        let mut ty = Some(ty.to_owned());
        let mut out = Vec::with_capacity(fields.len());
        for (field, arrow) in fields {
            let alias = ty.as_deref().and_then(|t| {
                self.build
                    .member_type(t, &field)
                    .is_none()
                    .then(|| self.wrappers.alias(&field))
                    .flatten()
                    .filter(|path| self.build.member_type(t, &path[0]).is_some())
            });
            match alias {
                Some(path) => {
                    for (k, member) in path.iter().enumerate() {
                        ty = ty.and_then(|t| self.build.member_type(&t, member));
                        out.push((member.clone(), arrow && k == 0));
                    }
                }
                None => {
                    ty = ty.and_then(|t| self.build.member_type(&t, &field));
                    out.push((field, arrow));
                }
            }
        }
        out
    }
}

/// Is function body `body` one expression statement (`set_bit(AS_X,
/// &mapping->flags);`), comments aside?
fn one_expression(body: Node<'_>) -> bool {
    let mut cursor = body.walk();
    let mut statements = body
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment");
    matches!(
        (statements.next(), statements.next()),
        (Some(s), None) if s.kind() == "expression_statement"
    )
}

/// Is `block` an `if`'s branch whose last statement leaves (see
/// [`leaves`])?
fn leaving_branch(block: Node<'_>) -> bool {
    block
        .parent()
        .is_some_and(|p| matches!(p.kind(), "if_statement" | "else_clause"))
        && leaves(block)
}

/// Is `statement` an `if` with no `else` whose condition is a call that
/// is true when it takes its lock (`spin_trylock()`,
/// `atomic_dec_and_lock()`; not its negation, nor
/// `mmap_write_lock_killable()`, which is 0 when it takes it) and whose
/// branch always leaves: what the call takes is held in the branch only.
fn taken_only_inside(statement: Node<'_>, text: &str) -> bool {
    statement.child_by_field_name("alternative").is_none()
        && statement
            .child_by_field_name("condition")
            .map(strip_parentheses)
            .filter(|c| c.kind() == "call_expression")
            .and_then(|c| c.child_by_field_name("function"))
            .and_then(|f| text.get(f.byte_range()))
            .is_some_and(|name| name.contains("trylock") || name.contains("_and_lock"))
        && statement
            .child_by_field_name("consequence")
            .is_some_and(leaves)
}

/// Does `statement` always leave: a `return`, `goto`, `break` or
/// `continue`, or a block whose last statement is one?
fn leaves(statement: Node<'_>) -> bool {
    let jump = |n: Node<'_>| {
        matches!(
            n.kind(),
            "goto_statement" | "return_statement" | "break_statement" | "continue_statement"
        )
    };
    if statement.kind() != "compound_statement" {
        return jump(statement);
    }
    let mut cursor = statement.walk();
    let last = statement
        .named_children(&mut cursor)
        .filter(|n| n.kind() != "comment")
        .last();
    last.is_some_and(jump)
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

/// A function a macro defines, by the macro's text: the grammar reads
/// `META_COLLECTOR(int_sk_omem_alloc) { ... }` as type `META_COLLECTOR`
/// and declarator `(int_sk_omem_alloc)`.
fn macro_defined(function: Node<'_>, declarator: Node<'_>, text: &str) -> Option<String> {
    let ty = function.child_by_field_name("type")?;
    let inner = declarator.named_child(0)?;
    (ty.kind() == "type_identifier"
        && declarator.kind() == "parenthesized_declarator"
        && inner.kind() == "identifier")
        .then(|| format!("{}({})", &text[ty.byte_range()], &text[inner.byte_range()]))
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

/// `(e)` → `e`, however deep.
fn strip_parentheses(node: Node<'_>) -> Node<'_> {
    let mut n = node;
    while n.kind() == "parenthesized_expression" {
        match n.named_child(0) {
            Some(inner) => n = inner,
            None => break,
        }
    }
    n
}

/// Is `index` (what follows an array's `[`) one subscript that closes at
/// its end (`i & mask]`, not `i].lock` or `i][j]`)?
fn balanced(index: &str) -> bool {
    let mut depth = 1usize;
    for (at, c) in index.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return at + 1 == index.len();
                }
            }
            _ => {}
        }
    }
    false
}

/// `&x->f` → `x->f`; anything else as it is.
fn strip_address(node: Node<'_>) -> Node<'_> {
    let mut n = node;
    while matches!(n.kind(), "pointer_expression" | "parenthesized_expression") {
        if n.kind() == "pointer_expression" && n.child(0).is_none_or(|c| c.kind() != "&") {
            break;
        }
        match n
            .child_by_field_name("argument")
            .or_else(|| n.named_child(0))
        {
            Some(a) => n = a,
            None => break,
        }
    }
    n
}

/// The variable member access `node` starts from and the fields it names,
/// each with whether `->` reaches it (`lruvec->lrugen.max_seq`: `lruvec`,
/// `lrugen` by `->`, `max_seq` by `.`). Addresses, subscripts, casts and
/// parentheses are seen through.
fn access<'t>(node: Node<'_>, text: &'t str) -> Option<(&'t str, Vec<(String, bool)>)> {
    let mut fields = Vec::new();
    let mut n = node;
    let base = loop {
        match n.kind() {
            "field_expression" => {
                let (arg, field) = (
                    n.child_by_field_name("argument")?,
                    n.child_by_field_name("field")?,
                );
                let arrow = text[arg.end_byte()..field.start_byte()].contains("->");
                fields.push((text[field.byte_range()].to_owned(), arrow));
                n = arg;
            }
            "subscript_expression" => n = n.child_by_field_name("argument")?,
            "pointer_expression" | "parenthesized_expression" | "cast_expression" => {
                n = n
                    .child_by_field_name("argument")
                    .or_else(|| n.named_child(n.named_child_count().saturating_sub(1) as u32))?
            }
            "identifier" => break &text[n.byte_range()],
            _ => return None,
        }
    };
    fields.reverse();
    Some((base, fields))
}

/// The object a member access names (see [`object_of`]).
struct Object<'t> {
    /// The variable the access starts from.
    base: &'t str,
    /// The object spelled without subscripts, casts or parentheses:
    /// `lruvec` of `lruvec->lrugen.max_seq`, `inode->i_sb` of
    /// `inode->i_sb->s_remove_count`.
    spelled: String,
    /// The variable's own (reached from it with no `->` but the first).
    own: bool,
}

/// The object whose member access `node` names.
fn object_of<'t>(node: Node<'_>, text: &'t str) -> Option<Object<'t>> {
    let (base, fields) = access(node, text)?;
    let last_arrow = fields.iter().rposition(|(_, arrow)| *arrow).unwrap_or(0);
    Some(Object {
        base,
        spelled: spelled(base, &fields[..last_arrow]),
        own: last_arrow == 0,
    })
}

/// `base` then `fields` (each with whether `->` reaches it) as C spells
/// them: `ssp->srcu_sup`.
fn spelled(base: &str, fields: &[(String, bool)]) -> String {
    let mut out = base.to_owned();
    for (field, arrow) in fields {
        out.push_str(if *arrow { "->" } else { "." });
        out.push_str(field);
    }
    out
}

/// Is `value` another CPU's per-CPU object: `cpu_rq(cpu)`, `per_cpu(x,
/// cpu)`, `per_cpu_ptr(x, cpu)`, with a CPU that is not this one's
/// (`smp_processor_id()`)?
fn another_cpus(value: Node<'_>, text: &str) -> bool {
    if value.kind() != "call_expression" {
        return false;
    }
    let Some(name) = value
        .child_by_field_name("function")
        .filter(|f| f.kind() == "identifier")
        .map(|f| &text[f.byte_range()])
    else {
        return false;
    };
    let Some(args) = value.child_by_field_name("arguments") else {
        return false;
    };
    let mut cursor = args.walk();
    let args: Vec<Node<'_>> = args.named_children(&mut cursor).collect();
    let cpu = match name {
        "cpu_rq" | "cpu_curr" => args.first(),
        "per_cpu" | "per_cpu_ptr" => args.get(1),
        _ => return false,
    };
    cpu.is_some_and(|c| !is_this_cpu(&text[c.byte_range()]))
}

/// The variable a member access starts from (`napi` of `&napi->
/// poll_list.next`).
fn base_variable<'t>(node: Node<'_>, text: &'t str) -> Option<&'t str> {
    match node.kind() {
        "identifier" => Some(&text[node.byte_range()]),
        _ => access(node, text).map(|(base, _)| base),
    }
}

/// The variables (or pointer members, `ssp->srcu_sup`) whose object
/// function body `body` builds, and whether it runs on the control path
/// (see [`is_control_call`]): assigned an allocation (`napi =
/// kzalloc(...)`, `struct foo *f = foo_alloc()`, `ssp->srcu_sup =
/// kzalloc(...)`),
/// cleared whole (`memset(f, 0, ...)`), or one of whose members it
/// initialises (`INIT_LIST_HEAD(&napi->poll_list)`, `spin_lock_init(&q->
/// lock)`, `refcount_set(&p->ref, 1)`, `timer_setup(&t->timer, ...)`);
/// and the variables that view one of those as another type (`ireq =
/// inet_rsk(req)`, `sk = (struct sock *)req`, see [`is_view`]).
fn built(body: Node<'_>, text: &str) -> (Vec<String>, bool) {
    let mut out: Vec<String> = Vec::new();
    // (viewer, viewed): `ireq = inet_rsk(req)` is ("ireq", "req").
    let mut views: Vec<(String, &str)> = Vec::new();
    let mut control = false;
    let mut stack = vec![body];
    let callee = |call: Node<'_>| {
        call.child_by_field_name("function")
            .filter(|f| f.kind() == "identifier")
            .map(|f| &text[f.byte_range()])
    };
    while let Some(n) = stack.pop() {
        let mut add = |v: Option<&str>| {
            if let Some(v) = v
                && !out.iter().any(|o| o == v)
            {
                out.push(v.to_owned());
            }
        };
        match n.kind() {
            "assignment_expression" | "init_declarator" => {
                let (target, value) = match n.kind() {
                    "assignment_expression" => (
                        n.child_by_field_name("left"),
                        n.child_by_field_name("right"),
                    ),
                    _ => (
                        n.child_by_field_name("declarator"),
                        n.child_by_field_name("value"),
                    ),
                };
                if let (Some(t), Some(v)) = (target, value)
                    && matches!(t.kind(), "identifier" | "pointer_declarator")
                    && let Some(viewed) = viewed(v, text)
                    && let Some(viewer) = declared_name(t, text)
                {
                    views.push((viewer, viewed));
                }
                if let (Some(t), Some(v)) = (target, value)
                    && v.kind() == "call_expression"
                    && callee(v).is_some_and(is_allocation)
                {
                    // `v = kzalloc(...)`; `v->buf = kzalloc(...)` builds
                    // the object at `v->buf`, not `v`.
                    if matches!(t.kind(), "identifier" | "pointer_declarator") {
                        add(declared_name(t, text).as_deref());
                    } else if let Some((base, fields)) = access(t, text) {
                        add(Some(&spelled(base, &fields)));
                    }
                }
            }
            "call_expression" => {
                control |= callee(n).is_some_and(is_control_call);
                if let Some(name) = callee(n)
                    && let Some(first) = n
                        .child_by_field_name("arguments")
                        .and_then(|a| a.named_child(0))
                {
                    if name == "memset" && first.kind() == "identifier" {
                        add(Some(&text[first.byte_range()]));
                    } else if is_member_init(name)
                        && strip_address(first).kind() == "field_expression"
                    {
                        // `mutex_init(&ssp->srcu_sup->srcu_cb_mutex)`: the
                        // object at `ssp->srcu_sup`, and (as ever) `ssp`.
                        add(base_variable(first, text));
                        if let Some(o) = object_of(strip_address(first), text).filter(|o| !o.own) {
                            add(Some(&o.spelled));
                        }
                    }
                }
            }
            _ => {}
        }
        let mut cursor = n.walk();
        stack.extend(n.children(&mut cursor));
    }
    // A view of a view of a new object is one too, in whatever order
    // they were found.
    while let Some(i) = views
        .iter()
        .position(|(viewer, viewed)| out.iter().any(|o| o == viewed) && !out.contains(viewer))
    {
        out.push(views.swap_remove(i).0);
    }
    (out, control)
}

/// The variable expression `value` views as another type, when it is
/// one: a cast (`(struct sock *)req`), or a view's call on it alone
/// (`inet_rsk(req)`, `container_of(req, struct tcp_request_sock, req)`).
fn viewed<'t>(value: Node<'_>, text: &'t str) -> Option<&'t str> {
    let arg = match value.kind() {
        "cast_expression" => value.child_by_field_name("value")?,
        "call_expression" => {
            let f = value.child_by_field_name("function")?;
            let args = value.child_by_field_name("arguments")?;
            let one = args.named_child_count() == 1;
            let name = &text[f.byte_range()];
            match (f.kind() == "identifier", name) {
                (true, "container_of") => args.named_child(0)?,
                (true, _) if one && is_view(name) => args.named_child(0)?,
                _ => return None,
            }
        }
        _ => return None,
    };
    (arg.kind() == "identifier").then(|| &text[arg.byte_range()])
}

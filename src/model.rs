//! The type model: one arena of C types that every loader fills and every
//! layout computation reads. It knows nothing about DWARF or BTF.
//!
//! Composite types may be *shallow*: their name and size are known but their
//! members were not loaded (a type reached only through a pointer, or a
//! forward declaration). Loaders fill members on demand.

/// Index of a type in a [`TypeTable`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TypeId(pub u32);

/// A source location (`DW_AT_decl_file` / `DW_AT_decl_line`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceLoc {
    /// File path as recorded by the compiler, relative to the build directory when possible.
    pub file: String,
    /// 1-based line number.
    pub line: u64,
}

/// `struct` or `union`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CompositeKind {
    /// A C struct (or C++ class).
    Struct,
    /// A C union.
    Union,
}

impl CompositeKind {
    /// The C keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            CompositeKind::Struct => "struct",
            CompositeKind::Union => "union",
        }
    }
}

/// A type qualifier that does not change the layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Qualifier {
    /// `const`
    Const,
    /// `volatile`
    Volatile,
    /// `restrict`
    Restrict,
    /// `_Atomic`
    Atomic,
}

impl Qualifier {
    /// The C keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Qualifier::Const => "const",
            Qualifier::Volatile => "volatile",
            Qualifier::Restrict => "restrict",
            Qualifier::Atomic => "_Atomic",
        }
    }
}

/// A data member of a struct or union.
#[derive(Clone, Debug)]
pub struct Member {
    /// `None` for anonymous struct/union members (and unnamed bitfields).
    pub name: Option<String>,
    /// The member's declared type.
    pub ty: TypeId,
    /// Offset of the first bit, from the start of the containing type.
    pub bit_offset: u64,
    /// Width in bits for bitfields, `None` for ordinary members.
    pub bit_size: Option<u64>,
    /// Explicit alignment (`DW_AT_alignment`), if the compiler recorded one.
    pub alignment: Option<u64>,
    /// Where the member is declared.
    pub decl: Option<SourceLoc>,
}

impl Member {
    /// Byte offset of the member (of its first bit, for bitfields).
    pub fn byte_offset(&self) -> u64 {
        self.bit_offset / 8
    }

    /// True for bitfield members.
    pub fn is_bitfield(&self) -> bool {
        self.bit_size.is_some()
    }
}

/// A struct or union.
#[derive(Clone, Debug)]
pub struct Composite {
    /// Struct or union.
    pub kind: CompositeKind,
    /// Tag name; `None` for anonymous types.
    pub name: Option<String>,
    /// Size in bytes; `None` for a declaration without definition.
    pub size: Option<u64>,
    /// Explicit alignment (`DW_AT_alignment`), if recorded.
    pub alignment: Option<u64>,
    /// Members, or `None` when not loaded (see the module docs).
    pub members: Option<Vec<Member>>,
    /// Where the type is defined.
    pub decl: Option<SourceLoc>,
}

/// One C type.
#[derive(Clone, Debug)]
pub enum Type {
    /// `void`, or a type the loader could not represent.
    Void,
    /// A base type such as `int` or `_Bool`.
    Base {
        /// Name as the compiler spelled it.
        name: String,
        /// Size in bytes.
        size: u64,
    },
    /// A pointer (or C++ reference).
    Pointer {
        /// Pointee.
        target: TypeId,
        /// Size of the pointer in bytes.
        size: u64,
    },
    /// A qualified type.
    Qualified {
        /// Which qualifier.
        qualifier: Qualifier,
        /// The qualified type.
        target: TypeId,
    },
    /// A typedef.
    Typedef {
        /// The new name.
        name: String,
        /// What it names.
        target: TypeId,
    },
    /// An array, possibly multi-dimensional (`int a[2][3]` has dims `[2, 3]`).
    Array {
        /// The element type.
        element: TypeId,
        /// Element counts per dimension, outermost first; `None` for a
        /// flexible array (`x[]`), `Some(0)` for a zero-length array.
        dims: Vec<Option<u64>>,
    },
    /// An enumeration.
    Enum {
        /// Tag name.
        name: Option<String>,
        /// Size in bytes.
        size: u64,
    },
    /// A function type (only ever reached through a pointer).
    Function {
        /// Return type.
        ret: TypeId,
        /// Parameter types.
        params: Vec<TypeId>,
        /// True for `...`.
        variadic: bool,
    },
    /// A struct or union.
    Composite(Composite),
}

/// Limit on typedef/qualifier/array nesting when walking types; deeper
/// chains only occur in corrupt or hostile input (a typedef cycle).
pub const MAX_TYPE_DEPTH: usize = 64;

/// The arena. Id 0 is always `void`: loaders map "no type" there.
#[derive(Clone, Debug)]
pub struct TypeTable {
    types: Vec<Type>,
}

/// A table holding only `void`, as [`TypeTable::new`].
impl Default for TypeTable {
    fn default() -> Self {
        TypeTable::new()
    }
}

impl TypeTable {
    /// An empty table. Id 0 is `void`.
    pub fn new() -> Self {
        TypeTable {
            types: vec![Type::Void],
        }
    }

    /// The `void` type.
    pub const VOID: TypeId = TypeId(0);

    /// Adds a type and returns its id.
    pub fn push(&mut self, ty: Type) -> TypeId {
        let id = TypeId(u32::try_from(self.types.len()).expect("more than 2^32 types"));
        self.types.push(ty);
        id
    }

    /// Drops the types pushed after the first `len` (a what-if layout's
    /// own types, when it is undone).
    pub(crate) fn truncate(&mut self, len: u32) {
        self.types.truncate((len as usize).max(1));
    }

    /// Replaces a type (loaders reserve an id before decoding, to break cycles).
    pub fn set(&mut self, id: TypeId, ty: Type) {
        self.types[id.0 as usize] = ty;
    }

    /// How many types the table holds; ids run from 0 to this.
    pub fn len(&self) -> u32 {
        self.types.len() as u32
    }

    /// Never true: id 0 is always `void`.
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The type behind `id`.
    pub fn get(&self, id: TypeId) -> &Type {
        &self.types[id.0 as usize]
    }

    /// Mutable access, for loaders filling members.
    pub fn get_mut(&mut self, id: TypeId) -> &mut Type {
        &mut self.types[id.0 as usize]
    }

    /// The composite behind `id`, if it is one (without looking through typedefs).
    pub fn composite(&self, id: TypeId) -> Option<&Composite> {
        match self.get(id) {
            Type::Composite(c) => Some(c),
            _ => None,
        }
    }

    /// Follows typedefs and qualifiers to the underlying type.
    pub fn strip(&self, mut id: TypeId) -> TypeId {
        for _ in 0..MAX_TYPE_DEPTH {
            match self.get(id) {
                Type::Typedef { target, .. } | Type::Qualified { target, .. } => id = *target,
                _ => return id,
            }
        }
        id
    }

    /// Size in bytes, or `None` for incomplete types (void, functions,
    /// declarations) and for chains too deep to be real.
    pub fn size_of(&self, id: TypeId) -> Option<u64> {
        self.size_at_depth(id, 0)
    }

    fn size_at_depth(&self, id: TypeId, depth: usize) -> Option<u64> {
        if depth > MAX_TYPE_DEPTH {
            return None;
        }
        match self.get(id) {
            Type::Void | Type::Function { .. } => None,
            Type::Base { size, .. } | Type::Pointer { size, .. } | Type::Enum { size, .. } => {
                Some(*size)
            }
            Type::Qualified { target, .. } | Type::Typedef { target, .. } => {
                self.size_at_depth(*target, depth + 1)
            }
            Type::Array { element, dims } => {
                let count = element_count(dims)?;
                if count == 0 {
                    return Some(0);
                }
                self.size_at_depth(*element, depth + 1)?.checked_mul(count)
            }
            Type::Composite(c) => c.size,
        }
    }

    /// Natural alignment of a type, as the C ABI lays it out: explicit
    /// `DW_AT_alignment` when recorded, else the largest alignment of the
    /// members, base types aligned to their size. Inferred, so an
    /// ABI-specific exception (i386 `long long` in structs) may differ.
    pub fn alignment_of(&self, id: TypeId) -> u64 {
        let mut memo = std::collections::HashMap::new();
        self.align_at_depth(id, 0, &mut memo, &mut Vec::new())
            .max(1)
    }

    /// Memoized, so a struct holding the same type many times (or a hostile
    /// one holding itself) is visited once per type.
    fn align_at_depth(
        &self,
        id: TypeId,
        depth: usize,
        memo: &mut std::collections::HashMap<TypeId, u64>,
        active: &mut Vec<TypeId>,
    ) -> u64 {
        if depth > MAX_TYPE_DEPTH || active.contains(&id) {
            return 1;
        }
        if let Some(&known) = memo.get(&id) {
            return known;
        }
        active.push(id);
        let align = self.align_uncached(id, depth, memo, active);
        active.pop();
        memo.insert(id, align);
        align
    }

    fn align_uncached(
        &self,
        id: TypeId,
        depth: usize,
        memo: &mut std::collections::HashMap<TypeId, u64>,
        active: &mut Vec<TypeId>,
    ) -> u64 {
        match self.get(id) {
            Type::Void | Type::Function { .. } => 1,
            Type::Base { size, .. } | Type::Pointer { size, .. } | Type::Enum { size, .. } => {
                if size.is_power_of_two() {
                    *size
                } else {
                    1
                }
            }
            Type::Qualified { target, .. } | Type::Typedef { target, .. } => {
                self.align_at_depth(*target, depth + 1, memo, active)
            }
            Type::Array { element, .. } => self.align_at_depth(*element, depth + 1, memo, active),
            Type::Composite(c) => {
                let natural = c
                    .members
                    .iter()
                    .flatten()
                    .map(|m| {
                        m.alignment
                            .unwrap_or_else(|| self.align_at_depth(m.ty, depth + 1, memo, active))
                    })
                    .max()
                    .unwrap_or(1);
                c.alignment.map_or(natural, |a| a.max(natural))
            }
        }
    }
}

/// Total element count of an array's dimensions; `Some(0)` when any
/// dimension is zero or flexible, `None` on overflow.
pub fn element_count(dims: &[Option<u64>]) -> Option<u64> {
    dims.iter()
        .try_fold(1u64, |acc, d| acc.checked_mul(d.unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base(t: &mut TypeTable, name: &str, size: u64) -> TypeId {
        t.push(Type::Base {
            name: name.into(),
            size,
        })
    }

    #[test]
    fn sizes_follow_typedefs_and_arrays() {
        let mut t = TypeTable::new();
        let long = base(&mut t, "long", 8);
        let td = t.push(Type::Typedef {
            name: "atomic_long_t".into(),
            target: long,
        });
        let arr = t.push(Type::Array {
            element: td,
            dims: vec![Some(1), Some(2), Some(4)],
        });
        assert_eq!(t.size_of(arr), Some(64));
        let flex = t.push(Type::Array {
            element: td,
            dims: vec![None],
        });
        assert_eq!(t.size_of(flex), Some(0));
        assert_eq!(t.alignment_of(arr), 8);
    }

    #[test]
    fn typedef_cycles_do_not_hang() {
        let mut t = TypeTable::new();
        let a = t.push(Type::Void);
        t.set(
            a,
            Type::Typedef {
                name: "a".into(),
                target: a,
            },
        );
        assert_eq!(t.size_of(a), None);
        assert_eq!(t.alignment_of(a), 1);
        t.strip(a);
    }

    #[test]
    fn absurd_array_bounds_do_not_overflow() {
        let mut t = TypeTable::new();
        let long = base(&mut t, "long", 8);
        let arr = t.push(Type::Array {
            element: long,
            dims: vec![Some(u64::MAX), Some(2)],
        });
        assert_eq!(t.size_of(arr), None);
    }
}

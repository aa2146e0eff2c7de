//! Opening an ELF file: memory-map it, find the DWARF sections, decompress
//! them (SHF_COMPRESSED, zlib or zstd, and GNU `.zdebug_*`), apply the
//! `.rela.debug_*` relocations of relocatable objects, and tell the cacheline
//! size of the target machine.
//!
//! Nothing here knows about DWARF contents: the result is a set of byte
//! slices, borrowed from the map when possible and owned when they had to be
//! rewritten.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, ObjectSymbol, RelocationKind, RelocationTarget};

use crate::error::{Error, Result};

mod truncated;

/// The DWARF sections cachelint reads. Everything else is ignored.
pub const DWARF_SECTIONS: &[&str] = &[
    ".debug_info",
    ".debug_abbrev",
    ".debug_str",
    ".debug_line",
    ".debug_line_str",
    ".debug_str_offsets",
    ".debug_types",
];

/// A file's size and modification time, `SIZE NANOS`: what a cache keyed
/// by the file checks it against (`None` when it cannot be read).
pub(crate) fn stamp(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    let time = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(format!("{} {}", meta.len(), time.as_nanos()))
}

/// Reads `path` whole, as `what` ("a rules file"), refusing it once it
/// passes `limit` bytes: never more than `limit + 1` bytes are read, so
/// an endless file (`/dev/zero`) costs nothing.
pub fn read_limited(path: &Path, limit: u64, what: &'static str) -> Result<Vec<u8>> {
    within(path, head(path, limit + 1)?, limit, what)
}

/// `data`, the first `limit + 1` bytes read of `path`, when the file is no
/// larger than `limit`: for a reader that looks at the first bytes before
/// it refuses a size ([`read_limited`] in two steps).
pub fn within(path: &Path, data: Vec<u8>, limit: u64, what: &'static str) -> Result<Vec<u8>> {
    if data.len() as u64 > limit {
        return Err(Error::TooLarge {
            path: path.to_owned(),
            what,
            limit_mb: limit >> 20,
        });
    }
    Ok(data)
}

/// The first `n` bytes of `path` (fewer when it is shorter).
pub fn head(path: &Path, n: u64) -> Result<Vec<u8>> {
    let io = |source| Error::Io {
        path: path.to_owned(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let mut data = Vec::new();
    std::io::Read::read_to_end(&mut std::io::Read::take(file, n), &mut data).map_err(io)?;
    Ok(data)
}

/// DWARF sections made of NUL-terminated strings.
const STRING_SECTIONS: &[&str] = &[".debug_str", ".debug_line_str"];

/// A file mapped into memory. Keep it alive while anything borrows from it.
pub struct MappedFile {
    path: PathBuf,
    bytes: Contents,
}

/// A file's bytes: mapped, or read when it cannot be mapped.
enum Contents {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

/// Largest file read into memory when it cannot be mapped (sysfs files
/// such as /sys/kernel/btf/vmlinux are a few MB).
const MAX_READ: u64 = 1 << 30;

impl MappedFile {
    /// Maps `path` read-only; files that cannot be mapped (sysfs, such as
    /// `/sys/kernel/btf/vmlinux`) are read instead.
    pub fn open(path: &Path) -> Result<Self> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        // SAFETY: the map is read-only and private; a file truncated underneath
        // us is the usual mmap caveat shared by every tool that maps binaries.
        let bytes = match unsafe { memmap2::Mmap::map(&file) } {
            Ok(map) => Contents::Mapped(map),
            Err(_) => Contents::Read(read_limited(
                path,
                MAX_READ,
                "a file that cannot be mapped",
            )?),
        };
        Ok(MappedFile {
            path: path.to_owned(),
            bytes,
        })
    }

    /// The path the file was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        match &self.bytes {
            Contents::Mapped(map) => map,
            Contents::Read(data) => data,
        }
    }
}

/// Byte order of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ByteOrder {
    /// Little endian (x86, arm64, riscv, ...).
    Little,
    /// Big endian (s390x, ppc64 BE, ...).
    Big,
}

/// The debug sections of one ELF file, ready for a DWARF reader.
pub struct DebugSections<'data> {
    sections: Vec<(&'static str, Cow<'data, [u8]>)>,
    /// Byte order of the file.
    pub byte_order: ByteOrder,
    /// Cacheline size implied by the architecture (see [`cacheline_for`]).
    pub cacheline: u64,
}

impl<'data> DebugSections<'data> {
    /// Reads the DWARF sections of the ELF image `data` (from `path`).
    pub fn load(path: &Path, data: &'data [u8]) -> Result<Self> {
        let file = parse_elf(path, data, "no ELF magic at the start of the file")?;
        let relocatable = file.kind() == object::ObjectKind::Relocatable;
        let byte_order = if file.is_little_endian() {
            ByteOrder::Little
        } else {
            ByteOrder::Big
        };
        let mut sections = Vec::new();
        for &name in DWARF_SECTIONS {
            let Some(section) = find_section(&file, name) else {
                continue;
            };
            let section_err = |reason: String| Error::Section {
                path: path.to_owned(),
                section: name.to_owned(),
                reason,
            };
            let mut bytes = section_bytes(&section).map_err(section_err)?;
            if relocatable {
                apply_relocations(&file, &section, &mut bytes, byte_order).map_err(section_err)?;
            }
            // A string section is NUL-terminated strings: one that does not
            // end in NUL cannot hold the names the DIEs point at, and every
            // lookup would quietly find nothing.
            if STRING_SECTIONS.contains(&name) && bytes.last().is_some_and(|&b| b != 0) {
                return Err(section_err(
                    "does not end in a NUL byte: its strings are corrupt or cut short".into(),
                ));
            }
            sections.push((name, bytes));
        }
        if !sections.iter().any(|(n, _)| *n == ".debug_info") {
            return Err(Error::NoDebugInfo {
                path: path.to_owned(),
            });
        }
        Ok(DebugSections {
            sections,
            byte_order,
            cacheline: cacheline_for(file.architecture()),
        })
    }

    /// The bytes of section `name`, or an empty slice when it is absent.
    pub fn get(&self, name: &str) -> &[u8] {
        self.sections
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, data)| data.as_ref())
            .unwrap_or(&[])
    }
}

/// The BTF of a file: the whole file when it is raw BTF (such as
/// `/sys/kernel/btf/vmlinux`), else its `.BTF` section; with the pointer
/// size and cacheline size of its machine (8 and 64 for raw BTF, which
/// does not say).
pub fn btf_of<'data>(path: &Path, data: &'data [u8]) -> Result<(Cow<'data, [u8]>, u64, u64)> {
    if crate::btf::is_btf(data) {
        return Ok((Cow::Borrowed(data), 8, 64));
    }
    let file = parse_elf(path, data, "neither ELF nor raw BTF (no 0xeB9F magic)")?;
    let section = file.section_by_name(".BTF").ok_or_else(|| Error::Section {
        path: path.to_owned(),
        section: ".BTF".into(),
        reason: "no .BTF section (build with CONFIG_DEBUG_INFO_BTF=y, or use its DWARF)".into(),
    })?;
    let bytes = section_bytes(&section).map_err(|reason| Error::Section {
        path: path.to_owned(),
        section: ".BTF".into(),
        reason,
    })?;
    let pointer = if file.is_64() { 8 } else { 4 };
    Ok((bytes, pointer, cacheline_for(file.architecture())))
}

/// The ELF file `data` (from `path`): first whole (else "truncated"), then
/// with the ELF magic (else `no_magic`), then as the parser reads it.
fn parse_elf<'data>(path: &Path, data: &'data [u8], no_magic: &str) -> Result<object::File<'data>> {
    let not_elf = |reason: String| Error::NotElf {
        path: path.to_owned(),
        reason,
    };
    truncated::check(path, data)?;
    if data.len() < 4 || &data[..4] != b"\x7fELF" {
        // A variant file without its `tree` is not recognised as one.
        let variants = String::from_utf8_lossy(&data[..data.len().min(1 << 16)])
            .lines()
            .any(|l| l.trim() == "[[variant]]");
        if variants {
            return Err(not_elf(
                "a variant file, but it gives no tree = \"DIR\": a variant file given as a \
                 build names the kernel tree it configures (docs/variants.md)"
                    .into(),
            ));
        }
        return Err(not_elf(no_magic.into()));
    }
    object::File::parse(data).map_err(|e| not_elf(e.to_string()))
}

/// Finds `.debug_X`, or its GNU-compressed spelling `.zdebug_X`.
fn find_section<'data, 'file>(
    file: &'file object::File<'data>,
    name: &str,
) -> Option<object::Section<'data, 'file>> {
    file.section_by_name(name).or_else(|| {
        let zname = format!(".z{}", &name[1..]);
        file.section_by_name(&zname)
    })
}

/// Returns the uncompressed contents of a section, refusing sizes that no
/// real file has (a compressed header claiming terabytes is hostile input).
fn section_bytes<'data>(
    section: &object::Section<'data, '_>,
) -> std::result::Result<Cow<'data, [u8]>, String> {
    let compressed = section.compressed_data().map_err(|e| e.to_string())?;
    if compressed.format != object::CompressionFormat::None {
        let limit = (compressed.data.len() as u64)
            .saturating_mul(256)
            .max(1 << 24);
        if compressed.uncompressed_size > limit {
            return Err(format!(
                "claims {} bytes uncompressed from {} compressed (corrupt header?)",
                compressed.uncompressed_size,
                compressed.data.len()
            ));
        }
    }
    compressed.decompress().map_err(|e| e.to_string())
}

/// Applies the absolute relocations of a relocatable object's debug section.
///
/// In a `.o` or `.ko`, references from `.debug_info` into `.debug_str` and
/// `.debug_abbrev` are relocations against section symbols; without them
/// every unit would read the abbreviations and strings of the first one.
/// Linked files are never relocated here: a vmlinux built with
/// `--emit-relocs` keeps `.rela.debug_*`, and applying them twice would
/// corrupt it.
fn apply_relocations(
    file: &object::File<'_>,
    section: &object::Section<'_, '_>,
    bytes: &mut Cow<'_, [u8]>,
    byte_order: ByteOrder,
) -> std::result::Result<(), String> {
    let mut relocations = section.relocations().peekable();
    if relocations.peek().is_none() {
        return Ok(());
    }
    let data = bytes.to_mut();
    for (offset, relocation) in relocations {
        if relocation.kind() != RelocationKind::Absolute {
            continue;
        }
        let width = usize::from(relocation.size() / 8);
        if width != 4 && width != 8 {
            continue;
        }
        let symbol_value = match relocation.target() {
            RelocationTarget::Symbol(index) => file
                .symbol_by_index(index)
                .map_err(|e| format!("relocation at {offset:#x}: {e}"))?
                .address(),
            RelocationTarget::Section(index) => file
                .section_by_index(index)
                .map_err(|e| format!("relocation at {offset:#x}: {e}"))?
                .address(),
            _ => continue,
        };
        let start = usize::try_from(offset).map_err(|_| "relocation offset too large")?;
        let end = start
            .checked_add(width)
            .filter(|&end| end <= data.len())
            .ok_or_else(|| format!("relocation at {offset:#x} lies outside the section"))?;
        let field = &mut data[start..end];
        let implicit = if relocation.has_implicit_addend() {
            read_uint(field, byte_order)
        } else {
            0
        };
        let value = symbol_value
            .wrapping_add(relocation.addend() as u64)
            .wrapping_add(implicit);
        write_uint(field, value, byte_order);
    }
    Ok(())
}

fn read_uint(field: &[u8], byte_order: ByteOrder) -> u64 {
    let mut value = 0u64;
    for (i, &b) in field.iter().enumerate() {
        let shift = match byte_order {
            ByteOrder::Little => 8 * i,
            ByteOrder::Big => 8 * (field.len() - 1 - i),
        };
        value |= u64::from(b) << shift;
    }
    value
}

fn write_uint(field: &mut [u8], value: u64, byte_order: ByteOrder) {
    let len = field.len();
    for (i, b) in field.iter_mut().enumerate() {
        let shift = match byte_order {
            ByteOrder::Little => 8 * i,
            ByteOrder::Big => 8 * (len - 1 - i),
        };
        *b = (value >> shift) as u8;
    }
}

/// The kernel's directory under `arch/` for an ELF machine (`x86` for
/// x86-64 and i386), when the kernel has one.
pub fn kernel_arch(architecture: object::Architecture) -> Option<&'static str> {
    use object::Architecture as A;
    Some(match architecture {
        A::X86_64 | A::X86_64_X32 | A::I386 => "x86",
        A::Aarch64 | A::Aarch64_Ilp32 => "arm64",
        A::Arm => "arm",
        A::PowerPc | A::PowerPc64 => "powerpc",
        A::S390x => "s390",
        A::Riscv32 | A::Riscv64 => "riscv",
        A::Mips | A::Mips64 => "mips",
        A::LoongArch64 => "loongarch",
        A::Sparc | A::Sparc32Plus | A::Sparc64 => "sparc",
        _ => return None,
    })
}

/// The L1 cacheline size (the kernel's `SMP_CACHE_BYTES`) of a machine.
///
/// Taken from the ELF machine, never from the host: a vmlinux for s390x
/// examined on a laptop still has 256-byte lines.
pub fn cacheline_for(architecture: object::Architecture) -> u64 {
    use object::Architecture as A;
    match architecture {
        A::PowerPc64 => 128,
        A::S390x => 256,
        A::PowerPc | A::Arm | A::Mips | A::Sparc | A::Sparc32Plus => 32,
        _ => 64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cacheline_follows_the_elf_machine() {
        use object::Architecture as A;
        assert_eq!(cacheline_for(A::X86_64), 64);
        assert_eq!(cacheline_for(A::Aarch64), 64);
        assert_eq!(cacheline_for(A::Riscv64), 64);
        assert_eq!(cacheline_for(A::PowerPc64), 128);
        assert_eq!(cacheline_for(A::S390x), 256);
    }

    #[test]
    fn uint_round_trips_in_both_byte_orders() {
        for order in [ByteOrder::Little, ByteOrder::Big] {
            let mut buf = [0u8; 4];
            write_uint(&mut buf, 0x1234_5678, order);
            assert_eq!(read_uint(&buf, order), 0x1234_5678);
        }
        let mut buf = [0u8; 4];
        write_uint(&mut buf, 0x1234_5678, ByteOrder::Big);
        assert_eq!(buf, [0x12, 0x34, 0x56, 0x78]);
    }

    #[test]
    fn garbage_is_not_elf() {
        let err = DebugSections::load(Path::new("x"), b"hello world")
            .err()
            .unwrap();
        assert!(err.to_string().contains("not a readable ELF file"), "{err}");
    }
}

//! Telling a file cut short from a corrupt one: an ELF image whose header,
//! program or section header table, or a section's data ends past the end
//! of the file. Checked before the ELF parser runs, whose own errors
//! ("Invalid ELF section header offset/size/alignment") do not say why.

use std::path::Path;

use object::Endianness;
use object::elf::{ELFCLASS64, ELFMAG, FileHeader32, FileHeader64};
use object::read::elf::{FileHeader, SectionHeader};

use crate::error::{Error, Result};

/// Refuses the ELF image `data` of `path` when the file ends before its
/// ELF header, a header table or a section's data does. Anything else
/// (not ELF at all, corrupt headers) is left to the ELF parser.
pub(crate) fn check(path: &Path, data: &[u8]) -> Result<()> {
    match cut(data) {
        Some(Cut { what, have, need }) => Err(Error::Truncated {
            path: path.to_owned(),
            what,
            have,
            need,
        }),
        None => Ok(()),
    }
}

/// The part of a file the end of the file cuts through.
struct Cut {
    what: String,
    have: u64,
    need: u64,
}

/// `what`, `size` bytes from `start`, when they end past `len` (an end
/// that overflows is corrupt, not cut).
fn past_end(what: impl FnOnce() -> String, start: u64, size: u64, len: u64) -> Option<Cut> {
    (start.checked_add(size)? > len).then(|| Cut {
        what: what(),
        have: len.saturating_sub(start).min(size),
        need: size,
    })
}

/// The first part of the ELF image `data` that the file's end cuts: the
/// ELF header (a file holding only the start of the magic counts), the
/// program headers, the section headers, else the section whose data
/// starts first among those cut.
fn cut(data: &[u8]) -> Option<Cut> {
    let magic = ELFMAG;
    if data.is_empty() || !magic.starts_with(&data[..data.len().min(magic.len())]) {
        return None;
    }
    let class64 = data.get(4).copied() == Some(ELFCLASS64.0);
    let header = if class64 { 64 } else { 52 };
    let len = data.len() as u64;
    if let Some(cut) = past_end(|| "the ELF header".into(), 0, header, len) {
        return Some(cut);
    }
    if class64 {
        cut_in::<FileHeader64<Endianness>>(data)
    } else {
        cut_in::<FileHeader32<Endianness>>(data)
    }
}

/// [`cut`] past the ELF header, for one ELF class.
fn cut_in<Elf: FileHeader<Endian = Endianness>>(data: &[u8]) -> Option<Cut> {
    let header = Elf::parse(data).ok()?;
    let endian = header.endian().ok()?;
    let len = data.len() as u64;
    let phoff: u64 = header.e_phoff(endian).into();
    let phsize = u64::from(header.e_phentsize(endian)) * u64::from(header.e_phnum(endian));
    if phoff != 0
        && let Some(cut) = past_end(|| "the program header table".into(), phoff, phsize, len)
    {
        return Some(cut);
    }
    let shoff: u64 = header.e_shoff(endian).into();
    if shoff == 0 {
        return None;
    }
    // With e_shnum 0 the count is in section 0, which must be there at least.
    let count = header.shnum(endian, data).map_or(1, |n| n.max(1));
    let shsize = u64::from(header.e_shentsize(endian)) * u64::from(count);
    if let Some(cut) = past_end(|| "the section header table".into(), shoff, shsize, len) {
        return Some(cut);
    }
    let sections = header.section_headers(endian, data).ok()?;
    let strings = header
        .section_strings(endian, data, sections)
        .unwrap_or_default();
    let (index, section, start, size) = sections
        .iter()
        .enumerate()
        .filter_map(|(i, s)| {
            let (start, size) = s.file_range(endian)?;
            (start.checked_add(size)? > len).then_some((i, s, start, size))
        })
        .min_by_key(|&(_, _, start, _)| start)?;
    let name = || match section.name(endian, strings) {
        Ok(name) => format!("section {}", String::from_utf8_lossy(name)),
        Err(_) => format!("section [{index}]"),
    };
    past_end(name, start, size, len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_of_the_magic_is_a_cut_elf_header() {
        // An ELF64 header is 64 bytes (class byte 4 = 2), ELF32 52.
        let c = cut(b"\x7fEL").unwrap();
        assert_eq!((c.what.as_str(), c.have, c.need), ("the ELF header", 3, 52));
        let c = cut(b"\x7fELF\x02\x01").unwrap();
        assert_eq!((c.have, c.need), (6, 64));
        assert!(cut(b"").is_none());
        assert!(cut(b"hello").is_none());
    }
}

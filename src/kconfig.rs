//! The kernel config a build was made with, when it can be found: embedded
//! by CONFIG_IKCONFIG (a gzip blob between the markers `IKCFG_ST` and
//! `IKCFG_ED` in the image), or a `.config` file next to the ELF file. Used
//! to say which options that differ between two builds are likely to
//! change struct layouts; nothing is guessed when no config is found.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Options known to change the layout of core kernel structs.
pub const LAYOUT_OPTIONS: &[&str] = &[
    "CONFIG_PREEMPT_RT",
    "CONFIG_LOCKDEP",
    "CONFIG_DEBUG_SPINLOCK",
    "CONFIG_DEBUG_LOCK_ALLOC",
    "CONFIG_DEBUG_MUTEXES",
    "CONFIG_LOCK_STAT",
    "CONFIG_LRU_GEN",
    "CONFIG_LRU_GEN_STATS",
    "CONFIG_MEMCG",
    "CONFIG_NUMA",
    "CONFIG_NODES_SHIFT",
    "CONFIG_NR_CPUS",
    "CONFIG_SMP",
    "CONFIG_MEMORY_HOTPLUG",
    "CONFIG_TRANSPARENT_HUGEPAGE",
    "CONFIG_KASAN",
    "CONFIG_KCSAN",
    "CONFIG_RANDSTRUCT",
    "CONFIG_RANDSTRUCT_FULL",
    "CONFIG_RANDSTRUCT_PERFORMANCE",
    "CONFIG_X86_L1_CACHE_SHIFT",
    "CONFIG_ARM64_L1_CACHE_SHIFT",
];

/// Largest decompressed config accepted (real ones are ~300 KB).
const MAX_CONFIG: u64 = 16 << 20;

/// A kernel config.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelConfig {
    /// Where it came from.
    pub source: String,
    /// `CONFIG_X` → value (`y`, `m`, a number or a string); options set to
    /// `n` ("is not set") are absent.
    pub options: BTreeMap<String, String>,
}

/// The config of the ELF file at `path` with contents `bytes`, if any.
pub fn find(path: &Path, bytes: &[u8]) -> Option<KernelConfig> {
    if let Some(text) = embedded(bytes) {
        return Some(KernelConfig {
            source: format!("{} (CONFIG_IKCONFIG)", path.display()),
            options: parse(&text),
        });
    }
    beside(path)
}

/// The `.config` next to the ELF file at `path` (`FILE.config`, or
/// `.config` in its directory): what can be had without reading the file.
pub fn beside(path: &Path) -> Option<KernelConfig> {
    let beside: Vec<PathBuf> = [
        path.with_extension("config"),
        path.parent().unwrap_or(Path::new(".")).join(".config"),
    ]
    .into_iter()
    .collect();
    beside.into_iter().find_map(|p| {
        let text = std::fs::read_to_string(&p).ok()?;
        Some(KernelConfig {
            source: p.display().to_string(),
            options: parse(&text),
        })
    })
}

/// The L1 cacheline size `config` sets, the kernel's `SMP_CACHE_BYTES`
/// (`CONFIG_X86_L1_CACHE_SHIFT=6`, `CONFIG_ARM_L1_CACHE_SHIFT=6`): the
/// option as written and the size, when exactly one such option is set.
pub fn l1_line(config: &KernelConfig) -> Option<(String, u64)> {
    let mut set = config
        .options
        .iter()
        .filter(|(k, _)| k.ends_with("_L1_CACHE_SHIFT"))
        .filter_map(|(k, v)| Some((k, v.parse::<u32>().ok().filter(|&s| (4..=10).contains(&s))?)));
    let (key, shift) = set.next()?;
    set.next()
        .is_none()
        .then(|| (format!("{key}={shift}"), 1u64 << shift))
}

/// The text of an embedded IKCONFIG blob.
pub fn embedded(bytes: &[u8]) -> Option<String> {
    let start = find_bytes(bytes, b"IKCFG_ST")? + 8;
    let len = find_bytes(&bytes[start..], b"IKCFG_ED")?;
    let mut text = String::new();
    flate2::read::GzDecoder::new(&bytes[start..start + len])
        .take(MAX_CONFIG)
        .read_to_string(&mut text)
        .ok()?;
    Some(text)
}

fn find_bytes(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    memchr::memmem::find(haystack, needle)
}

/// Parses `.config` text.
pub fn parse(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            k.starts_with("CONFIG_")
                .then(|| (k.to_owned(), v.to_owned()))
        })
        .collect()
}

/// Options that differ: `(name, old, new)` for the layout options, then
/// how many other options differ.
pub fn differences(
    old: &KernelConfig,
    new: &KernelConfig,
) -> (Vec<(String, String, String)>, usize) {
    let value = |c: &KernelConfig, k: &str| c.options.get(k).cloned().unwrap_or_else(|| "n".into());
    let mut names: Vec<&String> = old.options.keys().chain(new.options.keys()).collect();
    names.sort();
    names.dedup();
    let mut relevant = Vec::new();
    let mut others = 0;
    for name in names {
        let (a, b) = (value(old, name), value(new, name));
        if a == b {
            continue;
        }
        if LAYOUT_OPTIONS.contains(&name.as_str()) {
            relevant.push((name.clone(), a, b));
        } else {
            others += 1;
        }
    }
    (relevant, others)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_configs_are_found_between_the_markers() {
        let text = "CONFIG_LRU_GEN=y\n# CONFIG_PREEMPT_RT is not set\nCONFIG_NR_CPUS=64\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, text.as_bytes()).unwrap();
        let mut image = b"junk IKCFG_ST".to_vec();
        image.extend(gz.finish().unwrap());
        image.extend(b"IKCFG_ED more");
        assert_eq!(embedded(&image).as_deref(), Some(text));
        let options = parse(text);
        assert_eq!(
            options.get("CONFIG_NR_CPUS").map(String::as_str),
            Some("64")
        );
        assert!(!options.contains_key("CONFIG_PREEMPT_RT"));
        assert_eq!(embedded(b"no markers"), None);
        assert_eq!(embedded(b"IKCFG_STnot gzipIKCFG_ED"), None);
    }

    #[test]
    fn layout_options_are_told_apart_from_the_rest() {
        let old = KernelConfig {
            source: "a".into(),
            options: parse("CONFIG_LRU_GEN=y\nCONFIG_FOO=y\n"),
        };
        let new = KernelConfig {
            source: "b".into(),
            options: parse("CONFIG_PREEMPT_RT=y\nCONFIG_LRU_GEN=y\nCONFIG_BAR=m\n"),
        };
        let (relevant, others) = differences(&old, &new);
        assert_eq!(
            relevant,
            [("CONFIG_PREEMPT_RT".into(), "n".into(), "y".into())]
        );
        assert_eq!(others, 2);
    }
}

//! The line size of a build, from the build itself: the kernel config it
//! was made with, else the alignment its compiler gave the kernel's
//! `struct cacheline_padding` (`____cacheline_internodealigned_in_smp`),
//! else the ELF machine's usual size. A 32-bit ARM kernel built with
//! `CONFIG_ARM_L1_CACHE_SHIFT=6` aligns its cacheline members to 64 bytes
//! where the machine's default says 32.

use crate::kconfig::{self, KernelConfig};

/// The line size of one build and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BuildLine {
    /// Bytes.
    pub(crate) size: u64,
    /// Where it came from, in words; `None` for the ELF machine's default.
    pub(crate) from: Option<String>,
}

/// The line of a build whose ELF machine has `machine` bytes lines,
/// whose config is `config` (when found) and whose `struct
/// cacheline_padding` is aligned to `padding` (when the debug info
/// records it).
pub(crate) fn of(machine: u64, config: Option<&KernelConfig>, padding: Option<u64>) -> BuildLine {
    if let Some(config) = config
        && let Some((option, size)) = kconfig::l1_line(config)
    {
        return BuildLine {
            size,
            from: Some(format!("{option} in {}", config.source)),
        };
    }
    // The kernel's padding is aligned to the internode line, which is the
    // L1 line but where a config says otherwise (x86 vSMP: 4096); a page
    // or more is not a cacheline.
    if let Some(align) = padding.filter(|a| a.is_power_of_two() && (16..=512).contains(a)) {
        return BuildLine {
            size: align,
            from: Some(format!(
                "the alignment of struct {} (CACHELINE_PADDING) in the debug info",
                crate::layout::PADDING_TYPE
            )),
        };
    }
    BuildLine {
        size: machine,
        from: None,
    }
}

impl BuildLine {
    /// The note a run shows when the build's line is not what its machine
    /// usually has, so a reader knows why findings are counted in it.
    pub(crate) fn note(&self, machine: u64) -> Option<String> {
        let from = self.from.as_ref()?;
        (self.size != machine).then(|| {
            format!(
                "{}-byte cachelines, from {from}; the ELF machine usually has {machine}",
                self.size
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(options: &[(&str, &str)]) -> KernelConfig {
        KernelConfig {
            source: ".config".into(),
            options: options
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn the_config_comes_first_then_the_padding_then_the_machine() {
        // Debian armmp: CONFIG_ARM_L1_CACHE_SHIFT=6, an ARM ELF (32).
        let armmp = config(&[("CONFIG_ARM_L1_CACHE_SHIFT", "6"), ("CONFIG_SMP", "y")]);
        let line = of(32, Some(&armmp), Some(128));
        assert_eq!(line.size, 64);
        assert_eq!(
            line.note(32).unwrap(),
            "64-byte cachelines, from CONFIG_ARM_L1_CACHE_SHIFT=6 in .config; the ELF machine usually has 32"
        );
        assert_eq!(of(32, None, Some(64)).size, 64);
        assert_eq!(of(32, Some(&config(&[])), Some(64)).size, 64);
        // A page-aligned padding (vSMP's internode line) is not a line.
        assert_eq!(
            of(64, None, Some(4096)),
            BuildLine {
                size: 64,
                from: None
            }
        );
        assert_eq!(of(64, None, None).note(64), None);
        // The same size as the machine's: nothing to say.
        assert_eq!(of(64, None, Some(64)).note(64), None);
    }
}

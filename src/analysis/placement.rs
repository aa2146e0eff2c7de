//! Where a struct's objects start on a line, from where the source puts
//! them ([`Site`]) and the structs that embed it: a slab cache with
//! `SLAB_HWCACHE_ALIGN`, or whose slots are a whole number of lines, starts
//! every object on a line; `kmalloc`'s size classes start an object at a
//! multiple of its class (kmalloc-96 at 0 or 32 bytes into a line); an
//! embedded object starts where its container does, plus its offset. The
//! arithmetic is SLUB's (the kernel's only slab allocator since 6.8) with
//! no debugging options on the command line (`slub_debug` adds red zones).

use crate::evidence::source::Site;

/// `kmalloc`'s size classes (x86-64 and arm64: `KMALLOC_MIN_SIZE` 8, with
/// the 96- and 192-byte caches); larger requests take whole pages.
const KMALLOC_CLASSES: [u64; 13] = [
    8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192,
];

/// SLUB's free pointer and its minimum alignment: a word.
const WORD: u64 = 8;

/// A struct as the allocator sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Object {
    /// Its size in bytes.
    pub size: u64,
    /// Its alignment.
    pub alignment: u64,
}

/// An object of another struct this one is embedded in.
#[derive(Clone, Debug)]
pub(crate) struct Embedding {
    /// Where, in words (`backing_file.file`).
    pub place: String,
    /// Its offset there; for an array of them, the element size too.
    pub offset: u64,
    /// The element size, for an array member.
    pub stride: Option<u64>,
    /// Where the container's objects start (its own placement, or its
    /// alignment when nothing decides it).
    pub container: u64,
}

/// Where a struct's objects start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Placed {
    /// Every object starts at a multiple of this many bytes from a line
    /// boundary (the line size for "on a line"), when the sites decide
    /// it; `None` when nothing does (no site found).
    pub start: Option<u64>,
    /// Each site and embedding with what it gives, in words.
    pub evidence: Vec<String>,
    /// Some site makes objects of the struct on their own (not inside a
    /// struct the build holds): `check` counts lines from the struct
    /// itself too, not only from the structs holding it.
    pub alone: bool,
    /// Where those objects of its own start, from the sites alone (the
    /// copies inside holders are counted from the holders); `None` when
    /// no site decides.
    pub own: Option<u64>,
}

/// The alignment, up to `line`, of `x`: its lowest set bit.
fn align_of(x: u64, line: u64) -> u64 {
    if x == 0 {
        line
    } else {
        (x & x.wrapping_neg()).min(line)
    }
}

/// Where the objects that one `site` makes start: `None` for a site that
/// makes one object (a static), which decides nothing of the rest.
pub(crate) fn site_start(site: &Site, object: Object, line: u64) -> Option<u64> {
    let Object { size, alignment } = object;
    let start = match site {
        Site::Slab {
            hw_aligned,
            align,
            pointer_after,
            ..
        } => {
            // calculate_alignment() and calculate_sizes() of mm/slub.c.
            let mut a = WORD.max(alignment).max(align.unwrap_or(0));
            if *hw_aligned {
                let mut r = line;
                while size <= r / 2 {
                    r /= 2;
                }
                a = a.max(r);
            }
            let slot = size.next_multiple_of(WORD) + if *pointer_after { WORD } else { 0 };
            align_of(slot.next_multiple_of(a), line)
        }
        Site::Kmalloc {
            exact: true,
            array: false,
            ..
        } => align_of(kmalloc_class(size), line),
        // More than the struct (a flexible array): any class from its size up.
        Site::Kmalloc { array: false, .. } => KMALLOC_CLASSES
            .iter()
            .filter(|&&c| c >= size)
            .map(|&c| align_of(c, line))
            .min()
            .unwrap_or(line),
        Site::Kmalloc { array: true, .. } => {
            align_of(size.next_multiple_of(alignment.max(1)), line)
        }
        Site::Pages { .. } => line,
        Site::PerCpu { aligned: true, .. } => line,
        Site::PerCpu { aligned: false, .. } | Site::Unknown { .. } | Site::Embedded { .. } => {
            alignment
        }
        Site::Static { .. } => return None,
        Site::Sized { site, through, .. } if through.is_empty() => {
            return site_start(site, object, line);
        }
        // The size is a larger struct's, which the build does not hold:
        // what holds for every size from this struct's up.
        Site::Sized { site, .. } => match site.as_ref() {
            Site::Slab {
                hw_aligned, align, ..
            } => {
                let mut a = WORD.max(alignment).max(align.unwrap_or(0));
                if *hw_aligned && size > line / 2 {
                    a = a.max(line);
                }
                a.min(line)
            }
            Site::Kmalloc { array: false, .. } => {
                return site_start(&widened(site), object, line);
            }
            _ => alignment,
        },
    };
    Some(start.max(alignment.min(line)))
}

/// Places or names, the first few and how many more.
fn listed(items: impl ExactSizeIterator<Item = String>) -> String {
    const SHOWN: usize = 3;
    let n = items.len();
    let mut out: Vec<String> = items.take(SHOWN).collect();
    if n > SHOWN {
        out.push(format!("{} more", n - SHOWN));
    }
    out.join(", ")
}

/// `site` for objects of a size not known, from the struct's up: a
/// `kmalloc` of any class from it.
fn widened(site: &Site) -> Site {
    match site {
        Site::Kmalloc {
            call, array: false, ..
        } => Site::Kmalloc {
            call: call.clone(),
            exact: false,
            array: false,
        },
        other => other.clone(),
    }
}

/// The kmalloc size class of `size` bytes (a page multiple beyond them).
fn kmalloc_class(size: u64) -> u64 {
    KMALLOC_CLASSES
        .iter()
        .copied()
        .find(|&c| c >= size)
        .unwrap_or_else(|| size.next_multiple_of(4096))
}

/// What one site gives, in words.
fn describe(site: &Site, start: Option<u64>, object: Object, line: u64) -> String {
    let gives = match start {
        None => "one object, placed by the linker: not counted".to_owned(),
        Some(s) if s >= line => "every object starts a line".to_owned(),
        Some(s) => format!("objects start at multiples of {s} bytes into a line"),
    };
    format!("{}: {gives}", how(site, object))
}

/// How one site makes objects, in words.
fn how(site: &Site, object: Object) -> String {
    match site {
        Site::Slab {
            call,
            hw_aligned,
            pointer_after,
            ..
        } => {
            let mut flags = Vec::new();
            if *hw_aligned {
                flags.push("SLAB_HWCACHE_ALIGN");
            }
            if *pointer_after {
                flags.push("free pointer after the object");
            }
            match flags.is_empty() {
                true => format!("{call}(), a slab cache of its own"),
                false => format!("{call}(), a slab cache of its own ({})", flags.join(", ")),
            }
        }
        Site::Kmalloc {
            call,
            exact: true,
            array: false,
        } => format!("{call}(), kmalloc-{}", kmalloc_class(object.size)),
        Site::Kmalloc {
            call, array: false, ..
        } => format!("{call}() of {} bytes or more", object.size),
        Site::Kmalloc { call, .. } => format!("{call}(), an array"),
        Site::Pages { call } => format!("{call}(), whole pages"),
        Site::PerCpu { call, .. } => format!("{call}(), per-CPU data"),
        Site::Static { name, aligned } => match aligned {
            true => format!("{name}, defined line-aligned"),
            false => format!("{name}, defined in a file"),
        },
        Site::Unknown { call } => format!("{call}(), whose header comes before the object"),
        Site::Embedded { container, .. } => {
            format!("a member of struct {container}, which the build's debug info does not hold")
        }
        Site::Sized {
            size,
            set,
            through,
            site,
        } => {
            let mut whose = Vec::new();
            if !set.is_empty() {
                whose.push(format!("this struct's ({})", listed(set.iter().cloned())));
            }
            if !through.is_empty() {
                let firsts = through.iter().map(|(h, at)| format!("{h} at {at}"));
                whose.push(format!(
                    "those of the structs holding it first ({})",
                    listed(firsts)
                ));
            }
            let site = match through.is_empty() {
                true => site.as_ref().clone(),
                false => widened(site),
            };
            format!(
                "{}, by the size {size} holds, set to {}",
                how(&site, object),
                whose.join(" and to ")
            )
        }
    }
}

/// Where objects of `object` start, from the sites that put them (each
/// with where it is, `file:line`) and the structs that embed them.
pub(crate) fn placed(
    object: Object,
    line: u64,
    sites: &[(&Site, String)],
    embeddings: &[Embedding],
) -> Placed {
    let mut start: Option<u64> = None;
    let mut evidence = Vec::new();
    let add = |s: u64, start: &mut Option<u64>| {
        *start = Some(start.map_or(s, |x| x.min(s)));
    };
    for (site, at) in sites {
        let s = site_start(site, object, line);
        if let Some(s) = s {
            add(s, &mut start);
        }
        evidence.push(format!("{at}: {}", describe(site, s, object, line)));
    }
    let own = start;
    for e in embeddings {
        let mut s = e.container.min(align_of(e.offset, line));
        if let Some(stride) = e.stride {
            s = s.min(align_of(stride, line));
        }
        let s = s.max(object.alignment.min(line));
        add(s, &mut start);
        let gives = match s >= line {
            true => "starts a line".to_owned(),
            false => format!("starts at a multiple of {s} bytes into a line"),
        };
        evidence.push(format!(
            "embedded as {} at byte {} of objects that start at multiples of {} bytes: {gives}",
            e.place,
            e.offset,
            e.container.min(line)
        ));
    }
    Placed {
        start,
        evidence,
        alone: !sites.is_empty(),
        own,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slab(hw: bool, after: bool) -> Site {
        Site::Slab {
            call: "kmem_cache_create".into(),
            hw_aligned: hw,
            align: None,
            pointer_after: after,
        }
    }

    fn kmalloc(exact: bool, array: bool) -> Site {
        Site::Kmalloc {
            call: "kzalloc".into(),
            exact,
            array,
        }
    }

    fn obj(size: u64, alignment: u64) -> Object {
        Object { size, alignment }
    }

    #[test]
    fn a_hardware_aligned_cache_starts_every_object_larger_than_half_a_line_on_a_line() {
        // signal_struct on 6.12: 1,112 bytes, 8-aligned, SLAB_HWCACHE_ALIGN.
        assert_eq!(site_start(&slab(true, false), obj(1112, 8), 64), Some(64));
        // A 24-byte object in a HWCACHE cache: 32-byte slots.
        assert_eq!(site_start(&slab(true, false), obj(24, 8), 64), Some(32));
        // Without the flag, slots of 1,112 bytes: 1112 = 64 * 17 + 24.
        assert_eq!(site_start(&slab(false, false), obj(1112, 8), 64), Some(8));
        // 192 bytes a slot: a whole number of lines.
        assert_eq!(site_start(&slab(false, false), obj(192, 8), 64), Some(64));
        // With a constructor the free pointer takes 8 more bytes: 200.
        assert_eq!(site_start(&slab(false, true), obj(192, 8), 64), Some(8));
    }

    #[test]
    fn a_size_stored_for_a_larger_struct_holding_it_first_counts_every_size_from_its_own_up() {
        let sized = |through: bool, site: Site| Site::Sized {
            size: "proto.obj_size".into(),
            set: vec!["a.c:1".into()],
            through: match through {
                true => vec![("foo6".into(), "a.c:9".into())],
                false => Vec::new(),
            },
            site: Box::new(site),
        };
        // Its own size, 40 bytes: kmalloc-64, on a line.
        assert_eq!(
            site_start(&sized(false, kmalloc(true, false)), obj(40, 8), 64),
            Some(64)
        );
        // A larger struct's: kmalloc-96 is possible, 32 bytes into a line.
        assert_eq!(
            site_start(&sized(true, kmalloc(true, false)), obj(40, 8), 64),
            Some(32)
        );
        // 776 bytes or more: every class from 1,024 up starts a line.
        assert_eq!(
            site_start(&sized(true, kmalloc(true, false)), obj(776, 8), 64),
            Some(64)
        );
        // A line-aligned cache of more than half a line, whatever larger.
        assert_eq!(
            site_start(&sized(true, slab(true, false)), obj(40, 8), 64),
            Some(64)
        );
        // Without the flag, a larger size's slots are not known: its alignment.
        assert_eq!(
            site_start(&sized(true, slab(false, false)), obj(192, 8), 64),
            Some(8)
        );
        assert_eq!(
            site_start(&sized(false, slab(false, false)), obj(192, 8), 64),
            Some(64)
        );
    }

    #[test]
    fn kmalloc_classes_of_96_and_192_bytes() {
        // kmalloc-96 objects start at 0, 96, 192...: 0 or 32 into a line.
        assert_eq!(site_start(&kmalloc(true, false), obj(80, 8), 64), Some(32));
        assert_eq!(site_start(&kmalloc(true, false), obj(160, 8), 64), Some(64));
        assert_eq!(site_start(&kmalloc(true, false), obj(24, 8), 64), Some(32));
        // More than its size: 130 bytes or more is any class from 192 up.
        assert_eq!(
            site_start(&kmalloc(false, false), obj(130, 8), 64),
            Some(64)
        );
        assert_eq!(site_start(&kmalloc(false, false), obj(70, 8), 64), Some(32));
        // An array of 40-byte elements: 40 = 32 + 8.
        assert_eq!(site_start(&kmalloc(true, true), obj(40, 8), 64), Some(8));
        assert_eq!(kmalloc_class(9000), 12288);
    }

    #[test]
    fn the_worst_site_decides_and_a_static_object_decides_nothing() {
        let s = slab(true, false);
        let k = kmalloc(true, false);
        let st = Site::Static {
            name: "init_x".into(),
            aligned: false,
        };
        let o = obj(1112, 8);
        let only_statics = placed(o, 64, &[(&st, "a.c:1".into())], &[]);
        assert_eq!(only_statics.start, None);
        assert!(only_statics.evidence[0].contains("not counted"));
        let p = placed(o, 64, &[(&s, "a.c:1".into()), (&st, "a.c:9".into())], &[]);
        assert_eq!(p.start, Some(64));
        // kmalloc-96 of an 80-byte object: 32.
        let p = placed(
            obj(80, 8),
            64,
            &[(&s, "a.c:1".into()), (&k, "b.c:2".into())],
            &[],
        );
        assert_eq!(p.start, Some(32));
        assert_eq!(p.evidence.len(), 2);
        assert!(
            p.evidence[1].starts_with("b.c:2: kzalloc(), kmalloc-96"),
            "{p:?}"
        );
    }

    #[test]
    fn an_embedded_object_starts_where_its_container_puts_it() {
        // sk_buff_fclones: skb1 at 0, skb2 at 232 of a line-aligned object.
        let at = |offset| Embedding {
            place: "sk_buff_fclones.skb".into(),
            offset,
            stride: None,
            container: 64,
        };
        let o = obj(232, 8);
        assert_eq!(placed(o, 64, &[], &[at(0)]).start, Some(64));
        assert_eq!(placed(o, 64, &[], &[at(0), at(232)]).start, Some(8));
        // Only inside its holders: no object of its own, so no root.
        assert!(!placed(o, 64, &[], &[at(0)]).alone);
        // A cache of its own besides (skbuff_head_cache): objects alone.
        let s = slab(true, false);
        let both = placed(o, 64, &[(&s, "a.c:1".into())], &[at(0), at(232)]);
        assert!(both.alone);
        // Wherever it is: 8 (skb2 at 232); its own objects: on a line.
        assert_eq!((both.start, both.own), (Some(8), Some(64)));
        // An array of them: elements 232 bytes apart.
        let array = Embedding {
            stride: Some(232),
            ..at(0)
        };
        assert_eq!(placed(o, 64, &[], &[array]).start, Some(8));
        // A container placed at its own 8-byte alignment.
        let loose = Embedding {
            container: 8,
            ..at(0)
        };
        assert_eq!(placed(o, 64, &[], &[loose]).start, Some(8));
    }
}

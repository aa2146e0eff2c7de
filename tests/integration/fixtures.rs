//! Tests against the C fixtures in fixtures/ (built by fixtures/build.sh).
//!
//! The truth here is never cachelint's own output: offsets and sizes come
//! from `cachelint_truth[]`, an array the compiler filled with `offsetof` and
//! `sizeof` values for every line of fixtures/src/truth.def, read straight
//! from the ELF data; hole counts come from pahole's output, saved next to
//! the fixtures; the rest is computed by hand in the test.

use std::path::Path;

use crate::common;
use cachelint::commands::Source;
use common::run::{self, Format};
use common::{COMPILERS, CONFIGS, cachelint, expected, fixture, truth, truth_lines, truth_values};
use object::{Object, ObjectSection};
use serde_json::Value;

fn check_truth(file: &Path, lru_gen: bool) {
    let lines = truth_lines(lru_gen);
    let values = truth_values(file);
    assert_eq!(
        values.len(),
        lines.len() * 2,
        "{}: truth.def and the binary disagree",
        file.display()
    );
    let paths: Vec<String> = lines.iter().map(|l| l.path.clone()).collect();
    let got =
        run::offsetof_json(file, &paths).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    for (i, (line, row)) in lines.iter().zip(&got).enumerate() {
        let (offset, size) = (values[2 * i], values[2 * i + 1]);
        assert_eq!(
            row["offset"],
            offset,
            "{}: offsetof({})",
            file.display(),
            line.path
        );
        if line.has_size {
            assert_eq!(
                row["size"],
                size,
                "{}: sizeof({})",
                file.display(),
                line.path
            );
        }
    }
}

#[test]
fn offsets_and_sizes_equal_the_compilers_own_offsetof_for_every_build() {
    for cc in COMPILERS {
        for cfg in CONFIGS {
            check_truth(&fixture(&format!("{cc}-{cfg}")), *cfg != "nolrugen");
        }
    }
}

#[test]
fn relocatable_objects_give_the_same_offsets_as_linked_files() {
    for cc in COMPILERS {
        check_truth(&fixture(&format!("{cc}-base.o")), true);
    }
    // Other machines: 32-bit with REL relocations and implicit addends,
    // big endian (s390x, ppc64), arm64.
    for target in ["i386", "s390x", "powerpc64", "aarch64"] {
        check_truth(&fixture(&format!("clang-{target}-base.o")), true);
    }
}

#[test]
fn compressed_debug_sections_give_the_same_layout() {
    let plain = run::layout(
        &fixture("gcc-dwarf5-base"),
        &["mem_cgroup_per_node".into()],
        true,
        Format::Json,
        None,
        &Source::Auto,
    )
    .unwrap();
    for kind in ["zlib", "zstd"] {
        let file = fixture(&format!("gcc-dwarf5-base.{kind}"));
        let data = std::fs::read(&file).unwrap();
        let elf = object::File::parse(&*data).unwrap();
        let info = elf.section_by_name(".debug_info").unwrap();
        assert_ne!(
            info.compressed_file_range().unwrap().format,
            object::CompressionFormat::None,
            "{kind} fixture is not compressed"
        );
        let got = run::layout(
            &file,
            &["mem_cgroup_per_node".into()],
            true,
            Format::Json,
            None,
            &Source::Auto,
        )
        .unwrap();
        assert_eq!(got.stdout, plain.stdout, "{kind}");
        check_truth(&file, true);
    }
}

#[test]
fn sizes_equal_pahole_sizes_for_every_fixture() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/expected");
    let mut compared = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        // *.btf.sizes are pahole's BTF view, compared in btf.rs.
        let Some(bin) = name.strip_suffix(".sizes").filter(|b| !b.ends_with(".btf")) else {
            continue;
        };
        let got = run::sizes(&fixture(bin), &Source::Auto).unwrap().stdout;
        assert_eq!(
            got,
            expected(&name),
            "{bin}: cachelint sizes differs from pahole --sizes"
        );
        compared += 1;
    }
    assert!(compared >= 30, "only {compared} pahole references found");
    // Debian 12's pahole cannot read zstd sections: the zstd copy must
    // match pahole's output for the uncompressed file.
    let zstd = run::sizes(&fixture("gcc-dwarf5-base.zstd"), &Source::Auto)
        .unwrap()
        .stdout;
    assert_eq!(zstd, expected("gcc-dwarf5-base.sizes"));
}

fn layout_json(file: &str, ty: &str, expand: bool) -> Value {
    run::layout_json(&fixture(file), &[ty.to_owned()], expand, &Source::Auto).remove(0)
}

fn member<'v>(layout: &'v Value, path: &str) -> &'v Value {
    layout["members"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["path"] == path)
        .unwrap_or_else(|| panic!("no member {path}"))
}

#[test]
fn bitfields_are_placed_as_the_abi_says() {
    // Hand computation for x86_64 (SysV: bitfields pack into their declared
    // type's units; `:0` moves to the next unit of its type):
    //   a:3 bits 0-2, b:7 bits 3-9 of the int at 0; `:0` -> next int at 4;
    //   c:30 bits 32-61; d:4 (char) starts the next free char, byte 8 = bit 64;
    //   e:40 (u64) fits in the u64 at 8 after d: bits 68-107;
    //   f:30 would cross bit 128, so it starts the next u64: bit 128;
    //   tail after f (ends bit 157) at byte 20; size 24 (align 8).
    for build in [
        "gcc-dwarf4-base",
        "gcc-dwarf5-base",
        "clang-dwarf4-base",
        "clang-dwarf5-base",
    ] {
        let l = layout_json(build, "bits", false);
        let bit = |p: &str| {
            let m = member(&l, p);
            m["offset"].as_u64().unwrap() * 8 + m["bit_offset"].as_u64().unwrap()
        };
        assert_eq!(
            [bit("a"), bit("b"), bit("c"), bit("d"), bit("e"), bit("f")],
            [0, 3, 32, 64, 68, 128],
            "{build}"
        );
        assert_eq!(member(&l, "e")["bit_size"], 40);
        assert_eq!(member(&l, "tail")["offset"], 20);
        assert_eq!(l["size"], 24);
    }
}

#[test]
fn offsetof_says_which_bits_a_bitfield_has_and_where_a_flexible_array_starts() {
    // Bits from the hand computation in bitfields_are_placed_as_the_abi_says:
    // a bits 0-2 (byte 0), b bits 3-9 (bytes 0-1), e bits 68-107 (bytes
    // 8-13, bits 4-43 counted from byte 8). flex's offset is the compiler's.
    for build in ["gcc-dwarf5-base", "clang-dwarf4-base"] {
        let file = fixture(build);
        let flex = truth(&file, true)["arrays.flex"].0;
        let paths: Vec<String> = ["bits.a", "bits.b", "bits.e", "arrays.flex"]
            .map(String::from)
            .into();
        let out = run::offsetof(&file, &paths, Format::Text, None, &Source::Auto).unwrap();
        let want = format!(
            "bits.a: bitfield: byte 0, bits 0-2 (3 bits), cacheline 0\n\
             bits.b: bitfield: bytes 0-1, bits 3-9 from byte 0 (7 bits), cacheline 0\n\
             bits.e: bitfield: bytes 8-13, bits 4-43 from byte 8 (40 bits), cacheline 0\n\
             arrays.flex: flexible array at byte {flex}, cacheline {}\n",
            flex / 64
        );
        assert_eq!(out.stdout, want, "{build}");
    }
}

#[test]
fn expand_gives_absolute_offsets_with_dotted_paths() {
    let l = layout_json("gcc-dwarf5-base", "mem_cgroup_per_node", true);
    let lruvec = member(&l, "lruvec")["offset"].as_u64().unwrap();
    let lrugen = member(&l, "lruvec.lrugen")["offset"].as_u64().unwrap();
    let enabled = member(&l, "lruvec.lrugen.enabled")["offset"]
        .as_u64()
        .unwrap();
    // Relative offsets from the non-expanded layouts of the inner types.
    let lv = layout_json("gcc-dwarf5-base", "lruvec", false);
    let lg = layout_json("gcc-dwarf5-base", "lru_gen_folio", false);
    assert_eq!(
        lrugen,
        lruvec + member(&lv, "lrugen")["offset"].as_u64().unwrap()
    );
    assert_eq!(
        enabled,
        lrugen + member(&lg, "enabled")["offset"].as_u64().unwrap()
    );
    assert_eq!(
        member(&l, "lruvec.lrugen.enabled")["cacheline"],
        enabled / 64
    );
    // Anonymous levels are skipped, as C spells the path.
    member(&l, "lruvec.lru_lock.rlock.raw_lock.locked");
    // Cacheline padding is a marker, not a member.
    assert!(
        l["members"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["path"] != "_pad1_")
    );
    assert_eq!(l["cacheline_paddings"][0]["path"], "_pad1_");
    assert_eq!(l["cacheline_paddings"][0]["offset"], 64);
}

#[test]
fn cacheline_groups_span_their_markers() {
    // struct grouped: read_mostly = a, b (0..16); write_hot is aligned to 64
    // and holds one unsigned long (64..72).
    let l = layout_json("gcc-dwarf5-base", "grouped", false);
    let groups = l["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(
        (&groups[0]["name"], &groups[0]["begin"], &groups[0]["end"]),
        (&"read_mostly".into(), &0.into(), &16.into())
    );
    assert_eq!(
        (&groups[1]["name"], &groups[1]["begin"], &groups[1]["end"]),
        (&"write_hot".into(), &64.into(), &72.into())
    );
    assert!(
        l["members"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| !m["path"].as_str().unwrap().starts_with("__cacheline"))
    );
    // The "after" layout puts the stats in their own aligned group.
    let after = layout_json("gcc-dwarf5-after", "lru_gen_folio", false);
    let g = &after["groups"][0];
    assert_eq!(g["name"], "lrugen_stats");
    assert_eq!(g["begin"].as_u64().unwrap() % 64, 0);
    assert_eq!(member(&after, "evicted")["offset"], g["begin"]);
}

#[test]
fn cacheline_size_comes_from_the_build_then_the_elf_machine() {
    // Every fixture is compiled with SMP_CACHE_BYTES 64
    // (fixtures/src/mm_lru.h:18), so its struct cacheline_padding is
    // aligned to 64 whatever the machine: the build's line is 64, and a
    // note says so where the machine usually has another (as Debian's
    // armhf kernel, CONFIG_ARM_L1_CACHE_SHIFT=6 on a 32-byte machine).
    for (file, machine) in [
        ("clang-s390x-base.o", 256),
        ("clang-powerpc64-base.o", 128),
        ("clang-aarch64-base.o", 64),
        ("gcc-dwarf5-base", 64),
    ] {
        assert_eq!(
            layout_json(file, "lruvec", false)["cacheline_size"],
            64,
            "{file}"
        );
        let path = fixture(file);
        let (code, _, err) = common::cachelint(&["layout", path.to_str().unwrap(), "lruvec"]);
        assert_eq!(code, 0, "{err}");
        let note = format!(
            "64-byte cachelines, from the alignment of struct cacheline_padding (CACHELINE_PADDING) \
             in the debug info; the ELF machine usually has {machine}"
        );
        assert_eq!(err.contains(&note), machine != 64, "{file}: {err}");
    }
    // A .config beside the file comes first: x86's CONFIG_X86_L1_CACHE_SHIFT
    // is 7 for a Pentium 4 (arch/x86/Kconfig.cpu).
    let dir = std::env::temp_dir().join(format!("cachelint-line-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let copy = dir.join("vmlinux");
    std::fs::copy(fixture("gcc-dwarf5-base"), &copy).unwrap();
    std::fs::write(
        dir.join(".config"),
        "CONFIG_SMP=y\nCONFIG_X86_L1_CACHE_SHIFT=7\n",
    )
    .unwrap();
    let (code, out, err) = common::cachelint(&[
        "layout",
        "--format",
        "json",
        copy.to_str().unwrap(),
        "lruvec",
    ]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        serde_json::from_str::<Value>(&out).unwrap()[0]["cacheline_size"],
        128
    );
    // The config wins over the padding's 64 and the machine's 64.
    assert!(
        err.contains("128-byte cachelines, from CONFIG_X86_L1_CACHE_SHIFT=7 in ")
            && err.contains("the ELF machine usually has 64"),
        "{err}"
    );
    let out = run::layout(
        &fixture("gcc-dwarf5-base"),
        &["lruvec".into()],
        false,
        Format::Json,
        Some(128),
        &Source::Auto,
    )
    .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&out.stdout).unwrap()[0]["cacheline_size"],
        128
    );
    // --cacheline takes what a rules file's `cacheline` may be.
    let file = fixture("gcc-dwarf5-base");
    for (bytes, ok) in [
        ("1", false),
        ("3", false),
        ("63", false),
        ("8192", false),
        ("x", false),
        ("16", true),
        ("4096", true),
    ] {
        let (code, _, err) = common::cachelint(&[
            "layout",
            "--cacheline",
            bytes,
            file.to_str().unwrap(),
            "lruvec",
        ]);
        assert_eq!(code == 0, ok, "--cacheline {bytes}: {err}");
        if !ok {
            assert_eq!(code, 2);
            assert!(err.contains("power of two from 16 to 4096"), "{err}");
        }
    }
}

#[test]
fn same_name_different_layouts_are_reported_and_selectable() {
    let file = fixture("dup");
    let text = run::layout(
        &file,
        &["dup".into()],
        false,
        Format::Text,
        None,
        &Source::Auto,
    )
    .unwrap();
    assert_eq!(text.notes.len(), 1);
    assert!(
        text.notes[0].contains("2 distinct layouts"),
        "{}",
        text.notes[0]
    );
    let first = run::layout(
        &file,
        &["dup".into()],
        false,
        Format::Json,
        None,
        &Source::Auto,
    )
    .unwrap();
    let v: Value = serde_json::from_str(&first.stdout).unwrap();
    assert!(v[0]["note"].as_str().unwrap().contains("dup#N"));
    // dup_a.c: int a; long b -> 16 bytes; dup_b.c: char, char, short -> 4.
    assert_eq!(v[0]["size"], 16);
    let second = run::layout(
        &file,
        &["dup#2".into()],
        false,
        Format::Json,
        None,
        &Source::Auto,
    )
    .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&second.stdout).unwrap()[0]["size"],
        4
    );
    let by_file = run::layout(
        &file,
        &["dup@dup_b.c".into()],
        false,
        Format::Json,
        None,
        &Source::Auto,
    )
    .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&by_file.stdout).unwrap()[0]["size"],
        4
    );
    assert!(
        run::layout(
            &file,
            &["dup#3".into()],
            false,
            Format::Json,
            None,
            &Source::Auto
        )
        .is_err()
    );
}

#[test]
fn every_truncation_of_a_fixture_is_an_error_not_a_panic() {
    let data = std::fs::read(fixture("gcc-dwarf5-base.o")).unwrap();
    let dir = std::env::temp_dir().join(format!("cachelint-trunc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("truncated.o");
    let step = (data.len() / 400).max(1);
    for len in (1..data.len()).step_by(step) {
        std::fs::write(&path, &data[..len]).unwrap();
        // The section headers are the last bytes of the file (`readelf -h`:
        // 22 of 64 bytes from 10832, the file's 12240 bytes), so every cut
        // loses some of them, or the ELF header itself: each one an error
        // that says the file is truncated.
        let layout = run::layout(
            &path,
            &["mem_cgroup_per_node".into()],
            true,
            Format::Text,
            None,
            &Source::Auto,
        );
        let sizes = run::sizes(&path, &Source::Auto);
        for err in [layout.err(), sizes.err()] {
            let err = err.map(|e| e.to_string()).unwrap_or_default();
            assert!(err.contains(": truncated: "), "cut at {len}: {err}");
        }
    }
    std::fs::write(&path, &data[..data.len() / 2]).unwrap();
    assert!(run::sizes(&path, &Source::Auto).is_err());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A file cut inside `.debug_info` whose section headers survived (put
/// back at the cut) says which section was cut and by how much.
#[test]
fn a_section_cut_short_is_truncated_naming_it() {
    use object::{Object, ObjectSection};
    let data = std::fs::read(fixture("gcc-dwarf5-base")).unwrap();
    let elf = object::File::parse(&*data).unwrap();
    let (info_at, info_size) = elf
        .section_by_name(".debug_info")
        .unwrap()
        .file_range()
        .unwrap();
    // ELF64 little endian: e_shoff at byte 0x28, e_shnum at 0x3c,
    // e_shstrndx at 0x3e; a section header is 64 bytes, sh_offset at +0x18.
    // The section headers are the file's last bytes, after .shstrtab.
    let word = |at: usize| u64::from_le_bytes(data[at..at + 8].try_into().unwrap()) as usize;
    let half = |at: usize| usize::from(u16::from_le_bytes([data[at], data[at + 1]]));
    let shoff = word(0x28);
    let mut headers = data[shoff..].to_vec();
    assert_eq!(headers.len(), 64 * half(0x3c));
    let names = elf.section_by_name(".shstrtab").unwrap().data().unwrap();
    // Cut 16 bytes into .debug_info, then put back the section names and
    // the headers, pointing at their new places.
    let cut = info_at as usize + 16;
    let mut cut_file = data[..cut].to_vec();
    let names_at = 64 * half(0x3e) + 0x18;
    headers[names_at..names_at + 8].copy_from_slice(&(cut as u64).to_le_bytes());
    cut_file.extend(names);
    let new_shoff = cut_file.len() as u64;
    cut_file[0x28..0x30].copy_from_slice(&new_shoff.to_le_bytes());
    cut_file.extend(&headers);
    // What is left of .debug_info: from its start to the end of the file.
    let have = cut_file.len() as u64 - info_at;
    assert!(have < info_size);
    let dir = std::env::temp_dir().join(format!("cachelint-cut-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("cut");
    std::fs::write(&path, &cut_file).unwrap();
    let (code, out, err) = cachelint(&["sizes", path.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 2, "{out}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let want = format!(
        "truncated: section .debug_info runs past the end of the file ({have} of {info_size} bytes)"
    );
    assert!(err.contains(&want), "{err}");
}

/// A corrupt abbreviation table is located in `.debug_abbrev`, not at a
/// `.debug_info` offset that happens to have the same number.
#[test]
fn a_corrupt_abbreviation_is_located_in_debug_abbrev() {
    use object::{Object, ObjectSection};
    let mut data = std::fs::read(fixture("gcc-dwarf5-base")).unwrap();
    let start = {
        let elf = object::File::parse(&*data).unwrap();
        let s = elf.section_by_name(".debug_abbrev").unwrap();
        s.file_range().unwrap().0 as usize
    };
    // The unit's table starts at .debug_abbrev offset 0 (`readelf
    // --debug-dump=info`: "Abbrev Offset: 0"): abbreviation 1 is its code
    // (byte 0), its tag DW_TAG_member (0x0d, byte 1) and DW_CHILDREN at
    // byte 2, which may only be 0 or 1.
    assert_eq!(&data[start..start + 3], &[1, 0x0d, 0]);
    data[start + 2] = 7;
    let dir = std::env::temp_dir().join(format!("cachelint-abbrev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("corrupt-abbrev");
    std::fs::write(&path, &data).unwrap();
    for args in [
        vec!["sizes", path.to_str().unwrap()],
        vec!["layout", path.to_str().unwrap(), "lruvec"],
    ] {
        let (code, out, err) = cachelint(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("corrupt DWARF at .debug_abbrev offset 0x2:"),
            "{args:?}: {err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `.debug_str` whose NULs are all overwritten cannot hold a name: an
/// error naming the section, not an empty `sizes` with exit code 0.
#[test]
fn a_corrupt_string_section_is_an_error_naming_it() {
    use object::{Object, ObjectSection};
    let mut data = std::fs::read(fixture("gcc-dwarf5-base")).unwrap();
    let range = {
        let elf = object::File::parse(&*data).unwrap();
        let s = elf.section_by_name(".debug_str").unwrap();
        let (start, size) = s.file_range().unwrap();
        start as usize..(start + size) as usize
    };
    for b in &mut data[range] {
        if *b == 0 {
            *b = b'x';
        }
    }
    let dir = std::env::temp_dir().join(format!("cachelint-str-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("corrupt-str");
    std::fs::write(&path, &data).unwrap();
    for args in [
        vec!["sizes", path.to_str().unwrap()],
        vec!["layout", path.to_str().unwrap(), "lruvec"],
    ] {
        let (code, out, err) = cachelint(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert!(
            err.contains("section .debug_str: does not end in a NUL byte"),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bad_input_exits_2_with_a_one_line_error() {
    let f = |n: &str| fixture(n).to_string_lossy().into_owned();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["layout".into(), f("nodebug"), "dup".into()],
            "no DWARF debug info",
        ),
        (
            vec!["layout".into(), f("gcc-dwarf5-base"), "lruvc".into()],
            "did you mean 'lruvec'",
        ),
        (
            vec!["layout".into(), "/nonexistent/vmlinux".into(), "x".into()],
            "No such file",
        ),
        (
            vec!["layout".into(), "Cargo.toml".into(), "x".into()],
            "not a readable ELF file",
        ),
        (
            vec![
                "offsetof".into(),
                f("gcc-dwarf5-base"),
                "lruvec.lru_lok".into(),
            ],
            "did you mean 'lru_lock'",
        ),
        (
            vec![
                "offsetof".into(),
                f("gcc-dwarf5-base"),
                "lru_gen_folio.refaulted[1]".into(),
            ],
            "out of bounds",
        ),
        (
            vec!["offsetof".into(), f("gcc-dwarf5-base"), "lruvec[".into()],
            "bad path",
        ),
        (vec!["sizes".into(), f("nodebug")], "CONFIG_DEBUG_INFO"),
        (
            vec![
                "offsets".into(),
                f("gcc-dwarf5-base"),
                "./missing-vmlinux".into(),
                "lruvec.lru_lock".into(),
            ],
            "./missing-vmlinux: no such file",
        ),
        (
            vec![
                "offsets".into(),
                "/nonexistent/vmlinux".into(),
                "lruvec.lru_lock".into(),
            ],
            "/nonexistent/vmlinux: no such file",
        ),
        // clap's usage errors, on one line too.
        (
            vec!["check".into(), "--bogus".into()],
            "cachelint: error: unexpected argument '--bogus' found",
        ),
        (
            vec!["layout".into()],
            "cachelint: error: the following required",
        ),
        (vec!["nosuchcommand".into()], "unrecognized subcommand"),
        // A build given as the rules.
        (
            vec![
                "check".into(),
                "--rules".into(),
                f("gcc-dwarf5-base"),
                f("gcc-dwarf5-base"),
            ],
            "not a rules file (TOML or a net_cachelines .rst table): an ELF or BTF file",
        ),
    ];
    for (args, needle) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = cachelint(&args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn help_and_version_are_clap_s_own() {
    for args in [&["--help"][..], &["check", "--help"], &["--version"]] {
        let (code, stdout, stderr) = cachelint(args);
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(stderr.is_empty(), "{args:?}");
        let want = if args == ["--version"] {
            "cachelint "
        } else {
            "Usage: cachelint"
        };
        assert!(stdout.contains(want), "{args:?}: {stdout}");
    }
}

#[test]
fn text_layout_reads_like_pahole() {
    let (code, out, _) = cachelint(&[
        "layout",
        &fixture("gcc-dwarf5-base").to_string_lossy(),
        "lruvec",
    ]);
    assert_eq!(code, 0);
    // Offsets of this layout are pinned by the truth tests; here the shape:
    // lists[5] (80 bytes) crosses line 1, lru_lock at 80, a 4-byte hole.
    assert!(out.starts_with("struct lruvec {\n"));
    assert!(out.contains("\t/* --- cacheline 1 boundary (64 bytes) was 16 bytes ago --- */\n"));
    assert!(out.contains("\t/* XXX 4 bytes hole, try to pack */\n"));
    assert!(out.contains("lru_lock;             /*    80     4 */"));
    assert!(out.contains("\t/* size: 1488, cachelines: 24, members: 9 */\n"));
    assert!(out.ends_with("};\n"));
}

/// `layout`, `offsetof` and `sizes` take a FILE, never NAME=FILE: a file
/// whose name holds '=' is that file.
#[test]
fn a_file_name_with_an_equals_sign_is_a_file() {
    let dir = std::env::temp_dir().join(format!("cachelint-eq-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(fixture("gcc-dwarf5-base"), dir.join("base=copy")).unwrap();
    let (code, out, err) =
        common::cachelint_in(&dir, &["offsetof", "base=copy", "lruvec.lru_lock"]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 0, "{err}");
    let t = truth(&fixture("gcc-dwarf5-base"), true);
    let want = format!("lruvec.lru_lock: offset {} ", t["lruvec.lru_lock"].0);
    assert!(out.starts_with(&want), "{err}");
}

/// `layout` of every struct of a pahole reference under tests/golden/
/// (pahole's own `-C` text for a fixture, saved by hand: the first lines
/// say how), compared line by line after the normalisation the kernel tier
/// uses (docs/layout.md, "Compared with pahole").
#[test]
fn layout_text_equals_paholes_for_the_fixtures() {
    for (golden, object) in [
        ("pahole-gcc-dwarf5-base.txt", "gcc-dwarf5-base"),
        ("pahole-variants-gcc-dwarf5.txt", "variants-gcc-dwarf5.o"),
    ] {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/golden")
            .join(golden);
        let theirs = std::fs::read_to_string(&path).unwrap();
        let names: Vec<String> = common::pahole_text::pahole_blocks(&theirs)
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        assert!(names.len() >= 15, "{golden}: {} structs", names.len());
        let ours = run::layout(
            &fixture(object),
            &names,
            false,
            Format::Text,
            None,
            &Source::Auto,
        )
        .unwrap()
        .stdout;
        let (differences, lines, skipped) =
            common::pahole_text::compare(&theirs, &ours, &names, 64);
        assert!(skipped.is_empty(), "{golden}: {skipped:?}");
        assert!(
            differences.is_empty(),
            "{golden}: {} structs differ from pahole; the first:\n{}",
            differences.len(),
            differences[..differences.len().min(15)].join("\n")
        );
        assert!(lines > 200, "{golden}: {lines} lines");
    }
}

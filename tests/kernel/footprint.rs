//! `footprint` of the net_cachelines tables against a count from
//! pahole's offsets, on 6.12 and 6.1.

use std::path::PathBuf;

use crate::common;
use crate::{kernel_source, pahole, pahole_extents, vmlinux};

#[test]
#[ignore = "needs a real kernel and its source tree: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn footprint_per_context_equals_a_count_from_paholes_offsets() {
    let dir = kernel_source().join("Documentation/networking/net_cachelines");
    // The kernel the tables come with, and one from before the 6.8
    // reorganisation (CACHELINT_VMLINUX_OLD, a 6.1 kernel in .ci/run).
    let mut kernels = vec![vmlinux()];
    kernels.extend(std::env::var_os("CACHELINT_VMLINUX_OLD").map(PathBuf::from));
    for k in kernels {
        for (table, ty) in [
            ("tcp_sock.rst", "tcp_sock"),
            ("net_device.rst", "net_device"),
            ("netns_ipv4_sysctl.rst", "netns_ipv4"),
        ] {
            let (code, out, err) = common::cachelint(&[
                "footprint",
                "--rules",
                dir.join(table).to_str().unwrap(),
                k.to_str().unwrap(),
                "--format",
                "json",
            ]);
            assert_eq!(code, 0, "{table}: {err}");
            let json: serde_json::Value = serde_json::from_str(&out).unwrap();
            let row = &json["builds"][0]["types"][0];
            assert_eq!(row["name"], ty);
            let extents = pahole_extents(&pahole(&["-C", ty, k.to_str().unwrap()]));
            for c in row["contexts"].as_array().unwrap() {
                let ranges: Vec<(u64, u64)> = c["fields"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|f| {
                        let f = f.as_str().unwrap();
                        let (o, s) = *extents
                            .get(f)
                            .unwrap_or_else(|| panic!("{ty}: pahole has no member '{f}'"));
                        (o, o + s)
                    })
                    .collect();
                let (bytes, lines) = common::bytes_and_lines(ranges, 64);
                let context = c["context"].as_str().unwrap();
                assert_eq!(c["bytes"], bytes, "{ty} {context}");
                let ours: Vec<u64> = c["lines"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| l.as_u64().unwrap())
                    .collect();
                assert_eq!(ours, lines, "{ty} {context}");
                assert_eq!(c["optimum"], bytes.div_ceil(64), "{ty} {context}");
                eprintln!(
                    "{}: {ty} {context}: {} fields, {bytes} bytes, {} lines, optimum {}, as pahole's offsets give",
                    k.display(),
                    c["fields"].as_array().unwrap().len(),
                    lines.len(),
                    bytes.div_ceil(64)
                );
            }
            // Members the table names that this kernel lacks are listed, and
            // pahole does not have them either.
            for absent in row["absent"].as_array().unwrap() {
                let name = absent.as_str().unwrap().rsplit(": ").next().unwrap();
                let top = name.split('.').next().unwrap();
                assert!(
                    !extents.contains_key(top),
                    "{ty}: '{name}' is listed absent"
                );
            }
            eprintln!(
                "{}: {ty}: {} tabled members absent",
                k.display(),
                row["absent"].as_array().unwrap().len()
            );
        }
    }
}

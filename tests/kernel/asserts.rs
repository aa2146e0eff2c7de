//! `asserts --against` the kernel's own check functions.

use serde_json::Value;

use crate::common;
use crate::{kernel_source, vmlinux};

#[test]
#[ignore = "needs a real kernel and its source: .ci/run sets CACHELINT_VMLINUX and CACHELINT_KERNEL_SOURCE"]
fn asserts_compare_with_the_kernels_own_check_functions() {
    let source = kernel_source();
    let tables = source.join("Documentation/networking/net_cachelines");
    let cases = [
        ("tcp_sock.rst", "tcp_sock", "net/ipv4/tcp.c"),
        ("net_device.rst", "net_device", "net/core/dev.c"),
        (
            "netns_ipv4_sysctl.rst",
            "netns_ipv4",
            "net/core/net_namespace.c",
        ),
    ];
    for (table, ty, file) in cases {
        let table = tables.join(table);
        let c_file = source.join(file);
        let args = |format: &str| {
            common::cachelint(&[
                "asserts",
                "--rules",
                table.to_str().unwrap(),
                vmlinux().to_str().unwrap(),
                ty,
                "--against",
                c_file.to_str().unwrap(),
                "--format",
                format,
            ])
        };
        let (code, out, err) = args("json");
        assert!(code == 0 || code == 1, "{ty}: {err}");
        let j: Value = serde_json::from_str(&out).unwrap();
        let c = &j["comparison"];
        // An independent count: the 6.12 files write each assert's type
        // and group on the macro's line.
        let text = std::fs::read_to_string(&c_file).unwrap();
        let count = |macro_name: &str| {
            let call = format!("{macro_name}(struct {ty},");
            text.lines()
                .filter(|l| l.trim_start().starts_with(&call))
                .count()
        };
        let members = count("CACHELINE_ASSERT_GROUP_MEMBER");
        assert!(members > 10, "{ty}: {members} member asserts in {file}");
        assert_eq!(c["member_asserts"], members, "{ty}");
        assert_eq!(
            c["size_asserts"],
            count("CACHELINE_ASSERT_GROUP_SIZE"),
            "{ty}"
        );
        // The kernel built this vmlinux from this source, so its asserts
        // hold on it: a failure would be cachelint misreading the layout.
        assert_eq!(c["summary"]["failures"], 0, "{ty}: {out}");
        let generated: usize = j["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["members"].as_array().unwrap().len())
            .sum();
        let (_, text_out, notes) = args("text");
        eprintln!(
            "{ty}: {generated} member asserts generated, {members} read from {file}\n{text_out}{notes}"
        );
    }
}

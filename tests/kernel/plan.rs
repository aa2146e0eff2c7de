//! The plan oracle: the RFC 3/3 plan against the module built with the
//! patched header.

use crate::{assert_module_truth, plan_oracles};

#[test]
#[ignore = "needs real kernels and modules: .ci/run sets CACHELINT_PLAN_ORACLE (scripts/kmod-oracle.sh)"]
fn the_rfc3_plan_on_debian_kernels_equals_the_module_built_with_the_patched_header() {
    let plan =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/kmod/rfc3.plan.toml");
    for (vmlinux, kmod) in plan_oracles() {
        // The module sees the kernel's layout, so it can speak for the patch.
        let shipped = assert_module_truth(&vmlinux, &kmod.join("oracle-shipped.ko"), None);
        let planned = assert_module_truth(&vmlinux, &kmod.join("oracle-rfc3.ko"), Some(&plan));
        println!(
            "{}: {shipped} rows as shipped, {planned} as planned, equal to the modules",
            vmlinux.display()
        );
        assert!(planned > 40);
    }
}

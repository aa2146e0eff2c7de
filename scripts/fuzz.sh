#!/usr/bin/env bash
# Run a cachelint fuzz target with cargo-fuzz (needs a nightly toolchain and
# `cargo install cargo-fuzz`).
#
# Usage: scripts/fuzz.sh TARGET [SECONDS]
#   TARGET   elf, btf, rules_toml, rst, plan, name_index, header_patch,
#            variant_file, perf_output or c_declarations
#            (see fuzz/fuzz_targets/)
#   SECONDS  how long to run (default 600)
#   FUZZ_FLAGS (environment) extra `cargo fuzz run` flags, such as
#            "--sanitizer none": safe Rust gains little from ASan, and the
#            btf target runs several times faster without it
#
# The corpus (fuzz/corpus/TARGET, not committed) is seeded from the
# fixtures. Crashes land in fuzz/artifacts/TARGET; copy each one into
# tests/corpus/TARGET/ once fixed, where tests/integration/corpus.rs replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$1
seconds=${2:-600}
corpus=fuzz/corpus/$target
mkdir -p "$corpus"
case $target in
  elf) cp fixtures/bin/gcc-dwarf5-base fixtures/bin/clang-dwarf4-rt fixtures/bin/*-base.o "$corpus/" ;;
  btf) cp fixtures/bin/gcc-btf-*.raw "$corpus/" ;;
  rules_toml) cp examples/*.toml tests/rules/*.toml "$corpus/" ;;
  rst) cp tests/rules/*.rst "$corpus/" ;;
  plan) cp tests/plans/*.toml fixtures/kmod/rfc3.plan.toml "$corpus/" ;;
  perf_output) cp fixtures/perf/*.txt "$corpus/" ;;
  c_declarations) cp fixtures/perf/ring.c fixtures/variant-tree/include/linux/*.h tests/corpus/c_declarations/* "$corpus/" ;;
  # Their seeds are in tests/corpus/TARGET, which the run reads too.
  name_index | header_patch | variant_file) ;;
  *) echo "fuzz.sh: unknown target '$target' (elf, btf, rules_toml, rst, plan, name_index, header_patch, variant_file)" >&2; exit 2 ;;
esac
mkdir -p "tests/corpus/$target"
# shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags
cargo +nightly fuzz run ${FUZZ_FLAGS:-} "$target" "$corpus" "tests/corpus/$target" -- \
  -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20

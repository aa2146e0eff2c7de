#!/usr/bin/env bash
# Fetch the OASIS SARIF 2.1.0 JSON schema and print its path, for the test
# that validates cachelint's SARIF (tests/integration/sarif.rs, CACHELINT_SARIF_SCHEMA).
# The schema is not kept in the repository: the crates.io package
# serde-sarif 0.8.0 ships it as src/schema.json, and cargo fetches that
# package like any other. Extracted once under
# ${CACHELINT_CACHE:-$HOME/.cache/cachelint}/ and reused.
set -euo pipefail
cache=${CACHELINT_CACHE:-$HOME/.cache/cachelint}
schema=$cache/sarif-schema-2.1.0.json
if [[ ! -s $schema ]]; then
  mkdir -p "$cache"
  tmp=$(mktemp -d "$cache/.sarif.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  # A throwaway package whose one dependency is the schema's carrier.
  mkdir -p "$tmp/pkg"
  cat >"$tmp/pkg/Cargo.toml" <<'TOML'
[package]
name = "fetch-sarif-schema"
version = "0.0.0"
edition = "2021"

[lib]
path = "lib.rs"

[dependencies]
serde-sarif = "=0.8.0"
TOML
  : >"$tmp/pkg/lib.rs"
  echo "fetch-sarif-schema: cargo fetch serde-sarif 0.8.0" >&2
  cargo fetch --quiet --manifest-path "$tmp/pkg/Cargo.toml" >&2
  crate=$(ls "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/*/serde-sarif-0.8.0.crate | head -n 1)
  tar -xzf "$crate" -C "$tmp" serde-sarif-0.8.0/src/schema.json
  grep -q '"title": "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"' \
    "$tmp/serde-sarif-0.8.0/src/schema.json" ||
    { echo "fetch-sarif-schema: $crate holds no SARIF 2.1.0 schema" >&2; exit 1; }
  mv "$tmp/serde-sarif-0.8.0/src/schema.json" "$schema"
fi
echo "$schema"

#!/usr/bin/env bash
# Benchmark cachelint against pahole on one real vmlinux, reading DWARF.
#
# Usage: scripts/bench.sh [VMLINUX] [RUNS]
#   VMLINUX  default: the cloud-amd64 kernel from scripts/fetch-kernel.sh
#   RUNS     runs per command (default 5); the median wall time is reported
#   PLAN_FLAVOURS  Debian flavours for the three-config check: its scaling
#            against the first flavour alone, and its cost with a plan
#            (default "amd64 rt-amd64 cloud-amd64"; fetched with
#            scripts/fetch-kernel.sh); empty to skip
#   PEER_STRUCTS  structs for the packing-only comparison with pahole
#            --reorganize (scripts/pahole-peer.sh, on the amd64 kernel from
#            scripts/fetch-kernel.sh; default 200); empty to skip
#   VARIANT_CONFIG  the .config of the variants' figures (default Debian's
#            amd64, scripts/fetch-config.sh), on the 6.12 source tree of
#            scripts/fetch-source.sh; empty to skip
#   EVIDENCE_TREE  the source tree of the draft figure (default the 6.12 tree
#            of scripts/fetch-source.sh); empty to skip
#   CACHELINT=PATH  bench that binary instead of building this tree (to
#            compare two commits in one sitting: build the other one,
#            copy its target/release/cachelint aside, run once with each)
#
# A copy of the vmlinux without .BTF/.BTF_ids is made once next to it (so
# pahole has to read DWARF), then each command runs RUNS times under
# /usr/bin/time. Prints median wall time and peak RSS side by side, and the
# ratio. Needs pahole (dwarves) and objcopy (binutils); builds cachelint
# in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."

vmlinux=${1:-$(scripts/fetch-kernel.sh cloud-amd64)}
runs=${2:-5}
nobtf="$vmlinux.nobtf"
if [[ ! -s $nobtf ]]; then
  objcopy --remove-section .BTF --remove-section .BTF_ids "$vmlinux" "$nobtf.tmp"
  mv "$nobtf.tmp" "$nobtf"
fi
if [[ -n ${CACHELINT:-} ]]; then
  cachelint=$CACHELINT
else
  cargo build --release --quiet
  cachelint=target/release/cachelint
fi

# The first struct defined in the first unit: what an early exit finds at once.
first_type=$($cachelint sizes "$nobtf" | head -n 1 | cut -f1)

jobs_flag=()
if pahole --help 2>&1 | grep -q -- '-j, --jobs'; then
  jobs_flag=(-j2)
fi

# measure NAME CMD...: median wall seconds and max peak RSS (MB) over $runs runs
measure() {
  local name=$1
  shift
  local walls=() rss=0
  for _ in $(seq "$runs"); do
    local out
    # Exit codes are ignored: the missing type fails on purpose. GNU time
    # writes "Command exited with non-zero status" first, then the figures.
    /usr/bin/time -f '%e %M' -o "$timing" "$@" >/dev/null 2>&1 || true
    out=$(tail -n 1 "$timing")
    walls+=("${out%% *}")
    local kb=${out##* }
    ((kb > rss)) && rss=$kb
  done
  local median
  median=$(printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '%s\t%s\t%s\n' "$name" "$median" "$((rss / 1024))"
}

results=$(mktemp)
timing=$(mktemp)
trap 'rm -f "$results" "$timing"' EXIT
{
  measure "cachelint sizes" $cachelint sizes "$nobtf"
  measure "pahole --sizes" pahole -F dwarf "${jobs_flag[@]}" --sizes "$nobtf"
  # --no-cache: a scan, as pahole does; the single-type table below has
  # the lookups from the name index.
  measure "cachelint missing type" $cachelint layout --no-cache "$nobtf" no_such_type
  measure "pahole missing type" pahole -F dwarf "${jobs_flag[@]}" -C no_such_type "$nobtf"
  # NAME#1 asks for the first definition, which stops the scan early as
  # pahole -C does; plain NAME scans everything to report other layouts.
  measure "cachelint first type" $cachelint layout "$nobtf" "$first_type#1"
  measure "pahole first type" pahole -F dwarf "${jobs_flag[@]}" -C "$first_type" "$nobtf"
  # pahole has no rules; its column here is a layout of the struct the
  # check reports on, for scale.
  measure "cachelint check mm-lru" $cachelint check --rules examples/mm-lru.toml "$nobtf"
  measure "pahole check mm-lru" pahole -F dwarf "${jobs_flag[@]}" -C mem_cgroup_per_node "$nobtf"
} > "$results"

echo "vmlinux: $vmlinux (.BTF removed), $(nproc) cores, $runs runs, $(pahole --version) ${jobs_flag[*]}"
echo "cachelint: $cachelint"
echo "first type: $first_type"
printf '%-24s %10s %10s %12s %12s %8s\n' case cachelint pahole "cachelint MB" "pahole MB" ratio
paste - - < "$results" | while IFS=$'\t' read -r n1 w1 r1 _ w2 r2; do
  case_name=${n1#cachelint }
  ratio=$(awk -v a="$w1" -v b="$w2" 'BEGIN { if (a > 0) printf "%.1fx", b / a; else print "-" }')
  printf '%-24s %9ss %9ss %12s %12s %8s\n' "$case_name" "$w1" "$w2" "$r1" "$r2" "$ratio"
done

# Single-type lookups (one type per command, cold) over the 30 largest and most
# duplicated structs: cold (--no-cache: a scan of every unit) against the
# whole-kernel sizes of this run (goal: at most 1.0x, peak RSS under 350
# MB), and warm (the on-disk name index of a private cache directory,
# primed by one lookup; goal: at most 0.15x). pahole -C, one run each,
# for scale: it stops at the first unit that defines the struct.
single_types=${SINGLE_TYPES-$($cachelint sizes "$nobtf" | sort -t$'\t' -k2,2 -n -r | awk 'NR <= 15 { printf "%s ", $1 }') task_struct mm_struct inode file dentry super_block page folio sk_buff sock net_device device module tcp_sock lruvec}
if [[ -n $single_types ]]; then
  sizes_wall=$(measure sizes $cachelint sizes "$nobtf" | cut -f2)
  cache_dir=$(mktemp -d)
  trap 'rm -rf "$results" "$timing" "$cache_dir"' EXIT
  CACHELINT_CACHE_DIR=$cache_dir $cachelint layout "$nobtf" list_head >/dev/null
  echo
  echo "single-type lookups; whole-kernel sizes in this run: ${sizes_wall}s"
  printf '%-24s %8s %8s %9s %8s %8s %8s\n' struct layout expand offsetof "max MB" warm "pahole"
  worst_cold=0 worst_warm=0 worst_rss=0
  for t in $single_types; do
    l=$(measure l $cachelint layout --no-cache "$nobtf" "$t")
    e=$(measure e $cachelint layout --no-cache --expand "$nobtf" "$t")
    o=$(measure o $cachelint offsetof --no-cache "$nobtf" "$t")
    w=$(CACHELINT_CACHE_DIR=$cache_dir measure w $cachelint layout "$nobtf" "$t")
    p=$(runs=1 measure p pahole -F dwarf "${jobs_flag[@]}" -C "$t" "$nobtf")
    read -r lw ew ow ww pw <<<"$(printf '%s\n' "$l" "$e" "$o" "$w" "$p" | cut -f2 | tr '\n' ' ')"
    rss=$(printf '%s\n' "$l" "$e" "$o" | cut -f3 | sort -n | tail -n 1)
    printf '%-24s %7ss %7ss %8ss %8s %7ss %7ss\n' "$t" "$lw" "$ew" "$ow" "$rss" "$ww" "$pw"
    worst_cold=$(printf '%s\n' "$worst_cold" "$lw" "$ew" "$ow" | sort -g | tail -n 1)
    worst_warm=$(printf '%s\n' "$worst_warm" "$ww" | sort -g | tail -n 1)
    ((rss > worst_rss)) && worst_rss=$rss
  done
  awk -v c="$worst_cold" -v w="$worst_warm" -v s="$sizes_wall" -v r="$worst_rss" 'BEGIN {
    printf "worst cold %.2fx of sizes (goal <= 1.0x), peak %d MB (goal < 350); worst warm %.2fx (goal <= 0.15x)\n", c / s, r, w / s }'
fi

# A plan's cost: check on three configs, as compiled and with the RFC 3/3
# plan (fixtures/kmod/rfc3.plan.toml). Goal: at most 10% more.
flavours=${PLAN_FLAVOURS-amd64 rt-amd64 cloud-amd64}
if [[ -n $flavours ]]; then
  builds=()
  for f in $flavours; do
    builds+=("$f=$(scripts/fetch-kernel.sh "$f")")
  done
  # Scaling over configs: the builds are loaded and analysed in parallel,
  # so N configs should cost less than N times one (on enough cores; each
  # build's raw scans are parallel too).
  {
    measure "check 1 config" $cachelint check --rules examples/mm-lru.toml "${builds[0]}"
    measure "check ${#builds[@]} configs" $cachelint check --rules examples/mm-lru.toml "${builds[@]}"
  } > "$results"
  echo
  printf '%-24s %10s %10s %12s %12s %8s\n' case "1 config" "${#builds[@]} configs" "1 config MB" "${#builds[@]} MB" "x of one"
  paste - - < "$results" | while IFS=$'\t' read -r _ w1 r1 n2 w2 r2; do
    scale=$(awk -v a="$w1" -v b="$w2" 'BEGIN { if (a > 0) printf "%.2fx", b / a; else print "-" }')
    printf '%-24s %9ss %9ss %12s %12s %8s\n' "$n2" "$w1" "$w2" "$r1" "$r2" "$scale"
  done

  {
    measure "check ${#builds[@]} configs" $cachelint check --rules examples/mm-lru.toml "${builds[@]}"
    measure "planned" $cachelint check --rules examples/mm-lru.toml --plan fixtures/kmod/rfc3.plan.toml "${builds[@]}"
  } > "$results"
  echo
  printf '%-24s %10s %10s %12s %12s %8s\n' case compiled planned "compiled MB" "planned MB" cost
  paste - - < "$results" | while IFS=$'\t' read -r n1 w1 r1 _ w2 r2; do
    cost=$(awk -v a="$w1" -v b="$w2" 'BEGIN { if (a > 0) printf "%+.0f%%", 100 * (b - a) / a; else print "-" }')
    printf '%-24s %9ss %9ss %12s %12s %8s\n' "$n1" "$w1" "$w2" "$r1" "$r2" "$cost"
  done

  # Contexts: the seven net_cachelines tables of the 6.12 source tree and
  # examples/mm-lru.toml in one check of the three configs (goal: 1.5 s on
  # two cores), and footprint of the three netdev structs.
  source_tree=${CACHELINT_KERNEL_SOURCE:-$(scripts/fetch-source.sh)}
  tables=()
  for t in "$source_tree"/Documentation/networking/net_cachelines/*.rst; do
    tables+=(--rules "$t")
  done
  {
    measure "check mm-lru" $cachelint check --rules examples/mm-lru.toml "${builds[@]}"
    measure "+ 7 tables" $cachelint check "${tables[@]}" --rules examples/mm-lru.toml "${builds[@]}"
    measure "footprint 3 structs" $cachelint footprint "${tables[@]}" "${builds[@]}" \
      --type tcp_sock --type net_device --type netns_ipv4
  } > "$results"
  echo
  printf '%-24s %10s %12s\n' "${#builds[@]} configs" wall MB
  while IFS=$'\t' read -r n w r; do
    printf '%-24s %9ss %12s\n' "$n" "$w" "$r"
  done < "$results"
fi

# suggest, counted beyond check of the same builds with the same rules
# (loading is shared): goal +0.5 s for lru_gen_folio over the three
# configs, +3 s for tcp_sock (the 6.12 table, --keep-footprint).
if [[ -n $flavours ]]; then
  tcp_table=$source_tree/Documentation/networking/net_cachelines/tcp_sock.rst
  {
    measure "check mm-lru" $cachelint check --rules examples/mm-lru.toml "${builds[@]}"
    measure "suggest lru_gen_folio" $cachelint suggest --rules examples/mm-lru.toml "${builds[@]}" lru_gen_folio
    measure "check tcp_sock.rst" $cachelint check --rules "$tcp_table" "${builds[@]}"
    measure "suggest tcp_sock" $cachelint suggest --keep-footprint --rules "$tcp_table" "${builds[@]}" tcp_sock
  } > "$results"
  echo
  printf '%-24s %10s %10s %12s %12s %8s\n' case check suggest "check MB" "suggest MB" "added"
  paste - - < "$results" | while IFS=$'\t' read -r _ w1 r1 n2 w2 r2; do
    added=$(awk -v a="$w1" -v b="$w2" 'BEGIN { printf "%+.2fs", b - a }')
    printf '%-24s %9ss %9ss %12s %12s %8s\n' "$n2" "$w1" "$w2" "$r1" "$r2" "$added"
  done
fi

# Packing only (suggest without rules) against pahole --reorganize, issue
# 20: the N largest structs with holes, pahole's claims and their validity,
# cachelint's savings and both wall times (the per-struct table:
# scripts/pahole-peer.sh by hand).
peer_structs=${PEER_STRUCTS-200}
if [[ -n $peer_structs ]]; then
  echo
  CACHELINT=$cachelint scripts/pahole-peer.sh "$(scripts/fetch-kernel.sh amd64)" "$peer_structs" |
    awk '/^vmlinux:/ || /^cachelint:/ { print; next } /^structs:/ { on = 1 } on'
fi

# Variants (docs/variants.md): the 6.12 source with VARIANT_CONFIG, in a
# private cache. A first run prepares the tree (olddefconfig,
# modules_prepare) and compiles the probe; a rerun is served from the cache
# (goal: under 1 s); an option edit over the prepared config starts from
# its directory (goal: under 20 s); and for scale, the same check of
# Debian's amd64 vmlinux.
variant_config=${VARIANT_CONFIG-$(scripts/fetch-config.sh amd64)}
if [[ -n $variant_config ]]; then
  source_tree=${CACHELINT_KERNEL_SOURCE:-$(scripts/fetch-source.sh)}
  variant_cache=$(mktemp -d)
  variant_dir=$(mktemp -d)
  trap 'rm -rf "$results" "$timing" "${cache_dir:-}" "$variant_cache" "$variant_dir"' EXIT
  printf 'tree = "%s"\nconfig = "%s"\n' "$source_tree" "$variant_config" >"$variant_dir/amd64.toml"
  printf 'tree = "%s"\nconfig = "%s"\nset = ["LRU_GEN_STATS=y"]\n' "$source_tree" "$variant_config" >"$variant_dir/stats.toml"
  check=(check --rules examples/mm-lru.toml)
  {
    CACHELINT_VARIANT_DIR=$variant_cache runs=1 measure "first run (prepare)" $cachelint "${check[@]}" "$variant_dir/amd64.toml"
    CACHELINT_VARIANT_DIR=$variant_cache measure "rerun (cached)" $cachelint "${check[@]}" "$variant_dir/amd64.toml"
    CACHELINT_VARIANT_DIR=$variant_cache runs=1 measure "+ LRU_GEN_STATS=y" $cachelint "${check[@]}" "$variant_dir/stats.toml"
    measure "Debian's vmlinux" $cachelint "${check[@]}" "$(scripts/fetch-kernel.sh amd64)"
  } > "$results"
  echo
  echo "variants: $source_tree, $variant_config, $(nproc) cores"
  printf '%-24s %10s %12s\n' "check mm-lru" wall MB
  while IFS=$'\t' read -r n w r; do
    printf '%-24s %9ss %12s\n' "$n" "$w" "$r"
  done < "$results"
fi

# Evidence (docs/evidence.md): draft of lru_gen_folio from the 6.12 source
# tree on this vmlinux (a scan of the tree's C files for the struct's name,
# tree-sitter over those that have it), against check of the same struct's
# rules for scale. Goal: under 10 s warm. EVIDENCE_TREE empty skips it.
evidence_tree=${EVIDENCE_TREE-${CACHELINT_KERNEL_SOURCE:-$(scripts/fetch-source.sh)}}
if [[ -n $evidence_tree ]]; then
  {
    measure "draft --source-tree" $cachelint draft --source-tree "$evidence_tree" "$vmlinux" lru_gen_folio
    # Short names: the tree is searched for `rq` and `napi_struct` as whole
    # words (before: every file holding "irq" was parsed).
    measure "draft rq" $cachelint draft --source-tree "$evidence_tree" "$vmlinux" rq
    measure "draft napi_struct" $cachelint draft --source-tree "$evidence_tree" "$vmlinux" napi_struct
    # Common words: files are chosen by how C declares the struct (`struct
    # request`: 160 files), not by the word (`request`: 6,700).
    measure "draft request" $cachelint draft --source-tree "$evidence_tree" "$vmlinux" request
    measure "draft file" $cachelint draft --source-tree "$evidence_tree" "$vmlinux" file
    # The evidence index: the whole tree read once for every struct (a
    # cache directory of its own, so the first run is cold), then drafts
    # of the two slowest structs above from it.
    index_cache=$(mktemp -d)
    CACHELINT_CACHE_DIR=$index_cache runs=1 measure "draft --index (cold)" $cachelint draft --index --source-tree "$evidence_tree" "$vmlinux" napi_struct
    CACHELINT_CACHE_DIR=$index_cache measure "draft --index sk_buff" $cachelint draft --index --source-tree "$evidence_tree" "$vmlinux" sk_buff
    CACHELINT_CACHE_DIR=$index_cache measure "draft --index file" $cachelint draft --index --source-tree "$evidence_tree" "$vmlinux" file
    # audit of the whole tree from the same index (warm; issue 40's budget
    # is 60 s warm, 10 minutes cold, 3 GB).
    CACHELINT_CACHE_DIR=$index_cache measure "audit (warm)" $cachelint audit --source-tree "$evidence_tree" --top 0 "$vmlinux"
    rm -rf "$index_cache"
    measure "draft sk_buff" $cachelint draft --source-tree "$evidence_tree" "$vmlinux" sk_buff
    measure "check mm-lru" $cachelint check --rules examples/mm-lru.toml "$vmlinux"
  } > "$results"
  echo
  echo "evidence: $evidence_tree, $(nproc) cores"
  printf '%-24s %10s %12s\n' "lru_gen_folio" wall MB
  while IFS=$'\t' read -r n w r; do
    printf '%-24s %9ss %12s\n' "$n" "$w" "$r"
  done < "$results"
fi

#!/usr/bin/env bash
# pahole --reorganize as a peer of `cachelint suggest` without rules
# (packing only): over the N largest structs with holes of a
# vmlinux, pahole's claimed saving, whether pahole's reorganised layout is
# one a compiler could give, and what cachelint saves with layouts the plan
# engine gives.
#
# Usage: scripts/pahole-peer.sh [VMLINUX] [N]
#   VMLINUX  default: ~/.cache/cachelint/kernels/vmlinux-6.12.117+deb12-amd64
#   N        structs (default 200)
#   PAHOLE=PATH  pahole to run (default: the 1.31 build cached in
#            ~/.cache/cachelint/pahole-1.31/pahole if present, else pahole)
#   PAHOLE_TIMEOUT=SECONDS  per struct, for pahole (default 20): its
#            reorganisation of some structs runs for minutes (pglist_data:
#            over 2 minutes from BTF); a struct it does not finish is
#            reported as such, and counts in its wall time
#   CACHELINT=PATH  that binary instead of building this tree
#
# Selection: `pahole -F dwarf --sizes` (name, size, holes), the structs with
# at least one hole, largest first (ties in pahole's order), the first
# layout of each name, the first N.
#
# Timed: `pahole -F btf --reorganize -C TYPE`, once per struct (the total
# wall time of the N runs), and `cachelint suggest VMLINUX TYPE...` with
# the N types in one run (no rules: packing only; DWARF), JSON. Why not
# one pahole run: `--reorganize` without -C reorganises nothing (it only
# applies to -C's classes), and `-C a,b,c` took 19 minutes for 3 of the
# 200 structs from DWARF and over a minute for 1 from BTF; one -C from BTF
# takes 0.2 s, from DWARF 20 s (the DWARF and BTF claims agree on the
# structs tried: page_pool, rcu_state, task_struct).
#
# pahole's layout is valid when it keeps every explicit alignment: each
# top-level member with `__aligned__(N)` on its line (in pahole's own
# reorganised output, or in cachelint's `layout` of the original) at an
# offset that is a multiple of N, and the struct's size a multiple of the
# original struct's alignment (cachelint's `layout --format json`), with no
# `__packed__` the original lacks. Kernel cacheline groups kept (every
# member of a group between its markers as compiled) is reported too, not
# counted in validity.
set -euo pipefail
cd "$(dirname "$0")/.."

vmlinux=${1:-$HOME/.cache/cachelint/kernels/vmlinux-6.12.117+deb12-amd64}
n=${2:-200}
default_pahole=$HOME/.cache/cachelint/pahole-1.31/pahole
pahole=${PAHOLE:-$([[ -x $default_pahole ]] && echo "$default_pahole" || echo pahole)}
if [[ -n ${CACHELINT:-} ]]; then
  cachelint=$CACHELINT
else
  cargo build --release --quiet
  cachelint=target/release/cachelint
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$pahole" -F dwarf --sizes "$vmlinux" >"$work/sizes"
# (awk keeps the first N, not head: head closing the pipe early kills the
# writers with SIGPIPE, which pipefail makes this script's exit.)
awk -F'\t' '$3 > 0' "$work/sizes" | sort -t$'\t' -k2,2nr -s |
  awk -F'\t' -v n="$n" '!seen[$1]++ && ++k <= n' >"$work/selected"
cut -f1 "$work/selected" >"$work/types"

# wall NAME CMD...: runs CMD once (stdout to $work/NAME), its wall seconds
# to $work/NAME.wall. Exit code 1 (some type refused) is kept going.
wall() {
  local name=$1
  shift
  /usr/bin/time -f '%e' -o "$work/$name.wall" "$@" >"$work/$name" 2>"$work/$name.err" || true
}
mapfile -t types <"$work/types"
reorganise() {
  for t in "${types[@]}"; do
    timeout "${PAHOLE_TIMEOUT:-20}" "$pahole" -F btf --reorganize -C "$t" "$vmlinux" ||
      echo "$t" >>"$work/timeouts"
  done
}
start=$(date +%s.%N)
reorganise >"$work/pahole" 2>"$work/pahole.err"
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f\n", b - a }' >"$work/pahole.wall"
wall suggest "$cachelint" suggest --format json "$vmlinux" "${types[@]}"
"$cachelint" layout "$vmlinux" "${types[@]}" >"$work/layout" 2>/dev/null
"$cachelint" layout --format json "$vmlinux" "${types[@]}" >"$work/layout.json" 2>/dev/null

echo "vmlinux: $vmlinux, $(nproc) cores, $($pahole --version) ($pahole), $n structs"
echo "cachelint: $cachelint"
PAHOLE_TIMEOUT=${PAHOLE_TIMEOUT:-20} python3 - "$work" <<'EOF'
import json, os, re, sys

work = sys.argv[1]
selected = [l.rstrip("\n").split("\t") for l in open(f"{work}/selected")]
comment = re.compile(r"/\*\s+(\d+)(?::\s*\d+)?\s+(\d+)\s+\*/\s*$")
aligned = re.compile(r"__aligned__\((\d+)\)")


def member_name(line):
    """The name a top-level member line declares."""
    text = comment.sub("", line)
    text = re.sub(r"__attribute__\(\(.*?\)\)\)?", "", text).strip().rstrip(";").strip()
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", text)
    if m:
        return m.group(1)
    text = re.sub(r":\s*\d+$", "", text)
    text = re.sub(r"(\[[^\]]*\])+$", "", text).strip()
    m = re.search(r"(\w+)$", text)
    return m.group(1) if m else None


def structs(path):
    """Per struct name (first block of each): its top-level lines (name,
    offset, size, alignment attribute), closing line, and size line."""
    out = {}
    name, block = None, None
    for line in open(path):
        line = line.rstrip("\n")
        if name is None:
            m = re.match(r"^struct (\S+) \{$", line)
            if m:
                name = m.group(1)
                block = {"members": [], "closing": "", "size": None}
            continue
        if line.startswith("}"):
            block["closing"] = line
            if name not in out:
                out[name] = block
            name = None
            continue
        m = re.match(r"^\t/\* size: (\d+),", line)
        if m:
            block["size"] = int(m.group(1))
            continue
        # A top-level member: one tab (an inline struct's lines have two,
        # its closing "} name;" one), and its offset and size comment.
        c = comment.search(line)
        top = line.startswith("\t") and not line.startswith("\t\t")
        if top and c and not line[1:].startswith("/*"):
            a = aligned.search(line)
            block["members"].append(
                (member_name(line), int(c.group(1)), int(c.group(2)), int(a.group(1)) if a else None)
            )
    return out


reorganised = structs(f"{work}/pahole")
try:
    timeouts = [l.strip() for l in open(f"{work}/timeouts")]
except FileNotFoundError:
    timeouts = []
original_text = structs(f"{work}/layout")
original = {t["name"]: t for t in json.load(open(f"{work}/layout.json"))}
suggested = {r["name"]: r for r in json.load(open(f"{work}/suggest"))}

rows = []
for name, size, holes in selected:
    size = int(size)
    r = reorganised.get(name)
    claim = 0
    valid = None
    groups_kept = None
    if r is not None:
        m = re.search(r"/\* saved (\d+) bytes", r["closing"])
        claim = int(m.group(1)) if m else 0
        o = original.get(name, {})
        align = o.get("alignment", 1)
        explicit = {n: a for n, _, _, a in original_text.get(name, {"members": []})["members"] if a}
        bad = []
        for mname, off, msize, a in r["members"]:
            for want in {a, explicit.get(mname)} - {None}:
                if off % want:
                    bad.append(f"{mname}@{off}%{want}")
        new_size = r["size"] if r["size"] is not None else size - claim
        if new_size % align:
            bad.append(f"size {new_size}%{align}")
        if "__packed__" in r["closing"] and "__packed__" not in original_text.get(name, {"closing": ""})["closing"]:
            bad.append("packed")
        valid = (not bad, bad)
        # Groups: the members between each group's markers, compiled and
        # reorganised.
        groups = o.get("groups", [])
        if groups:
            top = [m for m in o.get("members", []) if m["depth"] == 0]
            order = [mn for mn, _, _, _ in r["members"]]
            groups_kept = True
            for g in groups:
                want = {m["path"] for m in top if g["begin"] <= m["offset"] < g["end"] and m["size"] > 0}
                b, e = f"__cacheline_group_begin__{g['name']}", f"__cacheline_group_end__{g['name']}"
                if b in order and e in order:
                    got = set(order[order.index(b) + 1 : order.index(e)]) - {None}
                    got = {x for x in got if not x.startswith("__cacheline_group_")}
                    if want - got or got - want:
                        groups_kept = False
    s = suggested.get(name, {})
    if "builds" in s:
        before, after = s["builds"][0]["sizes"][0]["bytes"]
        ours = before - after
    else:
        ours = None
    rows.append((name, size, int(holes), claim, valid, groups_kept, ours, s.get("refused")))

print()
print(f"{'struct':32} {'size':>8} {'holes':>5} {'pahole saves':>12} {'valid':>6} {'groups':>6} {'cachelint':>9}")
for name, size, holes, claim, valid, groups, ours, refused in rows:
    v = "-" if valid is None or not claim else ("yes" if valid[0] else "no")
    g = "-" if groups is None or not claim else ("yes" if groups else "no")
    o = refused and "refused" or str(ours)
    if claim or ours:
        print(f"{name:32} {size:8} {holes:5} {claim:12} {v:>6} {g:>6} {o:>9}"
              + ("" if valid is None or valid[0] or not claim else "  " + ", ".join(valid[1][:3])))
claimed = [r for r in rows if r[3] > 0]
valid = [r for r in claimed if r[4] and r[4][0]]
at_least = [r for r in valid if r[6] is not None and r[6] >= r[3]]
ours = [r for r in rows if r[6]]
missing = [r[0] for r in rows if r[0] not in reorganised]
print()
print(f"structs: {len(rows)}; pahole claims savings on {len(claimed)} ({sum(r[3] for r in claimed)} bytes), "
      f"{len(valid)} of them valid; cachelint saves at least as much on {len(at_least)} of the {len(valid)} valid")
print(f"pahole valid claims: {sum(r[3] for r in valid)} bytes; cachelint on the same structs: "
      f"{sum(r[6] or 0 for r in valid)} bytes")
print(f"cachelint saves on {len(ours)} structs, {sum(r[6] for r in ours)} bytes; refused: "
      f"{sum(1 for r in rows if r[7])}; not in pahole's output: {len(missing)} {' '.join(missing[:5])}")
smallest = [n for n, s in suggested.items() if "builds" in s
            and s["builds"][0].get("least") == s["builds"][0]["sizes"][0]["bytes"][1]]
print(f"cachelint's size is the least any order gives (members' bytes and bits, no hole, "
      f"rounded to the alignment) on {len(smallest)} of {len(rows)}")
print(f"pahole groups broken on {sum(1 for r in claimed if r[5] is False)} of the {sum(1 for r in claimed if r[5] is not None)} "
      "claimed structs with kernel cacheline groups")
print(f"pahole did not finish in {os.environ.get('PAHOLE_TIMEOUT', '20')} s on {len(timeouts)}: {' '.join(timeouts)}")
print(f"wall: pahole -F btf --reorganize -C, {len(rows)} runs: {open(f'{work}/pahole.wall').read().split()[-1]} s; "
      f"cachelint suggest ({len(rows)} types) {open(f'{work}/suggest.wall').read().split()[-1]} s")
EOF

#!/usr/bin/env bash
# Which code the inputs a fuzzer added since a time reach, that its older
# inputs do not: the evidence for or against a plateau that libFuzzer's
# `cov:` count alone cannot give.
#
# Usage: scripts/fuzz-new-code.sh TARGET SINCE
#   TARGET  elf, btf, rules_toml or rst
#   SINCE   a time `find -newermt` takes, e.g. "2026-12-01 02:35"
#
# Splits fuzz/corpus/TARGET at SINCE, replays the older inputs and then all
# of them through the target built by scripts/fuzz.sh (libFuzzer's merge
# mode, whose control file lists the coverage points each input reached),
# and symbolizes the points of each difference: its innermost frame and,
# when there is one, the innermost cachelint frame around it.
#
# Points reached by the older inputs alone are the target's own noise
# (hash table probing, rayon's thread pool): some of those reached only by
# the newer ones are noise too. Needs readelf (binutils), llvm-symbolizer
# and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
target=$1
since=$2
binary=fuzz/target/x86_64-unknown-linux-gnu/release/$target
[[ -x $binary ]] || { echo "fuzz-new-code.sh: no $binary: run scripts/fuzz.sh $target first" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/old" "$work/new" "$work/out1" "$work/out2"
find "fuzz/corpus/$target" -type f ! -newermt "$since" -exec cp -t "$work/old/" {} +
find "fuzz/corpus/$target" -type f -newermt "$since" -exec cp -t "$work/new/" {} +
echo "$(ls "$work/old" | wc -l) inputs before $since, $(ls "$work/new" | wc -l) since"

# Coverage point indices reached by the inputs of the given directories.
covered() {
  local control=$1 out=$2
  shift 2
  "$binary" -merge=1 -merge_control_file="$control" -rss_limit_mb=2048 -timeout=20 \
    "$out" "$@" > /dev/null 2>&1
  grep '^COV' "$control" | cut -d' ' -f3- | tr ' ' '\n' | sed '/^$/d' | sort -u
}
covered "$work/old.ctl" "$work/out1" "$work/old" > "$work/old.cov"
covered "$work/all.ctl" "$work/out2" "$work/old" "$work/new" > "$work/all.cov"
comm -13 "$work/old.cov" "$work/all.cov" > "$work/gained"
comm -23 "$work/old.cov" "$work/all.cov" > "$work/lost"
echo "points: $(wc -l < "$work/old.cov") before, $(wc -l < "$work/all.cov") with the new inputs"

readelf -SW "$binary" > "$work/sections"
readelf -rW "$binary" > "$work/relocs"
python3 - "$binary" "$work" "$PWD" <<'EOF'
import json, re, subprocess, sys

binary, work, root = sys.argv[1:4]
# The PC table (__sancov_pcs) holds (pc, flags) pairs; in a PIE binary each
# pc is the addend of a relative relocation at the pair's address.
start = None
for line in open(f"{work}/sections"):
    f = line.replace("[ ", "[").split()
    if "__sancov_pcs" in f:
        i = f.index("__sancov_pcs")
        start, size = int(f[i + 2], 16), int(f[i + 4], 16)
if start is None:
    sys.exit(f"fuzz-new-code.sh: {binary} has no __sancov_pcs section: build it with scripts/fuzz.sh")
pcs = {}
for line in open(f"{work}/relocs"):
    f = line.split()
    if len(f) >= 4 and f[2] == "R_X86_64_RELATIVE":
        at = int(f[0], 16)
        if start <= at < start + size and (at - start) % 16 == 0:
            pcs[(at - start) // 16] = int(f[3], 16)


def ours(f):
    return f["FileName"].startswith(f"{root}/src/")


def crate(frames):
    """Where a point belongs: cachelint when any of its frames is ours
    (std's slice indexing inlined into ours), else its innermost crate."""
    if any(ours(f) for f in frames):
        return "cachelint"
    path = frames[0]["FileName"]
    if "/registry/src/" in path:
        return re.sub(r"-\d.*", "", path.split("/registry/src/")[1].split("/")[1])
    if "/rust/deps/" in path:
        return re.sub(r"-\d.*", "", path.split("/rust/deps/")[1].split("/")[0])
    return "std" if path.startswith("/rustc/") else path or "?"


def frame(f):
    where = f["FileName"][len(root) + 1 :] if ours(f) else f["FileName"].split("/")[-1]
    return f"{f['FunctionName'][:48]} {where}:{f['Line']}"


for name, title in (("gained", "reached only with the new inputs"), ("lost", "reached only without them (noise)")):
    points = [int(x) for x in open(f"{work}/{name}").read().split()]
    print(f"\n{len(points)} points {title}")
    if not points:
        continue
    out = subprocess.run(
        ["llvm-symbolizer", f"--obj={binary}", "--output-style=JSON", "--functions=short"],
        input="\n".join(hex(pcs[p]) for p in points), capture_output=True, text=True, check=True,
    ).stdout
    rows = []
    for line in out.splitlines():
        frames = json.loads(line)["Symbol"]
        own = next((f for f in frames if ours(f)), None)
        rows.append((crate(frames), f"{frame(frames[0]):72} | {frame(own) if own else '-'}"))
    counts = {}
    for c, _ in rows:
        counts[c] = counts.get(c, 0) + 1
    print("  by crate: " + ", ".join(f"{c} {n}" for c, n in sorted(counts.items(), key=lambda x: -x[1])))
    for c, row in sorted(rows):
        print(f"  {c:13} {row}")
EOF

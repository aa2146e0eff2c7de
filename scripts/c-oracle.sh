#!/usr/bin/env bash
# The compiler as the oracle of a planned layout, without a header patch:
# `cachelint layout --macros --plan PLAN VMLINUX TYPE` prints the planned
# struct as C (pahole's style: type names from the debug info, member
# alignments as attributes, kernel cacheline groups as the kernel's
# macros); this script compiles that C, renamed TYPE_planned, into an
# out-of-tree module against the Debian 6.12.117+deb12 headers of the
# vmlinux's flavour, and compares the module's layout of TYPE_planned
# (read by `pahole -C`) with the planned one: every member's name, byte
# offset and bit offset (group markers too; a group's pad is in the
# `_aligned` end macro, and the offsets after it check it), and the size.
#
# Usage: scripts/c-oracle.sh VMLINUX TYPE PLAN HEADER...
#   VMLINUX  a Debian 6.12.117+deb12 vmlinux (its flavour, cloud-amd64,
#            amd64 or rt-amd64, is read from the name)
#   HEADER   what the module includes for the member types
#            (linux/pci.h)
#   CACHELINT=PATH  the binary (default: target/release/cachelint)
#
# Prints "TYPE: N members, size S, as planned" and exits 0 when they are
# equal; prints the rows that differ and exits 1 otherwise; exit 2 when
# the module does not build. The headers come from the cache
# scripts/kmod-oracle.sh fills (it is run first, and reuses it).
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# < 4)); then
  sed -n '2,/^set /p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
  exit 2
fi
vmlinux=$1 ty=$2 plan=$3
shift 3
flavour=${vmlinux##*deb12-}
case $flavour in
  cloud-amd64 | amd64 | rt-amd64) ;;
  *) echo "c-oracle: $vmlinux: not a Debian 6.12.117+deb12 vmlinux" >&2; exit 2 ;;
esac
cachelint=${CACHELINT:-target/release/cachelint}
cache=${CACHELINT_CACHE:-$HOME/.cache/cachelint}
scripts/kmod-oracle.sh "$flavour" >/dev/null
kdir=$cache/kroot/usr/src/linux-headers-6.12.117+deb12-$flavour

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$cachelint" layout --macros --plan "$plan" "$vmlinux" "$ty" >"$work/planned" 2>/dev/null
python3 - "$work" "$ty" "$@" <<'EOF'
import re, sys
work, ty, headers = sys.argv[1], sys.argv[2], sys.argv[3:]
text = open(f"{work}/planned").read()
body = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
body = body.replace(f"struct {ty} {{", f"struct {ty}_planned {{", 1)
includes = "".join(f"#include <{h}>\n" for h in ["linux/module.h", *headers])
with open(f"{work}/oracle.c", "w") as f:
    f.write(f"{includes}\n{body}\n__used struct {ty}_planned cachelint_planned;\n"
            'MODULE_LICENSE("GPL");\n')
EOF
cp fixtures/kmod/Kbuild "$work/"
if ! make -s -C "$kdir" M="$work" modules >"$work/build.log" 2>&1; then
  echo "c-oracle: the planned C of $ty does not build:" >&2
  grep -m5 'error' "$work/build.log" >&2 || tail -5 "$work/build.log" >&2
  exit 2
fi
pahole -C "${ty}_planned" "$work/oracle.ko" >"$work/compiled"
python3 - "$work" "$ty" <<'EOF'
import re, sys
work, ty = sys.argv[1], sys.argv[2]
attr = r"(?:\s+__attribute__\(\(__aligned__\(\d+\)\)\))?"
at = r"\s+/\*\s+(\d+)(?::\s*(\d+))?\s+\d+\s+\*/"
# A member (or the close of an inline body): its name, byte, bit.
member = re.compile(r"\s+.*?\s([A-Za-z_0-9\[\]]+)(?::\d+)?" + attr + ";" + at)
# A group macro of the planned C: the marker it declares.
macro = re.compile(r"\s+__cacheline_group_(begin|end)(?:_aligned)?\((\w+)[,)].*;" + at)
def rows(name):
    text = open(f"{work}/{name}").read()
    size = re.search(r"/\* size: (\d+),", text)
    out = []
    for line in text.splitlines():
        if m := macro.match(line):
            out.append((f"__cacheline_group_{m[1]}__{m[2]}", m[3], m[4]))
        elif m := member.match(line):
            # pahole names a marker with its [0]; the pad goes with the
            # aligned end macro.
            name = re.sub(r"^(__cacheline_group_(?:begin|end)__\w+)\[0\]$", r"\1", m[1])
            if not name.startswith("__cacheline_group_pad__"):
                out.append((name, m[2], m[3]))
    return out, size and size.group(1)
planned, psize = rows("planned")
compiled, csize = rows("compiled")
if planned == compiled and psize == csize and planned:
    print(f"{ty}: {len(planned)} members, size {psize}, as planned")
    sys.exit(0)
print(f"{ty}: planned size {psize}, compiled {csize}; "
      f"{len(planned)} planned rows, {len(compiled)} compiled")
for p, c in zip(planned, compiled):
    if p != c:
        print(f"  planned {p}  compiled {c}")
sys.exit(1)
EOF

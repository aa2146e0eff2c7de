#!/usr/bin/env bash
# Builds the kernel-module layout oracle (fixtures/kmod/oracle.c) against a
# Debian 6.12.117+deb12 kernel's headers, twice: as shipped
# (oracle-shipped.ko) and with include/linux/mmzone.h patched as RFC PATCH
# 3/3 does (fixtures/kmod/rfc3-mmzone.patch -> oracle-rfc3.ko). Each module's
# cachelint_truth[] holds the compiler's offsetof/sizeof values for the rows
# of fixtures/kmod/oracle.def; the labels, as the kernel's configuration
# selects them, are written beside each module (oracle-*.rows), and the
# decoded values too (oracle-*.truth: "label value" lines).
#
# Usage: scripts/kmod-oracle.sh [FLAVOUR]     (cloud-amd64, amd64, rt-amd64)
#        scripts/kmod-oracle.sh FLAVOUR NAME PATCH
#        KMOD_ORACLE=netdev scripts/kmod-oracle.sh FLAVOUR [NAME PATCH]
#
# Prints the paths of the two modules, then of the two rows files. With
# NAME and PATCH (a patch of the kernel tree, -p1, such as `suggest
# --source-tree` prints), builds oracle-NAME.ko (and .rows, .truth) against
# the headers with PATCH applied instead, and prints its module and rows.
#
# KMOD_ORACLE=netdev builds fixtures/kmod/netdev.c instead, whose rows
# (netdev.def) are struct net_device's: netdev-shipped.ko without NAME
# and PATCH (no RFC 3/3 build), netdev-NAME.ko with them; it prints the
# module, then its rows. KMOD_ORACLE=tcp is the same for struct tcp_sock
# (fixtures/kmod/tcp.c, tcp.def). Without KMOD_ORACLE nothing changes.
#
# Everything is cached outside the repo, under
# ${CACHELINT_CACHE:-$HOME/.cache/cachelint}, and reused when present:
#   debs/                 the .deb files (apt-get download)
#   kroot/                the headers and kbuild packages, extracted as a
#                         private root (their /usr/src paths fixed up)
#   kroot-rfc3-FLAVOUR/   the same headers with the patched mmzone.h
#   kmod/VERSION-FLAVOUR/ the modules, rows and truth files
# The modules are rebuilt when fixtures/kmod or this script changes.
#
# Needs apt-get/apt-cache, dpkg-deb, patch, make, gcc-12 (the headers pin
# x86_64-linux-gnu-gcc-12), python3, and pahole for the modules' BTF.
set -euo pipefail

oracle=${KMOD_ORACLE:-oracle}
case $oracle in
  oracle | netdev | tcp) ;;
  *) echo "kmod-oracle: unknown KMOD_ORACLE '$oracle' (oracle, netdev, tcp)" >&2; exit 2 ;;
esac

flavour=${1:-cloud-amd64}
case $flavour in
  cloud-amd64 | amd64 | rt-amd64) ;;
  *) echo "kmod-oracle: unknown flavour '$flavour' (cloud-amd64, amd64, rt-amd64)" >&2; exit 2 ;;
esac

abi=6.12.117+deb12
pkgver=6.12.117-1~deb12u1
repo=$(cd "$(dirname "$0")/.." && pwd)
kmodsrc=$repo/fixtures/kmod
cache=${CACHELINT_CACHE:-$HOME/.cache/cachelint}
debs=$cache/debs
kroot=$cache/kroot
out=$cache/kmod/$abi-$flavour
mkdir -p "$debs" "$kroot" "$out"

log() { echo "kmod-oracle: $*" >&2; }

updated=
# deb PACKAGE: the path of PACKAGE's .deb in $debs, downloaded if missing.
deb() {
  local pkg=$1 f
  f=$(ls "$debs/${pkg}_"*.deb 2>/dev/null | head -n 1 || true)
  if [[ -z $f ]]; then
    log "downloading $pkg"
    if ! (cd "$debs" && apt-get download "$pkg=$pkgver" >&2 2>/dev/null); then
      if [[ -z $updated ]]; then
        log "apt-get update"
        apt-get update >&2
        updated=1
      fi
      (cd "$debs" && apt-get download "$pkg=$pkgver" >&2)
    fi
    f=$(ls "$debs/${pkg}_"*.deb | head -n 1)
  fi
  echo "$f"
}

# extract PACKAGE: dpkg-deb -x into the private root, once.
extract() {
  local pkg=$1 f
  [[ -e $kroot/.extracted-$pkg ]] && return 0
  f=$(deb "$pkg")
  log "extracting $pkg"
  dpkg-deb -x "$f" "$kroot"
  touch "$kroot/.extracted-$pkg"
}

headers=linux-headers-$abi-$flavour
hdeb=$(deb "$headers")
# The common package(s) and kbuild, as the headers package's Depends say
# (for rt-amd64 that is the -common-rt package, not -common).
mapfile -t deps < <(dpkg-deb -f "$hdeb" Depends | tr ',|' '\n\n' |
  sed -E 's/^ *//; s/ .*//' | grep -E '^linux-(headers-.*-common|kbuild-)' | grep -F -- "$abi" | sort -u)
if [[ ${#deps[@]} -lt 2 ]]; then
  echo "kmod-oracle: unexpected Depends of $headers: ${deps[*]}" >&2
  exit 1
fi
common=
for p in "$headers" "${deps[@]}"; do
  extract "$p"
  [[ $p == linux-headers-*-common* ]] && common=$p
done

# The flavour's Makefile includes /usr/src/linux-headers-...-common/Makefile:
# point it at the private root instead (the rest are relative symlinks).
fix_makefile() { # ROOT COMMON-PACKAGE
  local mk=$1/usr/src/$headers/Makefile
  if ! grep -q "^include $1/" "$mk"; then
    rm -f "$mk.tmp"
    sed -E "s|^include (.*)?/usr/src/|include $1/usr/src/|" "$mk" > "$mk.tmp"
    rm -f "$mk"   # may be a hard link into another root
    mv "$mk.tmp" "$mk"
  fi
  grep -q "^include $1/usr/src/$2/Makefile" "$mk" ||
    { echo "kmod-oracle: cannot fix up $mk" >&2; exit 1; }
}
fix_makefile "$kroot" "$common"

# The patched copy: hard links to the shipped headers except the files
# that change (mmzone.h, the flavour's Makefile), so the shipped tree is
# never touched.
rroot=$cache/kroot-rfc3-$flavour
stamp_patch=$(sha256sum "$kmodsrc/rfc3-mmzone.patch" | cut -c1-16)
if [[ ! -e $rroot/.patched-$stamp_patch ]]; then
  log "making the RFC 3/3 copy of the headers"
  rm -rf "$rroot"
  mkdir -p "$rroot/usr/src"
  ln -s ../../kroot/usr/lib "$rroot/usr/lib"
  cp -al "$kroot/usr/src/$headers" "$kroot/usr/src/$common" "$rroot/usr/src/"
  mz=$rroot/usr/src/$common/include/linux/mmzone.h
  cp "$mz" "$mz.tmp" && rm -f "$mz" && mv "$mz.tmp" "$mz"
  patch -p1 --no-backup-if-mismatch -d "$rroot/usr/src/$common" < "$kmodsrc/rfc3-mmzone.patch" >&2
  fix_makefile "$rroot" "$common"
  touch "$rroot/.patched-$stamp_patch"
fi
# The shipped header must be as the package has it.
cmp -s "$kroot/usr/src/$common/include/linux/mmzone.h" \
  <(dpkg-deb --fsys-tarfile "$(deb "$common")" |
    tar -xO "./usr/src/$common/include/linux/mmzone.h") ||
  { echo "kmod-oracle: the shipped mmzone.h was modified" >&2; exit 1; }

stamp=$(cat "$kmodsrc"/$oracle.c "$kmodsrc"/$oracle.def "$kmodsrc"/Kbuild \
  "$kmodsrc"/rfc3-mmzone.patch "$0" | sha256sum | cut -c1-16)

# build NAME ROOT CFLAGS: $oracle-NAME.ko, .rows and .truth in $out.
build() {
  local name=$2 root=$3 cflags=$4 kdir=$3/usr/src/$headers b start end
  name=$1-$name
  if [[ -s $out/$name.ko && -s $out/$name.rows &&
        $(cat "$out/$name.stamp" 2>/dev/null) == "$stamp" ]]; then
    return 0
  fi
  b=$out/build-$name
  rm -rf "$b"
  mkdir -p "$b"
  # The module is oracle.o whichever source it is (Kbuild's obj-m).
  cp "$kmodsrc/$1.c" "$b/oracle.c"
  cp "$kmodsrc/$1.def" "$kmodsrc"/Kbuild "$b/"
  log "building $name.ko against $kdir"
  start=$(date +%s.%N)
  make -s -C "$kdir" M="$b" CACHELINT_CFLAGS="$cflags" modules >&2
  end=$(date +%s.%N)
  log "$name.ko built in $(python3 -c "print(round($end - $start, 1))") s"
  # The row labels: the .def through the preprocessor with the kernel's
  # configuration, M(), F() (an offset only) and S() left as they are.
  gcc -E -P -undef -x c $cflags -include "$kdir/include/generated/autoconf.h" \
    "$kmodsrc/$1.def" |
    sed -nE 's/^M\(([a-z_0-9]+), *([^)]*)\)$/\1.\2\n\1.\2#size/p; s/^F\(([a-z_0-9]+), *([^)]*)\)$/\1.\2/p; s/^S\(([a-z_0-9]+)\)$/\1#size\n\1#align/p' \
    > "$out/$name.rows"
  cp "$b/oracle.ko" "$out/$name.ko"
  python3 - "$out/$name.ko" "$out/$name.rows" > "$out/$name.truth" <<'EOF'
import struct, sys
d = open(sys.argv[1], 'rb').read()
shoff, = struct.unpack_from('<Q', d, 0x28)
es, n, _ = struct.unpack_from('<HHH', d, 0x3a)
secs = [struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * es) for i in range(n)]
vals = None
for s in secs:
    if s[1] != 2:
        continue
    stroff = secs[s[6]][4]
    for k in range(s[5] // s[9]):
        name, _, _, shndx, val, size = struct.unpack_from('<IBBHQQ', d, s[4] + k * s[9])
        if d[stroff + name:d.index(b'\0', stroff + name)] == b'cachelint_truth':
            vals = struct.unpack_from('<%dQ' % (size // 8), d, secs[shndx][4] + val)
rows = open(sys.argv[2]).read().split()
if vals is None or len(vals) != len(rows):
    sys.exit('%s: %s truth values, %d rows' % (sys.argv[1], None if vals is None else len(vals), len(rows)))
for r, v in zip(rows, vals):
    print(r, v)
EOF
  echo "$stamp" > "$out/$name.stamp"
  rm -rf "$b"
}

if [[ $# -ge 3 ]]; then
  name=$2 patchfile=$(realpath "$3")
  proot=$cache/kroot-$name-$flavour
  [[ $oracle == oracle ]] || proot=$cache/kroot-$oracle-$name-$flavour
  log "making the $name copy of the headers"
  rm -rf "$proot"
  mkdir -p "$proot/usr/src"
  ln -s ../../kroot/usr/lib "$proot/usr/lib"
  cp -al "$kroot/usr/src/$headers" "$kroot/usr/src/$common" "$proot/usr/src/"
  # The files the patch changes are copied, never written through a link.
  for f in $(sed -nE 's|^\+\+\+ b/||p' "$patchfile"); do
    t=$proot/usr/src/$common/$f
    cp "$t" "$t.tmp" && rm -f "$t" && mv "$t.tmp" "$t"
  done
  patch -p1 --no-backup-if-mismatch -d "$proot/usr/src/$common" < "$patchfile" >&2
  fix_makefile "$proot" "$common"
  stamp=$stamp-$(sha256sum "$patchfile" | cut -c1-16)
  build "$oracle" "$name" "$proot" ""
  echo "$out/$oracle-$name.ko"
  echo "$out/$oracle-$name.rows"
  exit 0
fi

if [[ $oracle != oracle ]]; then
  build "$oracle" shipped "$kroot" ""
  echo "$out/$oracle-shipped.ko"
  echo "$out/$oracle-shipped.rows"
  exit 0
fi

build oracle shipped "$kroot" ""
build oracle rfc3 "$rroot" "-DCACHELINT_RFC3"

echo "$out/oracle-shipped.ko"
echo "$out/oracle-rfc3.ko"
echo "$out/oracle-shipped.rows"
echo "$out/oracle-rfc3.rows"

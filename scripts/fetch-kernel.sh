#!/usr/bin/env bash
# Fetch a Debian kernel's vmlinux with full DWARF and print its path.
#
# Usage: scripts/fetch-kernel.sh [FLAVOUR|PACKAGE]
#   FLAVOUR  a Debian kernel flavour (cloud-amd64, amd64, rt-amd64); the newest
#            linux-image-<version>-FLAVOUR-dbg known to apt is used.
#   PACKAGE  an exact package name, e.g. linux-image-6.12.107+deb12-cloud-amd64-dbg
#
# With CACHELINT_SUITE=SUITE (trixie-backports: 7.x, bullseye: 5.10) the
# package comes from that Debian suite through scripts/suite-apt.sh.
#
# Only vmlinux is extracted, into $CACHELINT_CACHE (default
# ~/.cache/cachelint/kernels), and reused when present. Needs apt-get and
# dpkg-deb; run `apt-get update` first on a fresh machine.
set -euo pipefail

want=${1:-cloud-amd64}
cache=${CACHELINT_CACHE:-$HOME/.cache/cachelint/kernels}
mkdir -p "$cache"
here=$(cd "$(dirname "$0")" && pwd)
apt() { # apt-get|apt-cache ARGS: the system's suites, or CACHELINT_SUITE's
  if [[ -n ${CACHELINT_SUITE:-} ]]; then
    "$here/suite-apt.sh" "$CACHELINT_SUITE" "$@"
  else
    "$@"
  fi
}

if [[ $want == linux-image-*-dbg ]]; then
  pkg=$want
else
  pkg=$(apt apt-cache pkgnames linux-image- |
    grep -E "^linux-image-[0-9][^-]*(-[0-9]+)?-${want}-dbg\$" | sort -V | tail -n 1 || true)
  if [[ -z $pkg ]]; then
    echo "fetch-kernel: no linux-image-*-${want}-dbg package known to apt (run apt-get update?)" >&2
    exit 2
  fi
fi
version=${pkg#linux-image-}
version=${version%-dbg}
out="$cache/vmlinux-$version"
if [[ -s $out ]]; then
  echo "$out"
  exit 0
fi

work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt apt-get download "$pkg" >&2)
deb=$(ls "$work"/*.deb)
# Newer packages (7.x) ship the file under lib/modules/VERSION/ and
# boot/vmlinux-VERSION as a symbolic link to it.
dpkg-deb --fsys-tarfile "$deb" |
  tar -x -C "$work" --wildcards "./usr/lib/debug/boot/vmlinux-*" \
    "./usr/lib/debug/lib/modules/*/vmlinux" 2>/dev/null || true
file=$(readlink -f "$work/usr/lib/debug/boot/vmlinux-$version")
if [[ ! -f $file || $file != "$work"/* ]]; then
  echo "fetch-kernel: $pkg has no usr/lib/debug/boot/vmlinux-$version" >&2
  exit 1
fi
mv "$file" "$out.part"
mv "$out.part" "$out"
echo "$out"

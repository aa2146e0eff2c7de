#!/usr/bin/env bash
# Fetch the .config Debian built a kernel flavour with (from its
# linux-headers-VERSION-FLAVOUR package) and print its path: the config a
# variant needs to equal that flavour's vmlinux.
#
# Usage: scripts/fetch-config.sh [FLAVOUR|PACKAGE]
#   FLAVOUR  amd64, cloud-amd64, rt-amd64, arm64, armmp, ...: the newest
#            linux-headers-<version>-FLAVOUR known to apt.
#   PACKAGE  an exact package name, e.g. linux-headers-6.12.118+deb12-armmp
#
# Another machine's flavours come through scripts/suite-apt.sh: set
# CACHELINT_SUITE (bookworm-security for 6.12.118) and CACHELINT_APT_ARCH
# (arm64, armhf). Only the .config is kept, as
# $CACHELINT_CACHE/configs/config-VERSION-FLAVOUR (default cache
# ~/.cache/cachelint), and reused when present.
set -euo pipefail

want=${1:-amd64}
cache=${CACHELINT_CACHE:-$HOME/.cache/cachelint}/configs
mkdir -p "$cache"
here=$(cd "$(dirname "$0")" && pwd)
apt() {
  if [[ -n ${CACHELINT_SUITE:-} ]]; then
    "$here/suite-apt.sh" "$CACHELINT_SUITE" "$@"
  else
    "$@"
  fi
}

if [[ $want == linux-headers-* ]]; then
  pkg=$want
else
  pkg=$(apt apt-cache pkgnames linux-headers- |
    grep -E "^linux-headers-[0-9][^-]*(-[0-9]+)?-${want}\$" | sort -V | tail -n 1 || true)
  if [[ -z $pkg ]]; then
    echo "fetch-config: no linux-headers-*-${want} package known to apt (run apt-get update?)" >&2
    exit 2
  fi
fi
name=${pkg#linux-headers-}
out="$cache/config-$name"
if [[ -s $out ]]; then
  echo "$out"
  exit 0
fi

work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && apt apt-get download "$pkg" >&2)
deb=$(ls "$work"/*.deb)
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" "./usr/src/$pkg/.config"
mv "$work/usr/src/$pkg/.config" "$out.part"
mv "$out.part" "$out"
echo "$out"

#!/usr/bin/env bash
# Fetch a Debian kernel source tree (linux-source-VERSION: headers,
# Documentation/networking/net_cachelines/*.rst) and print its path.
#
# Usage: scripts/fetch-source.sh [VERSION]   (default 6.12)
# With CACHELINT_SUITE=SUITE the package comes from that Debian suite
# (trixie-backports for 7.3) through scripts/suite-apt.sh.
# Extracted once under ${CACHELINT_CACHE:-$HOME/.cache/cachelint}/ and
# reused. Needs apt-get and dpkg-deb; run `apt-get update` first.
set -euo pipefail
version=${1:-6.12}
cache=${CACHELINT_CACHE:-$HOME/.cache/cachelint}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$cache/debs"
src=$cache/linux-source-$version
if [[ ! -e $src/.extracted ]]; then
  f=$(ls "$cache/debs/linux-source-${version}_"*.deb 2>/dev/null | head -n 1 || true)
  if [[ -z $f ]]; then
    if [[ -n ${CACHELINT_SUITE:-} ]]; then
      (cd "$cache/debs" && "$here/suite-apt.sh" "$CACHELINT_SUITE" apt-get download "linux-source-$version" >&2)
    else
      (cd "$cache/debs" && apt-get download "linux-source-$version" >&2)
    fi
    f=$(ls "$cache/debs/linux-source-${version}_"*.deb | head -n 1)
  fi
  echo "fetch-source: extracting linux-source-$version" >&2
  tmp=$(mktemp -d "$cache/.src.XXXXXX")
  dpkg-deb --fsys-tarfile "$f" | tar -x -C "$tmp" "./usr/src/linux-source-$version.tar.xz"
  rm -rf "$src"
  tar -xJf "$tmp/usr/src/linux-source-$version.tar.xz" -C "$cache"
  rm -rf "$tmp"
  [[ -f $src/include/linux/cache.h ]] || { echo "fetch-source: bad source tree" >&2; exit 1; }
  touch "$src/.extracted"
fi
echo "$src"

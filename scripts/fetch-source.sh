#!/usr/bin/env bash
# Fetch the Debian 6.12 kernel source tree (linux-source-6.12: headers,
# Documentation/networking/net_cachelines/*.rst) and print its path.
# Extracted once under ${CACHELINT_CACHE:-$HOME/.cache/cachelint}/ and
# reused. Needs apt-get and dpkg-deb; run `apt-get update` first.
set -euo pipefail
cache=${CACHELINT_CACHE:-$HOME/.cache/cachelint}
mkdir -p "$cache/debs"
src=$cache/linux-source-6.12
if [[ ! -e $src/.extracted ]]; then
  f=$(ls "$cache/debs/linux-source-6.12_"*.deb 2>/dev/null | head -n 1 || true)
  if [[ -z $f ]]; then
    (cd "$cache/debs" && apt-get download linux-source-6.12 >&2)
    f=$(ls "$cache/debs/linux-source-6.12_"*.deb | head -n 1)
  fi
  echo "fetch-source: extracting linux-source-6.12" >&2
  tmp=$(mktemp -d "$cache/.src.XXXXXX")
  dpkg-deb --fsys-tarfile "$f" | tar -x -C "$tmp" ./usr/src/linux-source-6.12.tar.xz
  rm -rf "$src"
  tar -xJf "$tmp/usr/src/linux-source-6.12.tar.xz" -C "$cache"
  rm -rf "$tmp"
  [[ -f $src/include/linux/cache.h ]] || { echo "fetch-source: bad source tree" >&2; exit 1; }
  touch "$src/.extracted"
fi
echo "$src"

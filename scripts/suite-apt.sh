#!/usr/bin/env bash
# Run apt-get or apt-cache against another Debian suite (trixie-backports
# for kernel 7.3, bullseye for 5.10, ...) through a private apt state under
# ${CACHELINT_CACHE:-$HOME/.cache/cachelint}/apt/SUITE: nothing of that suite
# is ever installed, and the system's apt state is not touched. The mirror
# is the one the system's own sources name.
#
# Usage: scripts/suite-apt.sh SUITE apt-get|apt-cache ARGS...
#   e.g. scripts/suite-apt.sh trixie-backports apt-get download linux-source-7.3
# The first call for a suite runs `apt-get update` on the private state.
set -euo pipefail
suite=${1:?usage: suite-apt.sh SUITE apt-get|apt-cache ARGS...}
tool=${2:?usage: suite-apt.sh SUITE apt-get|apt-cache ARGS...}
shift 2
case $tool in apt-get | apt-cache) ;; *)
  echo "suite-apt: '$tool' is not apt-get or apt-cache" >&2
  exit 2
  ;;
esac
# CACHELINT_APT_ARCH=ARCH (arm64, armhf): that architecture's packages, for
# the kernels and configs of other machines (nothing is installed).
arch=${CACHELINT_APT_ARCH:-}
state=${CACHELINT_CACHE:-$HOME/.cache/cachelint}/apt/$suite${arch:+-$arch}
mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
  sed -nE 's@^(URIs:|deb)[[:space:]]+(\[[^]]*\][[:space:]]+)?(https?://[^[:space:]]+/debian)/?([[:space:]].*)?$@\3@p' |
  head -n 1 || true)
mirror=${mirror:-http://deb.debian.org/debian}
# A point release's kernel may be in the security suite only.
[[ $suite == *-security ]] && mirror=$mirror-security
mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
echo "deb $mirror $suite main" >"$state/sources.list"
opts=(-o "Dir::Etc::sourcelist=$state/sources.list" -o Dir::Etc::sourceparts=-
  -o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
  -o APT::Sandbox::User=root)
if [[ -n $arch ]]; then
  opts+=(-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch")
fi
if [[ -e $state/lists/.updated ]] || apt-get "${opts[@]}" update -qq >&2; then
  touch "$state/lists/.updated"
  exec "$tool" "${opts[@]}" "$@"
fi

# The update failed. A mirror caught between two syncs serves a Packages
# index its signed Release does not describe ("File has unexpected size
# ... Mirror sync in progress?"), and apt rightly refuses it; for days,
# on some mirrors. The two things the fetch scripts ask of apt are then
# done from the index as served: the package names, and a download from
# the pool checked against that index's SHA256. That index is not
# checked against the signed Release: say so, and use it for nothing else.
arch=${arch:-$(dpkg --print-architecture)}
index=$mirror/dists/$suite/main/binary-$arch/Packages.xz
echo "suite-apt: apt could not use $suite's $arch index; using it as the mirror serves it ($index), unsigned" >&2
served=$(curl -fsSL --retry 3 "$index" | xz -dc) || {
  echo "suite-apt: cannot read $index" >&2
  exit 2
}
case "$tool ${1:-}" in
"apt-cache pkgnames")
  sed -n "s/^Package: //p" <<<"$served" | grep -- "^${2:-}" | sort -u || true
  ;;
"apt-get download")
  shift
  for pkg in "$@"; do
    # The last stanza of that name: Filename and SHA256.
    read -r file sum < <(awk -v want="$pkg" 'BEGIN { RS = "" }
      { name = ""; file = ""; sum = ""
        n = split($0, line, "\n")
        for (i = 1; i <= n; i++) {
          if (line[i] ~ /^Package: /) name = substr(line[i], 10)
          if (line[i] ~ /^Filename: /) file = substr(line[i], 11)
          if (line[i] ~ /^SHA256: /) sum = substr(line[i], 9)
        }
        if (name == want) { f = file; s = sum } }
      END { if (f != "") print f, s }' <<<"$served") || true
    if [[ -z ${file:-} ]]; then
      echo "suite-apt: $pkg is not in $index" >&2
      exit 2
    fi
    echo "suite-apt: $mirror/$file" >&2
    curl -fsSL --retry 3 -o "${file##*/}.part" "$mirror/$file"
    if [[ $(sha256sum <"${file##*/}.part") != "$sum  -" ]]; then
      rm -f "${file##*/}.part"
      echo "suite-apt: ${file##*/} does not match its SHA256 in $index" >&2
      exit 2
    fi
    mv "${file##*/}.part" "${file##*/}"
  done
  ;;
*)
  echo "suite-apt: with $suite's index unusable, only 'apt-cache pkgnames' and 'apt-get download' work" >&2
  exit 2
  ;;
esac

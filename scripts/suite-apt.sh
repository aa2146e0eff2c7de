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
if [[ ! -e $state/lists/.updated ]]; then
  apt-get "${opts[@]}" update -qq >&2
  touch "$state/lists/.updated"
fi
exec "$tool" "${opts[@]}" "$@"

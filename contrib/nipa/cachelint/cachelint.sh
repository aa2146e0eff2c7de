#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A netdev NIPA per-patch test: cachelint's layout review of the patch at
# HEAD against HEAD~ (docs/variants.md in the cachelint repository). Every
# struct whose definition the patch touches in a header is laid out on a
# matrix of variants (x86_64, i386, arm and arm64 defconfigs, or the
# variant file $CACHELINT_REVIEW_VARIANTS), with the kernel's own
# CACHELINE_ASSERT_GROUP_* asserts of it evaluated on each: Linux 7.3
# dropped the group size asserts from tcp_struct_check(), and a 32-bit
# build is where the last years' breaks were found.
#
# Runs in the tree with the patch at HEAD (NIPA's contract): writes a
# one-line summary to $DESC_FD, the review to $RESULTS_DIR, and exits 0
# (nothing to say), 250 (a warning: a struct takes more cachelines on some
# variant, the patch makes fields share a line by the rules of
# $CACHELINT_REVIEW_RULES, or makes an error's pair by rules cachelint
# drafts from the tree, or it adds a needless store to code it changes)
# or 1 (an assert fails at
# HEAD, or the review could not run). $CACHELINT_REVIEW_NO_STORES skips
# the stores (two readings of the whole tree, minutes the first time).
# The tree is never written: cachelint builds in its cache
# ($CACHELINT_VARIANT_DIR, default ~/.cache/cachelint/variants), where the
# first run prepares each variant once (20-40 s each).
#
# Needs: cachelint on PATH (or $CACHELINT), git, make, flex, bison, bc,
# libssl-dev, libelf-dev, gcc-arm-linux-gnueabihf, gcc-aarch64-linux-gnu.

cachelint=${CACHELINT:-cachelint}
results=${RESULTS_DIR:-.}
desc_fd=${DESC_FD:-1}
args=(review --tree . --base HEAD~)
if [[ -n ${CACHELINT_REVIEW_VARIANTS:-} ]]; then
  args+=(--variants "$CACHELINT_REVIEW_VARIANTS")
fi
# Rules files (TOML or net_cachelines tables), separated by ':'.
IFS=: read -r -a rules <<<"${CACHELINT_REVIEW_RULES:-}"
given_rules=0
for r in "${rules[@]}"; do
  [[ -n $r ]] && args+=(--rules "$r") && given_rules=1
done

if [[ -n ${CACHELINT_REVIEW_NO_STORES:-} ]]; then
  args+=(--no-stores)
fi

"$cachelint" "${args[@]}" >"$results/cachelint-review.txt" 2>"$results/cachelint-review.err"
rc=$?
cat "$results/cachelint-review.txt" "$results/cachelint-review.err"

case $rc in
  0 | 1 | 2) ;;
  127) echo "cachelint review did not run: $cachelint not found" >&"$desc_fd"; exit 1 ;;
  *)
    # A panic (101), a signal (128+N: an OOM kill is 137) or any code
    # cachelint does not give: a crash, never a pass.
    # The panic's line and its message (Rust prints them first, then
    # notes or a backtrace); else the signal that killed it (stderr's
    # last line is then progress); else stderr's last line that is no
    # note.
    err=$results/cachelint-review.err
    why=$(sed -n '/panicked at/{$!N;s/\n/ /;p;q}' "$err")
    if [[ -z $why && $rc -gt 128 ]]; then
      why="killed by signal $((rc - 128))"
    fi
    [[ -n $why ]] || why=$(grep -v -e '^note: ' "$err" | tail -n 1)
    echo "cachelint review crashed (exit $rc): $why" >&"$desc_fd"
    exit 1
    ;;
esac

if [[ $rc -eq 2 ]]; then
  why=$(head -n 1 "$results/cachelint-review.err")
  if [[ $why == *"touches no struct definition"* ]]; then
    echo "No struct layout touched" >&"$desc_fd"
    exit 0
  fi
  echo "cachelint review failed: ${why#cachelint: error: }" >&"$desc_fd"
  exit 1
fi

# cachelint: review: N struct(s) on M variant(s): F kernel assert(s) fail at HEAD (WHICH on ARCHES), G struct(s) take more cachelines (WHICH on ARCHES)
summary=$(grep '^cachelint: review: ' "$results/cachelint-review.txt" | tail -n 1)
summary=${summary#cachelint: review: }
grown=$(sed -nE 's/.*, ([0-9]+) struct\(s\) take more cachelines.*/\1/p' <<<"$summary")
introduced=$(sed -nE 's/.*, ([0-9]+) pair\(s\) of fields introduced.*/\1/p' <<<"$summary")
# Drafted rules' warnings are many and rarely worth a patch: only their
# errors warn.
if [[ $given_rules -eq 0 ]]; then
  introduced=$(sed -nE 's/.*pair\(s\) of fields introduced \(([0-9]+) error\(s\)\).*/\1/p' <<<"$summary")
fi
stores=$(sed -nE 's/.*, ([0-9]+) needless store\(s\) added.*/\1/p' <<<"$summary")
if [[ -z $summary ]]; then
  # cachelint always ends a review with its summary: without it the
  # output is not a review, whatever the exit code.
  echo "cachelint review gave no summary (exit $rc)" >&"$desc_fd"
  exit 1
fi
echo "$summary" >&"$desc_fd"
if [[ $rc -eq 1 ]]; then
  exit 1
fi
if [[ ${grown:-0} -gt 0 || ${introduced:-0} -gt 0 || ${stores:-0} -gt 0 ]]; then
  exit 250
fi
exit 0

#!/usr/bin/env bash
# Proves a change of structure changed no output: runs `traceprism export` and
# `traceprism summary --json` of a binary over every fixture (Kineto and Nsight Systems) into a folder, or compares two
# binaries' outputs byte for byte.
#
#   scripts/same-output.sh --write BIN DIR          write BIN's outputs into DIR
#   scripts/same-output.sh --compare OLD_BIN NEW_BIN   write both, then diff them
#
# `parallel_blocks` (how many blocks the native reader parsed on two threads) depends on the
# machine's scheduling, not on the trace, so it is masked.
set -euo pipefail
cd "$(dirname "$0")/.."

write() {
  local bin=$1 dir=$2
  rm -rf "$dir" && mkdir -p "$dir"
  for f in fixtures/*.json.gz fixtures/nsys/*.sqlite; do
    case "$f" in *truth*) continue ;; esac
    local name; name=$(basename "$f"); name=${name%.json.gz}
    "$bin" export "$f" --out "$dir/$name" >/dev/null 2>&1 || echo "export failed: $f" >"$dir/$name.export-error"
    "$bin" summary "$f" --json 2>/dev/null | sed -E 's/"parallel_blocks": ?[0-9]+/"parallel_blocks":N/' >"$dir/$name.summary.json" || true
  done
}

case "${1:-}" in
  --write) write "$2" "$3" ;;
  --compare)
    old=$(mktemp -d) new=$(mktemp -d)
    write "$2" "$old"
    write "$3" "$new"
    files=$(cd "$old" && find . -type f | wc -l)
    if diff -r "$old" "$new" >/dev/null; then
      echo "same output: $files files identical"
    else
      diff -r "$old" "$new" | head -40 || true
      # Every file that changed, with how many of its lines did: what a change of the analysis
      # changed, listed whole.
      echo "changed files (lines differing):"
      diff -rq "$old" "$new" | sed -n 's/^Files \(.*\) and \(.*\) differ$/\1 \2/p' | while read -r a b; do
        echo "  ${a#"$old"/}: $(diff "$a" "$b" | grep -c '^[<>]')"
      done
      diff -rq "$old" "$new" | grep '^Only' || true
      echo "DIFFERENT (see above)"
      exit 1
    fi
    ;;
  *) sed -n 2,9p "$0"; exit 2 ;;
esac

#!/usr/bin/env bash
# What comparing two big traces costs against one summary (issue 71: compare ≤ 2.2× summary, as it
# is two analyses and an alignment), paired with another revision (default: origin's main, else
# HEAD~1): runs alternate this checkout's and the base's binaries so a shared machine's drift falls
# on both. Prints each run, the medians and the ratios.
#
#   scripts/bench-compare.sh [BASE_REV] [RUNS] [MB]
#
# The input is `cargo bench`'s (target/bench-data/llama_<MB>mb.json), built first if missing;
# compare reads it as both A and B (two full analyses, one alignment, the budgets' difference).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
base=${1:-$(git rev-parse --verify -q origin/main || git rev-parse HEAD~1)}
runs=${2:-3}
mb=${3:-1000}
input="target/bench-data/llama_${mb}mb.json"
if [ ! -f "$input" ]; then
  echo "building $input (cargo bench's input)"
  TRACEPRISM_BENCH_MB=$mb TRACEPRISM_BENCH_BUILD_ONLY=1 cargo bench --profile ci --bench throughput
fi
work="target/bench-base-$(git rev-parse --short "$base")"
if [ ! -x "$work/bin/traceprism" ]; then
  rm -rf "$work/src"
  mkdir -p "$work"
  git worktree add --detach "$work/src" "$base" >/dev/null
  (cd "$work/src" && CARGO_TARGET_DIR="$PWD/../target" cargo build --profile ci --bin traceprism -q)
  mkdir -p "$work/bin"
  cp "$work/target/ci/traceprism" "$work/bin/traceprism"
  git worktree remove --force "$work/src"
fi
cargo build --profile ci --bin traceprism -q
head_bin="target/ci/traceprism"
base_bin="$work/bin/traceprism"
seconds() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
declare -A all
for i in $(seq "$runs"); do
  for side in head base; do
    bin=$head_bin
    [ "$side" = base ] && bin=$base_bin
    s=$(seconds "$bin" summary "$input")
    c=$(seconds "$bin" compare "$input" "$input")
    echo "run $i $side: summary ${s} s, compare ${c} s"
    all[$side-summary]+="$s "
    all[$side-compare]+="$c "
  done
done
for side in head base; do
  s=$(echo ${all[$side-summary]} | tr ' ' '\n' | median)
  c=$(echo ${all[$side-compare]} | tr ' ' '\n' | median)
  echo "$side ($([ "$side" = head ] && git rev-parse --short HEAD || git rev-parse --short "$base")): summary median ${s} s, compare median ${c} s, compare / summary $(echo "scale=2; $c / $s" | bc)"
done

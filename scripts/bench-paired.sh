#!/usr/bin/env bash
# Paired timing of `traceprism summary` on the 1 GB bench trace: this checkout against a build of
# another revision (default: origin's main, else HEAD~1), runs alternating A, B, A, B... so that a
# shared machine's drift falls on both alike. Prints each run and the medians.
#
#   scripts/bench-paired.sh [BASE_REV] [RUNS] [MB] [--compare]
#
# With --compare, each run also times `traceprism compare INPUT INPUT` (two analyses, the
# alignment and the budgets' difference) on both sides, and the medians give compare / summary
# (issue 71's target: at most 2.2).
#
# Both sides are built with the ci profile (release optimisation, no LTO: the comparison is
# between revisions, not of absolute speed; `cargo bench` gives that). The input is the one
# `cargo bench` builds (target/bench-data/llama_<MB>mb.json); it is built first if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
base=${1:-$(git rev-parse --verify -q origin/main || git rev-parse HEAD~1)}
runs=${2:-5}
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
compare=${4:-}
time_one() {
  local start end
  start=$(date +%s.%N)
  "$@" >/dev/null
  end=$(date +%s.%N)
  echo "$end - $start" | bc
}
echo "input: $input ($(du -m "$input" | cut -f1) MB); base $(git rev-parse --short "$base"), head $(git rev-parse --short HEAD)"
a=(); b=(); ca=(); cb=()
for i in $(seq 1 "$runs"); do
  ta=$(time_one "$base_bin" summary "$input"); tb=$(time_one "$head_bin" summary "$input")
  a+=("$ta"); b+=("$tb")
  printf 'run %d: summary base %.3f s, head %.3f s\n' "$i" "$ta" "$tb"
  if [ "$compare" = --compare ]; then
    ta=$(time_one "$base_bin" compare "$input" "$input"); tb=$(time_one "$head_bin" compare "$input" "$input")
    ca+=("$ta"); cb+=("$tb")
    printf 'run %d: compare base %.3f s, head %.3f s\n' "$i" "$ta" "$tb"
  fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
ma=$(median "${a[@]}"); mb_=$(median "${b[@]}")
printf 'median summary: base %.3f s, head %.3f s (head/base %.3f)\n' "$ma" "$mb_" "$(echo "$mb_ / $ma" | bc -l)"
if [ "$compare" = --compare ]; then
  mca=$(median "${ca[@]}"); mcb=$(median "${cb[@]}")
  printf 'median compare: base %.3f s, head %.3f s (head/base %.3f); compare / summary: base %.2f, head %.2f\n' \
    "$mca" "$mcb" "$(echo "$mcb / $mca" | bc -l)" "$(echo "$mca / $ma" | bc -l)" "$(echo "$mcb / $mb_" | bc -l)"
fi

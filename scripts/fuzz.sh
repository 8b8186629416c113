#!/usr/bin/env bash
# Fuzzes the core: builds every cargo-fuzz target (fuzz/fuzz_targets: pipeline, events, rules,
# compare, part, xplane) and runs each for SECONDS (default 60), seeded from the fixtures; prints each
# target's executions, coverage and findings. A finding is kept in fuzz/artifacts/<target>/;
# copy it into fixtures/fuzz/<target>/ and tests/suite/fuzz_regressions.rs replays it in every test run.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]       cargo fuzz, AddressSanitizer, debug assertions
#   scripts/fuzz.sh --smoke [SECONDS]           what the test command runs: every target for SECONDS
#                                                (default 8) without cargo-fuzz or ASan (plain cargo, the
#                                                dev profile: quick to build, debug assertions on, with
#                                                libFuzzer's coverage flags)
#
# libFuzzer needs a nightly compiler's flags; RUSTC_BOOTSTRAP=1 lets the stable one take them.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
all_targets="pipeline events rules compare part xplane"
if [ "${1:-}" = "--smoke" ]; then
  secs=${2:-8}
  # The test suite's profile and features: the core cargo test compiled is reused, only the
  # example is built.
  [ -d fuzz/corpus/xplane ] || cargo run --quiet --profile ci --example fuzz_seeds -- fuzz/corpus
  flags="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 -Cllvm-args=-sanitizer-coverage-inline-8bit-counters"
  flags="$flags -Cllvm-args=-sanitizer-coverage-pc-table -Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions"
  # With --target, RUSTFLAGS reach only the fuzzed code, not build scripts (as cargo fuzz does).
  host=$(rustc -vV | sed -n 's/^host: //p')
  RUSTFLAGS="$flags" cargo build --quiet --manifest-path fuzz/Cargo.toml --target "$host" --target-dir fuzz/target/smoke
  failed=0
  for t in $all_targets; do
    mkdir -p "fuzz/artifacts/$t"
    if "fuzz/target/smoke/$host/debug/$t" "fuzz/corpus/$t" -max_total_time="$secs" -max_len=65536 -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="fuzz/artifacts/$t/" >"fuzz/$t.smoke.log" 2>&1; then
      runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "fuzz/$t.smoke.log" | grep -o '[0-9]*$' | tail -1)
      echo "fuzz smoke: $t ${runs:-?} executions in ${secs}s, no finding"
    else
      echo "fuzz smoke: $t FOUND A CRASH (fuzz/artifacts/$t/):"; grep -m5 -E "panicked|ERROR|SUMMARY" "fuzz/$t.smoke.log" | sed 's/^/    /'
      failed=1
    fi
  done
  exit "$failed"
fi
secs=${1:-60}
shift || true
targets=${*:-$all_targets}
export RUSTC_BOOTSTRAP=1
if ! command -v cargo-fuzz >/dev/null; then
  echo "fuzz: installing cargo-fuzz (crates.io)"
  cargo install cargo-fuzz --locked 2>/dev/null || cargo install cargo-fuzz
fi
if [ ! -d fuzz/corpus/xplane ]; then
  cargo run --quiet --profile ci --example fuzz_seeds -- fuzz/corpus
fi
cargo fuzz build --release --debug-assertions >/dev/null 2>fuzz/build.log || { tail -30 fuzz/build.log; exit 1; }
total_findings=0
for t in $targets; do
  mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
  before=$(find "fuzz/artifacts/$t" -type f | wc -l)
  log="fuzz/$t.log"
  # -fork keeps going after a finding (each one is written to artifacts/); one job on one core.
  cargo fuzz run --release --debug-assertions "$t" "fuzz/corpus/$t" -- \
    -max_total_time="$secs" -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="fuzz/artifacts/$t/" >"$log" 2>&1 || true
  after=$(find "fuzz/artifacts/$t" -type f | wc -l)
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | grep -o '[0-9]*')
  new=$((after - before))
  total_findings=$((total_findings + new))
  printf 'fuzz: %-9s %8s executions in %ss, coverage %s, %d new findings\n' "$t" "${runs:-?}" "$secs" "${cov:-?}" "$new"
  if [ "$new" -gt 0 ]; then grep -m3 -E "panicked|ERROR|SUMMARY" "$log" | sed 's/^/        /'; fi
done
echo "fuzz: $total_findings new findings in all (artifacts in fuzz/artifacts/)"
[ "$total_findings" -eq 0 ]

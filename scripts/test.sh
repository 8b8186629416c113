#!/usr/bin/env bash
# THE test command: setup, the Rust tests, the native CLI, the Python wheel and its tests, the page
# build and the browser tests.
#
# Fuzzing is not part of it: every finding kept in fixtures/fuzz/ replays in the suite
# (tests/suite/fuzz_regressions.rs); `scripts/fuzz.sh --smoke` runs every fuzz target for a few
# seconds and `scripts/fuzz.sh SECONDS` runs a campaign.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/setup.sh
# Each step says how long the suite has run so far (CI allows 15 minutes on 2 cores).
SECONDS=0
target="${CARGO_TARGET_DIR:-$PWD/target}"
# The ci profile: release's optimisation without LTO (tests read real traces, so they run
# optimised, but ~30 test binaries linked with fat LTO took most of the suite's time).
echo "== cargo test --profile ci: build (at ${SECONDS} s)"
cargo test --profile ci --no-run
# The page (the core in wasm) builds in its own target folder, beside the steps below: its compiler
# fills the time they leave a core idle (the suite's last tests, rustdoc, pytest, linking).
mkdir -p "$target"
page_log="$target/page-build.log"
echo "== page build, in the background into dist/ (log: $page_log) (at ${SECONDS} s)"
(CARGO_TARGET_DIR="$target/page" TRACEPRISM_PAGE_PROFILE=ci npm run --silent build >"$page_log" 2>&1) &
page_build=$!
echo "== cargo test --profile ci: run (at ${SECONDS} s)"
cargo test --profile ci
echo "== cargo doc: every doc link resolves (at ${SECONDS} s)"
RUSTDOCFLAGS="-D warnings" cargo doc --profile ci --no-deps --lib -q
echo "== Python face (wheel, venv, tests/python) (at ${SECONDS} s)"
bash scripts/test-python.sh
# The browser tests compare the page with the CLI that cargo test just built.
export TRACEPRISM_CLI="$target/ci/traceprism"
echo "== front-end types (tsc --checkJs) and unit tests (node --test) (at ${SECONDS} s)"
npm run --silent typecheck
npm run --silent test:unit
echo "== page build: waiting for it (at ${SECONDS} s)"
if ! wait "$page_build"; then
  cat "$page_log"
  echo "page build failed" >&2
  exit 1
fi
cat "$page_log"
echo "== browser tests (at ${SECONDS} s)"
npm run --silent test:browser
echo "== all tests passed in ${SECONDS} s (after setup)"

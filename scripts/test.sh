#!/usr/bin/env bash
# THE test command: setup, the Rust tests, the native CLI, the Python wheel and its tests, the page
# build and the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/setup.sh
# Each step says how long the suite has run so far (CI allows 15 minutes on 2 cores).
SECONDS=0
# The ci profile: release's optimisation without LTO (tests read real traces, so they run
# optimised, but ~30 test binaries linked with fat LTO took most of the suite's time).
echo "== cargo test --profile ci (at ${SECONDS} s)"
cargo test --profile ci
echo "== cargo doc: every doc link resolves (at ${SECONDS} s)"
RUSTDOCFLAGS="-D warnings" cargo doc --profile ci --no-deps --lib -q
echo "== Python face (wheel, venv, tests/python) (at ${SECONDS} s)"
bash scripts/test-python.sh
echo "== fuzz smoke (every fuzz target for a few seconds; scripts/fuzz.sh SECONDS for a campaign) (at ${SECONDS} s)"
bash scripts/fuzz.sh --smoke 5
# The browser tests compare the page with the CLI that cargo test just built.
export TRACEPRISM_CLI="${CARGO_TARGET_DIR:-$PWD/target}/ci/traceprism"
echo "== front-end types (tsc --checkJs) and unit tests (node --test) (at ${SECONDS} s)"
npm run --silent typecheck
npm run --silent test:unit
echo "== page build (at ${SECONDS} s)"
TRACEPRISM_PAGE_PROFILE=ci npm run --silent build
echo "== browser tests (at ${SECONDS} s)"
npm run --silent test:browser
echo "== all tests passed in ${SECONDS} s (after setup)"

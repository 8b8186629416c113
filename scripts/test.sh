#!/usr/bin/env bash
# THE test command: setup, the Rust tests, the native CLI, the page build and the browser tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/setup.sh
echo "== cargo test --release"
cargo test --release
echo "== fuzz smoke (every fuzz target for a few seconds; scripts/fuzz.sh SECONDS for a campaign)"
bash scripts/fuzz.sh --smoke 8
echo "== cargo build --release (the CLI the browser tests compare against)"
cargo build --release
echo "== front-end types (tsc --checkJs) and unit tests (node --test)"
npm run --silent typecheck
npm run --silent test:unit
echo "== page build"
npm run --silent build
echo "== browser tests"
npm run --silent test:browser

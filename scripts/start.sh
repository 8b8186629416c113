#!/usr/bin/env bash
# Sets everything up, builds the CLI and the page, analyses the bundled example trace with the CLI,
# then serves the page locally: open the printed URL.
#   scripts/start.sh [--port N]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
bash scripts/setup.sh
cargo build --release
"${CARGO_TARGET_DIR:-target}/release/traceprism" summary fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz
npm run --silent build
exec node scripts/serve.mjs dist "$@"

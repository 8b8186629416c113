#!/usr/bin/env bash
# Sets everything up, builds the page and serves it locally: open the printed URL.
#   scripts/start.sh [--port N]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
npm run --silent build
exec node scripts/serve.mjs dist "$@"

#!/usr/bin/env bash
# Builds the static page into dist/ (or $1): the core compiled to wasm, wasm-bindgen's JS glue,
# the front end from www/ and one bundled example trace. All URLs in the output are relative, so
# the folder works from any sub-path (GitHub Pages serves /<repo>/).
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
target_dir="${CARGO_TARGET_DIR:-target}"
export PATH="$HOME/.cargo/bin:$PATH"

cargo build --lib --release --target wasm32-unknown-unknown
rm -rf "$out"
mkdir -p "$out/pkg" "$out/examples"
wasm-bindgen --target web --no-typescript --out-dir "$out/pkg" \
  "$target_dir/wasm32-unknown-unknown/release/traceprism.wasm"
if [ "${WASM_OPT:-0}" = 1 ] && command -v wasm-opt >/dev/null; then
  wasm-opt -O2 --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
    "$out/pkg/traceprism_bg.wasm" -o "$out/pkg/traceprism_bg.wasm"
fi
cp -R www/. "$out/"
# The example trace: a small real trace, copied unmodified (loaded by a same-origin fetch).
cp fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz "$out/examples/"
echo "built $out/ ($(du -sh "$out" | cut -f1))"

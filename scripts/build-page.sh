#!/usr/bin/env bash
# Builds the static page into dist/ (or $1): the core compiled to wasm by wasm-pack (--target web),
# the SQLite module (sqlite/) likewise,
# the front end from www/ and one bundled example trace. All URLs in the output are relative, so
# the folder works from any sub-path (GitHub Pages serves /<repo>/).
#
# TRACEPRISM_PAGE_PROFILE=ci (what the test command sets) builds the wasm with the test suite's
# profile: release's optimisation without LTO and with parallel codegen, minutes less on a 2-core
# machine. The page people get (and `npm run bench`) is built with `release`.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-dist}"
profile="${TRACEPRISM_PAGE_PROFILE:-release}"
case "$profile" in
  release) profile_flag=(--release) ;;
  *) profile_flag=(--profile "$profile") ;;
esac
export PATH="$HOME/.cargo/bin:$PATH"

# wasm-pack builds the core for wasm32-unknown-unknown (with the rustflags of .cargo/config.toml:
# WebAssembly SIMD) and runs wasm-bindgen (found on PATH, pinned by scripts/setup.sh) for an ES
# module. Its own wasm-opt step is off (Cargo.toml, package.metadata.wasm-pack): it would download
# binaryen. Debian's wasm-opt (binaryen 108) breaks wasm-bindgen's externref table (the page then
# fails with "Table.set(): Argument 1 is invalid"), so wasm-opt only runs when asked for
# (WASM_OPT=1) and is newer than 108 (newer releases are untested here).
rm -rf "$out"
mkdir -p "$out/pkg" "$out/examples"
pkg=$(cd "$out/pkg" && pwd)
wasm-pack --quiet build --target web "${profile_flag[@]}" --no-typescript --no-pack --out-name traceprism --out-dir "$pkg" .
rm -f "$pkg/.gitignore"
# The SQLite module (crate sqlite/, feature `engine`): its own wasm, which the worker imports only
# when an Nsight Systems export (.sqlite) arrives, so the core's wasm above carries no SQLite.
mkdir -p "$out/pkg-sqlite"
sqlite_pkg=$(cd "$out/pkg-sqlite" && pwd)
wasm-pack --quiet build --target web "${profile_flag[@]}" --no-typescript --no-pack --out-name traceprism_sqlite --out-dir "$sqlite_pkg" sqlite
rm -f "$sqlite_pkg/.gitignore"
if [ "${WASM_OPT:-0}" = 1 ] && command -v wasm-opt >/dev/null; then
  binaryen=$(wasm-opt --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
  if [ "${binaryen:-0}" -gt 108 ]; then
    wasm-opt -O2 "$pkg/traceprism_bg.wasm" -o "$pkg/traceprism_bg.wasm"
  else
    echo "build-page: skipping wasm-opt (binaryen ${binaryen:-?} <= 108 breaks wasm-bindgen's externref table)" >&2
  fi
fi
cp -R www/. "$out/"
# The example trace: a small real trace, copied unmodified (loaded by a same-origin fetch).
cp fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz "$out/examples/"
echo "built $out/ (profile $profile; $(du -sh "$out" | cut -f1)); wasm: core $(du -k "$pkg/traceprism_bg.wasm" | cut -f1) KiB, SQLite module $(du -k "$sqlite_pkg/traceprism_sqlite_bg.wasm" | cut -f1) KiB (fetched only for a .sqlite)"

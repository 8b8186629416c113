#!/usr/bin/env bash
# Installs everything the project needs, idempotently, on a fresh Debian machine with Rust:
# the wasm32 target, wasm-bindgen-cli at the exact version of the wasm-bindgen crate in Cargo.toml,
# wasm-pack, Debian's chromium (for the browser tests) and the npm packages. Nothing is downloaded from
# anywhere but crates.io, Debian and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
log() { echo "setup: $*"; }

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else "$@"; fi; }

apt_updated=0
apt_install() {
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}

# Rust target for the page.
if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
  log "adding rust target wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
fi

# wasm-bindgen-cli must match the wasm-bindgen crate exactly (pinned with "=" in Cargo.toml).
want=$(sed -n 's/^wasm-bindgen = "=\([0-9.]*\)".*/\1/p' Cargo.toml)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$have" != "$want" ]; then
  log "installing wasm-bindgen-cli $want (found: ${have:-none})"
  # Not --locked: the registry mirror lacks one locked transitive version; the resolver picks a served one.
  cargo install wasm-bindgen-cli --version "$want"
fi

# wasm-pack drives the page's wasm build (scripts/build-page.sh). It finds the wasm-bindgen above on
# PATH (same version as the crate, so it downloads nothing); its wasm-opt step is off in Cargo.toml.
if ! command -v wasm-pack >/dev/null; then
  log "installing wasm-pack"
  # Not --locked, for the same reason as above.
  cargo install wasm-pack
fi

# Node.js + npm for the page build tooling and browser tests.
if ! command -v npm >/dev/null; then
  log "installing nodejs and npm (Debian)"
  apt_install nodejs npm
fi

# Chromium for the browser tests (Debian's build; playwright-core drives it, no browser download).
if ! command -v chromium >/dev/null && [ ! -x /usr/bin/chromium ]; then
  log "installing chromium (Debian)"
  apt_install chromium
fi

# npm packages (playwright-core only), from the lock file.
if [ ! -d node_modules/playwright-core ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  log "installing npm packages"
  if [ -f package-lock.json ]; then npm ci --no-audit --no-fund --loglevel=error; else npm install --no-audit --no-fund --loglevel=error; fi
fi
# Python's venv module, for the Python face's wheel and tests (scripts/python-env.sh makes the
# environment itself, from PyPI, when the tests first run).
if ! python3 -m venv --help >/dev/null 2>&1; then
  log "installing python3-venv (Debian)"
  apt_install python3-venv python3-pip
fi
# Python's openpyxl: tests/suite/xlsx.rs opens our workbook with a real reader (PyPI).
./scripts/test-deps.sh

log "ok (wasm-bindgen $(wasm-bindgen --version | awk '{print $2}'), $(wasm-pack --version), node $(node --version), $(/usr/bin/chromium --version 2>/dev/null | tail -1 || echo 'chromium ?'))"

#!/usr/bin/env bash
# Builds the traceprism Python wheel (one abi3 wheel for CPython >= 3.9) into target/wheels/.
#
# maturin comes from PyPI into the project's virtual environment (scripts/python-env.sh); the
# crates come from crates.io; nothing else is downloaded. TRACEPRISM_WHEEL_PROFILE=ci builds with
# the test suite's profile (default: release).
#
# The wheel builds in the project's target folder with the core's default features, and the root
# Cargo.toml turns on the syn features pyo3's macros want: so the core and every dependency are the
# ones `cargo build` / `cargo test` compiled for the same profile, and only pyo3 and the bindings
# are compiled here (TRACEPRISM_WHEEL_TARGET_DIR: another folder).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
profile="${TRACEPRISM_WHEEL_PROFILE:-release}"
export CARGO_TARGET_DIR="${TRACEPRISM_WHEEL_TARGET_DIR:-${CARGO_TARGET_DIR:-$PWD/target}}"
venv="$(scripts/python-env.sh)"
rm -f target/wheels/traceprism-*.whl
"$venv/bin/maturin" build --quiet --strip -m python/Cargo.toml --profile "$profile" --out target/wheels \
  --interpreter "$venv/bin/python" >&2
ls target/wheels/traceprism-*.whl

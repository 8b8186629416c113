#!/usr/bin/env bash
# Builds the traceprism Python wheel (one abi3 wheel for CPython >= 3.9) into target/wheels/.
#
# maturin comes from PyPI into the project's virtual environment (scripts/python-env.sh); the
# crates come from crates.io; nothing else is downloaded. TRACEPRISM_WHEEL_PROFILE=ci builds with
# the test suite's profile (default: release).
#
# The wheel builds in its own target folder, target/python: pyo3 turns on features of shared
# dependencies (once_cell's std, syn's extra-traits) that the CLI's build does not, so the two
# builds of the core differ, and in one folder each would rebuild the core after the other.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
profile="${TRACEPRISM_WHEEL_PROFILE:-release}"
export CARGO_TARGET_DIR="${TRACEPRISM_WHEEL_TARGET_DIR:-$PWD/target/python}"
venv="$(scripts/python-env.sh)"
rm -f target/wheels/traceprism-*.whl
"$venv/bin/maturin" build --quiet --strip -m python/Cargo.toml --profile "$profile" --out target/wheels \
  --interpreter "$venv/bin/python" >&2
ls target/wheels/traceprism-*.whl

#!/usr/bin/env bash
# The Python face's tests: builds the wheel with the test suite's profile (in its own target folder,
# see scripts/build-wheel.sh), installs it into the project's virtual environment
# (scripts/python-env.sh: pyarrow, pandas, polars, duckdb, dask[distributed], pytest), and runs
# tests/python against the CLI of the same build.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
started=$(date +%s)
venv="$(scripts/python-env.sh)"
wheel="$(TRACEPRISM_WHEEL_PROFILE="${TRACEPRISM_WHEEL_PROFILE:-ci}" scripts/build-wheel.sh)"
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheel"
built=$(date +%s)
export TRACEPRISM_CLI="${TRACEPRISM_CLI:-${CARGO_TARGET_DIR:-$PWD/target}/ci/traceprism}"
[ -x "$TRACEPRISM_CLI" ] || cargo build --profile ci --quiet
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests/python
echo "python: venv and wheel $((built - started)) s, tests $(( $(date +%s) - built )) s"

#!/usr/bin/env bash
# Makes (once) the project's Python virtual environment, target/pyenv, with maturin and what the
# Python tests use (tests/python/requirements.txt, pinned), and prints its path. pip keeps its
# cache in ~/.cache/pip, so a second machine's install reads wheels it already has.
set -euo pipefail
cd "$(dirname "$0")/.."
venv="target/pyenv"
stamp="$venv/.requirements"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
if ! cmp -s tests/python/requirements.txt "$stamp"; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r tests/python/requirements.txt >&2
  cp tests/python/requirements.txt "$stamp"
fi
echo "$PWD/$venv"

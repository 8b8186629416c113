"""Shared helpers of the Python face's tests: the CLI to check against, the fixtures, CSV reading.

Every test asserts the Python face's values against the CLI's own output (its JSON or its CSV
tables) or against the raw trace: the two faces share one core, and these tests prove the
bindings lose nothing (types, rows, messages) on the way.
"""

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


def cli_path() -> str:
    return os.environ.get("TRACEPRISM_CLI", str(ROOT / "target" / "ci" / "traceprism"))


def cli(*args, check=True):
    """Runs the CLI; returns the completed process (text)."""
    p = subprocess.run([cli_path(), *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"traceprism {' '.join(map(str, args))} failed: {p.stderr}")
    return p


def cli_json(*args):
    return json.loads(cli(*args).stdout)


def comparable(summary):
    """A summary without `input.parallel_blocks`: how many blocks helper threads parsed depends on
    which thread got there first, so two runs of the same face can differ in it."""
    summary = json.loads(json.dumps(summary))
    summary.get("input", {}).pop("parallel_blocks", None)
    return summary


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def assert_table_equals_csv(arrow_table, csv_path, context=""):
    """Every cell of an Arrow table against the CLI's CSV of the same table, read by its type:
    integers exactly, floats and µs to the CSV's 3 decimals, booleans as true/false, text as is,
    nulls as empty cells."""
    import pyarrow as pa

    header, rows = read_csv(csv_path)
    assert arrow_table.column_names == header, f"{context}: columns differ"
    assert arrow_table.num_rows == len(rows), f"{context}: {arrow_table.num_rows} rows, CSV has {len(rows)}"
    for c, name in enumerate(header):
        col = arrow_table.column(c).to_pylist()
        kind = arrow_table.schema.field(c).type
        for r, (got, want) in enumerate(zip(col, (row[c] for row in rows))):
            where = f"{context}: {name} row {r}"
            if want == "":
                assert got is None or got == "", f"{where}: {got!r} where the CSV is empty"
            elif pa.types.is_integer(kind):
                assert got == int(want), f"{where}: {got!r} != {want}"
            elif pa.types.is_floating(kind):
                assert got is not None and abs(got - float(want)) <= 5e-4 + 1e-12 * abs(got), f"{where}: {got!r} != {want}"
            elif pa.types.is_boolean(kind):
                assert got == (want == "true"), f"{where}: {got!r} != {want}"
            else:
                assert got == want, f"{where}: {got!r} != {want!r}"


@pytest.fixture(scope="session")
def exported(tmp_path_factory):
    """`traceprism export TRACE --out DIR` once per trace: the CLI's CSV tables to check against."""
    done = {}

    def export(trace):
        trace = str(trace)
        if trace not in done:
            out = tmp_path_factory.mktemp("csv")
            cli("export", trace, "--out", out)
            done[trace] = out
        return done[trace]

    return export

"""`traceprism.ranks` and `traceprism.compare` against the CLI's `ranks --json` and `compare --json`."""

import warnings

import pyarrow as pa
import pytest

import traceprism
from conftest import FIXTURES, assert_table_equals_csv, cli, cli_json

B200 = FIXTURES / "vllm_moe_tp8_eager_b200.json.gz"


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """A 4-rank run made by `synth-ranks` from a real B200 rank, rank 2 late."""
    out = tmp_path_factory.mktemp("run")
    cli("synth-ranks", B200, "--out", out, "--ranks", 4, "--straggler", 2, "--seed", 7)
    return out


def test_ranks_equals_the_cli(run_dir, tmp_path):
    run = traceprism.ranks(run_dir)
    assert run.summary == cli_json("ranks", run_dir, "--json")
    assert len(run.files) == 4 and run.summary["ranks"] == 4
    cli("ranks", run_dir, "--out", tmp_path)
    for name in run.tables():
        assert_table_equals_csv(pa.table(run.table(name)), tmp_path / f"{name}.csv", name)
    # The straggler the generator made is the one the tables name.
    slow = run.to_pandas("straggler_summary")
    assert len(slow) > 0


def test_ranks_takes_a_list_and_warns_on_an_unreadable_rank(run_dir, tmp_path):
    files = sorted(p for p in run_dir.iterdir() if p.name.startswith("rank"))
    bad = tmp_path / "rank9.json"
    bad.write_text("{ not json")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = traceprism.ranks([*files, bad])
    assert len(run.files) == 4
    messages = [str(w.message) for w in caught if issubclass(w.category, traceprism.TraceWarning)]
    assert any("rank9.json" in m and "left out" in m for m in messages), messages
    cli_stderr = cli("ranks", *files, bad, "--json").stderr
    assert any(m in cli_stderr for m in messages)
    with pytest.raises(traceprism.TraceError, match="at least two ranks"):
        traceprism.ranks(files[:1])
    missing = tmp_path / "nowhere"
    with pytest.raises(traceprism.TraceError) as e:
        traceprism.ranks([*files, missing])
    assert str(e.value) == cli("ranks", *files, missing, check=False).stderr.strip().removeprefix("traceprism: error: ")
    assert "no such file or folder" in str(e.value)


def test_compare_equals_the_cli(tmp_path):
    a = FIXTURES / "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz"
    b = FIXTURES / "vllm_tp4_mi300x_1000isl_10osl_32con.pt.trace.json.gz"
    c = traceprism.compare(a, b)
    whole = cli_json("compare", a, b, "--json")
    assert c.summary == whole["tables"]
    # The verdict in words, as the CLI's first line: the H100's decode step is the faster.
    assert c.headline == whole["headline"]
    assert c.headline.startswith("NVIDIA H100 80GB HBM3 is faster than AMD Instinct MI300X by "), c.headline
    # Opened traces are taken as they are, and options pass through.
    d = traceprism.compare(traceprism.open(a), traceprism.open(b), phase="decode", label_a="H100", label_b="MI300X")
    want = cli_json("compare", a, b, "--json", "--phase", "decode", "--label-a", "H100", "--label-b", "MI300X")
    assert d.summary == want["tables"]
    schema = c.table("compare_ops").to_arrow().schema
    assert schema.metadata[b"traceprism.a"] == str(a).encode() and schema.metadata[b"traceprism.b"] == str(b).encode()
    cli("compare", a, b, "--out", tmp_path)
    for name in c.tables():
        assert_table_equals_csv(pa.table(c.table(name)), tmp_path / f"{name}.csv", name)
    with pytest.raises(traceprism.TraceError):
        traceprism.compare(a, b, phase="warmup")

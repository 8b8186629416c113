"""`traceprism.open`: the summary, every table with its types, errors and warnings, the GIL."""

import gzip
import threading
import time
import warnings

import pyarrow as pa
import pytest

import traceprism
from conftest import FIXTURES, ROOT, assert_table_equals_csv, cli, cli_json, comparable

LLAMA = FIXTURES / "llama_dense_eager.pt.trace.json.gz"
# Shapes, graphs, AMD, a JAX profile: the faces must agree whatever the input.
TRACES = [
    LLAMA,
    FIXTURES / "vllm_gptoss_mixed_piecewise_mi300x.json.gz",
    FIXTURES / "sglang_qwen3-8b_decode_graph_mi300x.json.gz",
    FIXTURES / "jax_conv_mi300x.xplane.pb",
]


def test_version_and_names():
    assert traceprism.__version__ == cli("--version").stdout.split()[1]
    assert traceprism.table_names() == cli("tables").stdout.split()


@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.name)
def test_summary_equals_the_cli_json(trace):
    t = traceprism.open(trace)
    assert comparable(t.summary) == comparable(cli_json("summary", trace, "--json"))


@pytest.mark.parametrize("trace", TRACES, ids=lambda p: p.name)
def test_every_table_equals_the_cli_csv(trace, exported):
    t = traceprism.open(trace)
    out = exported(trace)
    assert t.tables() == traceprism.table_names()
    for name in t.tables():
        table = t.table(name)
        arrow = pa.table(table)
        assert len(table) == arrow.num_rows
        assert_table_equals_csv(arrow, out / f"{name}.csv", f"{trace.name} {name}")


def test_columns_have_real_types():
    k = traceprism.open(LLAMA).table("kernels")
    schema = pa.table(k).schema
    want = {"integer": pa.int64(), "float": pa.float64(), "us": pa.float64(), "text": pa.string(), "boolean": pa.bool_()}
    assert [schema.field(c).type for c in k.columns] == [want[t] for t in k.types]
    assert schema.field("index").type == pa.int64() and schema.field("name").type == pa.string()
    assert schema.field("dur_us").metadata == {b"unit": b"us"}
    assert k.types.count("text") < len(k.types) / 2, "most columns are numbers, not text"


def test_kernels_stream_in_batches():
    """A trace of more than one batch of kernels leaves in several batches, none above 65,536 rows,
    and the rows sum to the summary's kernel count."""
    t = traceprism.open(FIXTURES / "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz")
    kernels = t.summary["counts"]["kernels"]
    assert kernels > 0
    reader = pa.RecordBatchReader.from_stream(t.table("kernels"))
    sizes = [b.num_rows for b in reader]
    assert sum(sizes) == kernels == t.table("kernels").num_rows == len(t.table("kernels"))
    assert max(sizes) <= 65536
    big = traceprism.open(ROOT / "fixtures" / "llama_dense_eager.pt.trace.json.gz")
    assert len([b for b in pa.RecordBatchReader.from_stream(big.table("kernels"))]) == -(-big.summary["counts"]["kernels"] // 65536)


def test_each_read_is_a_fresh_stream():
    k = traceprism.open(LLAMA).table("kernels")
    assert pa.table(k).equals(pa.table(k))


def test_polars_duckdb_and_pandas_read_the_same_rows(exported):
    import duckdb
    import polars as pl

    t = traceprism.open(LLAMA)
    k = t.table("kernels")
    csv_dir = exported(LLAMA)
    from conftest import read_csv

    header, rows = read_csv(csv_dir / "kernels.csv")
    phase, dur = header.index("phase"), header.index("dur_us")
    want = {}
    for r in rows:
        n, s = want.get(r[phase], (0, 0.0))
        want[r[phase]] = (n + 1, s + float(r[dur]))

    got = {p: (n, s) for p, n, s in duckdb.sql("select phase, count(*), sum(dur_us) from k group by 1").fetchall()}
    assert got.keys() == want.keys()
    for p in want:
        assert got[p][0] == want[p][0] and abs(got[p][1] - want[p][1]) < 1e-3 * max(1, len(rows)), p

    df = pl.DataFrame(k)
    assert df.shape == (len(rows), len(header))
    assert df.schema["layer"] == pl.Int64 and df.schema["dur_us"] == pl.Float64
    assert t.table("kernels").to_polars().shape == df.shape

    pdf = t.to_pandas("kernels")
    assert len(pdf) == len(rows)
    assert str(pdf["index"].dtype) == "int64" and str(pdf["dur_us"].dtype) == "float64"


@pytest.mark.parametrize("trace", [LLAMA, FIXTURES / "jax_conv_mi300x.xplane.pb"], ids=lambda p: p.name)
def test_a_trace_in_memory_reads_as_its_file(trace, exported):
    t = traceprism.read(trace.read_bytes(), name=trace.name)
    want = comparable(cli_json("summary", trace, "--json"))
    assert comparable(t.summary) == want
    assert t.identity["file"] == trace.name and t.path == trace.name
    assert_table_equals_csv(pa.table(t.table("kernels")), exported(trace) / "kernels.csv", trace.name)
    with pytest.raises(traceprism.TraceError, match="byte"):
        traceprism.read(b'{"traceEvents": [{"ph": "X", "name" 1}]}')


def test_unknown_table_is_a_key_error():
    t = traceprism.open(LLAMA)
    with pytest.raises(KeyError, match="no table named 'nope'.*kernels"):
        t.table("nope")


def test_a_bad_trace_raises_the_cli_message(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"traceEvents": [{"ph": "X", "name" 1}]}')
    message = cli("summary", bad, check=False).stderr.strip().removeprefix("traceprism: error: ")
    assert "byte" in message
    with pytest.raises(traceprism.TraceError) as e:
        traceprism.open(bad)
    assert str(e.value) == message
    with pytest.raises(traceprism.TraceError, match="cannot read|No such file"):
        traceprism.open(tmp_path / "missing.json")


def test_a_cut_trace_warns_and_strict_raises(tmp_path):
    """The first 60% of a real trace: its complete events are analysed, with the CLI's warning."""
    text = gzip.decompress(LLAMA.read_bytes())
    cut = tmp_path / "cut.json"
    cut.write_bytes(text[: len(text) * 6 // 10])
    cli_warning = [l for l in cli("summary", cut).stderr.splitlines() if "warning" in l]
    assert cli_warning, "the CLI warns about the cut trace"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = traceprism.open(cut)
    ours = [str(w.message) for w in caught if issubclass(w.category, traceprism.TraceWarning)]
    assert ours and cli_warning[0].endswith(ours[0])
    assert comparable(t.summary) == comparable(cli_json("summary", cut, "--json"))
    with pytest.raises(traceprism.TraceError):
        traceprism.open(cut, strict=True)


def test_rules_and_capture_arguments(tmp_path, exported):
    rules = tmp_path / "rules.toml"
    rules.write_text('[[category]]\nname = "MyElementwise"\nfamily = "Elementwise/Reduce"\n\n[[rule]]\ncategory = "MyElementwise"\npattern = "elementwise_kernel"\n')
    t = traceprism.open(LLAMA, rules=rules)
    want = cli_json("summary", LLAMA, "--json", "--rules", rules)
    assert comparable(t.summary) == comparable(want)
    with pytest.raises(traceprism.TraceError, match="cannot read rules file"):
        traceprism.open(LLAMA, rules=tmp_path / "none.toml")
    assert "MyElementwise" in pa.table(t.table("category_summary")).column("category").to_pylist()
    trace = FIXTURES / "vllm_gptoss_decode_fullgraph_mi300x.json.gz"
    captures = FIXTURES / "graph_capture" / "vllm_decode_full" / "capture_traces"
    with_capture = traceprism.open(trace, capture=captures)
    assert comparable(with_capture.summary) == comparable(cli_json("summary", trace, "--json", "--capture", captures))
    assert with_capture.summary["graph_replays"]["rows_from_capture"] > 0


def test_the_gil_is_released_while_reading():
    """A Python thread keeps counting while another thread opens a trace."""
    ticks = 0
    done = threading.Event()

    def count():
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            time.sleep(0.0005)

    counter = threading.Thread(target=count)
    counter.start()
    started = time.perf_counter()
    traceprism.open(FIXTURES / "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz", threads=1)
    took = time.perf_counter() - started
    done.set()
    counter.join()
    # Held GIL: the counter gets at most a switch interval's worth of ticks; released, it ticks
    # about every half millisecond of the read.
    assert ticks >= took / 0.0005 / 10, f"{ticks} ticks in {took:.3f} s"


def test_dropping_a_trace_frees_its_memory():
    """In a fresh interpreter, a trace is opened, read out and dropped eight times. Were a dropped
    trace (or a stream of its tables) kept, the resident size would grow by the trace's model each
    time; it stays within half of one model of where the second round left it. (How much of a
    freed model glibc hands back at once varies, so one round's drop is not what is measured.)"""
    import subprocess
    import sys

    code = """
import ctypes, gc, traceprism, pyarrow as pa
trim = ctypes.CDLL("libc.so.6").malloc_trim
def rss():
    gc.collect(); trim(0)
    return int(open("/proc/self/statm").read().split()[1]) * 4096 / 1e6
start = rss()
rounds = []
for _ in range(8):
    t = traceprism.open(%r); pa.table(t.table("kernels")); held = rss()
    del t
    rounds.append((held, rss()))
print(start, *[x for r in rounds for x in r])
""" % str(FIXTURES / "vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    start, *v = map(float, out.split())
    rounds = list(zip(v[0::2], v[1::2]))
    model = rounds[0][0] - start
    assert model > 10, f"a held trace shows in the resident size ({start:.0f} -> {rounds[0][0]:.0f} MB)"
    growth = max(after for _, after in rounds[2:]) - rounds[1][1]
    assert growth < model / 2, f"{growth:.0f} MB more after 8 rounds of {model:.0f} MB: {rounds}"


def test_an_nsight_systems_export_opens_like_a_trace():
    # traceprism.open reads an nsys SQLite export as the CLI does: the same summary.
    path = FIXTURES / "nsys" / "mfu_2gpu_before.sqlite"
    t = traceprism.open(str(path))
    assert comparable(t.summary) == comparable(cli_json("summary", path, "--json"))
    assert t.summary["workload"] == "training"
    assert len(t.to_pandas("kernels")) == 4010

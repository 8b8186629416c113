"""`export --parquet` and `ranks --parquet`: typed, zstd, identity in the metadata, the same rows
as the CSV tables."""

import pyarrow.parquet as pq

import traceprism
from conftest import FIXTURES, assert_table_equals_csv, cli

TRACE = FIXTURES / "sglang_qwen3-30b-a3b_decode_b300.trace.json.gz"


def test_export_parquet_matches_csv_and_carries_identity(tmp_path, exported):
    cli("export", TRACE, "--parquet", tmp_path / "pq")
    csv_dir = exported(TRACE)
    t = traceprism.open(TRACE)
    for name in traceprism.table_names():
        f = pq.ParquetFile(tmp_path / "pq" / f"{name}.parquet")
        for col in range(f.metadata.num_columns):
            for rg in range(f.metadata.num_row_groups):
                assert f.metadata.row_group(rg).column(col).compression == "ZSTD"
        table = f.read()
        assert_table_equals_csv(table, csv_dir / f"{name}.csv", name)
        meta = {k.decode(): v.decode() for k, v in f.metadata.metadata.items() if not k.startswith(b"ARROW")}
        assert meta["traceprism.file"] == str(TRACE)
        assert meta["traceprism.device"] == t.summary["device"]
        assert meta["traceprism.workload"] == t.summary["workload"]
        assert table.schema.equals(t.table(name).to_arrow().schema, check_metadata=False)


def test_python_to_parquet_writes_the_same_files(tmp_path):
    t = traceprism.open(TRACE)
    files = t.to_parquet(tmp_path)
    assert [f.name for f in map(__import__("pathlib").Path, files)] == [f"{n}.parquet" for n in t.tables()]
    cli("export", TRACE, "--parquet", tmp_path / "cli")
    for name in t.tables():
        assert pq.read_table(tmp_path / f"{name}.parquet").equals(pq.read_table(tmp_path / "cli" / f"{name}.parquet"))


def test_ranks_parquet(tmp_path):
    run = tmp_path / "run"
    cli("synth-ranks", FIXTURES / "vllm_moe_tp8_eager_b200.json.gz", "--out", run, "--ranks", 2, "--straggler", 1)
    cli("ranks", run, "--parquet", tmp_path / "pq", "--out", tmp_path / "csv")
    for f in (tmp_path / "csv").iterdir():
        table = pq.read_table(tmp_path / "pq" / (f.stem + ".parquet"))
        assert_table_equals_csv(table, f, f.stem)
        assert table.schema.metadata[b"traceprism.ranks"] == b"2"

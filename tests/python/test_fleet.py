"""A fleet through a real Dask cluster: 32 rank traces (4 runs of 8, made by `synth-ranks` from
two real traces) mapped over a `LocalCluster` of 2 worker processes into one Parquet dataset
partitioned by run and rank; DuckDB's answers over the dataset equal the CLI's per-trace tables."""

from collections import defaultdict
from pathlib import Path

import duckdb
import pytest

import fleet
from conftest import FIXTURES, cli, cli_json, cli_path, read_csv

SOURCES = [
    (FIXTURES / "vllm_moe_tp8_eager_b200.json.gz", 3, 1),
    (FIXTURES / "vllm_moe_tp8_eager_b200.json.gz", 5, 2),
    (FIXTURES / "vllm_moe_tp8_eager_b200.json.gz", 0, 3),
    (FIXTURES / "vllm_tp4_mi300x_1000isl_10osl_32con.pt.trace.json.gz", 6, 4),
]


@pytest.fixture(scope="module")
def fleet_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("fleet")
    runs = fleet.make_fleet(cli_path(), root / "traces", SOURCES)
    files = [(run.name, f) for run in runs for f in sorted(run.glob("rank*.json"))]
    assert len(files) == 32
    dataset = root / "dataset"
    cluster, client = fleet.local_cluster(2)
    try:
        assert len(client.scheduler_info()["workers"]) == 2
        # traceprism.open over every trace file ...
        per_trace = client.gather(client.map(fleet.write_trace, [str(f) for _, f in files], [str(dataset)] * 32, [r for r, _ in files]))
        # ... and traceprism.ranks over every run (run tables only: the trace tables are written).
        per_run = client.gather(client.map(fleet.write_run, [str(r) for r in runs], [str(dataset)] * 4, trace_tables=(), pure=False))
        worker_pids = set(client.run(lambda: __import__("os").getpid()).values())
    finally:
        client.close()
        cluster.close()
    return {"root": root, "runs": runs, "files": files, "dataset": dataset, "per_trace": per_trace, "per_run": per_run, "pids": worker_pids}


def cli_tables(f, out):
    cli("export", f, "--out", out)
    return out


def test_the_work_ran_on_two_worker_processes(fleet_run):
    import os

    assert len(fleet_run["pids"]) == 2 and os.getpid() not in fleet_run["pids"]
    assert sorted((p["run"], p["rank"]) for p in fleet_run["per_trace"]) == sorted(
        (run, int(f.stem.removeprefix("rank"))) for run, f in fleet_run["files"]
    )


def test_duckdb_over_the_dataset_equals_the_cli_per_trace(fleet_run, tmp_path):
    ds = fleet_run["dataset"]
    con = duckdb.connect()
    kernels = {
        (run, rank): (n, s)
        for run, rank, n, s in con.sql(
            f"select run, rank, count(*), sum(dur_us) from read_parquet('{ds}/kernels/**/*.parquet', hive_partitioning = true) group by all"
        ).fetchall()
    }
    decode_layers = defaultdict(float)
    for run, rank, layer, t in con.sql(
        f"""select run, rank, layer, sum(time_us) from read_parquet('{ds}/layers/**/*.parquet', hive_partitioning = true)
            where phase = 'decode' and role = 'layer' group by all"""
    ).fetchall():
        decode_layers[(run, rank, layer)] = t
    assert len(kernels) == 32
    for i, (run, f) in enumerate(fleet_run["files"]):
        rank = int(f.stem.removeprefix("rank"))
        out = cli_tables(f, tmp_path / f"t{i}")
        header, rows = read_csv(out / "kernels.csv")
        dur = header.index("dur_us")
        n, s = kernels[(run, rank)]
        assert n == len(rows), f"{run} rank {rank}: {n} kernels in the dataset, {len(rows)} in the CLI's table"
        assert abs(s - sum(float(r[dur]) for r in rows)) < 1e-3 * max(1, n)
        header, rows = read_csv(out / "layers.csv")
        want = defaultdict(float)
        for r in rows:
            row = dict(zip(header, r))
            if row["phase"] == "decode" and row["role"] == "layer":
                want[int(row["layer"])] += float(row["time_us"])
        got = {layer: t for (ru, ra, layer), t in decode_layers.items() if (ru, ra) == (run, rank)}
        assert got.keys() == want.keys(), f"{run} rank {rank}: decode layers"
        assert all(abs(got[k] - want[k]) < 1e-2 for k in want)


def test_slowest_rank_per_run_equals_the_cli_ranks_tables(fleet_run):
    """The rank that arrives last at the most collectives, per run, from the dataset: the CLI's
    `ranks --json` names the same rank, and it is the straggler each run was made with."""
    ds = fleet_run["dataset"]
    got = dict(
        duckdb.sql(
            f"""select run, arg_max(rank, times_arrived_last)
                from read_parquet('{ds}/run_straggler_summary/**/*.parquet', hive_partitioning = true) group by run"""
        ).fetchall()
    )
    assert len(got) == 4
    for i, run_dir in enumerate(fleet_run["runs"]):
        table = next(t for t in cli_json("ranks", run_dir, "--json")["tables"] if t["name"] == "straggler_summary")
        rows = [dict(zip(table["columns"], r)) for r in table["rows"]]
        slowest = max(rows, key=lambda r: r["times_arrived_last"])
        assert got[run_dir.name] == slowest["rank"], run_dir.name
        assert got[run_dir.name] == SOURCES[i][1], f"{run_dir.name}: made with rank {SOURCES[i][1]} late"
    totals = dict(
        duckdb.sql(
            f"select run, count(*) from read_parquet('{ds}/run_ranks/**/*.parquet', hive_partitioning = true) group by run"
        ).fetchall()
    )
    assert totals == {r.name: 8 for r in fleet_run["runs"]}

"""The fleet recipe: many traces through a Dask cluster into one Parquet dataset, which DuckDB
then queries across runs and ranks.

A *run* is a folder of one run's rank traces. Tasks write the tables of their traces as
partitions of one Hive-partitioned dataset:

    DATASET/<table>/run=<run>/rank=<rank>/part-0.parquet   a trace's tables (kernels, layers, ...)
    DATASET/run_<table>/run=<run>/part-0.parquet           a run's tables (ranks, straggler_summary, ...)

Any Dask cluster runs it (a `distributed.LocalCluster` here, a real one in production); the tasks
only need `traceprism` and `pyarrow` on the workers. The tests (`test_fleet.py`) and the bench
(`scripts/bench-fleet.py`) import this module; the README shows the same map for Spark and Ray.
"""

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import traceprism

#: A trace's tables that go into the dataset.
TRACE_TABLES = ("kernels", "layers", "layer_summary", "phase_summary", "category_summary", "ops_summary")
#: A run's tables that go into the dataset.
RUN_TABLES = ("ranks", "straggler_summary", "lateness", "wait_by_layer", "rank_phases")


def _write(table, path):
    path.parent.mkdir(parents=True, exist_ok=True)
    # The Arrow stream goes straight to the writer, with its types and the trace's identity.
    pq.write_table(pa.table(table), path, compression="zstd")


def _trace_tables(trace, dataset, run, rank, tables):
    for name in tables:
        _write(trace.table(name), Path(dataset) / name / f"run={run}" / f"rank={rank}" / "part-0.parquet")
    return {
        "run": run,
        "rank": rank,
        "file": trace.path,
        "bytes": os.path.getsize(trace.path),
        "kernels": trace.summary["counts"]["kernels"],
    }


def write_trace(path, dataset, run, rank=None, tables=TRACE_TABLES):
    """Opens one trace and writes its tables as partition (`run`, `rank`) of the dataset. The
    rank is the trace's own (distributedInfo, else its file name) unless given."""
    t = traceprism.open(path)
    if rank is None:
        rank = int(t.identity.get("rank", 0))
    return _trace_tables(t, dataset, run, rank, tables)


def write_run(run_dir, dataset, run=None, trace_tables=TRACE_TABLES, run_tables=RUN_TABLES):
    """Reads one run (a folder of rank traces) once: its run tables as partition `run`, and each
    rank's tables as partition (`run`, `rank`)."""
    run = run or Path(run_dir).name
    r = traceprism.ranks(run_dir)
    for name in run_tables:
        _write(r.table(name), Path(dataset) / f"run_{name}" / f"run={run}" / "part-0.parquet")
    ranks = pa.table(r.table("ranks")).column("rank").to_pylist()
    return [_trace_tables(t, dataset, run, rank, trace_tables) for t, rank in zip(r.traces, ranks)]


def make_fleet(cli, out, sources, ranks=8):
    """Makes runs of `ranks` rank traces each with `traceprism synth-ranks` from real traces:
    `sources` is a list of (trace, straggler, seed), one run each. Returns the run folders."""
    import subprocess

    runs = []
    for i, (trace, straggler, seed) in enumerate(sources):
        d = Path(out) / f"run{i}"
        subprocess.run(
            [cli, "synth-ranks", str(trace), "--out", str(d), "--ranks", str(ranks), "--straggler", str(straggler), "--seed", str(seed)],
            check=True,
            capture_output=True,
        )
        (d / "truth.json").rename(Path(out) / f"run{i}.truth.json")
        runs.append(d)
    return runs


def local_cluster(workers=2):
    """A Dask `LocalCluster` of `workers` worker processes, one thread each (traceprism reads on
    its own threads), able to import this module."""
    from dask.distributed import Client, LocalCluster

    here = str(Path(__file__).resolve().parent)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return cluster, Client(cluster)

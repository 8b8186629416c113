#!/usr/bin/env python3
"""Figures of the Python face, on this machine (run with the project's venv python:
`target/pyenv/bin/python scripts/bench-python.py`, after scripts/build-wheel.sh and a pip install
of the wheel; scripts/test.sh does both).

  memory  peak resident size of a fresh interpreter that opens a trace and streams its `kernels`
          table through pyarrow batch by batch, against the trace's size (plain: the file; gzip:
          its inflated JSON). --big-mb N builds an N MB plain trace from a real one (and a gzip of
          it), --big-file PATH keeps it for later runs.
  fleet   32 rank traces (4 runs of 8, synth-ranks from real traces) into one Parquet dataset:
          a Dask LocalCluster of 2 worker processes against a serial loop of
          `traceprism export TRACE --parquet DIR`; traces/s and MB/s of JSON.

Usage: bench-python.py [memory] [fleet] [--big-mb N] [--big-file PATH]
"""

import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "python"))
CLI = os.environ.get("TRACEPRISM_CLI", str(ROOT / "target" / "release" / "traceprism"))
if not Path(CLI).exists():
    CLI = str(ROOT / "target" / "ci" / "traceprism")

PEAK = """
import resource, sys, traceprism, pyarrow as pa
t = traceprism.open(sys.argv[1])
opened = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
rows = sum(b.num_rows for b in pa.RecordBatchReader.from_stream(t.table("kernels")))
print(opened, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, rows)
"""


def json_size(path):
    if str(path).endswith(".gz"):
        with gzip.open(path, "rb") as f:
            return sum(len(b) for b in iter(lambda: f.read(1 << 24), b""))
    return os.path.getsize(path)


def memory(paths):
    print("memory: peak resident size of `traceprism.open` + streaming `kernels` (fresh interpreter)")
    base = subprocess.run([sys.executable, "-c", "import resource, traceprism, pyarrow; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"],
                          capture_output=True, text=True, check=True)
    print(f"  interpreter with traceprism and pyarrow imported: {int(base.stdout) / 1024:.0f} MB")
    for p in paths:
        size = json_size(p)
        out = subprocess.run([sys.executable, "-c", PEAK, str(p)], capture_output=True, text=True, check=True).stdout.split()
        opened, streamed, rows = int(out[0]) * 1024, int(out[1]) * 1024, int(out[2])
        print(f"  {Path(p).name}: JSON {size / 1e6:.0f} MB; peak after open {opened / 1e6:.0f} MB "
              f"({opened / size:.2f}x), after streaming {rows} kernel rows {streamed / 1e6:.0f} MB ({streamed / size:.2f}x)")


def fleet_bench():
    import fleet
    from test_fleet import SOURCES

    tmp = Path(tempfile.mkdtemp(prefix="traceprism-fleet-"))
    try:
        runs = fleet.make_fleet(CLI, tmp / "traces", SOURCES)
        files = [(r.name, f) for r in runs for f in sorted(r.glob("rank*.json"))]
        mb = sum(f.stat().st_size for _, f in files) / 1e6
        print(f"fleet: {len(files)} traces, {mb:.0f} MB of JSON, {os.cpu_count()} cores")
        t0 = time.perf_counter()
        for i, (_, f) in enumerate(files):
            subprocess.run([CLI, "export", str(f), "--parquet", str(tmp / "serial" / str(i))], check=True, capture_output=True)
        serial = time.perf_counter() - t0
        print(f"  serial CLI loop (export --parquet, every table): {serial:.2f} s, {len(files) / serial:.1f} traces/s, {mb / serial:.0f} MB/s")
        cluster, client = fleet.local_cluster(2)
        try:
            client.gather(client.map(lambda x: x, range(2)))  # workers up
            t0 = time.perf_counter()
            client.gather(client.map(fleet.write_trace, [str(f) for _, f in files], [str(tmp / "ds")] * len(files), [r for r, _ in files]))
            dask = time.perf_counter() - t0
            print(f"  Dask, 2 worker processes (open, {len(fleet.TRACE_TABLES)} tables): {dask:.2f} s, {len(files) / dask:.1f} traces/s, {mb / dask:.0f} MB/s")
            t0 = time.perf_counter()
            client.gather(client.map(fleet.write_run, [str(r) for r in runs], [str(tmp / "ds2")] * len(runs)))
            dask_runs = time.perf_counter() - t0
            print(f"  Dask, 2 worker processes (ranks per run, run and rank tables): {dask_runs:.2f} s, {len(files) / dask_runs:.1f} traces/s, {mb / dask_runs:.0f} MB/s")
        finally:
            client.close()
            cluster.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv):
    what = [a for a in argv if a in ("memory", "fleet")] or ["memory", "fleet"]
    big = None
    if "--big-mb" in argv:
        mb = int(argv[argv.index("--big-mb") + 1])
        big = argv[argv.index("--big-file") + 1] if "--big-file" in argv else str(Path(tempfile.gettempdir()) / f"traceprism_big_{mb}mb.json")
        if not Path(big).exists():
            src = ROOT / "fixtures" / "llama_dense_eager.pt.trace.json.gz"
            subprocess.run(["node", "-e", f"import('{ROOT}/scripts/big-trace.mjs').then(m => m.buildBigTrace({json.dumps(str(src))}, {mb}, {json.dumps(big)}))"], check=True)
        if not Path(big + ".gz").exists():
            subprocess.run(f"gzip -1 -c {big} > {big}.gz", shell=True, check=True)
    if "memory" in what:
        paths = [ROOT / "fixtures" / "llama_dense_eager.pt.trace.json.gz"]
        if big:
            paths += [Path(big), Path(big + ".gz")]
        memory(paths)
    if "fleet" in what:
        fleet_bench()


if __name__ == "__main__":
    main(sys.argv[1:])

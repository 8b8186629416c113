#!/usr/bin/env python3
"""Bench of the Nsight Systems reader: an export enlarged by repeating its activity rows (each copy
shifted after the previous in time, correlation ids offset) to about MB megabytes, read by
`traceprism summary` on one core (taskset). Prints MB/s; the target is at least 100 MB/s.

    python3 scripts/bench-nsys.py [BIN] [MB]
"""
import os
import shutil
import sqlite3
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/traceprism")
MB = int(sys.argv[2]) if len(sys.argv) > 2 else 200
SRC = os.path.join(ROOT, "fixtures/nsys/mfu_2gpu_before.sqlite")
OUT = f"/tmp/traceprism-bench-nsys-{MB}.sqlite"
TABLES = ["CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET", "NVTX_EVENTS"]

if not os.path.exists(OUT):
    shutil.copy(SRC, OUT)
    db = sqlite3.connect(OUT)
    span = max(db.execute(f"SELECT max(end) - min(start) FROM {t}").fetchone()[0] or 0 for t in TABLES) + 1_000_000
    originals = {t: [c[1] for c in db.execute(f"PRAGMA table_info({t})")] for t in TABLES}
    for t in TABLES:
        db.execute(f"CREATE TEMP TABLE orig_{t} AS SELECT * FROM {t}")
    copy = 1
    while os.path.getsize(OUT) < MB * 1e6:
        for t, cols in originals.items():
            shifted = [
                f"start + {copy * span}" if c == "start" else f"end + {copy * span}" if c == "end"
                else f"correlationId + {copy * 10_000_000}" if c == "correlationId" else c
                for c in cols
            ]
            db.execute(f"INSERT INTO {t} ({', '.join(cols)}) SELECT {', '.join(shifted)} FROM orig_{t}")
        db.commit()
        copy += 1
    db.close()

size = os.path.getsize(OUT) / 1e6
pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
best = None
for _ in range(3):
    start = time.perf_counter()
    subprocess.run(pin + [BIN, "summary", OUT, "--json", "--threads", "1"], check=True, stdout=subprocess.DEVNULL)
    t = time.perf_counter() - start
    best = t if best is None else min(best, t)
print(f"export {OUT}: {size:.0f} MB")
print(f"  traceprism summary on one core: {best:.2f} s = {size / best:.0f} MB/s (best of 3; target >= 100 MB/s)")

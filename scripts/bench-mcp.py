#!/usr/bin/env python3
"""Bench of `traceprism mcp`: the second `table` call on a ~300 MB trace must cost at most 5% of
the first (the server keeps the trace open). Prints the figures.

    python3 scripts/bench-mcp.py [BIN] [MB]

BIN defaults to target/release/traceprism; MB (default 300) is the size of the trace made from
the llama fixture with scripts/big-trace.mjs (kept in /tmp between runs).
"""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/traceprism")
MB = int(sys.argv[2]) if len(sys.argv) > 2 else 300
TRACE = f"/tmp/traceprism-bench-mcp-{MB}.json"

if not os.path.exists(TRACE):
    subprocess.run(
        ["node", "-e", f"import('{ROOT}/scripts/big-trace.mjs').then(m => m.buildBigTrace('{ROOT}/fixtures/llama_dense_eager.pt.trace.json.gz', {MB}, '{TRACE}'))"],
        check=True,
    )

server = subprocess.Popen([BIN, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
ids = iter(range(1, 1_000_000))


def request(method, params):
    i = next(ids)
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method, "params": params}) + "\n")
    server.stdin.flush()
    while True:
        msg = json.loads(server.stdout.readline())
        if msg.get("id") == i:
            return msg["result"]


request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}})
server.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
times = []
for name in ["kernel_summary", "passes", "category_summary"]:
    start = time.perf_counter()
    answer = request("tools/call", {"name": "table", "arguments": {"trace": TRACE, "name": name}})
    times.append(time.perf_counter() - start)
    assert not answer.get("isError"), answer
server.stdin.close()
server.wait()
size = os.path.getsize(TRACE) / 1e6
print(f"trace {TRACE}: {size:.0f} MB")
print(f"  first table call (reads the trace): {times[0] * 1000:.0f} ms")
print(f"  second table call (kept):           {times[1] * 1000:.1f} ms = {100 * times[1] / times[0]:.2f}% of the first")
print(f"  third table call (kept):            {times[2] * 1000:.1f} ms = {100 * times[2] / times[0]:.2f}% of the first")
print("  target: the second call at most 5% of the first:", "met" if times[1] <= 0.05 * times[0] else "NOT met")

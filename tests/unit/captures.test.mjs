// Capture files told apart from traces by name, and execution_details.json read like the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { captureEntries, isCaptureName, splitCaptures } from '../../www/js/captures.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

test('engines\' capture file names are recognised, traces are not', () => {
  for (const n of ['graph_capture_rank_0.1773709742341309550.pt.trace.json.gz', 'bs_32_rank0.json.gz', 'capture_trace_rank_0.json.gz', 'execution_details.json']) {
    assert.equal(isCaptureName(n), true, n);
  }
  for (const n of ['graph_execution.json.gz', 'profile_trace_rank_0.json.gz', 'sglang_Qwen3-8B_decode.json.gz', 'rank0.json.gz']) {
    assert.equal(isCaptureName(n), false, n);
  }
  const { traces, captures } = splitCaptures([{ name: 'graph_execution.json.gz' }, { name: 'execution_details.json' }, { name: 'bs_32_rank0.json.gz' }]);
  assert.deepEqual(traces.map((f) => f.name), ['graph_execution.json.gz']);
  assert.deepEqual(captures.map((f) => f.name), ['execution_details.json', 'bs_32_rank0.json.gz']);
});

test('execution_details.json gives each capture file its batch size and mode', async () => {
  const dir = path.join(ROOT, 'fixtures/graph_capture/vllm_prefilldecode_piecewise/capture_traces');
  const files = fs.readdirSync(dir).map((name) => ({ name, text: async () => fs.readFileSync(path.join(dir, name), 'utf8') }));
  const entries = await captureEntries(files);
  assert.equal(entries.length, 1);
  assert.match(entries[0].name, /^graph_capture_rank_0\./);
  assert.equal(entries[0].batch, 8192);
  assert.equal(entries[0].mode, 'PIECEWISE');
  await assert.rejects(captureEntries([{ name: 'execution_details.json', text: async () => '{"file": 1}' }]), /expected a list/);
});

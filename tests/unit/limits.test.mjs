// The page's size limit: said at once for a trace whose model cannot fit in wasm32's 4 GiB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { expectedModelBytes, tooLargeMessage, estimateGzipJsonBytes, WASM_MEMORY_LIMIT, USABLE_SHARE } from '../../www/worker/limits.js';

test('a trace that fits says nothing; one that cannot fit says why and what reads it', () => {
  assert.equal(tooLargeMessage('big.json', 1e9), null, '1 GB of JSON fits');
  // The 14 GB trace: opened by two workers reading ranges (3,345 MiB), not by one (4 GiB at 12.6 GB).
  assert.equal(tooLargeMessage('big.json', 14e9, false, true), null);
  assert.notEqual(tooLargeMessage('big.json', 14e9, false, false), null);
  const m = tooLargeMessage('huge.json', 17e9);
  assert.match(m, /huge\.json holds 17\.0 GB of JSON/);
  assert.match(m, /4 GiB \(wasm32\)/);
  assert.match(m, /traceprism summary huge\.json/);
  // The limit sits where the expected model reaches the usable share of 4 GiB.
  const edge = (WASM_MEMORY_LIMIT * USABLE_SHARE) / expectedModelBytes(1, true);
  assert.equal(tooLargeMessage('x', edge * 0.99), null);
  assert.notEqual(tooLargeMessage('x', edge * 1.01), null);
  assert.match(tooLargeMessage('x.json.gz', 20e9, true), /about 20\.0 GB/);
  // Read by one worker (a gzip trace): 11.0 GB of JSON opened in the page, 12.2 GB ran out of memory.
  assert.equal(tooLargeMessage('x.json.gz', 11.0e9, true, false), null);
  assert.notEqual(tooLargeMessage('x.json.gz', 12.2e9, true, false), null);
});

test('a gzip file\'s JSON size is estimated from how its start inflates', async () => {
  const text = Buffer.from(JSON.stringify({ traceEvents: Array.from({ length: 20000 }, (_, i) => ({ ph: 'X', name: `k${i % 50}`, ts: i, dur: 3 })) }));
  const gz = zlib.gzipSync(text);
  const whole = await estimateGzipJsonBytes(new Blob([gz]));
  assert.equal(whole, text.length, 'read whole: exact');
  const sampled = await estimateGzipJsonBytes(new Blob([gz]), Math.floor(gz.length / 4));
  assert.ok(Math.abs(sampled - text.length) / text.length < 0.25, `estimate ${sampled} of ${text.length}`);
});

// The page's size limit: said at once for a trace whose model cannot fit in wasm32's 4 GiB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { expectedModelBytes, tooLargeMessage, estimateGzipJsonBytes, sizeRefusal, WASM_MEMORY_LIMIT, USABLE_SHARE } from '../../www/worker/limits.js';

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

test('files opened together are judged together, by how the core says each is read', async () => {
  /** A stand-in for a File of `size` bytes the core said is read `reading`. */
  const file = (name, size, reading) => ({ file: /** @type {any} */ ({ size }), name, sniffed: { reading } });
  // 14 GB of plain JSON fits when read in ranges on two cores, not on one.
  assert.equal(await sizeRefusal([file('a.json', 14e9, 'parts')], 2), null);
  assert.match(await sizeRefusal([file('a.json', 14e9, 'parts')], 1), /a\.json holds 14\.0 GB/);
  // Two traces of 9 GB each: each fits alone, 18 GB together does not (a comparison, a run).
  assert.equal(await sizeRefusal([file('a.json', 9e9, 'parts')], 2), null);
  const pair = await sizeRefusal([file('a.json', 9e9, 'parts'), file('b.json', 9e9, 'parts')], 2);
  assert.match(pair, /^a\.json and b\.json together hold 18\.0 GB of JSON: their models/);
  assert.match(pair, /traceprism compare a\.json b\.json/);
  const three = await sizeRefusal(['r0', 'r1', 'r2'].map((r) => file(`${r}.json`, 7e9, 'parts')), 2);
  assert.match(three, /^these 3 traces \(r0\.json, r1\.json, r2\.json\) together hold 21\.0 GB/);
  assert.match(three, /traceprism ranks r0\.json r1\.json r2\.json/);
  // A file read in order (a protobuf) is parsed by one worker: the pair is judged at one worker's rate.
  assert.equal(await sizeRefusal([file('a.json', 6e9, 'parts'), file('b.xplane.pb', 6e9, 'parts')], 2), null);
  assert.notEqual(await sizeRefusal([file('a.json', 6e9, 'parts'), file('b.xplane.pb', 6e9, 'stream')], 2), null);
  // A compressed file is estimated from how its start inflates.
  const gz = zlib.gzipSync(Buffer.from('{"traceEvents": []}'));
  assert.equal(await sizeRefusal([{ file: new Blob([gz]), name: 'small.json.gz', sniffed: { reading: 'inflate' } }], 2), null);
});

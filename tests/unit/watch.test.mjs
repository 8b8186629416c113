// The folder watch's logic on a fake directory handle: a file is read once it has stopped growing
// for two polls; a file found cut is read again only once it has grown; temporary names are never
// read; a deleted file is noted once; a file that fails is named and skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollOnce, isCandidate } from '../../www/js/views/watch.js';
import { emptyWatch } from '../../www/js/store.js';

/** A directory handle over a Map name → {size, lastModified}. */
function folder(files) {
  return {
    async *entries() {
      for (const [name, f] of files) yield [name, { kind: 'file', getFile: async () => ({ name, ...f }) }];
    },
  };
}

test('files are read once, whole, after two quiet polls', async () => {
  const files = new Map([['w0.json.gz', { size: 10, lastModified: 1 }], ['w1.json.gz.part', { size: 5, lastModified: 1 }]]);
  const s = emptyWatch();
  s.handle = folder(files);
  const reads = [];
  let cut = true;
  const read = async (file, name) => {
    reads.push(`${name}@${file.size}`);
    if (name === 'w2.json' && cut) return { cut: 'the gzip stream ends early' };
    if (name === 'bad.json') throw new Error('not a trace');
    return { window: { file: name } };
  };
  for (let k = 0; k < 3; k++) await pollOnce(s, read);
  assert.deepEqual(reads, ['w0.json.gz@10'], 'read on the third poll (two quiet ones after it was first seen), temporary names never');
  // A file found cut is not read again until it grows.
  files.set('w2.json', { size: 4, lastModified: 2 });
  for (let k = 0; k < 6; k++) await pollOnce(s, read);
  assert.deepEqual(reads, ['w0.json.gz@10', 'w2.json@4']);
  cut = false;
  files.set('w2.json', { size: 8, lastModified: 3 });
  for (let k = 0; k < 3; k++) await pollOnce(s, read);
  assert.deepEqual(reads, ['w0.json.gz@10', 'w2.json@4', 'w2.json@8']);
  assert.deepEqual(s.windows.map((w) => w.file), ['w0.json.gz', 'w2.json']);
  // A broken file is named and skipped; a deleted one noted once; windows stay.
  files.set('bad.json', { size: 3, lastModified: 4 });
  files.delete('w0.json.gz');
  for (let k = 0; k < 4; k++) await pollOnce(s, read);
  assert.equal(s.notes.filter((n) => n.startsWith('w0.json.gz was deleted')).length, 1);
  assert.ok(s.notes.some((n) => n === 'bad.json cannot be read, skipped: not a trace'), s.notes.join('\n'));
  assert.equal(s.windows.length, 2);
});

test('candidates: traces, not temporary or our own files', () => {
  for (const n of ['a.json', 'a.json.gz', 'x.xplane.pb', 'trace_rank3.pt.trace.json.gz', 'report1.sqlite']) assert.ok(isCandidate(n), n);
  for (const n of ['a.json.part', 'a.json.gz.crswap', '.hidden.json', 'base.digest.json', 'run.truth.json.gz', 'notes.txt']) assert.ok(!isCandidate(n), n);
});

test('rank group keys drop the rank number as the CLI does', async () => {
  const { rankGroupKey } = await import('../../www/js/views/watch.js');
  assert.equal(rankGroupKey('w12_rank3.json.gz'), 'w12_rank*.json.gz');
  assert.equal(rankGroupKey('w12_rank-3.json.gz'), 'w12_rank-*.json.gz');
  assert.equal(rankGroupKey('step5_trace_3.json'), 'step5_trace_*.json');
  assert.equal(rankGroupKey('1761234-TP-5-DECODE.trace.json.gz'), '1761234-TP-*-DECODE.trace.json.gz');
  assert.equal(rankGroupKey('llama.json.gz'), null);
});

test('with ranks, a window is read once all its rank files are quiet', async () => {
  const files = new Map([['s1_rank0.json', { size: 10, lastModified: 1 }]]);
  const s = emptyWatch();
  s.handle = folder(files);
  s.ranks = true;
  const runs = [];
  const readRun = async (fs) => {
    runs.push(fs.map((f) => f.name).join('+'));
    return { window: { file: fs[0].name }, straggler: 'rank 1 arrives last' };
  };
  await pollOnce(s, async () => ({}), readRun);
  files.set('s1_rank1.json', { size: 10, lastModified: 2 });
  // rank0 is ready on this poll, rank1 is not yet: nothing is read.
  await pollOnce(s, async () => ({}), readRun);
  await pollOnce(s, async () => ({}), readRun);
  assert.deepEqual(runs, []);
  await pollOnce(s, async () => ({}), readRun);
  assert.deepEqual(runs, ['s1_rank0.json+s1_rank1.json']);
  assert.equal(s.windows[0].file, 's1_rank*.json (2 ranks)');
  assert.equal(s.windows[0].straggler, 'rank 1 arrives last');
});

// The folder watch's logic on a fake directory handle: a file is read once it has stopped growing
// for two polls; a file found cut is read again only once it has grown; temporary names are never
// read; a deleted file is noted once; a file that fails is named and skipped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pollOnce } from '../../www/js/views/watch.js';
import { emptyWatch } from '../../www/js/store.js';

/**
 * A stand-in for the core's answer on file names (`gate::trend::WatchedName`, tested in Rust):
 * temporary `.part` files are not read; `rankN` is the rank token.
 * @param {string[]} ns
 */
async function names(ns) {
  return ns.map((n) => ({ candidate: !n.endsWith('.part'), group: /rank\d+/.test(n) ? n.replace(/rank\d+/, 'rank*') : null }));
}

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
  for (let k = 0; k < 3; k++) await pollOnce(s, { names, readFile: read });
  assert.deepEqual(reads, ['w0.json.gz@10'], 'read on the third poll (two quiet ones after it was first seen), temporary names never');
  // A file found cut is not read again until it grows.
  files.set('w2.json', { size: 4, lastModified: 2 });
  for (let k = 0; k < 6; k++) await pollOnce(s, { names, readFile: read });
  assert.deepEqual(reads, ['w0.json.gz@10', 'w2.json@4']);
  cut = false;
  files.set('w2.json', { size: 8, lastModified: 3 });
  for (let k = 0; k < 3; k++) await pollOnce(s, { names, readFile: read });
  assert.deepEqual(reads, ['w0.json.gz@10', 'w2.json@4', 'w2.json@8']);
  assert.deepEqual(s.windows.map((w) => w.file), ['w0.json.gz', 'w2.json']);
  // A broken file is named and skipped; a deleted one noted once; windows stay.
  files.set('bad.json', { size: 3, lastModified: 4 });
  files.delete('w0.json.gz');
  for (let k = 0; k < 4; k++) await pollOnce(s, { names, readFile: read });
  assert.equal(s.notes.filter((n) => n.startsWith('w0.json.gz was deleted')).length, 1);
  assert.ok(s.notes.some((n) => n === 'bad.json cannot be read, skipped: not a trace'), s.notes.join('\n'));
  assert.equal(s.windows.length, 2);
});

test('a file gone between the listing and its reading is absent from that poll, not an error', async () => {
  const files = new Map([['w0.json.gz', { size: 10, lastModified: 1 }], ['w1.json.gz', { size: 6, lastModified: 1 }]]);
  let vanishing = true;
  const s = emptyWatch();
  s.handle = {
    async *entries() {
      for (const [name, f] of files) {
        // w1 is listed but renamed away before it is read, as a browser's swap file is.
        const getFile = async () => {
          if (name === 'w1.json.gz' && vanishing) throw Object.assign(new Error('A requested file or directory could not be found'), { name: 'NotFoundError' });
          return { name, ...f };
        };
        yield [name, { kind: 'file', getFile }];
      }
    },
  };
  const reads = [];
  const readFile = async (/** @type {any} */ file, /** @type {string} */ name) => {
    reads.push(name);
    return { window: { file: name } };
  };
  for (let k = 0; k < 3; k++) await pollOnce(s, { names, readFile });
  assert.deepEqual(reads, ['w0.json.gz']);
  assert.deepEqual(s.notes, [], 'a file never seen whole is not noted as deleted');
  vanishing = false;
  for (let k = 0; k < 3; k++) await pollOnce(s, { names, readFile });
  assert.deepEqual(reads, ['w0.json.gz', 'w1.json.gz'], 'read once it stays');
  // Any other failure of the folder still reaches the caller.
  s.handle = { async *entries() { yield ['x.json', { kind: 'file', getFile: async () => { throw new Error('permission denied'); } }]; } };
  await assert.rejects(pollOnce(s, { names, readFile }), /permission denied/);
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
  await pollOnce(s, { names, readFile: async () => ({}), readRun });
  files.set('s1_rank1.json', { size: 10, lastModified: 2 });
  // rank0 is ready on this poll, rank1 is not yet: nothing is read.
  await pollOnce(s, { names, readFile: async () => ({}), readRun });
  await pollOnce(s, { names, readFile: async () => ({}), readRun });
  assert.deepEqual(runs, []);
  await pollOnce(s, { names, readFile: async () => ({}), readRun });
  assert.deepEqual(runs, ['s1_rank0.json+s1_rank1.json']);
  assert.equal(s.windows[0].file, 's1_rank*.json (2 ranks)');
  assert.equal(s.windows[0].straggler, 'rank 1 arrives last');
});

// The page's store (www/js/store.js): one generation counter; a job's stamp goes stale when
// anything else is loaded, a drawing when a newer one starts or something is loaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Store, emptyRun } from '../../www/js/store.js';

test('a change stamps the generation; the next change makes the stamp stale', () => {
  const store = new Store();
  const a = store.begin();
  assert.ok(store.current(a));
  const b = store.begin();
  assert.ok(!store.current(a), 'the earlier load is stale');
  assert.ok(store.current(b));
  assert.equal(store.generation, 2);
});

test('a drawing is current until a newer drawing starts or something is loaded', () => {
  const store = new Store();
  const first = store.beginDrawing();
  assert.ok(first());
  const second = store.beginDrawing();
  assert.ok(!first() && second());
  store.begin();
  assert.ok(!second(), 'a load makes the drawing stale');
  const third = store.beginDrawing();
  assert.ok(third());
});

test('dropping the worker forgets the second trace, the comparison and the run, and keeps the alignment choice', () => {
  const store = new Store();
  store.second = { fileName: 'b.json', summary: {} };
  store.secondLoading = 'reading…';
  store.comparison = { key: 'k' };
  store.run = { ...emptyRun(false), summary: { ranks: [] } };
  const stamp = store.begin();
  store.dropWorkerState();
  assert.equal(store.second, null);
  assert.equal(store.secondLoading, null);
  assert.equal(store.comparison, null);
  assert.equal(store.run.summary, null);
  assert.equal(store.run.align, false);
  assert.ok(!store.current(stamp));
});

test('a read has stalled when bytes remain and no progress came for a minute', async () => {
  const { readStalled, READ_STALL_MS } = await import('../../www/js/constants.js');
  assert.equal(READ_STALL_MS, 60_000);
  assert.ok(readStalled(0, 60_000, 10, 100));
  assert.ok(!readStalled(0, 59_999, 10, 100), 'not yet a minute');
  assert.ok(!readStalled(0, 600_000, 100, 100), 'the whole file was read: analysing takes its time');
});

// The timeline window's maths (www/js/timeline/window.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clamp, zoom, pan, timeAt, xAt, formatSpan, spanFromParams, paramsOfSpan, linkParams, MIN_SPAN_NS } from '../../www/js/timeline/window.js';

const bounds = { from: 0, to: 1e9 };

test('zoom keeps the anchor in place and narrows or widens by the factor', () => {
  const w = { from: 2e8, to: 6e8 };
  const z = zoom(w, 0.5, 0.25, bounds);
  assert.equal(z.to - z.from, 2e8);
  assert.equal(timeAt(0.25 * 800, 800, z), timeAt(0.25 * 800, 800, w));
  const out = zoom(w, 10, 0.5, bounds);
  assert.deepEqual(out, bounds, 'zooming out stops at the whole trace');
  const tiny = zoom({ from: 0, to: 2000 }, 0.001, 0.5, bounds);
  assert.equal(tiny.to - tiny.from, MIN_SPAN_NS);
});

test('pan moves by a fraction of the width and stops at the ends', () => {
  const w = { from: 2e8, to: 4e8 };
  assert.deepEqual(pan(w, 0.5, bounds), { from: 3e8, to: 5e8 });
  assert.deepEqual(pan(w, -5, bounds), { from: 0, to: 2e8 });
  assert.deepEqual(pan(w, 50, bounds), { from: 8e8, to: 1e9 });
});

test('clamp moves a window back inside without shrinking it', () => {
  assert.deepEqual(clamp({ from: -5e8, to: -3e8 }, bounds), { from: 0, to: 2e8 });
  assert.deepEqual(clamp({ from: -1, to: 5e9 }, bounds), bounds);
});

test('pixels and times convert both ways', () => {
  const w = { from: 1000, to: 3000 };
  assert.equal(xAt(timeAt(123, 400, w), 400, w), 123);
});

test('the range text has a unit and switches to ms at 10 ms', () => {
  assert.equal(formatSpan({ from: 1500, to: 9_000_000 }), '1.5 – 9000.0 µs');
  assert.equal(formatSpan({ from: 0, to: 12_345_678 }), '0.000 – 12.346 ms');
});

test('the address round-trips a window in µs and refuses what is not one', () => {
  const w = { from: 1_234_000, to: 5_678_000 };
  assert.deepEqual(spanFromParams(paramsOfSpan(w)), w);
  assert.equal(spanFromParams({ from: '5', to: '2' }), null);
  assert.equal(spanFromParams({ from: 'x', to: '2' }), null);
  assert.equal(spanFromParams({}), null);
});

test('a link from a table (absolute µs) lands on the same stretch relative to the origin', () => {
  const origin = 5e15; // ns on the trace clock (5e12 µs)
  const w = spanFromParams(linkParams(5e12 + 100, 50), origin);
  assert.deepEqual(w, { from: 90_000, to: 160_000 }, '10 µs margins around 100-150 µs after the origin');
});

test('visibleRange walks only the items that can show in the window', async () => {
  const { visibleRange } = await import('../../www/js/timeline/window.js');
  const starts = [0, 10, 20, 30, 40, 50];
  // Items last up to 5: [20, 25) starts too early to reach 27.
  assert.deepEqual(visibleRange(starts, 5, { from: 27, to: 42 }), [3, 5]);
  // A long item (maxDur 30) starting at 0 may still cover 27.
  assert.deepEqual(visibleRange(starts, 30, { from: 27, to: 42 }), [0, 5]);
  assert.deepEqual(visibleRange(starts, 5, { from: 100, to: 200 }), [6, 6]);
  assert.deepEqual(visibleRange([], 5, { from: 0, to: 1 }), [0, 0]);
});

// How a large file's byte ranges are handed out to the workers that parse it (www/js/ranges.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RangeClaims } from '../../www/js/ranges.js';

const MB = 1 << 20;

/**
 * Runs the claims as the page does, in simulated time: the main worker takes ranges from the front,
 * each helper from the back (its first range at `start[h]` seconds, then the next as it finishes
 * one); workers parse at their own MB/s; cuts land exactly on the guess. Returns every range taken
 * and when the front met the back and the last range ended.
 */
function simulate(size, mainRate, helperRates, start = helperRates.map(() => 0), minBytes = 16 * MB) {
  const claims = new RangeClaims(size, helperRates.length + 1, minBytes);
  const ranges = [];
  let mainAt = 0;
  const helperAt = [...start];
  let helperEnd = 0;
  for (;;) {
    // The next event in time: the main worker's range ends, or a helper is free.
    const h = helperAt.indexOf(Math.min(...helperAt));
    if (h >= 0 && helperAt[h] <= mainAt) {
      const guess = claims.backGuess();
      const range = guess === null ? null : claims.takeBack(guess);
      if (range) {
        ranges.push({ who: `helper${h}`, range });
        helperAt[h] += (range[1] - range[0]) / MB / helperRates[h];
        helperEnd = Math.max(helperEnd, helperAt[h]);
      } else {
        helperAt[h] = Infinity;
      }
      continue;
    }
    // The main worker claims the file a slice at a time as it reads it.
    const start = claims.lo;
    if (start >= claims.hi) break;
    const end = claims.advanceFront(start + 16 * MB);
    const last = ranges[ranges.length - 1];
    if (last?.who === 'main' && last.range[1] === start) last.range[1] = end;
    else ranges.push({ who: 'main', range: [start, end] });
    mainAt += (end - start) / MB / mainRate;
  }
  return { ranges, mainAt, helperEnd };
}

/** The ranges cover [0, size) once each, with no gap and no overlap. */
function assertCovers(ranges, size) {
  const sorted = ranges.map((r) => r.range).sort((a, b) => a[0] - b[0]);
  let at = 0;
  for (const [s, e] of sorted) {
    assert.equal(s, at, `range starts where the last ended (${s} vs ${at})`);
    assert.ok(e > s, 'no empty range');
    at = e;
  }
  assert.equal(at, size);
}

test('ranges cover the file exactly, and shrink toward the meeting point', () => {
  const size = 1000 * MB;
  const { ranges } = simulate(size, 300, [300]);
  assertCovers(ranges, size);
  const helper = ranges.filter((r) => r.who === 'helper0').map((r) => r.range[1] - r.range[0]);
  assert.equal(helper[0], 250 * MB, 'the first range is half an equal share of the whole file');
  for (let k = 1; k < helper.length; k++) assert.ok(helper[k] <= helper[k - 1], 'each later range is no larger');
  assert.ok(helper.length >= 4 && helper.length <= 20, `${helper.length} helper ranges`);
});

test('equal workers finish together; a slower or late helper gets less, and nobody waits for long', () => {
  const size = 1000 * MB;
  for (const [helperRate, start] of [[300, 0], [200, 0], [300, 0.5], [450, 0]]) {
    const { ranges, mainAt, helperEnd } = simulate(size, 300, [helperRate], [start]);
    assertCovers(ranges, size);
    const helperBytes = ranges.filter((r) => r.who !== 'main').reduce((s, r) => s + r.range[1] - r.range[0], 0);
    // Ideal split: both end at the same time T, with main * T + helper * (T - start) = size.
    const ideal = (size / MB + helperRate * start) / (300 + helperRate);
    const end = Math.max(mainAt, helperEnd);
    // The last range of a worker is small: within two of the smallest ranges (a gap under two is
    // left to the main worker) of work at the slower rate.
    assert.ok(end - ideal <= 32 / Math.min(300, helperRate) + 1e-9, `helper ${helperRate} MB/s from ${start} s: ends ${end.toFixed(3)} s, ideal ${ideal.toFixed(3)} s`);
    // What a fixed half/half split would have cost.
    const halves = Math.max(500 / 300, start + 500 / helperRate);
    if (helperRate !== 300 || start) assert.ok(end < halves - 0.1, `better than halves (${halves.toFixed(3)} s)`);
    assert.ok(helperBytes > 0);
  }
});

test('three helpers share the back; a small file is all the main worker\'s', () => {
  const size = 2600 * MB;
  const { ranges } = simulate(size, 250, [250, 250, 250]);
  assertCovers(ranges, size);
  for (const who of ['main', 'helper0', 'helper1', 'helper2']) assert.ok(ranges.some((r) => r.who === who), `${who} parsed a range`);
  const small = simulate(20 * MB, 300, [300]);
  assert.deepEqual(small.ranges.map((r) => r.who), ['main'], 'a gap under two ranges is not shared');
});

test('a cut the front has passed, or outside the gap, is refused and changes nothing', () => {
  const claims = new RangeClaims(100 * MB, 2, 16 * MB);
  const guess = claims.backGuess();
  assert.equal(guess, 100 * MB - 25 * MB);
  assert.equal(claims.advanceFront(25 * MB), 25 * MB);
  assert.equal(claims.takeBack(10 * MB), null, 'behind the front');
  assert.equal(claims.takeBack(100 * MB), null, 'at the back: an empty range');
  assert.deepEqual(claims.takeBack(guess + 1234), [guess + 1234, 100 * MB]);
  assert.equal(claims.hi, guess + 1234);
  assert.equal(claims.advanceFront(200 * MB), guess + 1234, 'the front stops where the helper\'s range begins');
  assert.equal(claims.backGuess(), null, 'nothing left to share');
});

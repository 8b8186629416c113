// The page's reading of a lane's pyramid: the same coverage as the spans it was built from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readPyramid, addCover, pyramidBuckets, drawsWindow, EMPTY } from '../../www/js/timeline/pyramid.js';

/** The core's build (analysis/lod/pyramid.rs), written out for a test: spans → flat form. */
function build(spans) {
  const first = spans[0][0], last = Math.max(...spans.map((s) => s[1]));
  const families = [...new Set(spans.map((s) => s[2]))].sort((a, b) => a - b);
  const nf = families.length;
  const want = Math.max(4096, Math.floor(spans.length / 2));
  let bin0 = 1;
  while (bin0 < Math.ceil((last - first) / want)) bin0 *= 2;
  const bins = Math.ceil((last - first) / bin0) + 1;
  let level = new Float32Array(bins * nf);
  for (const [s, e, f] of spans) {
    const j = families.indexOf(f);
    for (let b = Math.floor((s - first) / bin0); b <= Math.floor((e - 1 - first) / bin0); b++) {
      const left = first + b * bin0;
      level[b * nf + j] += Math.min(e, left + bin0) - Math.max(s, left);
    }
  }
  const levels = [level];
  while (levels.at(-1).length > nf) {
    const below = levels.at(-1), n = below.length / nf, up = new Float32Array(Math.ceil(n / 2) * nf);
    for (let b = 0; b < n; b++) for (let f = 0; f < nf; f++) up[(b >> 1) * nf + f] += below[b * nf + f];
    levels.push(up);
  }
  const head = Float64Array.from([first, last, bin0, nf, levels.length, ...families, ...levels.map((l) => l.length / nf)]);
  const cover = new Float32Array(levels.reduce((t, l) => t + l.length, 0));
  let at = 0;
  for (const l of levels) { cover.set(l, at); at += l.length; }
  return { head, cover };
}

const spans = [];
let t = 1000;
for (let k = 0; k < 20000; k++) {
  const d = 1 + ((k * 37) % 500);
  spans.push([t, t + d, k % 3 === 0 ? 4 : 1]);
  t += d + ((k * 13) % 200);
}

test('coverage over the whole lane, at any level, is the spans\' own', () => {
  const p = readPyramid(build(spans));
  const total = [1, 4].map((f) => spans.filter((s) => s[2] === f).reduce((a, s) => a + s[1] - s[0], 0));
  for (const maxBin of [1, 1e3, 1e5, 1e9]) {
    const cover = new Float64Array(5);
    addCover(p, 0, t + 10, maxBin, cover);
    assert.ok(Math.abs(cover[1] - total[0]) / total[0] < 1e-4 && Math.abs(cover[4] - total[1]) / total[1] < 1e-4, `${maxBin}: ${cover}`);
  }
});

test('zoomed-out buckets: each column\'s busy share and main family as the spans give them', () => {
  const p = readPyramid(build(spans));
  const width = 200, from = 1000, to = t;
  assert.ok(drawsWindow(p, from, to, width));
  assert.ok(!drawsWindow(p, from, from + 1000, width), 'zoomed in: the worker draws from the spans');
  const out = pyramidBuckets([p, null], from, to, width, 5);
  const perPx = (to - from) / width;
  let agree = 0;
  for (let c = 0; c < width; c++) {
    const l = from + c * perPx, r = l + perPx;
    const by = [0, 0, 0, 0, 0];
    for (const [s, e, f] of spans) by[f] += Math.max(0, Math.min(e, r) - Math.max(s, l));
    const busy = Math.round(Math.min(1, (by[1] + by[4]) / perPx) * 255);
    assert.ok(Math.abs(out[2 * width + c] - busy) <= 3, `column ${c}: busy ${out[2 * width + c]} vs ${busy}`);
    agree += out[c] === (by[4] > by[1] ? 4 : 1) ? 1 : 0;
    assert.equal(out[width + c], EMPTY, 'an empty lane draws nothing');
  }
  assert.ok(agree >= 0.97 * width, `main family right in ${agree} of ${width} columns`);
});

// The timeline view: the first view after a load, drawn on a canvas from the core's buckets.
// Expected lanes come from the raw JSON (node's own JSON.parse), not from the page.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady, watchRequests } from './browser.mjs';
import { execFileSync } from 'node:child_process';
import { CLI } from './cli-match.mjs';

const FIXTURE = path.join(ROOT, 'fixtures/vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz');
const env = useBrowser('traceprism-timeline-');

/** Distinct (device, stream) of the GPU events (kernels, memcpy, memset) in the raw JSON. */
function rawStreams(file) {
  const doc = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString());
  const keys = new Set();
  for (const e of doc.traceEvents) {
    if (e.ph === 'X' && ['kernel', 'gpu_memcpy', 'gpu_memset'].includes(e.cat)) keys.add(`${e.args.device}/${e.args.stream}`);
  }
  return keys.size;
}

/** The visible window from `timeline-range` as [from, to] in µs. */
async function range(page) {
  const text = await page.textContent('[data-testid="timeline-range"]');
  const m = text.match(/^([\d.]+) – ([\d.]+) (µs|ms)$/);
  assert.ok(m, `range text ${JSON.stringify(text)}`);
  const k = m[3] === 'ms' ? 1000 : 1;
  return [Number(m[1]) * k, Number(m[2]) * k];
}

/** A fresh page with FIXTURE loaded, showing `view` once rendered. */
async function opened(view) {
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#' + view);
  await pickFile(page, FIXTURE);
  await waitReady(page, 300_000);
  await page.waitForSelector(`[data-view="${view}"][data-rendered]`, { timeout: 60_000 });
  return { page, problems };
}

/** Waits until the range text differs from `before`. */
async function rangeChanged(page, before) {
  await page.waitForFunction((b) => document.querySelector('[data-testid="timeline-range"]').textContent !== b, before);
}

test('the timeline opens first, draws one lane per GPU stream, and W/S/A/D/F move its window', async () => {
  const { page, problems } = await env.browser.newPage();
  const outside = watchRequests(page, env.server.url);
  await page.goto(env.server.url);
  await pickFile(page, FIXTURE);
  await waitReady(page, 300_000);
  await page.waitForSelector('[data-view="timeline"][data-rendered]', { timeout: 60_000 });
  // Lanes: the canvas lists them in the meta the worker sent; count the GPU ones drawn.
  const lanes = await page.evaluate(async () => {
    const canvas = document.querySelector('[data-testid="timeline"]');
    const g = canvas.getContext('2d');
    const { data } = g.getImageData(170, 0, canvas.width - 170, canvas.height);
    let coloured = 0;
    for (let i = 0; i < data.length; i += 4) if (Math.abs(data[i] - data[i + 1]) > 30 || Math.abs(data[i + 1] - data[i + 2]) > 30) coloured++;
    return { coloured, total: data.length / 4 };
  });
  assert.ok(lanes.coloured > lanes.total * 0.02, `the canvas is not blank: ${JSON.stringify(lanes)}`);
  const meta = await page.evaluate(() => window.traceprismTimeline);
  assert.equal(meta.gpuLanes, rawStreams(FIXTURE), 'one GPU lane per stream of the raw JSON');
  const whole = await range(page);
  await page.focus('[data-testid="timeline"]');
  let before = await page.textContent('[data-testid="timeline-range"]');
  await page.keyboard.press('w');
  await rangeChanged(page, before);
  const narrowed = await range(page);
  assert.ok(narrowed[1] - narrowed[0] < (whole[1] - whole[0]) * 0.9, `W narrows: ${whole} -> ${narrowed}`);
  before = await page.textContent('[data-testid="timeline-range"]');
  await page.keyboard.press('d');
  await rangeChanged(page, before);
  const right = await range(page);
  assert.ok(right[0] > narrowed[0], `D moves later: ${narrowed} -> ${right}`);
  before = await page.textContent('[data-testid="timeline-range"]');
  await page.keyboard.press('a');
  await rangeChanged(page, before);
  const left = await range(page);
  assert.ok(left[0] < right[0], `A moves earlier: ${right} -> ${left}`);
  // The window is in the address.
  assert.match(page.url(), /#timeline\?from=[\d.]+&to=[\d.]+/);
  before = await page.textContent('[data-testid="timeline-range"]');
  await page.keyboard.press('f');
  await rangeChanged(page, before);
  assert.deepEqual(await range(page), whole, 'F fits the whole trace');
  assert.deepEqual(problems, []);
  assert.deepEqual(outside.leaks, []);
  await page.close();
});

test('hovering a kernel shows its name as text, and a click shows its details', async () => {
  const { page, problems } = await opened('timeline');
  const box = await page.locator('[data-testid="timeline"]').boundingBox();
  const meta = await page.evaluate(() => window.traceprismTimeline);
  // Sweep the first GPU lane until the tooltip names a kernel.
  const y = box.y + meta.laneTop + meta.laneHeight / 2;
  let text = '';
  for (let x = box.x + 180; x < box.x + box.width - 10 && !text; x += 23) {
    await page.mouse.move(x, y);
    try {
      await page.waitForSelector('[data-testid="timeline-tooltip"]:not([hidden])', { timeout: 400 });
      text = await page.textContent('[data-testid="timeline-tooltip"]');
    } catch {
      // nothing under this pixel
    }
  }
  assert.ok(text.includes('category:') && text.includes('duration:'), `tooltip: ${text}`);
  // Text only: the tooltip holds no element, whatever the name contains (vLLM names hold <, >, &).
  assert.equal(await page.evaluate(() => document.querySelector('[data-testid="timeline-tooltip"]').children.length), 0);
  await page.mouse.down();
  await page.mouse.up();
  await page.waitForSelector('[data-testid="timeline-details"] dl');
  const name = (await page.textContent('[data-testid="timeline-details"] pre')).trim();
  assert.ok(text.startsWith(name.split('\n')[0].slice(0, 20)), `details name ${name} vs tooltip ${text}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a pass in the phases view and a layer of the heat map open the timeline on their stretch of time', async () => {
  const { page, problems } = await opened('phases');
  const box = '[data-table-box="passes"]';
  const cols = await page.$$eval(`${box} thead th`, (ths) => ths.map((th) => th.textContent));
  const cells = await page.$$eval(`${box} tbody tr:nth-child(3) td`, (tds) => tds.map((td) => td.textContent));
  const start = Number(cells[cols.indexOf('start_us')]);
  const dur = Number(cells[cols.indexOf('duration_us')]);
  await page.click(`${box} tbody tr:nth-child(3)`);
  await page.waitForSelector('[data-view="timeline"][data-rendered]', { timeout: 60_000 });
  const origin = await page.evaluate(() => window.traceprismTimeline.originUs);
  const [from, to] = await range(page);
  const rel = start - origin;
  assert.ok(from <= rel + 0.5 && to >= rel + dur - 0.5, `window ${from}-${to} µs holds the pass ${rel}-${rel + dur}`);
  assert.ok(to - from < dur * 1.2 + 21, `window ${from}-${to} is about the pass (${dur} µs)`);
  // Back returns to the phases view.
  await page.goBack();
  await page.waitForSelector('[data-view="phases"][data-rendered]', { timeout: 60_000 });
  // A heat-map cell lists the layer's kernels, and its button zooms the timeline to them.
  await page.goto(env.server.url + '#layers');
  await page.waitForSelector('[data-view="layers"][data-rendered]', { timeout: 60_000 });
  await page.click('[data-testid="heatmap"] canvas', { position: { x: 2, y: 2 } });
  await page.waitForSelector('[data-testid="layer-on-timeline"]', { timeout: 60_000 });
  await page.click('[data-testid="layer-on-timeline"]');
  await page.waitForSelector('[data-view="timeline"][data-rendered]', { timeout: 60_000 });
  const [lf, lt] = await range(page);
  assert.ok(lt - lf < to - from, `a layer's window (${lf}-${lt}) is narrower than its pass's`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a pass split in the page and opened again shows the CLI\'s kernel count for that pass', async () => {
  // The CLI's kernels table: kernels of pass 2.
  const { execFileSync } = await import('node:child_process');
  const { CLI } = await import('./cli-match.mjs');
  const out = path.join(env.tmp, 'csv');
  execFileSync(CLI, ['export', FIXTURE, '--out', out]);
  const lines = fs.readFileSync(path.join(out, 'kernels.csv'), 'utf8').split('\r\n').filter(Boolean);
  const passCol = lines[0].split(',').indexOf('pass');
  // The pass column is a plain number, after any quoted name: count rows whose field at passCol is 2.
  const want = lines.slice(1).filter((l) => {
    const cells = l.match(/("([^"]|"")*"|[^,]*)(,|$)/g).map((c) => c.replace(/,$/, ''));
    return cells[passCol] === '2';
  }).length;
  assert.ok(want > 0);
  const { page, problems } = await opened('phases');
  await page.selectOption('[data-testid="split-pass"]', '2');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="split-pass-button"]')]);
  const file = path.join(env.tmp, download.suggestedFilename());
  await download.saveAs(file);
  assert.match(path.basename(file), /pass2\.json\.gz$/);
  await pickFile(page, file);
  await waitReady(page, 300_000);
  await page.click('#tabs a[data-view="overview"]');
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  assert.equal(Number(await page.getAttribute('[data-fact="kernels"]', 'data-value')), want);
  assert.deepEqual(problems, []);
  await page.close();
});

/** The CLI's kernels.csv of FIXTURE as rows of cells (header first). */
function cliKernels() {
  const out = path.join(env.tmp, 'csv-kernels');
  if (!fs.existsSync(path.join(out, 'kernels.csv'))) execFileSync(CLI, ['export', FIXTURE, '--out', out]);
  const lines = fs.readFileSync(path.join(out, 'kernels.csv'), 'utf8').split('\r\n').filter(Boolean);
  return lines.map((l) => l.match(/("([^"]|"")*"|[^,]*)(,|$)/g).map((c) => c.replace(/,$/, '')).slice(0, -1));
}

test('a selection on the timeline filters the kernels table; #layers?pass=&layer= lists that layer; the heat map has axes and a scale', async () => {
  const rows = cliKernels();
  const [head, body] = [rows[0], rows.slice(1)];
  const ts = head.indexOf('ts_us'), passCol = head.indexOf('pass'), layerCol = head.indexOf('layer');
  const { page, problems } = await opened('timeline');
  const box = await page.locator('[data-testid="timeline"]').boundingBox();
  await page.keyboard.down('Shift');
  await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2, { steps: 5 });
  await page.mouse.up();
  await page.keyboard.up('Shift');
  await page.click('#tabs a[data-view="kernels"]');
  await page.waitForSelector('[data-view="kernels"][data-rendered] [data-testid="selection-filter"]', { timeout: 60_000 });
  const from = Number(await page.getAttribute('[data-testid="selection-filter"]', 'data-from-us'));
  const to = Number(await page.getAttribute('[data-testid="selection-filter"]', 'data-to-us'));
  const want = body.filter((r) => Number(r[ts]) >= from && Number(r[ts]) < to).length;
  assert.ok(want > 0 && want < body.length, `${want} of ${body.length} kernels start in the selection`);
  const count = await page.textContent('[data-table-box="kernels"] .count');
  assert.equal(count, `${want.toLocaleString('en-US')} rows`);
  // Cleared: every kernel again.
  await page.click('[data-testid="selection-filter"] button');
  await page.waitForFunction(() => !document.querySelector('[data-testid="selection-filter"]') && document.querySelector('[data-view="kernels"][data-rendered]'));
  assert.equal(await page.textContent('[data-table-box="kernels"] .count'), `${body.length.toLocaleString('en-US')} rows`);

  // The address names a pass and a layer: the kernels the CLI puts in that layer of that pass.
  const withLayer = body.find((r) => r[layerCol] !== '' && r[passCol] === '3');
  assert.ok(withLayer, 'pass 3 has layers');
  const layer = withLayer[layerCol];
  const inLayer = body.filter((r) => r[passCol] === '3' && r[layerCol] === layer).length;
  await page.goto(env.server.url + `#layers?pass=3&layer=${layer}`);
  await page.waitForSelector('[data-view="layers"][data-rendered] [data-testid="layer-on-timeline"]', { timeout: 60_000 });
  const shown = await page.$$eval('[data-table-box="kernels"] .count', (c) => c.map((x) => x.textContent));
  assert.ok(shown.includes(`${inLayer.toLocaleString('en-US')} rows`), `${JSON.stringify(shown)} vs ${inLayer}`);
  // The heat map: as wide as the view allows, labelled axes and a colour scale.
  const map = await page.locator('[data-testid="heatmap"] canvas').boundingBox();
  assert.ok(map.width >= 600, `heat map ${map.width} px wide`);
  const axes = await page.textContent('[data-testid="heatmap"] .heatmap-titles');
  assert.ok(axes.includes('forward pass') && axes.includes('layer'), axes);
  assert.ok((await page.textContent('[data-testid="heatmap-scale"]')).includes('median'));
  assert.deepEqual(problems, []);
  await page.close();
});

test('? lists the keyboard shortcuts and Esc hides them', async () => {
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url);
  assert.equal(await page.isVisible('[data-testid="shortcuts"]'), false);
  await page.keyboard.press('?');
  assert.equal(await page.isVisible('[data-testid="shortcuts"]'), true);
  assert.match(await page.textContent('[data-testid="shortcuts"]'), /W \/ S.*zoom/s);
  await page.keyboard.press('Escape');
  assert.equal(await page.isVisible('[data-testid="shortcuts"]'), false);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a zoomed-out window drawn on the page from the lanes\' pyramids matches the worker\'s own buckets', async () => {
  const { page, problems } = await opened('timeline');
  const result = await page.evaluate(async () => {
    const { readPyramid, pyramidBuckets, drawsWindow } = await import('./js/timeline/pyramid.js');
    const call = window.traceprismTest.call;
    const meta = await call('timelineMeta');
    const pyramids = await Promise.all(meta.lanes.map((_, lane) => call('timelinePyramid', { lane }).then((f) => (f ? readPyramid(f) : null))));
    const width = 100, from = meta.start, to = meta.end;
    const drawn = pyramids.every((p) => !p || drawsWindow(p, from, to, width));
    const here = pyramidBuckets(pyramids, from, to, width, meta.families.length);
    const worker = new Uint8Array(await call('timelineBuckets', { from, to, width }));
    const lanes = meta.lanes.length;
    let families = 0, busy = 0, painted = 0;
    for (let i = 0; i < lanes * width; i++) {
      if (here[i] === worker[i]) families++;
      if (here[i] !== 255) painted++;
      if (Math.abs(here[lanes * width + i] - worker[lanes * width + i]) <= 2) busy++;
    }
    return { drawn, cells: lanes * width, families, busy, painted };
  });
  assert.ok(result.drawn, 'the whole trace in 100 columns is drawn from the pyramids');
  assert.ok(result.painted > 0);
  assert.ok(result.families >= 0.98 * result.cells, `main family agrees in ${result.families} of ${result.cells} cells`);
  assert.ok(result.busy >= 0.98 * result.cells, `busy share within 2/255 in ${result.busy} of ${result.cells} cells`);
  assert.deepEqual(problems, []);
  await page.close();
});

// Times the page in Chromium: from picking a trace to the first table on screen, and the wasm
// memory high-water mark, next to the native CLI on the same file. Prints figures; asserts nothing.
// "workers (parts kept)" is how many workers parsed the file (a large plain-JSON file is cut into
// ranges for the page's helper workers) and how many of their parts were adopted; "worker ms" shows
// where the main worker's and each helper's time went. Each trace is timed twice: "cold" (picked the instant the page has loaded, while the worker still
// warms the core up) and "warm" (picked after the worker reports it has warmed up).
//
//   node scripts/bench-page.mjs [TRACE ...] [--big-mb N [--big-file PATH]]
//
// Default traces: fixtures/llama_dense_eager.pt.trace.json.gz and its plain-JSON form. With
// --big-mb N, also a ~N MB plain-JSON trace built from it by repeating its events shifted in time
// (written to a temp file, or with --big-file to PATH, kept and reused by later runs). Run
// `npm run build` and `cargo build --release` first. TRACEPRISM_DIST=DIR times another build of the
// page (e.g. a copy of dist/ from before a change); BENCH_CONSOLE=TEXT prints the page's and its
// workers' console messages that contain TEXT (for timing printed while investigating);
// BENCH_GZIP_PIPELINE=always|never overrides whether a .gz is inflated by a helper worker (by
// default only with 3 cores or more), shown as "2 (parts parsed by the helper and kept/blocks)".
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { ROOT, launch, serve, pickFile, waitReady, staleFrontEnd } from '../tests/browser/browser.mjs';

const args = process.argv.slice(2);
let bigMb = 0;
const bi = args.indexOf('--big-mb');
if (bi >= 0) {
  bigMb = Number(args[bi + 1]);
  args.splice(bi, 2);
}
// --big-file PATH: the big trace is written there (once) and kept, so repeated runs reuse it.
let bigFile = null;
const bf = args.indexOf('--big-file');
if (bf >= 0) {
  bigFile = args[bf + 1];
  args.splice(bf, 2);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'traceprism-bench-'));
const base = path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz');
const traces = args.length ? args : [base];
if (!args.length) {
  const plain = path.join(tmp, 'llama_dense_eager.pt.trace.json');
  fs.writeFileSync(plain, zlib.gunzipSync(fs.readFileSync(base)));
  traces.push(plain);
}
if (bigMb > 0) traces.push(bigFile && fs.existsSync(bigFile) ? bigFile : buildBig(base, bigMb, bigFile ?? undefined));

/** Repeats the events of `src` until the JSON is about `mb` MB, shifting ts and ids each copy. */
function buildBig(src, mb, out = path.join(tmp, `big_${mb}mb.json`)) {
  const trace = JSON.parse(zlib.gunzipSync(fs.readFileSync(src)).toString());
  const events = trace.traceEvents;
  let lo = Infinity, hi = -Infinity;
  for (const e of events) if (typeof e.ts === 'number') { lo = Math.min(lo, e.ts); hi = Math.max(hi, e.ts + (e.dur || 0)); }
  const span = Math.ceil(hi - lo) + 1000;
  const fd = fs.openSync(out, 'w');
  const { traceEvents, ...header } = trace;
  const head = JSON.stringify(header);
  fs.writeSync(fd, head.slice(0, -1) + (head.length > 2 ? ',' : '') + '"traceEvents":[');
  let written = 0, copy = 0, first = true;
  while (written < mb * 1e6) {
    const shift = copy * span;
    const idShift = copy * 10_000_000;
    let chunk = '';
    for (const e of events) {
      const c = { ...e };
      if (typeof c.ts === 'number') c.ts = c.ts + shift;
      if (c.args && typeof c.args === 'object') {
        c.args = { ...c.args };
        for (const k of ['correlation', 'External id']) if (typeof c.args[k] === 'number' && c.args[k] > 0) c.args[k] += idShift;
      }
      if (c.ph === 's' || c.ph === 'f') c.id = typeof c.id === 'number' ? c.id + idShift : c.id;
      chunk += (first ? '' : ',') + JSON.stringify(c);
      first = false;
      if (chunk.length > 8 << 20) { fs.writeSync(fd, chunk); written += chunk.length; chunk = ''; }
    }
    fs.writeSync(fd, chunk);
    written += chunk.length;
    copy++;
  }
  fs.writeSync(fd, ']}');
  fs.closeSync(fd);
  return out;
}

const cli = path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'release/traceprism');
/** Wall time of `traceprism summary FILE --json` (read + analyse + summary), or null without a CLI build. */
function nativeSeconds(file) {
  if (!fs.existsSync(cli)) return null;
  const t0 = process.hrtime.bigint();
  execFileSync(cli, ['summary', file, '--json'], { stdio: ['ignore', 'ignore', 'inherit'], maxBuffer: 1 << 30 });
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/**
 * One page load and one file. `cold`: the file is picked the instant the page has loaded (the
 * worker is still instantiating and warming the core up); `warm`: after the worker reports it has
 * warmed up, as a user who takes a second to find the file.
 */
async function measure(browser, file, mode) {
  const page = await browser.context.newPage();
  if (process.env.BENCH_CONSOLE) page.on('console', (m) => { if (m.text().includes(process.env.BENCH_CONSOLE)) console.log(`  [${mode}] ${m.text()}`); });
  try {
    await page.goto(server.url + '#overview', { waitUntil: 'load' });
    if (mode === 'warm') await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
    if (process.env.BENCH_GZIP_PIPELINE) await page.evaluate((m) => { window.traceprismGzipPipeline = m; }, process.env.BENCH_GZIP_PIPELINE);
    await pickFile(page, file);
    await waitReady(page, 30 * 60_000);
    await page.waitForFunction(() => window.traceprismTiming.firstTable !== null, null, { timeout: 30 * 60_000 });
    const timing = await page.evaluate(() => ({ ...window.traceprismTiming }));
    if (mode === 'warm') timing.frames = await timelineFrames(page);
    return timing;
  } finally {
    await page.close();
  }
}

/**
 * Frame times of the timeline while zooming and panning (W x12, D x12, S x12, A x12, then wheel
 * zooms in and out), each from the key to the picture of the new window drawn from fresh buckets;
 * the next key is pressed once that frame is drawn. Returns the frame times in ms.
 */
async function timelineFrames(page) {
  await page.goto(server.url + '#timeline');
  await page.waitForSelector('[data-view="timeline"][data-rendered]', { timeout: 10 * 60_000 });
  await page.focus('[data-testid="timeline"]');
  // Frame intervals the browser produced meanwhile (requestAnimationFrame), for the 60 fps target.
  await page.evaluate(() => {
    const intervals = (window.traceprismFrameIntervals = []);
    let last = null;
    const tick = (t) => {
      if (last !== null) intervals.push(t - last);
      last = t;
      if (!window.traceprismStopFrames) requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  const count = () => page.evaluate(() => window.traceprismTimeline.frames.length);
  const steps = [...'wwwwwwwwwwww', ...'dddddddddddd', ...'ssssssssssss', ...'aaaaaaaaaaaa'];
  for (const key of steps) {
    const before = await count();
    await page.keyboard.press(key);
    await page.waitForFunction((n) => window.traceprismTimeline.frames.length > n, before, { timeout: 60_000 }).catch(() => {});
  }
  const box = await page.locator('[data-testid="timeline"]').boundingBox();
  await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2);
  for (const dy of [-100, -100, -100, -100, -100, -100, 100, 100, 100, 100, 100, 100]) {
    const before = await count();
    await page.mouse.wheel(0, dy);
    await page.waitForFunction((n) => window.traceprismTimeline.frames.length > n, before, { timeout: 60_000 }).catch(() => {});
  }
  return page.evaluate(() => {
    window.traceprismStopFrames = true;
    return { fresh: [...window.traceprismTimeline.frames], intervals: [...window.traceprismFrameIntervals] };
  });
}

/** The p-th percentile of `values` (nearest rank). */
function percentile(values, p) {
  const v = [...values].sort((a, b) => a - b);
  return v.length ? v[Math.min(v.length - 1, Math.ceil((p / 100) * v.length) - 1)] : NaN;
}

const stale = staleFrontEnd();
if (stale.length) console.warn(`warning: dist/ is older than www/ (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): run \`npm run build\` to time the current page`);
const server = await serve();
const browser = await launch();
const s = (ms) => (ms / 1000).toFixed(3);
try {
  console.log(`CLI: ${fs.existsSync(cli) ? cli : 'not built (cargo build --release)'}; page: ${server.url}`);
  console.log('trace | mode | workers (parts kept) | file MB | JSON MB | parse s | read+analyse s | first table s | JSON MB/s | file MB/s | wasm memory MB | warm-up s | native s | page/native');
  for (const file of traces) {
    const size = fs.statSync(file).size;
    const json = file.endsWith('.gz') ? zlib.gunzipSync(fs.readFileSync(file)).length : size;
    const native = nativeSeconds(file);
    for (const mode of ['cold', 'warm']) {
      const t = await measure(browser, file, mode);
      const first = (t.firstTable - t.start) / 1000;
      const workers = t.parallel ? `${t.parallel.workers} (${t.parallel.adopted}/${t.parallel.parts})` : '1';
      console.log([path.basename(file), mode, workers, (size / 1e6).toFixed(1), (json / 1e6).toFixed(1), s(t.parsed - t.start), s(t.analysed - t.start), first.toFixed(3),
        (json / 1e6 / first).toFixed(0), (size / 1e6 / first).toFixed(0), (t.memory / 2 ** 20).toFixed(0),
        t.warmUpMs == null ? '—' : s(t.warmUpMs),
        native === null ? '—' : native.toFixed(3), native === null ? '—' : (first / native).toFixed(2)].join(' | ')
        + (t.frames ? ` | timeline: ${t.frames.intervals.length} frame intervals while zooming/panning p50 ${percentile(t.frames.intervals, 50).toFixed(1)} ms, p95 ${percentile(t.frames.intervals, 95).toFixed(1)} ms; input to fresh buckets (${t.frames.fresh.length}) p50 ${percentile(t.frames.fresh, 50).toFixed(1)} ms, p95 ${percentile(t.frames.fresh, 95).toFixed(1)} ms` : '')
        + (t.parallel?.ms ? ` | worker ms ${JSON.stringify(Object.fromEntries(Object.entries(t.parallel.ms).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v) : v])))}` : ''));
    }
  }
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}

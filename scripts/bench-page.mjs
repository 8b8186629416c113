// Times the page in Chromium: from picking a trace to the first table on screen, and the wasm
// memory high-water mark, next to the native CLI on the same file. Prints figures; asserts nothing.
// "workers (parts kept)" is how many workers parsed the file (a large plain-JSON file is cut into
// ranges for the page's helper workers) and how many of their parts were adopted; "worker ms" shows
// where the main worker's and each helper's time went. Each trace is timed twice: "cold" (picked the instant the page has loaded, while the worker still
// warms the core up) and "warm" (picked after the worker reports it has warmed up).
//
//   node scripts/bench-page.mjs [TRACE ...] [--big-mb N [--big-file PATH]] [--run RANKS [--run-mb MB]]
//
// Default traces: fixtures/llama_dense_eager.pt.trace.json.gz and its plain-JSON form. With
// --big-mb N, also a ~N MB plain-JSON trace built from it by repeating its events shifted in time
// (written to a temp file, or with --big-file to PATH, kept and reused by later runs). Run
// `npm run build` and `cargo build --release` first. TRACEPRISM_DIST=DIR times another build of the
// page (e.g. a copy of dist/ from before a change); BENCH_CONSOLE=TEXT prints the page's and its
// workers' console messages that contain TEXT (for timing printed while investigating);
// BENCH_GZIP_CRC=auto|on|off sets the page's gzip CRC-32 setting.
// BENCH_CPU=1 also prints the CPU time every Chromium thread spent from picking the file to the
// first table, summed by thread name (Linux /proc): where reading the file costs, beside parsing
// (BENCH_CPU=tid: each worker thread apart). A thread that ended before the first table (a helper
// recycled after its ranges) is not counted.
// BENCH_GZIP_PIPELINE=always|never overrides whether a .gz is inflated by a helper worker (by
// default only with 3 cores or more), shown as "2 (parts parsed by the helper and kept/blocks)".
// With --run RANKS, also a run of that many ranks of about --run-mb MB each (default 100), made by
// `traceprism synth-ranks` from the vLLM TP4 trace repeated to that size: the time from picking the
// rank files to the analysed run in the page, next to `traceprism ranks` on the same files.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { ROOT, launch, serve, pickFile, waitReady, staleFrontEnd } from '../tests/browser/browser.mjs';
import { buildBigTrace } from './big-trace.mjs';
import { threadCpu } from './chromium-cpu.mjs';

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
let runRanks = 0, runMb = 100;
const ri = args.indexOf('--run');
if (ri >= 0) {
  runRanks = Number(args[ri + 1]);
  args.splice(ri, 2);
}
const rm = args.indexOf('--run-mb');
if (rm >= 0) {
  runMb = Number(args[rm + 1]);
  args.splice(rm, 2);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'traceprism-bench-'));
const base = path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz');
const traces = args.length ? args : [base];
if (!args.length) {
  const plain = path.join(tmp, 'llama_dense_eager.pt.trace.json');
  fs.writeFileSync(plain, zlib.gunzipSync(fs.readFileSync(base)));
  traces.push(plain);
}
if (bigMb > 0) traces.push(bigFile && fs.existsSync(bigFile) ? bigFile : buildBigTrace(base, bigMb, bigFile ?? path.join(tmp, `big_${bigMb}mb.json`)));


const cli = path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'release/traceprism');
/**
 * Wall time of `traceprism summary FILE --json` (read + analyse + summary), the best of three runs
 * (one run measured 0.77 s or 1.49 s on the same 1 GB file as the page cache came and went), or
 * null without a CLI build.
 */
function nativeSeconds(file) {
  if (!fs.existsSync(cli)) return null;
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const t0 = process.hrtime.bigint();
    execFileSync(cli, ['summary', file, '--json'], { stdio: ['ignore', 'ignore', 'inherit'], maxBuffer: 1 << 30 });
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return best;
}

/** CPU seconds spent between two `threadCpu` snapshots, summed by thread name, largest first. */
function cpuSpent(before, after) {
  const by = new Map();
  for (const [id, t] of after) {
    const d = t.seconds - (before.get(id)?.seconds ?? 0);
    if (d > 0) by.set(t.key, (by.get(t.key) ?? 0) + d);
  }
  return [...by].sort((a, b) => b[1] - a[1]).filter(([, v]) => v >= 0.02).map(([k, v]) => `${k} ${v.toFixed(2)}`).join(', ');
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
    if (process.env.BENCH_GZIP_CRC) await page.selectOption('#crc-input', process.env.BENCH_GZIP_CRC);
    const cpu0 = process.env.BENCH_CPU ? threadCpu(process.env.BENCH_CPU === 'tid') : null;
    await pickFile(page, file);
    await waitReady(page, 30 * 60_000);
    await page.waitForFunction(() => window.traceprismTiming.firstTable !== null, null, { timeout: 30 * 60_000 });
    const cpu = cpu0 ? cpuSpent(cpu0, threadCpu(process.env.BENCH_CPU === 'tid')) : null;
    const timing = await page.evaluate(() => ({ ...window.traceprismTiming }));
    if (cpu) timing.cpu = cpu;
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

/** The rank files of a run of `ranks` ranks of about `mb` MB each (see the header). */
function buildRun(ranks, mb) {
  const one = buildBigTrace(path.join(ROOT, 'fixtures/vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz'), mb, path.join(tmp, `vllm_${mb}mb.json`));
  const dir = path.join(tmp, 'run');
  execFileSync(cli, ['synth-ranks', one, '--ranks', String(ranks), '--straggler', '1', '--out', dir], { stdio: ['ignore', 'ignore', 'inherit'] });
  fs.rmSync(one);
  return Array.from({ length: ranks }, (_, r) => path.join(dir, `rank${r}.json`));
}

/** Picks the rank files of a run in a warm page; returns the page's timing marks. */
async function measureRun(browser, files) {
  const page = await browser.context.newPage();
  try {
    await page.goto(server.url, { waitUntil: 'load' });
    await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
    await page.setInputFiles('#run-files-input', files);
    await page.waitForFunction(() => window.traceprismTiming.runReady, null, { timeout: 30 * 60_000 });
    return await page.evaluate(() => ({ ...window.traceprismTiming }));
  } finally {
    await page.close();
  }
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
        + (t.cpu ? ` | CPU s ${t.cpu}` : '')
        + (t.parallel?.ms ? ` | worker ms ${JSON.stringify(Object.fromEntries(Object.entries(t.parallel.ms).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v) : v])))}` : ''));
    }
  }
  if (runRanks > 0) {
    const files = buildRun(runRanks, runMb);
    const bytes = files.reduce((t, f) => t + fs.statSync(f).size, 0);
    const t0 = process.hrtime.bigint();
    execFileSync(cli, ['ranks', ...files, '--json'], { stdio: ['ignore', 'ignore', 'inherit'], maxBuffer: 1 << 30 });
    const native = Number(process.hrtime.bigint() - t0) / 1e9;
    const t = await measureRun(browser, files);
    const page = (t.runReady - t.runStart) / 1000;
    console.log(`run: ${files.length} ranks, ${(bytes / 1e6).toFixed(0)} MB of JSON in all: page ${page.toFixed(3)} s from picking the files to the analysed run (${(bytes / 1e6 / page).toFixed(0)} MB/s; target 8 × 100 MB ≤ 3 s on 4 cores), native \`traceprism ranks\` ${native.toFixed(3)} s, page/native ${(page / native).toFixed(2)}, wasm memory ${(t.memory / 2 ** 20).toFixed(0)} MB; this machine has ${os.cpus().length} cores`);
  }
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(tmp, { recursive: true, force: true });
}

// What a page can at best do with a large plain-JSON trace on this machine, measured piece by
// piece in the same Chromium the page runs in: the CPU it costs just to read a File's bytes into a
// worker (no parsing), the wasm core's own speed on bytes already in memory (one warmed worker),
// and the native CLI on the same file. Prints the figures and the lower bound they set for
// page/native. Asserts nothing.
//
//   node scripts/page-floor.mjs TRACE [--runs N]
//
// Needs `npm run build` (the wasm in dist/pkg) and `cargo build --release`. Linux only (the CPU
// time of Chromium's processes comes from /proc).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT, DIST, launch } from '../tests/browser/browser.mjs';
import { startServer } from './serve.mjs';
import { processCpu } from './chromium-cpu.mjs';

const args = process.argv.slice(2);
const ri = args.indexOf('--runs');
const runs = ri >= 0 ? Number(args.splice(ri, 2)[1]) : 3;
const file = args[0];
if (!file) {
  console.error('usage: node scripts/page-floor.mjs TRACE [--runs N]');
  process.exit(2);
}
const size = fs.statSync(file).size;
const cli = path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'release/traceprism');

// A scratch page: a file input, a worker that only reads, a worker that parses bytes in memory.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceprism-floor-'));
fs.cpSync(path.join(DIST, 'pkg'), path.join(dir, 'pkg'), { recursive: true });
fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><input type="file" id="f">');
// Reads file[start, end) as the page's slice readers do (a BYOB stream into 16 MB buffers).
fs.writeFileSync(path.join(dir, 'read.js'), `onmessage = async (e) => {
  const { file, start, end } = e.data;
  const t0 = performance.now();
  const reader = file.slice(start, end).stream().getReader({ mode: 'byob' });
  let buffer = new ArrayBuffer(16 << 20), n = 0;
  for (;;) { const { value, done } = await reader.read(new Uint8Array(buffer)); if (done) break; n += value.length; buffer = value.buffer; }
  postMessage({ ms: performance.now() - t0, n });
};`);
// Warms the core up as the page's worker does, reads its range into memory, then times the push
// of those bytes into an Analyzer and its finish.
fs.writeFileSync(path.join(dir, 'parse.js'), `import init, { Analyzer, warm_up } from './pkg/traceprism.js';
const ready = init().then(() => { for (const steps of [3, 40, 40, 40, 40, 40]) warm_up(steps); });
onmessage = async (e) => {
  await ready;
  const { file } = e.data;
  const fr = new FileReaderSync();
  const slices = [];
  for (let at = 0; at < file.size; at += 16 << 20) slices.push(new Uint8Array(fr.readAsArrayBuffer(file.slice(at, Math.min(file.size, at + (16 << 20))))));
  const a = new Analyzer('{}');
  let t = performance.now();
  for (const s of slices) a.push(s);
  const push = performance.now() - t;
  t = performance.now();
  a.finish();
  postMessage({ push, finish: performance.now() - t });
  a.free();
};`);

function nativeSeconds(extra) {
  const t0 = process.hrtime.bigint();
  execFileSync(cli, ['summary', file, '--json', ...extra], { stdio: ['ignore', 'ignore', 'inherit'], maxBuffer: 1 << 30 });
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)];
const server = await startServer({ dir, base: '/floor/' });
const browser = await launch();
try {
  const page = await browser.context.newPage();
  await page.goto(server.url);
  await page.setInputFiles('#f', file);
  const read = [], readCpu = [], push = [], finish = [], native1 = [], native = [];
  for (let k = 0; k < runs; k++) {
    // Read only: two workers, a half each (as the page's two slice readers on 2 cores).
    const c0 = processCpu();
    const t = await page.evaluate(() => new Promise((resolve) => {
      const file = /** @type {HTMLInputElement} */ (document.getElementById('f')).files[0];
      const t0 = performance.now();
      let left = 2;
      for (let r = 0; r < 2; r++) {
        const w = new Worker('./read.js');
        w.onmessage = () => { w.terminate(); if (--left === 0) resolve(performance.now() - t0); };
        w.postMessage({ file, start: Math.floor((file.size * r) / 2), end: Math.floor((file.size * (r + 1)) / 2) });
      }
    }));
    readCpu.push(processCpu() - c0);
    read.push(t / 1000);
    // The core alone on bytes in memory, one warmed worker.
    const p = await page.evaluate(() => new Promise((resolve) => {
      const w = new Worker('./parse.js', { type: 'module' });
      w.onmessage = (e) => { w.terminate(); resolve(e.data); };
      w.postMessage({ file: /** @type {HTMLInputElement} */ (document.getElementById('f')).files[0] });
    }));
    push.push(p.push / 1000);
    finish.push(p.finish / 1000);
    if (fs.existsSync(cli)) {
      native1.push(nativeSeconds(['--threads', '1']));
      native.push(nativeSeconds([]));
    }
  }
  const f = (v) => `${v.map((x) => x.toFixed(2)).join(' / ')} (median ${median(v).toFixed(2)})`;
  console.log(`${path.basename(file)}: ${(size / 1e6).toFixed(0)} MB, ${os.cpus().length} cores, ${runs} runs`);
  console.log(`read only (2 workers, BYOB): wall s ${f(read)}; Chromium CPU s ${f(readCpu)}`);
  console.log(`wasm core, one warmed worker, bytes in memory: push s ${f(push)}; finish s ${f(finish)}`);
  if (native.length) {
    console.log(`native: --threads 1 s ${f(native1)}; default threads s ${f(native)}`);
    console.log(`wasm/native on one core: ${((median(push) + median(finish)) / median(native1)).toFixed(2)}`);
    // The best a page can do on this machine's cores: the reading CPU and the push spread over all
    // cores with no overhead at all (no copies between workers, no adoption), then the finish.
    const cores = os.cpus().length;
    const floor = (median(readCpu) + median(push)) / cores + median(finish);
    console.log(`page floor on ${cores} cores ((read CPU + push) / cores + finish): ${floor.toFixed(2)} s = ${(floor / median(native)).toFixed(2)} × native (${median(native).toFixed(2)} s)`);
  }
} finally {
  await browser.close();
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

// Memory of the page's folder watch: N windows of one ~M MB trace (a real trace repeated, see
// big-trace.mjs) land in a watched folder of the origin-private file system one after another (the
// previous one deleted, as an origin's quota wants); after each window the watch worker's core
// memory and the page's JS heap are printed. The watch keeps each window as its digest only, so
// memory must stay at what one trace needs. Usage: node scripts/watch-memory.mjs [--windows N] [--mb M]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, launch, serve } from '../tests/browser/browser.mjs';
import { buildBigTrace } from './big-trace.mjs';

const arg = (name, def) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const windows = arg('--windows', 100);
const mb = arg('--mb', 100);
const file = path.join(os.tmpdir(), `traceprism-watch-${mb}mb.json`);
if (!fs.existsSync(file)) buildBigTrace(path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz'), mb, file);
const size = fs.statSync(file).size;

const server = await serve();
const browser = await launch();
const { page } = await browser.newPage();
await page.goto(server.url + '#watch');
await page.click('#watch-button');
await page.waitForSelector('[data-view="watch"][data-rendered] [data-testid="watch-status"]');
// The trace into the page once (a File from an input), copied into OPFS as the template.
await page.evaluate(() => {
  const input = document.createElement('input');
  input.type = 'file';
  input.id = 'bench-input';
  input.hidden = true;
  document.body.append(input);
});
await page.setInputFiles('#bench-input', file);
await page.evaluate(async () => {
  const root = await navigator.storage.getDirectory();
  await root.removeEntry('watched', { recursive: true }).catch(() => {});
  const dir = await root.getDirectoryHandle('watched', { create: true });
  const w = /** @type {any} */ (window);
  w.benchFile = /** @type {HTMLInputElement} */ (document.getElementById('bench-input')).files[0];
  w.benchDir = dir;
  w.traceprismWatch(dir, 300);
});
console.log(`${windows} windows of ${(size / 1e6).toFixed(0)} MB each`);
console.log('window  seconds  core MB  JS heap MB');
let maxCore = 0, firstCore = 0;
const t0 = Date.now();
for (let k = 0; k < windows; k++) {
  const t = Date.now();
  await page.evaluate(async (k) => {
    const w = /** @type {any} */ (window);
    const handle = await w.benchDir.getFileHandle(`w${String(k).padStart(3, '0')}.json`, { create: true });
    const out = await handle.createWritable();
    await out.write(w.benchFile);
    await out.close();
    if (k > 0) await w.benchDir.removeEntry(`w${String(k - 1).padStart(3, '0')}.json`);
  }, k);
  await page.waitForFunction((n) => Number(document.querySelector('[data-testid="watch-status"]')?.getAttribute('data-windows')) === n, k + 1, { timeout: 600_000 });
  const core = await page.evaluate(() => /** @type {any} */ (window).traceprismWatchMemory());
  const heap = await page.evaluate(() => /** @type {any} */ (performance).memory?.usedJSHeapSize ?? null);
  const coreMb = (core || 0) / 1e6;
  if (k === 0) firstCore = coreMb;
  maxCore = Math.max(maxCore, coreMb);
  if (k < 3 || k % 10 === 9 || k === windows - 1) {
    console.log(`${String(k).padStart(6)}  ${((Date.now() - t) / 1000).toFixed(1).padStart(7)}  ${coreMb.toFixed(0).padStart(7)}  ${heap === null ? '—' : (heap / 1e6).toFixed(1).padStart(10)}`);
  }
}
console.log(`core memory: ${firstCore.toFixed(0)} MB after the first window, at most ${maxCore.toFixed(0)} MB over ${windows} windows (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
await browser.close();
await server.close();

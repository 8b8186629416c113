// Watch a folder in the page. `showDirectoryPicker` cannot be driven by the test browser, so the
// test hands the watch a directory of the origin-private file system (the same handle API) and
// writes trace files into it one after another: one whole, one in two halves (two writable
// streams: a stream shows its bytes only at close, so the half is visible alone for a while), a
// temporary one, and deletes the first. The trend grows by exactly one window per complete file;
// a window opens its trace in every view. Expected counts come from the CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { useBrowser } from './harness.mjs';
import { ROOT, waitReady, watchRequests } from './browser.mjs';
import { cli } from './cli-match.mjs';

const SMALL = path.join(ROOT, 'fixtures/llama_small_stack.pt.trace.json.gz');
const MOE = path.join(ROOT, 'fixtures/moe_eager.pt.trace.json.gz');
const env = useBrowser('traceprism-watch-');

/** Windows the page shows. */
const windows = (page) => page.getAttribute('[data-testid="watch-status"]', 'data-windows').then(Number);

test('a watched folder: one window per complete file, a half-written file read once, a window opens its trace', async () => {
  const moeSummary = JSON.parse(cli('summary', MOE, '--json').toString());
  const { page, problems } = await env.browser.newPage();
  const { leaks } = watchRequests(page, env.server.url);
  await page.goto(env.server.url + '#watch', { waitUntil: 'networkidle' });
  await page.click('#watch-button');
  await page.waitForSelector('[data-view="watch"][data-rendered] [data-testid="watch-status"]');
  // The folder: a fresh directory of the origin-private file system, watched every 200 ms.
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    await root.removeEntry('watched', { recursive: true }).catch(() => {});
    const dir = await root.getDirectoryHandle('watched', { create: true });
    /** @type {any} */ (window).watchedDir = dir;
    /** @type {any} */ (window).traceprismWatch(dir, 200);
  });
  const write = (name, b64, { keep = false, at = 0 } = {}) => page.evaluate(async ({ name, b64, keep, at }) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const file = await /** @type {any} */ (window).watchedDir.getFileHandle(name, { create: true });
    const w = await file.createWritable({ keepExistingData: keep });
    await w.seek(at);
    await w.write(bytes);
    await w.close();
  }, { name, b64, keep, at });

  // 1. A whole file.
  await write('w0.json.gz', fs.readFileSync(SMALL).toString('base64'));
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="watch-status"]')?.getAttribute('data-windows')) === 1, null, { timeout: 60_000 });

  // 2. A file in two halves, the first alone for 1.5 s (seven polls).
  const moe = fs.readFileSync(MOE);
  const half = Math.floor(moe.length / 2);
  await write('w1.json.gz', moe.subarray(0, half).toString('base64'));
  await page.waitForTimeout(1500);
  assert.equal(await windows(page), 1, 'a half-written file is not a window');
  await write('w1.json.gz', moe.subarray(half).toString('base64'), { keep: true, at: half });
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="watch-status"]')?.getAttribute('data-windows')) === 2, null, { timeout: 60_000 });

  // 3. A temporary file and a deletion: no window, a note.
  await write('w2.json.gz.crswap', fs.readFileSync(SMALL).toString('base64'));
  await page.evaluate(() => /** @type {any} */ (window).watchedDir.removeEntry('w0.json.gz'));
  await page.waitForSelector('text=w0.json.gz was deleted', { timeout: 10_000 });
  assert.equal(await windows(page), 2);
  assert.equal(await page.getAttribute('[data-testid="watch-trend"]', 'data-windows'), '2');
  const rows = await page.$$eval('[data-testid="watch-windows"] tbody tr', (trs) => trs.map((tr) => tr.textContent));
  assert.equal(rows.length, 2);
  assert.match(rows[1], /w1\.json\.gz/);
  assert.match(rows[1], /24 decode/, 'the half-written file was read whole, once');

  // A window opens its trace in every view.
  await page.click('[data-testid="watch-windows"] tbody tr[data-window="1"]');
  await waitReady(page);
  await page.click('#tabs a[data-view="overview"]');
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  assert.equal(Number(await page.getAttribute('[data-fact="kernels"]', 'data-value')), moeSummary.counts.kernels);
  assert.deepEqual(leaks, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a watched folder of rank files: one window per step, with the CLI\'s straggler', async () => {
  // Three ranks of one step, made by the CLI from the real vLLM trace (rank 1 late on its host),
  // gzipped as a profiler would write them.
  const made = path.join(env.tmp, 'ranks');
  cli('synth-ranks', path.join(ROOT, 'fixtures/vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz'), '--ranks', '3', '--straggler', '1', '--every', '40', '--delay-us', '300', '--late', 'host', '--out', made);
  const files = [0, 1, 2].map((r) => path.join(made, `rank${r}.json`));
  const want = JSON.parse(cli('ranks', ...files, '--json').toString()).finding;
  assert.match(want, /^rank 1 arrives last/);
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#watch', { waitUntil: 'networkidle' });
  await page.click('#watch-button');
  await page.waitForSelector('[data-view="watch"][data-rendered] [data-testid="watch-status"]');
  await page.evaluate(async () => {
    const root = await navigator.storage.getDirectory();
    await root.removeEntry('ranks', { recursive: true }).catch(() => {});
    const dir = await root.getDirectoryHandle('ranks', { create: true });
    /** @type {any} */ (window).rankDir = dir;
    /** @type {any} */ (window).traceprismWatch(dir, 200, true);
  });
  // The ranks' files appear together, as a profiler's ranks write them at the end of one step
  // (the watch cannot know how many ranks to wait for: a rank whose file appears only after the
  // others have stood still for two looks is a window of its own). Their bytes are decoded first,
  // then the three files written back to back.
  const ranks = files.map((f, r) => ({ name: `step7_rank${r}.json.gz`, b64: zlib.gzipSync(fs.readFileSync(f), { level: 1 }).toString('base64') }));
  await page.evaluate(async (ranks) => {
    const decoded = ranks.map(({ name, b64 }) => ({ name, bytes: Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)) }));
    for (const { name, bytes } of decoded) {
      const handle = await /** @type {any} */ (window).rankDir.getFileHandle(name, { create: true });
      const w = await handle.createWritable();
      await w.write(bytes);
      await w.close();
    }
  }, ranks);
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="watch-status"]')?.getAttribute('data-windows')) === 1, null, { timeout: 120_000 });
  await page.waitForTimeout(1000);
  assert.equal(await windows(page), 1, 'the three ranks of one step are one window');
  assert.match(await page.textContent('[data-testid="watch-windows"] tbody tr'), /step7_rank\*\.json\.gz \(3 ranks\)/);
  assert.equal(await page.textContent('[data-testid="watch-windows"] tbody tr td[data-straggler]'), want);
  assert.deepEqual(problems, []);
  await page.close();
});

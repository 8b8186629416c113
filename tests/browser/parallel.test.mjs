// Parallel parsing of a large plain-JSON trace in the page: the main worker and its helper workers
// each parse a byte range; the parts are adopted in order. Expected values come from the native
// CLI run on the same file, never from the page itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { useBrowser } from './harness.mjs';
import { ROOT, dropFile, pickFile, waitReady } from './browser.mjs';
import { cli, cliCsvs, cliError, displayed, assertPageShowsError, assertSameAsCli } from './cli-match.mjs';

const FIXTURE = path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz');
const EXAMPLE = path.join(ROOT, 'fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz');
/** The fixture as plain JSON (58 MB, written by `before`): above the page's threshold for parsing in ranges. */
const plainOf = (dir) => path.join(dir, 'llama_dense_eager.pt.trace.json');
const env = useBrowser('traceprism-parallel-', (dir) => fs.writeFileSync(plainOf(dir), zlib.gunzipSync(fs.readFileSync(FIXTURE))));
const tmp = env.tmp;
const PLAIN = plainOf(tmp);

/** Waits until the worker and its helpers (started with the page) say they have warmed up. */
async function warm(page) {
  await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
}

test('a dropped plain-JSON trace is parsed by several workers and its tables equal the CLI', async () => {
  const csvs = cliCsvs(tmp, 'export', PLAIN);
  const summary = JSON.parse(cli('summary', PLAIN, '--json').toString());
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#kernels', { waitUntil: 'networkidle' });
  const cores = await page.evaluate(() => navigator.hardwareConcurrency || 2);
  await warm(page);
  await dropFile(page, PLAIN);
  await waitReady(page, 300_000);
  await page.waitForSelector('[data-view="kernels"][data-rendered]', { timeout: 60_000 });
  const parallel = await page.evaluate(() => window.traceprismTiming.parallel);
  if (cores >= 2) {
    assert.ok(parallel, 'the worker read the file in ranges');
    assert.equal(parallel.workers, Math.min(cores, 4), 'one worker per core, at most 4');
    assert.ok(parallel.parts >= parallel.workers - 1, `every helper parsed a range: ${JSON.stringify(parallel)}`);
    assert.ok(parallel.adopted >= 1, `parts adopted: ${JSON.stringify(parallel)}`);
  }
  const names = await page.evaluate(() => [...document.querySelectorAll('table.data')].map((t) => t.dataset.table));
  assert.ok(names.includes('kernels'));
  for (const name of names) assertSameAsCli(await displayed(page, name), csvs.get(name), name);
  await page.goto(env.server.url + '#overview');
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  const fact = async (k) => Number(await page.getAttribute(`[data-fact="${k}"]`, 'data-value'));
  assert.equal(await fact('kernels'), summary.counts.kernels);
  assert.equal(await fact('events'), summary.input.events);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a trace dropped the moment the page opens is read by as many workers as on a warm page', async () => {
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview', { waitUntil: 'load' });
  const cores = await page.evaluate(() => navigator.hardwareConcurrency || 2);
  const warmBefore = await page.evaluate(() => window.traceprismTiming.warm);
  await dropFile(page, PLAIN);
  await waitReady(page, 300_000);
  const parallel = await page.evaluate(() => window.traceprismTiming.parallel);
  if (cores >= 2) {
    assert.equal(warmBefore, null, 'dropped before the warm-up ended');
    assert.ok(parallel, 'the worker read the cold drop in ranges');
    assert.equal(parallel.workers, Math.min(cores, 4), `one worker per core: ${JSON.stringify(parallel)}`);
  }
  const summary = JSON.parse(cli('summary', PLAIN, '--json').toString());
  const fact = async (k) => Number(await page.getAttribute(`[data-fact="${k}"]`, 'data-value'));
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  assert.equal(await fact('kernels'), summary.counts.kernels);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a syntax error inside a helper\'s range is reported with the CLI\'s byte offset; the next file loads', async () => {
  // Break the JSON three quarters of the way in (a range a helper parses): `"ts": ` → `"ts"; `.
  const text = fs.readFileSync(PLAIN);
  const at = text.indexOf('"ts": ', Math.floor(text.length * 0.75));
  const bad = Buffer.from(text);
  bad[at + 4] = ';'.charCodeAt(0);
  const file = path.join(tmp, 'broken.json');
  fs.writeFileSync(file, bad);
  const expected = cliError(file);
  const m = expected.match(/(.*\(event \d+, byte (\d+)\))/);
  assert.ok(m, `CLI error: ${expected}`);
  assert.ok(Number(m[2]) > text.length / 2, 'the error lies beyond the main worker\'s range');
  const { page, problems } = await assertPageShowsError(env, warm, file, m[1]);
  // A second file replaces the failed one cleanly.
  await pickFile(page, EXAMPLE);
  await waitReady(page);
  assert.equal(await page.isVisible('#error'), false);
  assert.deepEqual(problems, []);
  await page.close();
});

test('two large plain-JSON files in a row: the second replaces the first', async () => {
  // The same events as a bare array, so the second load differs in form.
  const text = fs.readFileSync(PLAIN, 'utf8');
  const start = text.indexOf('"traceEvents": [') + '"traceEvents": '.length;
  const bare = path.join(tmp, 'bare.json');
  fs.writeFileSync(bare, text.slice(start, text.lastIndexOf(']') + 1));
  const summary = JSON.parse(cli('summary', bare, '--json').toString());
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await warm(page);
  await pickFile(page, PLAIN);
  await waitReady(page, 300_000);
  await pickFile(page, bare);
  await page.waitForFunction(() => document.body.dataset.state === 'loading' || document.querySelector('#file-name').textContent.startsWith('bare.json'));
  await waitReady(page, 300_000);
  assert.match(await page.textContent('#file-name'), /^bare\.json/);
  if ((await page.evaluate(() => navigator.hardwareConcurrency || 2)) >= 2) {
    assert.ok((await page.evaluate(() => window.traceprismTiming.parallel))?.adopted >= 1, 'bare array parsed in ranges');
  }
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  assert.equal(Number(await page.getAttribute('[data-fact="events"]', 'data-value')), summary.input.events);
  assert.equal(Number(await page.getAttribute('[data-fact="kernels"]', 'data-value')), summary.counts.kernels);
  assert.deepEqual(problems, []);
  await page.close();
});

// A .json.gz trace in the page: a helper worker inflates it while the main worker parses the text
// (parallel.js `readGzip`). Expected values come from the native CLI run on the same file, never
// from the page itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { useBrowser } from './harness.mjs';
import { ROOT, dropFile, pickFile, waitReady } from './browser.mjs';
import { assertExportAllSameAsCli, assertPageShowsError, cli, cliCsvs, cliError } from './cli-match.mjs';

const FIXTURE = path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz');
const EXAMPLE = path.join(ROOT, 'fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz');
const env = useBrowser('traceprism-gzip-');
const tmp = env.tmp;

/**
 * Waits until the worker and its helpers have warmed up (a file arriving earlier is read by the
 * main worker alone), and asks for the gzip pipeline whatever the core count (by default it needs
 * 3 cores; this machine may have 2).
 */
async function warm(page) {
  await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
  await page.evaluate(() => { window.traceprismGzipPipeline = 'always'; });
}

/** Picks `file` in a fresh, warm page and asserts the page's error includes the CLI's; returns the page. */
async function assertPageShowsCliError(file) {
  const expected = cliError(file);
  return { ...(await assertPageShowsError(env, warm, file, expected)), expected };
}

test('a dropped .json.gz is inflated by a helper while the main worker parses; its CSV exports equal the CLI', async () => {
  const csvs = cliCsvs(tmp, 'export', FIXTURE);
  const summary = JSON.parse(cli('summary', FIXTURE, '--json').toString());
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#kernels', { waitUntil: 'networkidle' });
  const cores = await page.evaluate(() => navigator.hardwareConcurrency || 2);
  await warm(page);
  await dropFile(page, FIXTURE);
  await waitReady(page, 300_000);
  const parallel = await page.evaluate(() => window.traceprismTiming.parallel);
  if (cores >= 2) {
    assert.ok(parallel, 'the worker read the file itself');
    assert.equal(parallel.workers, 2, `one worker inflates, one parses: ${JSON.stringify(parallel)}`);
    // The fixture's text (its size from node's own gunzip) in 4 MiB blocks.
    const blocks = Math.ceil(zlib.gunzipSync(fs.readFileSync(FIXTURE)).length / (4 << 20));
    assert.ok(parallel.inflated >= blocks, `blocks inflated by the helper: ${JSON.stringify(parallel)}`);
  }
  await page.waitForSelector('[data-view="kernels"][data-rendered]', { timeout: 60_000 });
  await assertExportAllSameAsCli(page, csvs);
  await page.goto(env.server.url + '#overview');
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  assert.equal(Number(await page.getAttribute('[data-fact="events"]', 'data-value')), summary.input.events);
  assert.deepEqual(problems, []);
  await page.close();
});

// A truncated .json.gz: tests/browser/truncation.test.mjs.

test('a corrupt .json.gz shows the core\'s error, as the CLI', async () => {
  // Garbage over a stretch of the compressed stream, a third of the way in.
  const bytes = Buffer.from(fs.readFileSync(FIXTURE));
  const at = Math.floor(bytes.length / 3);
  for (let i = 0; i < 4096; i++) bytes[at + i] = (i * 7919) & 0xff;
  const file = path.join(tmp, 'corrupt.json.gz');
  fs.writeFileSync(file, bytes);
  const { page, problems } = await assertPageShowsCliError(file);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a .json.gz whose CRC-32 is wrong says so in the page as the CLI does, through either reader, unless the setting is off', async () => {
  // The same text under a trailer whose CRC-32 is off by one bit: it inflates whole, only the
  // CRC tells (the CLI analyses the text with a warning, as for any wrong last trailer).
  // 4.2 MB: above the size from which a helper inflates it (the 'always' pass), read by the
  // main worker's own reader otherwise.
  const bytes = Buffer.from(fs.readFileSync(FIXTURE));
  bytes[bytes.length - 8] ^= 1;
  const file = path.join(tmp, 'bad-crc.json.gz');
  fs.writeFileSync(file, bytes);
  const cliWarning = cli('summary', file).toString().split('\n').find((l) => l.includes('CRC-32'));
  assert.ok(cliWarning, 'the CLI names the CRC');
  const expected = cliWarning.replace(/^WARNING\s+/, '');
  for (const [pipeline, crc] of [['never', 'auto'], ['always', 'auto'], ['never', 'off']]) {
    const { page, problems } = await env.browser.newPage();
    await page.goto(env.server.url + '#overview');
    await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
    await page.evaluate((m) => { window.traceprismGzipPipeline = m; }, pipeline);
    await page.selectOption('[data-testid="crc-input"]', crc);
    await pickFile(page, file);
    await waitReady(page, 120_000);
    const parallel = await page.evaluate(() => window.traceprismTiming.parallel);
    assert.equal(Boolean(parallel && parallel.inflated), pipeline === 'always', `${pipeline}: ${JSON.stringify(parallel)}`);
    const warning = (await page.isVisible('[data-testid="input-warning"]')) ? await page.textContent('[data-testid="input-warning"]') : '';
    if (crc === 'off') assert.ok(!warning.includes('CRC-32'), `setting off: ${warning}`);
    else assert.ok(warning.includes(expected), `${pipeline} pipeline: page says ${JSON.stringify(warning)}, CLI says ${JSON.stringify(expected)}`);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

// Traces cut short in the page: analysed up to their last complete event with the same warning as
// the CLI (the banner shows the core's message), through the gzip pipeline (a helper inflates) and
// the multi-worker plain-JSON path; with the page's "truncated trace is an error" setting, the
// CLI's --strict error. Expected values come from the native CLI run on the same file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { execFileSync } from 'node:child_process';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady } from './browser.mjs';
import { CLI, cli } from './cli-match.mjs';

const FIXTURE = path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz');
const EXAMPLE = path.join(ROOT, 'fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz');
const env = useBrowser('traceprism-truncation-');

/** Waits for the warm-up and asks for the gzip pipeline whatever the core count. */
async function warm(page) {
  await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
  await page.evaluate(() => { window.traceprismGzipPipeline = 'always'; });
}

/** Opens `file` in a fresh warm page and checks the page against `traceprism summary --json`. */
async function assertOpensWithTheCliWarning(file) {
  const summary = JSON.parse(cli('summary', file, '--json').toString());
  assert.ok(summary.input.truncation, 'the CLI reads it as truncated');
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await warm(page);
  await pickFile(page, file);
  await waitReady(page, 300_000);
  assert.equal(await page.isVisible('[data-testid="input-warning"]'), true, 'the banner is shown');
  const banner = await page.textContent('[data-testid="input-warning"]');
  assert.equal(banner, `Warning: ${summary.input.truncation.message}`);
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  assert.equal(Number(await page.getAttribute('[data-fact="events"]', 'data-value')), summary.input.events);
  assert.equal(Number(await page.getAttribute('[data-fact="kernels"]', 'data-value')), summary.counts.kernels);
  assert.equal(Number(await page.getAttribute('[data-fact="phase"]', 'data-value')), summary.passes);
  if (summary.incomplete_passes) {
    assert.match(await page.textContent('[data-fact="phase"]'), /incomplete/);
  }
  return { page, problems, summary };
}

test('a .json.gz cut short opens with the CLI\'s warning; the strict setting gives the CLI\'s --strict error; the next file loads', async () => {
  const bytes = fs.readFileSync(FIXTURE);
  const file = path.join(env.tmp, 'cut.json.gz');
  fs.writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  const { page, problems, summary } = await assertOpensWithTheCliWarning(file);
  assert.match(summary.input.truncation.reason, /gzip stream ends early/);
  // Strict: the CLI's error, then a whole trace loads and the banner goes.
  let expected = '';
  try {
    execFileSync(CLI, ['summary', file, '--strict'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    expected = err.stderr.toString().match(/error: (.*)/)[1].trim();
  }
  assert.match(expected, /strict mode/);
  await page.check('#strict-input');
  await pickFile(page, file);
  await page.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 300_000 });
  const message = await page.textContent('#error');
  assert.ok(message.includes(expected), `page says ${JSON.stringify(message)}, CLI says ${JSON.stringify(expected)}`);
  await page.uncheck('#strict-input');
  await pickFile(page, EXAMPLE);
  await waitReady(page);
  assert.equal(await page.isVisible('#error'), false);
  assert.equal(await page.isVisible('[data-testid="input-warning"]'), false);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a plain trace cut short, read by several workers, opens with the CLI\'s warning', async () => {
  const text = zlib.gunzipSync(fs.readFileSync(FIXTURE));
  const file = path.join(env.tmp, 'cut.json');
  // 70% of 58 MB: above the size split among workers, cut inside the last range.
  fs.writeFileSync(file, text.subarray(0, Math.floor(text.length * 0.7)));
  const { page, problems, summary } = await assertOpensWithTheCliWarning(file);
  assert.match(summary.input.truncation.reason, /the input ends inside/);
  const parallel = await page.evaluate(() => window.traceprismTiming.parallel);
  assert.ok(parallel && parallel.workers >= 2, `read by several workers: ${JSON.stringify(parallel)}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('an event array without its closing bracket opens as a complete trace with a note', async () => {
  // The array form of a real trace: its traceEvents array alone, then cut before the final ']'.
  const doc = JSON.parse(zlib.gunzipSync(fs.readFileSync(EXAMPLE)).toString());
  const text = `[\n${doc.traceEvents.map((e) => JSON.stringify(e)).join(',\n')},\n`;
  const file = path.join(env.tmp, 'open-array.json');
  fs.writeFileSync(file, text);
  const summary = JSON.parse(cli('summary', file, '--json').toString());
  assert.equal(summary.input.truncation, null);
  assert.equal(summary.input.notes.length, 1);
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, file);
  await waitReady(page);
  assert.equal(await page.isVisible('[data-testid="input-warning"]'), false);
  assert.equal(await page.textContent('#input-note'), `Note: ${summary.input.notes[0]}`);
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  assert.equal(Number(await page.getAttribute('[data-fact="kernels"]', 'data-value')), summary.counts.kernels);
  assert.deepEqual(problems, []);
  await page.close();
});

// The regression gate in the page (compare view): the loaded trace against a baseline digest the
// user opens, and B against A. Expected values come from the CLI (`traceprism digest`, `traceprism
// gate --json`); the page's digest of a trace is the CLI's, byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { useBrowser } from './harness.mjs';
import { ROOT, dropFile, dropFiles, waitReady, watchRequests } from './browser.mjs';
import { CLI, cli } from './cli-match.mjs';

const MOE = path.join(ROOT, 'fixtures/moe_eager.pt.trace.json.gz');
const B300 = path.join(ROOT, 'fixtures/sglang_qwen3-30b-a3b_decode_b300.trace.json.gz');
const MI300X = path.join(ROOT, 'fixtures/sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz');
const env = useBrowser('traceprism-gate-');

/** `traceprism gate --json` (its exit status is the verdict, so a non-zero one is not an error). */
function cliGate(base, candidate) {
  try {
    return JSON.parse(execFileSync(CLI, ['gate', base, candidate, '--json']).toString());
  } catch (err) {
    return JSON.parse(err.stdout.toString());
  }
}

test('a trace against a baseline digest: the CLI\'s verdict, intervals drawn, and the page\'s digest is the CLI\'s', async () => {
  const digestFile = path.join(env.tmp, 'moe_eager.digest.json');
  cli('digest', MOE, '--out', digestFile);
  const want = cliGate(digestFile, MOE);
  assert.equal(want.overall, 'no_change');

  const { page, problems } = await env.browser.newPage();
  const { leaks } = watchRequests(page, env.server.url);
  await page.goto(env.server.url + '#compare', { waitUntil: 'networkidle' });
  await dropFile(page, MOE);
  await waitReady(page);
  await page.waitForSelector('[data-view="compare"][data-rendered] [data-testid="gate"]');
  await page.setInputFiles('#gate-baseline-input', digestFile);
  await page.waitForSelector('[data-testid="gate-verdict"]', { timeout: 60_000 });
  assert.equal(await page.getAttribute('[data-testid="gate-verdict"]', 'data-value'), want.overall);
  for (const p of want.phases) {
    assert.equal(await page.getAttribute(`[data-gate-phase="${p.phase}"]`, 'data-value'), p.test.verdict, p.phase);
  }
  const inked = await page.$eval('[data-testid="gate-intervals"]', (c) => {
    const canvas = /** @type {HTMLCanvasElement} */ (c);
    const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0) n++;
    return n;
  });
  assert.ok(inked > 500, `intervals: ${inked} inked pixels`);
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('#gate-digest-a')]);
  assert.equal(download.suggestedFilename(), 'moe_eager.digest.json');
  assert.equal(fs.readFileSync(await download.path(), 'utf8'), fs.readFileSync(digestFile, 'utf8'), 'the page\'s digest is the CLI\'s');
  assert.deepEqual(leaks, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('B against A with one pass each: judged by its layers, as the CLI says', async () => {
  // One decode pass a side: the noise comes from its 48 layers; the MI300X's pass is 65% longer.
  const want = cliGate(B300, MI300X);
  assert.equal(want.overall, 'regression');
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url, { waitUntil: 'networkidle' });
  await dropFiles(page, [B300, MI300X]);
  await page.waitForSelector('[data-view="compare"][data-rendered] [data-testid="gate-verdict"]', { timeout: 120_000 });
  assert.equal(await page.getAttribute('[data-testid="gate-verdict"]', 'data-value'), 'regression');
  assert.match(await page.textContent('[data-gate-phase="decode"]'), /from its layers/);
  assert.deepEqual(problems, []);
  await page.close();
});

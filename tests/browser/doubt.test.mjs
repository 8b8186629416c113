// A pass whose phase rests on conflicting evidence: the overview counts the doubted passes as the
// CLI's summary does. The trace is the MI300X vLLM trace's eager first step cut out alone by the
// CLI's split: its paged attention says decode, its GEMM tiles prefill.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady } from './browser.mjs';
import { cli } from './cli-match.mjs';

const FIXTURE = path.join(ROOT, 'fixtures/vllm_tp4_mi300x_1000isl_10osl_32con.pt.trace.json.gz');
const env = useBrowser('traceprism-doubt-');

test('the overview counts the doubted passes the CLI counts', async () => {
  const file = path.join(env.tmp, 'first-step.json.gz');
  cli('split', FIXTURE, '--pass', '0', '--out', file);
  const summary = JSON.parse(cli('summary', file, '--json').toString());
  assert.equal(summary.doubtful_passes, 1, 'the CLI doubts the pass');
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, file);
  await waitReady(page, 120_000);
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  assert.equal(Number(await page.getAttribute('[data-testid="doubtful-passes"]', 'data-value')), summary.doubtful_passes);
  assert.match(await page.textContent('[data-testid="doubtful-passes"]'), /1 of 1 passes have a doubtful phase/);
  assert.deepEqual(problems, []);
  await page.close();
});

// The overview opens with what to fix first: the Findings panel holds the `findings` table's rows
// in its order, as the CLI gives them, and a finding opens the timeline at its evidence.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady } from './browser.mjs';
import { cli } from './cli-match.mjs';

const FIXTURE = path.join(ROOT, 'fixtures/llama_small_stack.pt.trace.json.gz');
const env = useBrowser('traceprism-findings-');

test('the Findings panel lists the CLI findings, largest saving first, and opens the timeline', async () => {
  const found = JSON.parse(cli('findings', FIXTURE, '--json').toString()).findings;
  assert.ok(found.length >= 1 && found[0].kind === 'host_bound', JSON.stringify(found));

  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, FIXTURE);
  await waitReady(page, 120_000);
  await page.waitForSelector('[data-testid="findings"] li[data-kind]');
  const items = await page.$$eval('[data-testid="findings"] li[data-kind]', (lis) => lis.map((li) => [li.dataset.kind, Number(li.dataset.savingUs)]));
  assert.deepEqual(items.map(([k]) => k), found.map((f) => f.kind));
  items.forEach(([, us], i) => assert.ok(Math.abs(us - found[i].saving_us) < 0.01, `${us} against ${found[i].saving_us}`));
  await page.click('[data-testid="findings"] li[data-kind]');
  await page.waitForFunction(() => location.hash.startsWith('#timeline?'));
  const hash = await page.evaluate(() => location.hash);
  const from = Number(new URLSearchParams(hash.split('?')[1]).get('from'));
  assert.ok(from <= found[0].from_ns / 1e3 && from > found[0].from_ns / 1e3 - 1e6, `${hash} against ${found[0].from_ns}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the step budget draws one bar per step of the CLI table, and a segment opens the timeline', async () => {
  const DATALOADER = path.join(ROOT, 'fixtures/dataloader_workers0_rn50_v100.pt.trace.json.gz');
  const csv = cli('table', DATALOADER, 'step_budget', '--csv').toString().trim().split('\n').slice(1);
  const steps = new Set(csv.map((line) => line.split(',').slice(0, 2).join('/')));
  // The line of the training loop that holds the data loader (a Python frame of the ops' `Call
  // stack`: `for … in enumerate(train_loader)`) is the host's row.
  const LOOP_LINE = 'resnet50_profiler_api.py(42): <module>';
  assert.ok(csv.some((line) => line.includes(LOOP_LINE)), 'the data loader\'s line is a row');

  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, DATALOADER);
  await waitReady(page, 120_000);
  await page.waitForSelector('[data-testid="step-budget"] rect[data-stack]');
  const shown = await page.$eval('[data-testid="step-budget"]', (s) => Number(s.getAttribute('data-steps')));
  assert.equal(shown, steps.size);
  const legend = await page.textContent('[data-testid="step-budget"] .legend');
  // The row names the activity inside that line and the line: `enumerate(DataLoader)#… at <line>`.
  assert.ok(legend?.includes('host: enumerate(DataLoader)#') && legend.includes(` at ${LOOP_LINE}`), legend ?? '');
  await page.click('[data-testid="step-budget"] rect[data-stack="0"]');
  await page.waitForFunction(() => location.hash.startsWith('#timeline?'));
  assert.deepEqual(problems, []);
  await page.close();
});

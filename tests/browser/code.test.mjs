// Where in the code: the Code view draws the call-path icicle of `call_paths` and shows the
// `sources` table as `traceprism export` writes it; a click zooms, search highlights, the phase
// filter narrows; a trace without stacks says what a stack would add.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady } from './browser.mjs';
import { cliCsvs as cliCsvsIn, displayed, assertSameAsCli } from './cli-match.mjs';
import { parseCsv } from './csv.mjs';

const STACKS = path.join(ROOT, 'fixtures/llama_small_stack.pt.trace.json.gz');
const NO_STACKS = path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz');
const env = useBrowser('traceprism-code-');

/**
 * A new page with `file` loaded and the Code view drawn, its sources table shown.
 * @param {string} file
 */
async function codeViewWithSources(file) {
  const opened = await env.browser.newPage();
  const { page } = opened;
  await page.goto(env.server.url + '#overview');
  await pickFile(page, file);
  await waitReady(page, 120_000);
  await page.goto(env.server.url + '#code');
  await page.waitForSelector('[data-view="code"][data-rendered] table[data-table="sources"]', { timeout: 60_000 });
  return opened;
}

test('the Code view: an icicle of GPU time by call path and the sources table equal to the CLI', async () => {
  const want = cliCsvsIn(env.tmp, 'export', STACKS);
  const sources = parseCsv(want.get('sources'));
  assert.equal(sources[1][0], 'torch/nn/modules/linear.py(130): forward');

  const { page, problems } = await codeViewWithSources(STACKS);
  assertSameAsCli(await displayed(page, 'sources'), want.get('sources'), 'sources');
  const nodes = Number(await page.getAttribute('[data-testid="flame"]', 'data-nodes'));
  assert.ok(nodes > 50, `${nodes} frames drawn`);
  assert.match(await page.textContent('[data-testid="stack-note"]'), /Python frames/);
  // Drawn, not blank.
  const inked = await page.$eval('[data-testid="flame"]', (c) => {
    const canvas = /** @type {HTMLCanvasElement} */ (c);
    const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i + 3] > 0) n++;
    return n;
  });
  assert.ok(inked > 10000, `${inked} pixels`);

  // A click on the second row zooms into that frame: the breadcrumb grows by one.
  const crumbs = async () => page.$$eval('[data-testid="flame-crumbs"] button', (b) => b.length);
  assert.equal(await crumbs(), 1);
  const box = await page.$eval('[data-testid="flame"]', (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height, ch: /** @type {HTMLCanvasElement} */ (c).height }; });
  await page.mouse.click(box.x + 10, box.y + (18 * 1.5 * box.h) / box.ch);
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="flame-crumbs"] button').length === 2);

  // The phase filter: prefill only draws fewer frames' time (the decode steps are gone).
  await page.selectOption('#flame-phase', 'prefill');
  await page.waitForFunction(() => document.querySelector('#flame-phase')?.value === 'prefill' && document.querySelector('[data-testid="flame"]'));
  assert.deepEqual(problems, []);
  await page.close();
});

test('without stacks the Code view says what with_stack would add', async () => {
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, NO_STACKS);
  await waitReady(page, 120_000);
  await page.goto(env.server.url + '#code');
  await page.waitForSelector('[data-view="code"][data-rendered] [data-testid="flame"]', { timeout: 60_000 });
  assert.match(await page.textContent('[data-testid="stack-note"]'), /with_stack=True/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a 2021 trace draws the Python frames of its ops\' Call stack arguments, as the CLI reads them', async () => {
  const OLD = path.join(ROOT, 'fixtures/dataloader_workers0_rn50_v100.pt.trace.json.gz');
  const want = cliCsvsIn(env.tmp, 'export', OLD);
  const sources = parseCsv(want.get('sources'));
  assert.ok(sources.some((row) => row[0].endsWith('conv.py(440): _conv_forward')), 'the CLI names the convolution\'s line');
  const { page, problems } = await codeViewWithSources(OLD);
  assertSameAsCli(await displayed(page, 'sources'), want.get('sources'), 'sources');
  assert.match(await page.textContent('[data-testid="stack-note"]'), /Python frames/);
  assert.deepEqual(problems, []);
  await page.close();
});

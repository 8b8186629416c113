// The page on a diffusion trace: the overview says what the workload is, counts denoising steps
// and the stages around them, and names the blocks of a step; the figures equal the CLI's
// `summary --json` on the same file, and the phases view draws one bar per step and stage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { useBrowser } from './harness.mjs';
import { ROOT, dropFile, waitReady } from './browser.mjs';
import { cli } from './cli-match.mjs';

const FLUX = path.join(ROOT, 'fixtures/xdit_flux1_4steps_mi300x.json.gz');
const env = useBrowser('traceprism-workload-');

/** Drops `file` on a fresh page showing the overview; `fact(key)` reads an overview fact's value. */
async function openOverview(file) {
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview', { waitUntil: 'networkidle' });
  await dropFile(page, file);
  await waitReady(page);
  await page.waitForSelector('[data-view="overview"][data-rendered]', { timeout: 60_000 });
  const fact = (k) => page.getAttribute(`[data-fact="${k}"]`, 'data-value');
  return { page, problems, fact };
}

test('a diffusion trace: workload, steps, stages and block kinds as the CLI reports them', async () => {
  const summary = JSON.parse(cli('summary', FLUX, '--json').toString());
  assert.equal(summary.workload, 'diffusion');
  const { page, problems, fact } = await openOverview(FLUX);
  assert.equal(await fact('workload'), 'diffusion');
  assert.equal(Number(await fact('phase')), summary.passes);
  assert.equal(await page.textContent('[data-fact="phase"] .v'), `${summary.passes} denoising steps + ${summary.stages.length} stages`);
  const kinds = summary.layer_kinds.map((k) => `${k.count} ${k.type}`).join(' + ');
  assert.equal(await page.textContent('[data-fact="layers"] .v'), `${summary.layers_per_pass[0]} per step: ${kinds}`);
  const stages = await page.$$eval('[data-testid="stages"] li', (li) => li.map((x) => x.textContent));
  assert.equal(stages.length, summary.stages.length);
  summary.stages.forEach((s, k) => assert.ok(stages[k].includes(s.label), stages[k]));
  const evidence = await page.$$eval('[data-testid="workload-evidence"] li', (li) => li.map((x) => x.textContent));
  assert.deepEqual(evidence, summary.workload_evidence);

  await page.goto(env.server.url + '#phases');
  await page.waitForSelector('[data-view="phases"][data-rendered]', { timeout: 60_000 });
  const headings = await page.$$eval('[data-view="phases"] h3', (h) => h.map((x) => x.textContent));
  assert.ok(headings.some((h) => /per denoising step and stage/.test(h)), headings.join(' | '));
  // The phase bars name the CLI's phases: denoise and stage, no prefill or decode.
  const text = await page.textContent('[data-view="phases"]');
  assert.ok(!/\bprefill\b|\bdecode\b/.test(text.replace(/VAE decoder|decoder/g, '')), 'no prefill/decode on a diffusion trace');

  // Every view draws the diffusion trace without a page error; the heat map has a row per step
  // and stage with the CLI's block count.
  for (const view of ['timeline', 'categories', 'layers', 'ops', 'kernels', 'report']) {
    await page.goto(env.server.url + '#' + view);
    await page.waitForSelector(`[data-view="${view}"][data-rendered]`, { timeout: 60_000 });
  }
  await page.goto(env.server.url + '#layers');
  await page.waitForSelector('[data-view="layers"][data-rendered]', { timeout: 60_000 });
  assert.ok(await page.$('[data-testid="heatmap"]'), 'the layer heat map is drawn');
  assert.deepEqual(problems, []);
});

for (const file of ['jax_conv_mi300x.xplane.pb', 'jax_conv_mi300x.trace.json.gz', 'jax_tpu_v6e4_hostoffload.xplane.pb']) {
  test(`a JAX profile (${file}) opens in the page with the CLI's devices and kernels`, async () => {
    const jax = path.join(ROOT, 'fixtures', file);
    const summary = JSON.parse(cli('summary', jax, '--json').toString());
    const { page, problems, fact } = await openOverview(jax);
    assert.equal(Number(await fact('kernels')), summary.counts.kernels);
    assert.equal(await fact('device'), summary.device);
    assert.equal(await fact('workload'), summary.workload);
    assert.deepEqual(problems, []);
  });
}

test('a TPU and an Ascend NPU open with their device work, as the CLI reads them', async () => {
  // torch_npu's schema: a bare array, string timestamps, device tasks without `cat` on the
  // process named Ascend Hardware, a pid above 2^32 (as tests/suite/npu_schema.rs writes it).
  const host = 3 * 2 ** 32 + 17;
  const ev = [
    { ph: 'M', name: 'process_name', pid: host, tid: 0, args: { name: 'Python' } },
    { ph: 'M', name: 'process_name', pid: host + 1, tid: 0, args: { name: 'Ascend Hardware' } },
    { ph: 'X', name: 'ProfilerStep#1', pid: host, tid: 7, ts: '1699529623100000.000', dur: 2000, cat: 'cpu_op', args: {} },
  ];
  for (let i = 0; i < 20; i++) {
    const t = 1699529623100100 + 50 * i;
    ev.push({ ph: 'X', name: 'aten::mm', pid: host, tid: 7, ts: t.toFixed(3), dur: 5, cat: 'cpu_op', args: {} });
    ev.push({ ph: 'X', name: i % 2 ? 'MatMulV2' : 'Add', pid: host + 1, tid: 2, ts: (t + 10).toFixed(3), dur: 30, args: {} });
  }
  const npu = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'traceprism-npu-')), 'npu_trace.json');
  fs.writeFileSync(npu, JSON.stringify(ev));
  for (const [file, device] of [[npu, 'Ascend NPU 0'], [path.join(ROOT, 'fixtures/jax_tpu_v6e4_hostoffload.xplane.pb'), 'TPU v6 Lite (TPU 0)']]) {
    const summary = JSON.parse(cli('summary', file, '--json').toString());
    assert.ok(summary.counts.kernels > 0 && summary.device.startsWith(device), `${file}: ${summary.device}`);
    const { problems, fact } = await openOverview(file);
    assert.equal(Number(await fact('kernels')), summary.counts.kernels, file);
    assert.equal(await fact('device'), summary.device, file);
    assert.deepEqual(problems, []);
  }
});

test('a mixed step: the overview draws its prefill / decode split as the CLI states it', async () => {
  const MIXED = path.join(ROOT, 'fixtures/vllm_gptoss_mixed_piecewise_mi300x.json.gz');
  const summary = JSON.parse(cli('summary', MIXED, '--json').toString());
  assert.equal(summary.mixed.steps, 1);
  const { page, problems } = await openOverview(MIXED);
  const split = await page.textContent('[data-testid="mixed-split"]');
  assert.ok(split.includes(`prefill (${summary.mixed.prefill_tokens.toLocaleString('en-US')} tokens)`), split);
  assert.ok(split.includes(`decode (${summary.mixed.decode_tokens} tokens)`), split);
  const pct = (100 * summary.mixed.prefill_tokens / (summary.mixed.prefill_tokens + summary.mixed.decode_tokens)).toFixed(1);
  assert.ok(split.includes(`${pct} % of the mixed steps' tokens are prefill`), split);
  assert.deepEqual(problems, []);
});

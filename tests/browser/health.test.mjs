// Every trace opens and tells the truth about itself, in the page as in the CLI: the BERT
// fixture recorded as if with the CPU alone (its GPU events removed here, never in the file)
// raises the banner with the CLI's words and a Health panel whose rows are the `health` table's;
// the same fixture with unescaped quotes in its frame names (as PyTorch wrote them under
// torch.compile) opens with the repair counted, as the CLI counts it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { useBrowser } from './harness.mjs';
import { ROOT, dropFile, pickFile, waitReady } from './browser.mjs';
import { cli, cliCsvs, displayed, assertSameAsCli } from './cli-match.mjs';

const FIXTURE = path.join(ROOT, 'fixtures/hf_bert_small_forward_h100.json.gz');
const env = useBrowser('traceprism-health-');

test('a CPU-only trace: the banner and the Health panel say so, as the CLI does', async () => {
  const doc = JSON.parse(zlib.gunzipSync(fs.readFileSync(FIXTURE)).toString());
  const gpu = new Set(['kernel', 'gpu_memcpy', 'gpu_memset', 'gpu_user_annotation']);
  doc.traceEvents = doc.traceEvents.filter((e) => !gpu.has(e.cat));
  const file = path.join(env.tmp, 'cpu-only.json.gz');
  fs.writeFileSync(file, zlib.gzipSync(JSON.stringify(doc)));

  const cliLine = cli('summary', file).toString().split('\n').find((l) => l.startsWith('WARNING  kernels:'));
  assert.ok(cliLine, 'the CLI warns');
  const health = cli('table', file, 'health', '--csv').toString();

  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, file);
  await waitReady(page, 120_000);
  const banner = await page.textContent('[data-testid="input-health"]');
  assert.ok(banner.split('\n').includes(`Warning: ${cliLine.replace(/^WARNING\s+/, '')}`), banner);
  const rows = await page.$$eval('[data-testid="health"] tr[data-check]', (trs) => trs.map((tr) => [tr.dataset.check, tr.dataset.status]));
  const csvRows = health.trim().split('\n').slice(1).map((l) => l.split(',').slice(0, 2));
  assert.deepEqual(Object.fromEntries(rows), Object.fromEntries(csvRows), 'the panel holds the health table');
  assert.equal(Object.fromEntries(rows).kernels, 'warning');
  assert.deepEqual(problems, []);
  await page.close();
});

test('unescaped quotes in frame names: the trace opens, the repair counted as by the CLI', async () => {
  const text = zlib.gunzipSync(fs.readFileSync(FIXTURE)).toString();
  // Every third op's name gains a dynamo frame's file name, unescaped.
  let ops = 0;
  const broken = text.replace(/("cat": "cpu_op",\s*"name": ")([^"]*)"/g, (m, pre, name) =>
    (++ops % 3 === 0 ? `${pre}${name} {"device": "cpu", "dtype": "float32"}"` : m));
  assert.ok(ops > 10, 'the fixture has CPU ops');
  assert.throws(() => JSON.parse(broken));
  const file = path.join(env.tmp, 'broken.json');
  fs.writeFileSync(file, broken);
  const repaired = JSON.parse(cli('doctor', file, '--json').toString()).health.find((c) => c.check === 'repaired_json');
  assert.equal(repaired.status, 'warning');
  assert.equal(repaired.count, Math.floor(ops / 3));

  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, file);
  await waitReady(page, 120_000);
  const row = await page.$eval('[data-testid="health"] tr[data-check="repaired_json"]', (tr) => [tr.dataset.status, tr.textContent]);
  assert.equal(row[0], 'warning');
  assert.ok(row[1].includes(`${repaired.count} events with broken JSON strings repaired`), row[1]);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a large broken trace read in ranges by several workers: repaired as by the CLI, tables as if escaped', async () => {
  // The 58 MB H100 llama trace, above the page's threshold for ranges, with a dynamo frame's file
  // name unescaped in every 5th CPU op's name (it holds `}, {`, which a range cut takes for an
  // event boundary) and the same names escaped correctly in a second file.
  const text = zlib.gunzipSync(fs.readFileSync(path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz'))).toString();
  const inner = ' [{"device": "cpu"}, {"device": "cuda"}]';
  let ops = 0;
  const edit = (escape) => text.replace(/("cat": "cpu_op",\s*"name": ")([^"]*)"/g, (m, pre, name) =>
    (ops++ % 5 === 0 ? `${pre}${name}${escape ? inner.replaceAll('"', '\\"') : inner}"` : m));
  const broken = path.join(env.tmp, 'llama-broken.json');
  const escaped = path.join(env.tmp, 'llama-escaped.json');
  fs.writeFileSync(broken, edit(false));
  const count = Math.ceil(ops / 5);
  ops = 0;
  fs.writeFileSync(escaped, edit(true));
  assert.ok(count > 1000, `${count} names broken`);
  const csvs = cliCsvs(env.tmp, 'export', escaped);
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#kernels', { waitUntil: 'networkidle' });
  const cores = await page.evaluate(() => navigator.hardwareConcurrency || 2);
  await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
  await dropFile(page, broken);
  await waitReady(page, 300_000);
  await page.waitForSelector('[data-view="kernels"][data-rendered]', { timeout: 60_000 });
  if (cores >= 2) {
    const parallel = await page.evaluate(() => window.traceprismTiming.parallel);
    assert.ok(parallel && parallel.parts >= 1, `read in ranges: ${JSON.stringify(parallel)}`);
  }
  const names = await page.evaluate(() => [...document.querySelectorAll('table.data')].map((t) => t.dataset.table));
  assert.ok(names.includes('kernels'));
  for (const name of names) assertSameAsCli(await displayed(page, name), csvs.get(name), name);
  await page.goto(env.server.url + '#overview');
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  const row = await page.$eval('[data-testid="health"] tr[data-check="repaired_json"]', (tr) => tr.textContent);
  assert.ok(row.includes(`${count} events with broken JSON strings repaired`), row);
  assert.deepEqual(problems, []);
  await page.close();
});

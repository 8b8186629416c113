// Capture traces in the page (issue 33): dropped or picked beside the trace, they give graph
// replays their captured ops exactly as `traceprism export --capture` does: every table byte for
// byte, and the CLI's `graphs` line as the page's note.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady } from './browser.mjs';
import { assertExportAllSameAsCli, cli, cliCsvs } from './cli-match.mjs';

const TRACE = path.join(ROOT, 'fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz');
const CAPTURES = path.join(ROOT, 'fixtures/graph_capture/sglang_decode/capture_traces');
const env = useBrowser('traceprism-captures-');

test('a trace picked with its capture traces: every table as the CLI writes it with --capture', async () => {
  const csvs = cliCsvs(env.tmp, 'export', TRACE, '--capture', CAPTURES);
  assert.match(csvs.get('ops_summary') || '', /^aten::mm,GEMM,145,145,/m, 'the CLI attributes the replayed GEMMs');
  const graphsLine = cli('summary', TRACE, '--capture', CAPTURES).toString().split('\n').find((l) => l.startsWith('graphs'));
  assert.ok(graphsLine);

  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  // One pick: the trace, the capture trace and its execution_details.json (told apart by name).
  const files = [TRACE, ...fs.readdirSync(CAPTURES).map((f) => path.join(CAPTURES, f))];
  await page.setInputFiles('#file-input', files);
  await waitReady(page, 120_000);
  assert.match(await page.textContent('#file-name'), /with 1 capture trace \(bs_32_rank0\.json\.gz\)/);
  const note = await page.textContent('#input-graphs');
  assert.ok(note.includes(`Graphs: ${graphsLine.replace(/^graphs\s+/, '')}`), note);
  await assertExportAllSameAsCli(page, csvs);
  assert.deepEqual(problems, []);
  await page.close();
});

test('capture traces added to a trace already open: it is read again with them', async () => {
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, TRACE);
  await waitReady(page, 120_000);
  assert.match(await page.textContent('#input-graphs'), /a capture trace \(--capture\) would attribute the rest/);
  await page.setInputFiles('[data-testid="capture-input"]', path.join(CAPTURES, 'bs_32_rank0.json.gz'));
  await page.waitForFunction(() => /544 kernels given their captured op/.test(document.getElementById('input-graphs')?.textContent || ''), null, { timeout: 120_000 });
  await waitReady(page, 120_000);
  assert.deepEqual(problems, []);
  await page.close();
});

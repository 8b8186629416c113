// Browser tests of the comparison, report and download features of the built page. Expected
// values come from the native CLI (`compare --out`, `export --xlsx`, `report --html`, `export`)
// run on the same real fixtures, and from the fixtures / truth files read here directly.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { useBrowser } from './harness.mjs';
import { ROOT, dropFile, dropFiles, waitReady, watchRequests } from './browser.mjs';
import { parseCsv, readZip } from './csv.mjs';
import { cli, cliCsvs as cliCsvsIn, displayed, assertSameAsCli } from './cli-match.mjs';

const B300 = path.join(ROOT, 'fixtures/sglang_qwen3-30b-a3b_decode_b300.trace.json.gz');
const MI300X = path.join(ROOT, 'fixtures/sglang_qwen3-30b-a3b_decode_mi300x.trace.json.gz');
const LLAMA = path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz');
const LLAMA_TRUTH = path.join(ROOT, 'fixtures/llama_dense_eager.truth.json.gz');
const COMPARE_TABLES = ['compare_verdict', 'compare_budget', 'compare_summary', 'compare_categories', 'compare_ops', 'compare_layers', 'compare_alignment', 'compare_fusions', 'compare_findings', 'compare_call_paths', 'compare_call_tree'];
const env = useBrowser('traceprism-browser2-');
const tmp = env.tmp;

/** CSVs the CLI writes into a fresh directory: Map table name → text. */
function cliCsvs(...args) {
  return cliCsvsIn(tmp, ...args);
}

/** Kernel events of a trace file, read here with zlib + JSON.parse (independent of the core). */
function kernelEvents(file) {
  const events = JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8')).traceEvents;
  return events.filter((e) => e.ph === 'X' && e.cat === 'kernel');
}

/** Loads the page; `requests` lists every request from then on that is not the page's own file. */
async function openPage(hash = '') {
  const { page, problems } = await env.browser.newPage();
  const { leaks: requests } = watchRequests(page, env.server.url);
  await page.goto(env.server.url + hash, { waitUntil: 'networkidle' });
  return { page, problems, requests };
}

async function download(page, selector) {
  const [d] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return { name: d.suggestedFilename(), bytes: fs.readFileSync(await d.path()) };
}

/** Sheet names of an xlsx (from xl/workbook.xml), after checking it is a valid zip. */
async function sheetNames(bytes) {
  const zip = await readZip(bytes);
  assert.ok(zip.has('[Content_Types].xml'), 'xlsx has [Content_Types].xml');
  const workbook = zip.get('xl/workbook.xml').toString('utf8');
  const decode = (s) => s.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
  return [...workbook.matchAll(/<sheet\b[^>]*\bname="([^"]*)"/g)].map((m) => decode(m[1]));
}

test('compare two real traces dropped together: tables, charts and CSVs equal `traceprism compare`', async () => {
  const want = cliCsvs('compare', B300, MI300X);
  assert.deepEqual([...want.keys()].sort(), [...COMPARE_TABLES].sort());
  const { page, problems, requests } = await openPage();
  await dropFiles(page, [B300, MI300X]);
  await page.waitForSelector('[data-view="compare"][data-rendered] table[data-table="compare_fusions"]', { timeout: 120_000 });
  assert.ok(page.url().endsWith('#compare'));

  // Labels default to the GPU names from the traces' headers.
  assert.equal(await page.inputValue('#compare-label_a'), 'NVIDIA B300 SXM6 AC');
  assert.equal(await page.inputValue('#compare-label_b'), 'AMD Instinct MI300X');

  // The answer in words first, as the CLI's first line; then the budget's difference as bars, a
  // pair per row of compare_budget (the step first).
  const headline = cli('compare', B300, MI300X).toString('utf8').split('\n')[0];
  assert.equal(await page.textContent('[data-compare-headline]'), headline);
  assert.match(headline, /^NVIDIA B300 SXM6 AC is faster than AMD Instinct MI300X by [\d.]+ ms a decode step/);
  const budgetRows = parseCsv(want.get('compare_budget')).length - 1;
  const budgetBars = await page.$$eval('[data-compare-budget="decode"] rect[data-hover]', (r) => r.length);
  assert.equal(budgetBars, 2 * Math.min(30, budgetRows), 'two bars per compare_budget row');

  // Every table's first page equals the CLI's CSV.
  for (const name of COMPARE_TABLES) assertSameAsCli(await displayed(page, name), want.get(name), name);

  // The differential icicle draws the core's call tree: one rectangle per frame wide enough, never
  // more frames than the CLI's compare_call_tree holds.
  const tree = parseCsv(want.get('compare_call_tree'));
  const drawn = Number(await page.getAttribute('[data-testid="diff-flame"]', 'data-nodes'));
  assert.ok(drawn > 1 && drawn <= tree.length - 1, `${drawn} of ${tree.length - 1} frames drawn`);

  // A's findings in B: the B300's host-bound decode is still there on the MI300X (no fix between
  // them), said in words above the charts, as the CLI's compare_findings says.
  const outcome = parseCsv(want.get('compare_findings'));
  assert.equal(outcome.length, 2, 'one finding of A');
  const line = await page.textContent('[data-compare-findings] li');
  assert.match(line, /^host_bound \(decode on device 0\)/);
  assert.ok(line.includes(outcome[1][outcome[0].indexOf('verdict')]) && /still there/.test(line), line);

  // compare_summary against the traces themselves: kernel counts and total kernel time per side.
  const summary = parseCsv(want.get('compare_summary'));
  const shown = await displayed(page, 'compare_summary');
  const row = (metric) => shown.rows.find((r) => r[0] === metric);
  for (const [side, file] of [[1, B300], [2, MI300X]]) {
    const kernels = kernelEvents(file);
    assert.equal(Number(row('kernels')[side]), kernels.length, `kernel count, side ${side}`);
    const sum = kernels.reduce((s, e) => s + e.dur, 0);
    assert.ok(Math.abs(Number(row('kernel time')[side]) - sum) < 0.002, `kernel time side ${side}: ${row('kernel time')[side]} vs ${sum}`);
  }
  assert.equal(shown.rows.length, summary.length - 1, 'every summary row shown');

  // Side-by-side bars per category, biggest |gap| first (order from the CLI's compare_categories).
  const cats = parseCsv(want.get('compare_categories'));
  const [h, ...rows] = cats;
  const catRows = rows.filter((r) => r[h.indexOf('level')] === 'category');
  catRows.sort((x, y) => Math.abs(Number(y[h.indexOf('gap_per_pass_us')])) - Math.abs(Number(x[h.indexOf('gap_per_pass_us')])));
  const hovers = await page.$$eval('[data-view="compare"] .chart', (charts) => charts.filter((c) => !c.closest('[data-compare-budget]')).map((c) => [...c.querySelectorAll('rect[data-hover]')].map((r) => r.getAttribute('data-hover'))));
  assert.equal(hovers.length, 2, 'a category chart and a layer chart');
  assert.ok(hovers[0][0].startsWith(`${catRows[0][h.indexOf('category')]}: NVIDIA B300 SXM6 AC `), `first category bar: ${hovers[0][0]}`);
  assert.equal(hovers[0].length, 2 * Math.min(30, catRows.length), 'two bars per category');
  assert.ok(hovers[1].length >= 2, 'layer bars');
  await page.hover('[data-view="compare"] .chart rect[data-hover]');
  assert.match(await page.textContent('[data-view="compare"] .hover-caption'), /AMD Instinct MI300X/);

  // CSV export of a table, and of all of them as one zip: byte for byte the CLI's files (one zip
  // rather than eleven downloads: Chromium stops a page's downloads after ten in a row).
  for (const name of ['compare_verdict', 'compare_budget', 'compare_summary']) {
    const d = await download(page, `[data-table-box="${name}"] button.export-csv`);
    assert.equal(d.name, `${name}.csv`);
    assert.equal(d.bytes.toString('utf8'), want.get(name), `${name}.csv differs from traceprism compare --out`);
  }
  const zipped = await readZip((await download(page, '#compare-export-all')).bytes);
  for (const name of COMPARE_TABLES) {
    assert.equal(zipped.get(`${name}.csv`)?.toString('utf8'), want.get(name), `${name}.csv in the zip differs from traceprism compare --out`);
  }

  // Options flow into the core: a phase with no kernels on either side empties the level tables.
  await page.selectOption('#compare-phase', 'prefill');
  await page.waitForFunction(() => document.querySelector('#compare-phase')?.value === 'prefill' && document.querySelector('[data-view="compare"][data-rendered] table[data-table="compare_fusions"]'));
  const prefill = cliCsvs('compare', B300, MI300X, '--phase', 'prefill');
  assertSameAsCli(await displayed(page, 'compare_summary'), prefill.get('compare_summary'), 'compare_summary --phase prefill');

  assert.deepEqual(requests, [], 'comparing made network requests');
  assert.deepEqual(problems, []);
  await page.close();
});

test('two traces of one GPU model are told apart by their file names, in the fields, the words and the charts', async () => {
  const [w0, w4] = ['dataloader_workers0_rn50_v100.pt.trace.json.gz', 'dataloader_workers4_rn50_v100.pt.trace.json.gz'].map((f) => path.join(ROOT, 'fixtures', f));
  const { page, problems, requests } = await openPage();
  await dropFiles(page, [w0, w4]);
  await page.waitForSelector('[data-view="compare"][data-rendered] [data-compare-headline]', { timeout: 120_000 });
  assert.equal(await page.inputValue('#compare-label_a'), 'workers0');
  assert.equal(await page.inputValue('#compare-label_b'), 'workers4');
  const headline = await page.textContent('[data-compare-headline]');
  assert.equal(headline, cli('compare', w0, w4).toString('utf8').split('\n')[0]);
  assert.match(headline, /^workers0 is slower than workers4 by /);
  const hover = await page.getAttribute('[data-compare-budget] rect[data-hover]', 'data-hover');
  assert.ok(hover && hover.includes('workers0') && !hover.includes('V100'), hover ?? '');
  // The fields are the compare options the core declares: one per flag of the CLI's COMPARE OPTIONS.
  const usage = cli('help').toString('utf8');
  const flags = [...usage.split('\nCOMPARE OPTIONS (compare):\n')[1].split('FINDING KINDS')[0].matchAll(/^  (--[a-z-]+)/gm)].map((m) => m[1]);
  assert.ok(flags.includes('--min-change') && flags.includes('--max-align-cells'), flags.join(' '));
  for (const f of flags) assert.ok(await page.$(`#compare-${f.slice(2).replaceAll('-', '_')}`), `a field for ${f}`);
  // A declared option the page did not offer before reaches the core: min_change makes the verdict the CLI's.
  await page.fill('#compare-min_change', '0.5');
  await page.press('#compare-min_change', 'Tab');
  const wide = cliCsvs('compare', w0, w4, '--min-change', '0.5');
  const sentence = cli('compare', w0, w4, '--min-change', '0.5').toString('utf8').split('\n')[0];
  assert.notEqual(sentence, headline, 'the option changes the verdict');
  await page.waitForFunction((want) => document.querySelector('[data-view="compare"][data-rendered] [data-compare-headline]')?.textContent === want, sentence, { polling: 250 });
  await page.waitForSelector('[data-view="compare"][data-rendered] table[data-table="compare_verdict"]', { state: 'attached' });
  assertSameAsCli(await displayed(page, 'compare_verdict'), wide.get('compare_verdict'), 'compare_verdict --min-change 0.5');
  assert.deepEqual(requests, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the header\'s phase method is the core\'s declared choice and reaches the analysis, as --phase-method does', async () => {
  const EXAMPLE = path.join(ROOT, 'fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz');
  const { page, problems, requests } = await openPage('#phases');
  await page.waitForFunction(() => document.querySelectorAll('#phase-method-input option').length > 0, null, { timeout: 120_000 });
  const choices = await page.$$eval('#phase-method-input option', (os) => os.map((o) => o.value));
  const line = cli('help').toString('utf8').split('--phase-method')[1].split('--decode-threshold')[0];
  assert.equal(`(${choices.join('|')})`, line.match(/\(([a-z_|]+)\)/)[0], 'the choices of the CLI\'s usage');
  assert.equal(await page.inputValue('#phase-method-input'), 'union', 'the declared default');
  await page.selectOption('#phase-method-input', 'kernel_names');
  await dropFile(page, EXAMPLE);
  await waitReady(page);
  // The phases view folds its tables below the charts: the table is there, not shown.
  await page.waitForSelector('[data-view="phases"][data-rendered] table[data-table="phase_methods"]', { state: 'attached', timeout: 120_000 });
  const want = cliCsvs('export', EXAMPLE, '--phase-method', 'kernel_names');
  const shown = await displayed(page, 'phase_methods');
  assertSameAsCli(shown, want.get('phase_methods'), 'phase_methods --phase-method kernel_names');
  assert.ok(shown.rows.every((r) => r[shown.head.indexOf('final_method')] === 'kernel_names'));
  assert.deepEqual(requests, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the second trace can be dropped on the compare view after the first is loaded', async () => {
  const want = cliCsvs('compare', MI300X, B300);
  const { page, problems, requests } = await openPage('#compare');
  await dropFile(page, MI300X);
  await waitReady(page);
  await page.waitForSelector('[data-view="compare"][data-rendered] [data-drop-slot="b"]');
  await dropFiles(page, [B300], undefined, '[data-drop-slot="b"]');
  await page.waitForSelector('[data-view="compare"][data-rendered] table[data-table="compare_summary"]', { timeout: 120_000 });
  assertSameAsCli(await displayed(page, 'compare_summary'), want.get('compare_summary'), 'compare_summary (MI300X vs B300)');
  assert.deepEqual(requests, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('xlsx and HTML report downloads equal `traceprism export --xlsx` and `traceprism report --html`', async () => {
  const cliXlsx = path.join(tmp, 'cli.xlsx');
  const cliHtml = path.join(tmp, 'cli.html');
  cli('export', LLAMA, '--xlsx', cliXlsx);
  cli('report', LLAMA, '--html', cliHtml);
  const csvNames = [...cliCsvs('export', LLAMA).keys()].sort();
  const { page, problems, requests } = await openPage('#report');
  await dropFile(page, LLAMA);
  await waitReady(page);
  await page.waitForSelector('[data-view="report"][data-rendered]', { timeout: 120_000 });

  const xlsx = await download(page, '#download-xlsx');
  assert.match(xlsx.name, /\.xlsx$/);
  const pageSheets = await sheetNames(xlsx.bytes);
  const cliSheets = await sheetNames(fs.readFileSync(cliXlsx));
  assert.deepEqual(pageSheets, cliSheets, 'sheet list');
  assert.deepEqual([...pageSheets].sort(), csvNames, 'one sheet per exported table');
  assert.ok(xlsx.bytes.equals(fs.readFileSync(cliXlsx)), 'xlsx bytes equal the CLI workbook');
  // A real reader opens the page's file (openpyxl, installed by scripts/setup.sh; skipped if absent).
  const pageXlsx = path.join(tmp, 'page.xlsx');
  fs.writeFileSync(pageXlsx, xlsx.bytes);
  try {
    const names = JSON.parse(execFileSync('python3', ['-c', 'import json,sys,openpyxl; print(json.dumps(openpyxl.load_workbook(sys.argv[1], read_only=True).sheetnames))', pageXlsx], { stdio: ['ignore', 'pipe', 'pipe'] }).toString());
    assert.deepEqual(names, pageSheets, 'openpyxl reads the same sheets');
  } catch (err) {
    if (!/No module named/.test(String(err.stderr || err.message))) throw err;
  }

  const html = await download(page, '#download-html');
  assert.match(html.name, /\.html$/);
  assert.ok(html.bytes.equals(fs.readFileSync(cliHtml)), 'HTML report bytes equal traceprism report --html');

  assert.deepEqual(requests, [], 'downloads made network requests');
  assert.deepEqual(problems, []);
  await page.close();
});

test('report view: the five plots and an interactive roofline scatter with the device roof', async () => {
  const { page, problems, requests } = await openPage('#report');
  await dropFile(page, LLAMA);
  await waitReady(page);
  await page.waitForSelector('[data-view="report"][data-rendered]', { timeout: 120_000 });
  const headings = await page.$$eval('[data-view="report"] h3', (hs) => hs.map((h) => h.textContent));
  for (const h of ['Phase overview', 'Time distribution per phase (kernel families)', 'Operation frequency (ops by call count)', 'Top bottlenecks (ops by GPU time)', 'Kernel category breakdown', 'Roofline']) {
    assert.ok(headings.includes(h), `missing plot ${h}`);
  }
  // Roofline points are the CLI's roofline_* rows; the roof is the CLI's device peak.
  const csv = cliCsvs('export', LLAMA);
  const summary = parseCsv(csv.get('roofline_summary'));
  const bf16 = summary[1][summary[0].indexOf('peak bf16 TFLOPS/s')];
  assert.ok(Number(bf16) > 0, 'the CLI knows the device');
  let opRows = 0;
  const opNames = new Set();
  for (const name of ['roofline_gemm', 'roofline_grouped_gemm', 'roofline_attention', 'roofline_norm', 'roofline_elementwise']) {
    const t = parseCsv(csv.get(name));
    const [head, ...rows] = t;
    for (const r of rows) {
      // Work per byte > 0 and time > 0 means a point (TFLOP/s may print as 0 at 3 decimals).
      if (Number(r[head.indexOf('FLOPS/Byte')]) > 0 && Number(r[head.indexOf('total_direct_kernel_time_us')]) > 0) { opRows++; opNames.add(r[0]); }
    }
  }
  assert.ok(opRows > 0);
  assert.equal(await page.$$eval('svg.roofline circle.point', (c) => c.length), opRows, 'one circle per roofline row with work and time');
  const roofText = await page.$$eval('svg.roofline path[data-hover]', (p) => p.map((x) => x.getAttribute('data-hover')));
  assert.ok(roofText.some((t) => t.startsWith(`bf16 roof: ${Number(bf16)} TFLOP/s`)), `roof: ${roofText}`);
  await page.locator('svg.roofline circle.point').last().hover(); // drawn last: on top
  const caption = await page.textContent('svg.roofline ~ .hover-caption');
  assert.ok([...opNames].some((n) => caption.startsWith(n)), `hover names an op: ${caption}`);
  assert.match(caption, /FLOP\/byte, [\d.]+ TFLOP\/s/);
  assert.deepEqual(requests, []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('phase table of an eager llama trace: prefill and decode, equal to the CLI and the truth file', async () => {
  const want = cliCsvs('export', LLAMA);
  const truth = JSON.parse(zlib.gunzipSync(fs.readFileSync(LLAMA_TRUTH)).toString('utf8'));
  const { page, problems, requests } = await openPage('#phases');
  await dropFile(page, LLAMA);
  await waitReady(page);
  await page.waitForSelector('[data-view="phases"][data-rendered] table[data-table="phase_summary"]', { timeout: 120_000 });
  const shown = await displayed(page, 'phase_summary');
  assertSameAsCli(shown, want.get('phase_summary'), 'phase_summary');
  const col = (c) => shown.head.indexOf(c);
  const byPhase = new Map(shown.rows.map((r) => [r[col('phase')], r]));
  assert.deepEqual([...byPhase.keys()].sort(), ['decode', 'prefill']);
  for (const [phase, us] of Object.entries(truth.kernel_time_us_by_phase)) {
    assert.ok(Math.abs(Number(byPhase.get(phase)[col('kernel_time_us')]) - us) < 0.01, `${phase} kernel time vs truth ${us}`);
  }
  const passes = shown.rows.reduce((s, r) => s + Number(r[col('passes')]), 0);
  assert.equal(passes, truth.forward_passes);
  // The prefill-vs-decode chart and the per-pass chart are drawn.
  assert.ok(await page.$('[data-view="phases"] .chart svg'), 'phase charts');

  // Layers: the heat map is drawn, and clicking a layer row lists exactly that layer's kernels.
  await page.click('#tabs a[data-view="layers"]');
  await page.waitForSelector('[data-view="layers"][data-rendered] table[data-table="layers"]', { timeout: 60_000 });
  assert.ok(await page.$('[data-view="layers"] .heatmap canvas'), 'layer × pass heat map');
  const [kh, ...kernels] = parseCsv(want.get('kernels'));
  const layersShown = await displayed(page, 'layers');
  const li = layersShown.head.indexOf('layer'), pi = layersShown.head.indexOf('pass');
  const k = layersShown.rows.findIndex((r) => r[li] === '1' && r[pi] === '1');
  assert.ok(k >= 0, 'layers table has layer 1 of pass 1');
  await page.click(`table[data-table="layers"] tbody tr:nth-child(${k + 1})`);
  await page.waitForSelector('.layer-detail table[data-table="kernels"]');
  const expected = kernels.filter((r) => r[kh.indexOf('layer')] === '1' && r[kh.indexOf('pass')] === '1').length;
  assert.ok(expected > 0);
  assert.equal(await page.textContent('.layer-detail .count'), `${expected} rows`);
  // The address names the layer and the pass (#layers?pass=…&layer=…, as the issue spells it).
  assert.ok(page.url().endsWith('#layers?layer=1&pass=1'), page.url());
  assert.deepEqual(requests, []);
  assert.deepEqual(problems, []);
  await page.close();
});

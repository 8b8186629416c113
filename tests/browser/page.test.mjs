// Browser tests of the built page (dist/), served under /traceprism/ and driven in Debian's
// Chromium. Expected values come from the native CLI (`traceprism export` / `summary --json`)
// run on the same real fixture, never from the page itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, dropFile, pickFile, waitReady, watchRequests } from './browser.mjs';
import { parseCsv } from './csv.mjs';
import { assertExportAllSameAsCli, assertSameAsCli, cli, cliCsvs, displayed } from './cli-match.mjs';

const FIXTURE = path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz');
const EXAMPLE = path.join(ROOT, 'fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz');
const env = useBrowser('traceprism-browser-');
const tmp = env.tmp;

/** The CLI's CSV export of a trace: Map table name → CSV text. */
function cliExport(trace) {
  return cliCsvs(tmp, 'export', trace);
}

function cliSummary(trace) {
  return JSON.parse(cli('summary', trace, '--json').toString());
}

test('dropping a real trace: no request, tables and CSV/zip exports equal the CLI', async () => {
  const cli = cliExport(FIXTURE);
  const summary = cliSummary(FIXTURE);
  const { page, problems } = await env.browser.newPage();
  // The page loads only its own files (worker, helpers and wasm); nothing else may ever go out.
  const { leaks: requests, all: everyRequest } = watchRequests(page, env.server.url);
  await page.goto(env.server.url + '#kernels', { waitUntil: 'networkidle' });
  // Once loaded (the worker and its helper workers are up and warm), dropping a trace makes no
  // request at all, not even for the page's own files.
  await page.waitForFunction(() => window.traceprismTiming?.warm, null, { timeout: 120_000 });
  const loaded = everyRequest.length;
  await dropFile(page, FIXTURE);
  await waitReady(page);
  await page.waitForSelector('[data-view="kernels"][data-rendered]', { timeout: 60_000 });
  assert.deepEqual(everyRequest.slice(loaded), [], 'dropping a trace made requests');
  assert.deepEqual(requests, [], 'dropping a trace made network requests');

  // Same tables as the CLI exports.
  const names = await page.evaluate(() => [...document.querySelectorAll('table.data')].map((t) => t.dataset.table));
  assert.ok(names.includes('kernels'));
  const kernelsCsv = cli.get('kernels');
  assertSameAsCli(await displayed(page, 'kernels'), kernelsCsv, 'kernels');
  for (const name of names) assertSameAsCli(await displayed(page, name), cli.get(name), name);

  // Overview numbers against the CLI's summary and an independent sum over the CLI's kernels.csv.
  await page.goto(env.server.url + '#overview');
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  const fact = (k) => page.getAttribute(`[data-fact="${k}"]`, 'data-value');
  const rows = parseCsv(kernelsCsv);
  const dur = rows[0].indexOf('dur_us');
  const sumUs = rows.slice(1).reduce((s, r) => s + Number(r[dur]), 0);
  assert.equal(Number(await fact('kernels')), rows.length - 1);
  assert.equal(Number(await fact('kernels')), summary.counts.kernels);
  // A trace with prefill and decode passes names both, with the CLI's pass counts (not "unknown").
  const passesOf = (phase) => summary.phases.find((p) => p.phase === phase)?.passes;
  assert.ok(passesOf('prefill') > 0 && passesOf('decode') > 0, 'the fixture has both phases');
  assert.equal(await page.textContent('[data-fact="phase"] .v'), `prefill ${passesOf('prefill')} + decode ${passesOf('decode')}`);
  assert.ok(Math.abs(Number(await fact('kernel_time')) - sumUs / 1000) < 1e-6, 'kernel time');
  assert.equal(Number(await fact('events')), summary.input.events);

  // Phase view: whatever phase tables exist equal the CLI's.
  await page.goto(env.server.url + '#phases');
  await page.waitForSelector('[data-view="phases"][data-rendered]', { timeout: 60_000 });
  for (const name of await page.evaluate(() => [...document.querySelectorAll('table.data')].map((t) => t.dataset.table))) {
    assertSameAsCli(await displayed(page, name), cli.get(name), name);
  }

  // Layer view: heat map cells are coloured against their phase's median, and hovering a cell
  // gives its time and how far it is from that median.
  await page.goto(env.server.url + '#layers');
  await page.waitForSelector('[data-view="layers"][data-rendered]', { timeout: 60_000 });
  assert.equal(await page.getAttribute('.heatmap', 'data-scale'), 'vs-median');
  const box = await page.locator('.heatmap canvas').boundingBox();
  await page.mouse.move(box.x + 2, box.y + 2); // layer 0 of pass 0
  assert.match(await page.textContent('.heatmap .note'), /^layer 0 · pass 0: .+ \([+-]\d+\.\d% against the (prefill|decode) median\)$/);

  // One table's CSV button, then all tables as a zip: byte-identical to `traceprism export`.
  await page.goto(env.server.url + '#kernels');
  await page.waitForSelector('[data-view="kernels"][data-rendered]', { timeout: 60_000 });
  const [one] = await Promise.all([page.waitForEvent('download'), page.click('[data-table-box="kernels"] button.export-csv')]);
  assert.equal(one.suggestedFilename(), 'kernels.csv');
  assert.equal(fs.readFileSync(await one.path(), 'utf8'), kernelsCsv);
  await assertExportAllSameAsCli(page, cli);

  assert.deepEqual(requests, [], 'exports made network requests');
  // The watcher itself: a body sent even to the page's own origin counts as a leak.
  await page.evaluate((url) => fetch(url, { method: 'POST', body: 'trace bytes' }).catch(() => {}), env.server.url + 'index.html');
  assert.equal(requests.length, 1, `a POST is a leak: ${requests}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('every view renders for a real trace and the URL hash keeps the view', async () => {
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url);
  await page.click('#example-button');
  await waitReady(page);
  // The timeline is the first view after a load.
  await page.waitForSelector('[data-view="timeline"][data-rendered]', { timeout: 60_000 });
  await page.click('#tabs a[data-view="overview"]');
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  const summary = cliSummary(EXAMPLE);
  assert.equal(Number(await page.getAttribute('[data-fact="kernels"]', 'data-value')), summary.counts.kernels);
  for (const view of ['timeline', 'overview', 'categories', 'phases', 'layers', 'ops', 'report', 'compare', 'kernels']) {
    await page.click(`#tabs a[data-view="${view}"]`);
    await page.waitForSelector(`[data-view="${view}"][data-rendered]`, { timeout: 60_000 });
    assert.ok(page.url().endsWith(`#${view}`), `hash for ${view}: ${page.url()}`);
    assert.equal(await page.$$eval(`#view .error`, (e) => e.length), 0, `${view} shows an error`);
  }
  // Sorting and filtering the kernels table.
  const box = '[data-table-box="kernels"]';
  await page.fill(`${box} input[type=search]`, 'Cijk_');
  const nameCol = 1 + (await page.$$eval(`${box} thead th`, (ths) => ths.map((th) => th.textContent))).indexOf('name');
  const names = await page.$$eval(`${box} tbody tr td:nth-child(${nameCol})`, (tds) => tds.map((td) => td.title || td.textContent));
  assert.ok(names.length > 0 && names.every((n) => n.includes('Cijk_')), 'filter');
  await page.fill(`${box} input[type=search]`, '');
  await page.click(`${box} th:text-is("dur_us")`);
  const durs = await page.$$eval(`${box} tbody tr td:nth-child(3)`, (tds) => tds.map((td) => Number(td.textContent)));
  assert.ok(durs.length > 1 && durs.every((d, i) => i === 0 || durs[i - 1] >= d), 'sorted by dur_us descending');
  // Reload keeps the view named in the hash (after loading again).
  await page.reload();
  await page.click('#example-button');
  await waitReady(page);
  await page.waitForSelector('[data-view="kernels"][data-rendered]');
  assert.deepEqual(problems, []);
  await page.close();
});

test('trace text is shown as text: a kernel named <img src=x onerror=alert(1)> stays text', async () => {
  const evil = '<img src=x onerror=alert(1)>';
  const trace = {
    traceEvents: [
      { ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: 1000, dur: 50, args: { 'External id': 7 } },
      { ph: 'X', cat: 'cuda_runtime', name: 'cudaLaunchKernel', pid: 1, tid: 1, ts: 1010, dur: 5, args: { correlation: 42, 'External id': 7 } },
      { ph: 'X', cat: 'kernel', name: evil, pid: 0, tid: 7, ts: 1020, dur: 12.5, args: { device: 0, stream: 7, correlation: 42, 'External id': 7 } },
    ],
  };
  const file = path.join(tmp, 'xss.json');
  fs.writeFileSync(file, JSON.stringify(trace));
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#kernels');
  await pickFile(page, file);
  await waitReady(page);
  for (const view of ['kernels', 'ops', 'overview', 'categories']) {
    await page.goto(env.server.url + '#' + view);
    await page.waitForSelector(`[data-view="${view}"][data-rendered]`);
    assert.equal(await page.$$eval('img', (i) => i.length), 0, `an <img> element was created in ${view}`);
  }
  await page.goto(env.server.url + '#kernels');
  await page.waitForSelector('[data-view="kernels"][data-rendered]');
  const cells = await page.$$eval('table[data-table="kernels"] td', (tds) => tds.map((td) => td.textContent));
  assert.ok(cells.includes(evil), 'the name is shown literally');
  assert.deepEqual(problems, [], 'no script ran');
  await page.close();
});

test('a file that is not a trace gives a readable error, and the next trace replaces it', async () => {
  const bad = path.join(tmp, 'notes.json');
  fs.writeFileSync(bad, '{"hello": [1, 2, 3]}');
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url);
  await pickFile(page, bad);
  await page.waitForFunction(() => document.body.dataset.state === 'error');
  const message = await page.textContent('#error');
  assert.match(message, /notes\.json/);
  assert.match(message, /not a trace/);
  await pickFile(page, EXAMPLE);
  await waitReady(page);
  assert.equal(await page.isVisible('#error'), false);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the page cannot reach another origin (Content-Security-Policy)', async () => {
  const { page } = await env.browser.newPage();
  await page.goto(env.server.url);
  const csp = await page.getAttribute('meta[http-equiv="Content-Security-Policy"]', 'content');
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /connect-src 'self'/);
  assert.doesNotMatch(csp, /https?:|\*/);
  const result = await page.evaluate(() => fetch('http://127.0.0.2:9/x').then(() => 'reached', () => 'blocked'));
  assert.equal(result, 'blocked');
  await page.close();
});

test('cancel stops a load mid-way and the page stays usable', async () => {
  // A plain-JSON copy of a real trace: big enough (58 MB) that the load is still running when cancelled.
  const zlib = await import('node:zlib');
  const plain = path.join(tmp, 'llama_plain.json');
  fs.writeFileSync(plain, zlib.gunzipSync(fs.readFileSync(FIXTURE)));
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url);
  await pickFile(page, plain);
  await page.waitForFunction(() => document.body.dataset.state === 'loading');
  await page.click('#cancel-button');
  await page.waitForFunction(() => document.body.dataset.state === 'cancelled');
  assert.match(await page.textContent('#error'), /cancelled/i);
  assert.equal(await page.isVisible('#progress'), false);
  await page.click('#example-button');
  await waitReady(page);
  await page.click('#tabs a[data-view="overview"]');
  await page.waitForSelector('[data-view="overview"][data-rendered]');
  assert.equal(Number(await page.getAttribute('[data-fact="kernels"]', 'data-value')), cliSummary(EXAMPLE).counts.kernels);
  assert.deepEqual(problems, []);
  await page.close();
});

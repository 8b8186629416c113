// Browser tests of the ranks view: a run of several ranks opened in the page gives the tables
// `traceprism ranks` writes for the same files. The run is made by `traceprism synth-ranks` from
// the real vLLM TP4 trace (3 ranks, rank 1 delayed at chosen collectives, truth written beside),
// plus a file that is not a trace, which must be named and left out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, watchRequests } from './browser.mjs';
import { cli, cliCsvs, displayed, assertSameAsCli } from './cli-match.mjs';
import { readZip } from './csv.mjs';

const SOURCE = path.join(ROOT, 'fixtures/vllm_tp4_h100_1000isl_10osl_32con.pt.trace.json.gz');
const env = useBrowser('traceprism-ranks-', (tmp) => {
  cli('synth-ranks', SOURCE, '--ranks', '3', '--straggler', '1', '--every', '6', '--delay-us', '30', '--out', path.join(tmp, 'run'));
});
const tmp = env.tmp;
const rankFiles = () => [0, 1, 2].map((r) => path.join(tmp, 'run', `rank${r}.json`));

test('a run of three ranks: the straggler, the tables and the exports equal `traceprism ranks`', async () => {
  const truth = JSON.parse(fs.readFileSync(path.join(tmp, 'run', 'truth.json'), 'utf8'));
  assert.equal(truth.straggler, 1);
  assert.ok(truth.delays.length >= 10, `${truth.delays.length} delays`);
  const want = cliCsvs(tmp, 'ranks', ...rankFiles());
  const json = JSON.parse(cli('ranks', ...rankFiles(), '--json').toString('utf8'));

  const { page, problems } = await env.browser.newPage();
  const { leaks } = watchRequests(page, env.server.url);
  await page.goto(env.server.url, { waitUntil: 'networkidle' });
  const bad = path.join(tmp, 'not_a_trace.json');
  fs.writeFileSync(bad, '{"traceEvents": [{"ph": "X", "name": ');
  await page.setInputFiles('#run-files-input', [...rankFiles(), bad]);
  await page.waitForSelector('[data-view="ranks"][data-rendered] table[data-table="straggler_summary"]', { timeout: 300_000 });
  assert.ok(page.url().includes('#ranks'));

  // The bad file is named and left out; the three ranks are analysed.
  const failed = await page.textContent('[data-testid="run-failed"]');
  assert.ok(failed.includes('not_a_trace.json') && failed.includes('left out'), failed);
  assert.ok((await page.textContent('[data-testid="run-head"]')).startsWith('3 ranks'));

  // The finding is the CLI's, as text, and names the straggler of the truth file.
  const finding = await page.textContent('[data-testid="run-finding"]');
  assert.equal(finding, json.finding);
  assert.ok(finding.startsWith(`rank ${truth.straggler} arrives last at ${truth.delays.length} of`), finding);

  // Where the collectives' time went: the CLI's sentence, a bar per phase and kind, and the class
  // lane coloured by class — waiting (skew, or mixed beside a long transfer) where the delays are,
  // transfer elsewhere.
  assert.equal(await page.textContent('[data-testid="run-cost-finding"]'), `Collectives: ${json.cost_finding}.`);
  assert.ok(json.cost_finding.includes('for rank 1'), json.cost_finding);
  assert.ok(await page.$('[data-testid="class-bars"]'), 'the class bars');
  assert.ok(await page.$('[data-testid="class-legend"]'), 'the class legend');
  const classLane = await page.$eval('[data-testid="rank-lanes"]', (c) => {
    const canvas = /** @type {HTMLCanvasElement} */ (c);
    const d = canvas.getContext('2d').getImageData(0, 11, canvas.width, 1).data;
    const count = { waiting: 0, transfer: 0 };
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] === 0xd2 && d[i + 1] === 0x46 && d[i + 2] === 0x2f) count.waiting++;
      if (d[i] === 0xf2 && d[i + 1] === 0xa9 && d[i + 2] === 0x3b) count.waiting++;
      if (d[i] === 0x4f && d[i + 1] === 0x7f && d[i + 2] === 0xb8) count.transfer++;
    }
    return count;
  });
  assert.ok(classLane.waiting > 0 && classLane.transfer > 0, JSON.stringify(classLane));

  // Tables equal the CLI's CSVs (the first page of each; `ranks` names files differently).
  for (const name of ['run_findings', 'straggler_summary', 'lateness', 'collective_classes', 'straggler_cause', 'wait_by_layer', 'collectives', 'rank_categories', 'rank_phases']) {
    assertSameAsCli(await displayed(page, name), want.get(name), name);
  }

  // Pictures: lanes drawn (not blank), one row per rank in the heat map.
  const inked = await page.$eval('[data-testid="rank-lanes"]', (c) => {
    const canvas = /** @type {HTMLCanvasElement} */ (c);
    const d = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] < 200 || d[i + 1] < 200) n++;
    return n;
  });
  assert.ok(inked > 1000, `lanes: ${inked} inked pixels`);
  assert.ok(await page.$('[data-testid="rank-heatmap"]'), 'the rank × layer heat map');

  // Export: the zip holds exactly the CLI's CSVs, byte for byte.
  const [zip] = await Promise.all([page.waitForEvent('download'), page.click('#run-export-all')]);
  const files = await readZip(fs.readFileSync(await zip.path()));
  assert.deepEqual([...files.keys()].sort(), [...want.keys()].map((n) => `${n}.csv`).sort());
  for (const [name, text] of want) {
    if (name === 'ranks') continue; // file names: the CLI's paths, the page's names
    assert.equal(files.get(`${name}.csv`).toString('utf8'), text, `${name}.csv`);
  }
  // The workbook has one sheet per table.
  const [xlsx] = await Promise.all([page.waitForEvent('download'), page.click('#run-xlsx')]);
  const book = await readZip(fs.readFileSync(await xlsx.path()));
  assert.equal([...book.keys()].filter((k) => k.startsWith('xl/worksheets/sheet')).length, want.size);

  // Without alignment the analysis is redone in the page.
  await page.uncheck('#run-align');
  await page.waitForFunction(() => document.querySelector('[data-testid="run-head"]')?.textContent.includes('clocks as recorded'), null, { timeout: 60_000 });

  assert.deepEqual(leaks, [], 'no request left the page');
  assert.deepEqual(problems, []);
});

test('a rank that lacks a collective: the page names it, as the CLI does, under a banner', async () => {
  // Rank 2 loses its 20th collective kernel (a kernel the profiler dropped).
  const dir = path.join(tmp, 'lacking');
  fs.mkdirSync(dir, { recursive: true });
  const files = rankFiles().map((f, r) => {
    const doc = JSON.parse(fs.readFileSync(f, 'utf8'));
    if (r === 2) {
      const collectives = doc.traceEvents
        .map((e, i) => ({ e, i }))
        .filter(({ e }) => e.cat === 'kernel' && /AllReduce|cross_device_reduce/.test(e.name))
        .sort((a, b) => a.e.ts - b.e.ts);
      doc.traceEvents.splice(collectives[19].i, 1);
    }
    const out = path.join(dir, `rank${r}.json`);
    fs.writeFileSync(out, JSON.stringify(doc));
    return out;
  });
  const json = JSON.parse(cli('ranks', ...files, '--json').toString('utf8'));
  assert.equal(json.collectives_missing_on_some_ranks, 1);
  const named = json.warnings.filter((w) => w.startsWith('rank 2 lacks collective #19'));
  assert.equal(named.length, 1, JSON.stringify(json.warnings));

  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url, { waitUntil: 'networkidle' });
  await page.setInputFiles('#run-files-input', files);
  await page.waitForSelector('[data-view="ranks"][data-rendered] table[data-table="unmatched_collectives"]', { timeout: 300_000 });
  assert.match(await page.textContent('[data-testid="run-divergence"]'), /1 collectives ran on some ranks only/);
  const warnings = await page.$$eval('.warning', (ws) => ws.map((w) => w.textContent));
  assert.ok(warnings.includes(named[0]), JSON.stringify(warnings));
  assert.ok((await page.textContent('[data-testid="run-head"]')).includes('1 lacked by some rank'));
  assert.equal(await page.textContent('[data-testid="run-finding"]'), json.finding);
  assert.ok(json.finding.startsWith('rank 1 arrives last'), json.finding);
  assert.deepEqual(problems, []);
  await page.close();
});

// One colour per family by name (issue 37, item 5): the page's timeline legend, its family chart
// and the CLI's HTML report give GEMM, Attention… the same colour, on two traces whose families
// come in different orders.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady } from './browser.mjs';
import { cli } from './cli-match.mjs';

const env = useBrowser('traceprism-palette-');
const TRACES = ['sglang_qwen3-8b_decode_graph_mi300x.json.gz', 'deepseek_v3_train_h800.json.gz'].map((f) => path.join(ROOT, 'fixtures', f));

/** `rgb(64, 80, 224)` → `#4050e0`. */
const hex = (css) => '#' + css.match(/\d+/g).slice(0, 3).map((v) => Number(v).toString(16).padStart(2, '0')).join('');

test('a family has one colour in the timeline, the family chart and the HTML report, whatever its rank', async () => {
  const seen = new Map(); // family → colour, over every view and trace
  const orders = [];
  const note = (where, family, colour) => {
    if (!seen.has(family)) seen.set(family, { colour, where });
    assert.equal(colour, seen.get(family).colour, `${family}: ${where} draws ${colour}, ${seen.get(family).where} drew ${seen.get(family).colour}`);
  };
  const { page, problems } = await env.browser.newPage();
  for (const trace of TRACES) {
    await page.goto(env.server.url + '#timeline');
    await pickFile(page, trace);
    await waitReady(page, 120_000);
    await page.waitForSelector('[data-view="timeline"][data-rendered]', { timeout: 60_000 });
    const legend = await page.$$eval('.timeline-legend button', (bs) => bs.map((b) => [b.textContent, getComputedStyle(b.querySelector('.swatch')).backgroundColor]));
    orders.push(legend.map(([f]) => f));
    for (const [family, css] of legend) note(`timeline of ${path.basename(trace)}`, family, hex(css));
    await page.click('#tabs a[data-view="categories"]');
    await page.waitForSelector('[data-view="categories"][data-rendered]');
    const bars = await page.$$eval('h3 + .chart rect[fill]', (rs) => rs.map((r) => [r.querySelector('title')?.textContent || r.getAttribute('title') || '', r.getAttribute('fill')]));
    const familyBars = bars.filter(([t]) => /^[^(]+ \(\d+ kernels\)/.test(t)).map(([t, f]) => [t.split(' (')[0], f]);
    assert.ok(familyBars.length > 0, 'the family chart has bars');
    for (const [family, fill] of familyBars) note(`family chart of ${path.basename(trace)}`, family, fill);
    const html = path.join(env.tmp, path.basename(trace) + '.html');
    cli('report', trace, '--html', html);
    const report = fs.readFileSync(html, 'utf8');
    // The report's legends: a swatch then the family's name.
    const reportLegend = [...report.matchAll(/fill="(#[0-9a-f]{6})"\/><text[^>]*>([^<]+)<\/text>/g)].filter((m) => seen.has(m[2]));
    assert.ok(reportLegend.length > 0, "the HTML report has a family legend");
    for (const [, fill, family] of reportLegend) note(`HTML report of ${path.basename(trace)}`, family, fill);
  }
  assert.notDeepEqual(orders[0], orders[1], 'the two traces list their families in different orders');
  assert.equal(seen.get('GEMM').colour, '#4050e0');
  assert.deepEqual(problems, []);
  await page.close();
});

// Category rules edited in the page: applied live (no new read of the file), the same tables as the
// CLI with the same --rules file, kept for the next trace, a bad rule named by its line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady } from './browser.mjs';
import { cliCsvs, displayed, assertSameAsCli } from './cli-match.mjs';

const EXAMPLE = path.join(ROOT, 'fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz');
const env = useBrowser('traceprism-rules-');
const RULES = '[[category]]\nname = "My GEMM"\nfamily = "GEMM"\nabout = "Tensile GEMMs apart"\n\n[[rule]]\ncategory = "My GEMM"\npattern = "^Cijk_"\n';

test('rules applied in the page give the CLI\'s tables with the same --rules file, and stay for the next trace', async () => {
  const rulesFile = path.join(env.tmp, 'mine.toml');
  fs.writeFileSync(rulesFile, RULES);
  const csvs = cliCsvs(env.tmp, 'export', EXAMPLE, '--rules', rulesFile);
  assert.match(csvs.get('category_summary'), /My GEMM/, 'the CLI uses the rule');
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#rules');
  await pickFile(page, EXAMPLE);
  await waitReady(page);
  await page.waitForSelector('[data-view="rules"][data-rendered]');
  // A bad rule first: an inline error naming its line, and nothing changes.
  await page.fill('[data-testid="rules-editor"]', RULES + '\n[[rule]]\ncategory = "Nope"\npattern = "x"\n');
  await page.click('[data-testid="rules-apply"]');
  await page.waitForFunction(() => /line \d+/.test(document.querySelector('[data-testid="rules-status"]').textContent));
  assert.match(await page.textContent('[data-testid="rules-status"]'), /^line 10: user rule 1 .*unknown category 'Nope'/);
  await page.fill('[data-testid="rules-editor"]', RULES);
  await page.click('[data-testid="rules-apply"]');
  await page.waitForFunction(() => /^applied/.test(document.querySelector('[data-testid="rules-status"]').textContent));
  await page.click('#tabs a[data-view="categories"]');
  await page.waitForSelector('[data-view="categories"][data-rendered]');
  assertSameAsCli(await displayed(page, 'category_summary'), csvs.get('category_summary'), 'category_summary');
  // Kept in this browser: a new page and the same trace show the rule's category at once.
  const again = await env.browser.newPage();
  await again.page.goto(env.server.url + '#categories');
  await pickFile(again.page, EXAMPLE);
  await waitReady(again.page);
  await again.page.waitForSelector('[data-view="categories"][data-rendered]');
  assertSameAsCli(await displayed(again.page, 'category_summary'), csvs.get('category_summary'), 'category_summary (next load)');
  await again.page.evaluate(() => localStorage.clear());
  await again.page.close();
  assert.deepEqual(problems, []);
  assert.deepEqual(again.problems, []);
  await page.close();
});

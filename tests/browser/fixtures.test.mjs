// Every real trace we have opens in the page and every analysis view draws it without a page
// error; the overview shows the CLI's kernel count and workload for it. (A real trace the page
// cannot show is a bug in the page, whatever its kind: LLM, diffusion, training, JAX, Nsight Systems.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, dropFile, waitReady } from './browser.mjs';
import { cli } from './cli-match.mjs';

const env = useBrowser('traceprism-fixtures-');
const FIXTURES = fs.readdirSync(path.join(ROOT, 'fixtures'))
  .filter((f) => (f.endsWith('.json.gz') || f.endsWith('.xplane.pb')) && !f.includes('.truth.'))
  .sort()
  .concat(fs.readdirSync(path.join(ROOT, 'fixtures/nsys')).filter((f) => f.endsWith('.sqlite')).sort().map((f) => `nsys/${f}`));
const VIEWS = ['timeline', 'overview', 'categories', 'phases', 'layers', 'ops', 'kernels', 'report', 'code'];

test('every fixture opens and draws in every analysis view', async () => {
  assert.ok(FIXTURES.length >= 25, `${FIXTURES.length} fixtures`);
  const { page, problems } = await env.browser.newPage();
  for (const name of FIXTURES) {
    const file = path.join(ROOT, 'fixtures', name);
    const summary = JSON.parse(cli('summary', file, '--json').toString());
    await page.goto(env.server.url + '#overview', { waitUntil: 'networkidle' });
    await dropFile(page, file);
    await waitReady(page);
    for (const view of VIEWS) {
      await page.goto(env.server.url + '#' + view);
      await page.waitForSelector(`[data-view="${view}"][data-rendered]`, { state: 'attached', timeout: 60_000 })
        .catch((e) => { throw new Error(`${name}, ${view}: ${e.message}`); });
      if (view === 'overview') {
        const fact = (k) => page.getAttribute(`[data-fact="${k}"]`, 'data-value');
        assert.equal(Number(await fact('kernels')), summary.counts.kernels, name);
        assert.equal(await fact('workload'), summary.workload, name);
      }
    }
    assert.deepEqual(problems, [], `${name}: page errors`);
  }
});

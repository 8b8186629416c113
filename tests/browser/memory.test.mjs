// The page at its memory ceiling: when the core cannot get the memory it asks for (as with a trace
// too large for a tab), the worker says so with the figures and points to the CLI, instead of
// "internal error"; then the page reads the next trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady } from './browser.mjs';

const env = useBrowser('traceprism-memory-');
const SMALL = path.join(ROOT, 'fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz');

test('running out of the tab\'s memory gives a clear message, and the next trace loads', async () => {
  const { page } = await env.browser.newPage();
  await page.goto(env.server.url);
  await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
  const message = await page.evaluate(async () => {
    for (let i = 0; i < 8; i++) {
      try {
        await window.traceprismTest.call('testAllocate', { megabytes: 1024 });
      } catch (err) {
        return err.message;
      }
    }
    return 'no allocation failed';
  });
  assert.match(message, /too large for a browser tab/, message);
  assert.match(message, /asked for 1\.0 GB more, holding \d\.\d GB/, message);
  assert.match(message, /traceprism summary/, message);
  // The next trace loads at once: the page replaces the worker whose core trapped.
  await pickFile(page, SMALL);
  await waitReady(page, 120_000);
  assert.equal(await page.evaluate(() => document.body.dataset.state), 'ready');
  await page.close();
});

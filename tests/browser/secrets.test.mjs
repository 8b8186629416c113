// A trace holding a credential in its metadata (issue 30): the page warns with the CLI's words,
// naming the key, never the value; a pass split in the page writes the value as REDACTED.
// The trace is the BERT fixture with a made-up token put back where its recorder's was redacted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady } from './browser.mjs';
import { cli } from './cli-match.mjs';

const FIXTURE = path.join(ROOT, 'fixtures/hf_bert_small_forward_h100.json.gz');
const env = useBrowser('traceprism-secrets-');

/** A token of Hugging Face's shape, made here so that no file holds one. */
const TOKEN = 'hf_' + Array.from({ length: 34 }, (_, i) => String.fromCharCode(65 + ((i * 7) % 26))).join('');

test('a trace with a token: the page names the key, never the value, and its split redacts it', async () => {
  const text = zlib.gunzipSync(fs.readFileSync(FIXTURE)).toString();
  const redacted = `"HF_TOKEN": "${'x'.repeat(37)}"`;
  assert.equal(text.split(redacted).length, 2, 'the fixture holds its redacted HF_TOKEN once');
  const file = path.join(env.tmp, 'with-token.json.gz');
  fs.writeFileSync(file, zlib.gzipSync(text.replace(redacted, `"HF_TOKEN": "${TOKEN}"`)));

  const cliWarning = cli('summary', file).toString().split('\n').find((l) => l.includes('secret-looking'));
  assert.ok(cliWarning, 'the CLI warns');
  assert.ok(!cliWarning.includes(TOKEN));

  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, file);
  await waitReady(page, 120_000);
  assert.equal(await page.isVisible('[data-testid="input-secrets"]'), true, 'the banner is shown');
  const banner = await page.textContent('[data-testid="input-secrets"]');
  assert.equal(banner, `Warning: ${cliWarning.replace(/^WARNING\s+/, '')}`);
  assert.match(banner, /metadata\.system\.env\.HF_TOKEN/);
  assert.ok(!(await page.content()).includes(TOKEN), 'the page never shows the token');

  await page.click('#tabs a[data-view="phases"]');
  await page.waitForSelector('[data-view="phases"][data-rendered]');
  await page.selectOption('[data-testid="split-pass"]', '0');
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-testid="split-pass-button"]')]);
  const out = path.join(env.tmp, 'split.json.gz');
  await download.saveAs(out);
  const split = zlib.gunzipSync(fs.readFileSync(out)).toString();
  assert.ok(!split.includes(TOKEN), 'the split copies the token');
  assert.ok(split.includes('"HF_TOKEN": "REDACTED"'));
  JSON.parse(split);

  // The split opened again carries nothing to warn about.
  await pickFile(page, out);
  await waitReady(page, 120_000);
  assert.equal(await page.isVisible('[data-testid="input-secrets"]'), false);
  assert.deepEqual(problems, []);
  await page.close();
});

// Nsight Systems exports in the page (issue 47): the SQLite engine is a wasm module of its own,
// fetched only when an export arrives (a Kineto trace never loads it); it hands the core row bytes
// of the export's tables and the page then shows what the CLI shows for the same file: the same
// counts and the same CSVs, byte for byte. A token in the export's environment is named, never
// shown, as for a Kineto trace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { useBrowser } from './harness.mjs';
import { ROOT, pickFile, waitReady, watchRequests } from './browser.mjs';
import { assertExportAllSameAsCli, cli, cliCsvs } from './cli-match.mjs';

const EXPORT = path.join(ROOT, 'fixtures/nsys/h100_2gpu_1s.sqlite');
const KINETO = path.join(ROOT, 'fixtures/sglang_qwen3-8b_decode_graph_mi300x.json.gz');
const MODULE = 'pkg-sqlite/traceprism_sqlite_bg.wasm';
const env = useBrowser('traceprism-nsys-');

/** A token of Hugging Face's shape, made here so that no file holds one. */
const TOKEN = 'hf_' + Array.from({ length: 34 }, (_, i) => String.fromCharCode(97 + ((i * 5) % 26))).join('');

test('an export opens in the page through the SQLite module, which only an export fetches, and shows the CLI\'s tables', async () => {
  const { page, problems } = await env.browser.newPage();
  const requests = watchRequests(page, env.server.url);
  await page.goto(env.server.url + '#overview', { waitUntil: 'networkidle' });
  await pickFile(page, KINETO);
  await waitReady(page);
  assert.ok(!requests.all.some((r) => r.includes('pkg-sqlite')), `a Kineto trace fetched the SQLite module: ${requests.all.join(', ')}`);

  const summary = JSON.parse(cli('summary', EXPORT, '--json').toString());
  await pickFile(page, EXPORT);
  await waitReady(page);
  const fact = (k) => page.getAttribute(`[data-fact="${k}"]`, 'data-value');
  assert.equal(Number(await fact('kernels')), summary.counts.kernels);
  assert.ok(summary.counts.kernels > 3000, `${summary.counts.kernels} kernels`);
  assert.equal(await fact('workload'), summary.workload);
  assert.equal(Number(await fact('memcpy')), summary.counts.memcpy);
  assert.match(await page.textContent('[data-fact="size"]'), /SQLite/);
  await page.click('#tabs a[data-view="kernels"]');
  await page.waitForSelector('[data-view="kernels"][data-rendered]');
  await assertExportAllSameAsCli(page, cliCsvs(env.tmp, 'export', EXPORT));
  assert.equal(requests.fetched.filter((r) => r.endsWith(MODULE)).length, 1, 'the module is fetched once');
  assert.deepEqual(requests.leaks, [], 'nothing leaves the page');
  assert.deepEqual(problems, [], 'page errors');
});

test('a token in an export\'s environment: the page names the key as the CLI does, never the value', async () => {
  const file = path.join(env.tmp, 'with-token.sqlite');
  fs.copyFileSync(EXPORT, file);
  // The fixture's environment table, with one more variable (Python's sqlite3: a second reader).
  execFileSync('python3', ['-c', `import sqlite3,sys
db = sqlite3.connect(sys.argv[1])
db.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV (globalVid, devStateName, name, nameEnum, value) VALUES (0, 'env', 'HF_TOKEN', 999, ?)", (sys.argv[2],))
db.commit()`, file, TOKEN]);
  const cliWarning = cli('summary', file).toString().split('\n').find((l) => l.includes('secret-looking'));
  assert.ok(cliWarning && cliWarning.includes('HF_TOKEN') && !cliWarning.includes(TOKEN), `the CLI warns: ${cliWarning}`);

  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url + '#overview');
  await pickFile(page, file);
  await waitReady(page);
  assert.equal(await page.textContent('[data-testid="input-secrets"]'), `Warning: ${cliWarning.replace(/^WARNING\s+/, '')}`);
  assert.ok(!(await page.content()).includes(TOKEN), 'the page never shows the token');
  assert.deepEqual(problems, [], 'page errors');
});

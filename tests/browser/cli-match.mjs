// Shared by the browser tests: what a displayed table shows, checked against the CLI's CSV.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, pickFile } from './browser.mjs';
import { parseCsv, readStoredZip } from './csv.mjs';

/** The native CLI the page is checked against: $TRACEPRISM_CLI (the test command's ci-profile build), else `cargo build --release`'s. */
export const CLI = process.env.TRACEPRISM_CLI || path.join(process.env.CARGO_TARGET_DIR || path.join(ROOT, 'target'), 'release/traceprism');

/** Runs the CLI with `args`; returns its stdout. */
export function cli(...args) {
  return execFileSync(CLI, args, { maxBuffer: 1 << 28 });
}

/** The CLI's one-line error for `file` (the text after "error: "); fails if the CLI reads it. */
export function cliError(file) {
  try {
    execFileSync(CLI, ['summary', file, '--json'], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (err) {
    const m = err.stderr.toString().match(/error: (.*)/);
    assert.ok(m, `CLI stderr: ${err.stderr}`);
    return m[1].trim();
  }
  assert.fail(`the CLI read ${file} without an error`);
}

/**
 * Picks `file` in a fresh page of `env` (see harness.mjs), made ready by `warm(page)`, and asserts
 * the page's error includes `expected`; returns the page and its problems list.
 */
export async function assertPageShowsError(env, warm, file, expected) {
  const { page, problems } = await env.browser.newPage();
  await page.goto(env.server.url);
  await warm(page);
  await pickFile(page, file);
  await page.waitForFunction(() => document.body.dataset.state === 'error', null, { timeout: 300_000 });
  const message = await page.textContent('#error');
  assert.ok(message.includes(expected), `page says ${JSON.stringify(message)}, CLI says ${JSON.stringify(expected)}`);
  return { page, problems };
}

/** CSVs the CLI writes (`args` + `--out DIR`) into a fresh directory under `tmp`: Map table name → text. */
export function cliCsvs(tmp, ...args) {
  const out = fs.mkdtempSync(path.join(tmp, 'cli-'));
  cli(...args, '--out', out);
  return new Map(fs.readdirSync(out).filter((f) => f.endsWith('.csv')).map((f) => [f.slice(0, -4), fs.readFileSync(path.join(out, f), 'utf8')]));
}

/** The cells of the first page of a displayed table: full text (hover title for shortened names). */
export async function displayed(page, name) {
  return page.$$eval(`table[data-table="${name}"]`, (tables) => {
    const t = tables[0];
    const head = [...t.querySelectorAll('thead th')].map((th) => th.textContent);
    const rows = [...t.querySelectorAll('tbody tr')].map((tr) => [...tr.children].map((td) => td.title || td.textContent));
    return { head, rows };
  });
}

/** Asserts a displayed table's first page equals the first rows of the CLI's CSV. */
export function assertSameAsCli(shown, csvText, name) {
  assert.ok(csvText !== undefined, `${name}: the CLI wrote no such table`);
  const csv = parseCsv(csvText);
  assert.deepEqual(shown.head, csv[0], `${name}: columns`);
  assert.ok(shown.rows.length > 0 || csv.length === 1, `${name}: no rows shown`);
  shown.rows.forEach((row, i) => {
    row.forEach((cell, j) => {
      const want = csv[i + 1][j];
      const a = Number(cell), b = Number(want);
      if (cell !== want && !(cell !== '' && want !== '' && Number.isFinite(a) && Number.isFinite(b) && Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b)))) {
        assert.fail(`${name} row ${i} column ${csv[0][j]}: page shows ${JSON.stringify(cell)}, CLI has ${JSON.stringify(want)}`);
      }
    });
  });
}

/** Presses "export all tables" on `page` and asserts the zip holds exactly the CLI's CSVs (`csvs`, from {@link cliCsvs}), byte for byte. */
export async function assertExportAllSameAsCli(page, csvs) {
  const [all] = await Promise.all([page.waitForEvent('download'), page.click('#export-all')]);
  const zip = readStoredZip(fs.readFileSync(await all.path()));
  assert.deepEqual([...zip.keys()].sort(), [...csvs.keys()].map((n) => `${n}.csv`).sort());
  for (const [name, text] of csvs) assert.equal(zip.get(`${name}.csv`).toString('utf8'), text, `${name}.csv differs from the CLI`);
}

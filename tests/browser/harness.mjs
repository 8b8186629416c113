// The setup every browser test file shares: a temp directory, the built page served locally and a
// fresh Chromium, started before the file's tests (once the CLI they compare against is built) and
// removed after them.
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { launch, serve } from './browser.mjs';
import { CLI } from './cli-match.mjs';

/**
 * Registers the file's before/after hooks. Returns `{tmp, server, browser}`: `tmp` at once,
 * `server` and `browser` once `before` has run. `prepare(tmp)` runs first in `before` (e.g. to
 * write input files).
 */
export function useBrowser(prefix, prepare = () => {}) {
  const env = { tmp: fs.mkdtempSync(path.join(os.tmpdir(), prefix)), server: null, browser: null };
  before(async () => {
    assert.ok(fs.existsSync(CLI), `${CLI} missing: run cargo build --release (or set TRACEPRISM_CLI)`);
    await prepare(env.tmp);
    env.server = await serve();
    env.browser = await launch();
  });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
    fs.rmSync(env.tmp, { recursive: true, force: true });
  });
  return env;
}

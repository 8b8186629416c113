// Shared by the browser tests and the page benchmark: Debian's Chromium driven by playwright-core,
// a fresh profile every time, and the built page served under a sub-path.
import { chromium } from 'playwright-core';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../scripts/serve.mjs';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST = process.env.TRACEPRISM_DIST || path.join(ROOT, 'dist');

/**
 * Files of www/ whose copy in dist/ differs or is missing (relative paths), and the core's wasm if
 * a file of src/ is newer, for the benchmarks to warn that they would time an old build of the
 * page (`npm run build` makes both). Empty when TRACEPRISM_DIST names another build on purpose.
 */
export function staleFrontEnd() {
  if (process.env.TRACEPRISM_DIST) return [];
  /** Paths (relative to `dir`) of the files under `dir`, at any depth. */
  const filesUnder = (dir) => fs.readdirSync(dir, { recursive: true }).filter((rel) => fs.statSync(path.join(dir, rel)).isFile());
  const www = path.join(ROOT, 'www');
  const stale = filesUnder(www).filter((rel) => {
    const built = path.join(DIST, rel);
    return !fs.existsSync(built) || !fs.readFileSync(built).equals(fs.readFileSync(path.join(www, rel)));
  });
  const wasm = path.join(DIST, 'pkg/traceprism_bg.wasm');
  const built = fs.existsSync(wasm) ? fs.statSync(wasm).mtimeMs : 0;
  const src = path.join(ROOT, 'src');
  if (filesUnder(src).some((rel) => fs.statSync(path.join(src, rel)).mtimeMs > built)) stale.push('pkg/traceprism_bg.wasm (older than src/)');
  return stale;
}

/** Path of the Chromium to drive. */
export function chromiumPath() {
  for (const p of [process.env.CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser']) if (p && fs.existsSync(p)) return p;
  throw new Error('Chromium not found: run scripts/setup.sh (apt-get install chromium)');
}

/** Launches Chromium with a fresh profile; resolves to {context, newPage, close}. */
export async function launch() {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'traceprism-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath(),
    headless: true,
    acceptDownloads: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'],
  });
  return {
    context,
    /** A new tab whose page errors and dialogs (alert/confirm) are collected in `problems`. */
    newPage: async () => {
      const page = await context.newPage();
      const problems = [];
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss(); });
      return { page, problems };
    },
    close: async () => {
      await context.close();
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Watches every request `page` makes from now on, its workers' included. The page may fetch its own
 * shipped files (a GET with no body, to the page's origin, for a file that exists in dist/: the
 * worker, helper workers and the wasm are loaded lazily, e.g. helpers start after the first trace).
 * Anything else is a leak: another origin, a POST or any request body, a path that is not a shipped
 * file. Read `leaks` (must stay empty), `fetched` and `all` (every request, in order) after the
 * action.
 */
export function watchRequests(page, pageUrl) {
  const leaks = [];
  const fetched = [];
  const all = [];
  const base = new URL(pageUrl);
  page.on('request', (r) => {
    const url = r.url();
    if (/^(blob|data):/.test(url)) return;
    const u = new URL(url);
    const own = u.origin === base.origin && r.method() === 'GET' && r.postDataBuffer() === null && shipped(base.pathname, u.pathname);
    (own ? fetched : leaks).push(`${r.method()} ${url}`);
    all.push(`${r.method()} ${url}`);
  });
  return { leaks, fetched, all };
}

/** Whether `pathname` names a file of dist/ served under `basePath`. */
function shipped(basePath, pathname) {
  if (!pathname.startsWith(basePath)) return false;
  const rel = decodeURIComponent(pathname.slice(basePath.length)) || 'index.html';
  const file = path.resolve(DIST, rel);
  return file.startsWith(DIST + path.sep) && fs.existsSync(file) && fs.statSync(file).isFile();
}

/** Serves dist/ under /traceprism/. */
export function serve() {
  if (!fs.existsSync(path.join(DIST, 'index.html'))) throw new Error(`${DIST}/index.html missing: run "npm run build"`);
  return startServer({ dir: DIST, base: '/traceprism/' });
}

/** Puts a local file into the page's file input (same path as the picker). */
export async function pickFile(page, file) {
  await page.setInputFiles('#file-input', file);
}

/**
 * Drops a file on the page the way a person does: a DataTransfer holding a File, dispatched as
 * dragenter/dragover/drop. The bytes are handed over from Node in base64 pieces.
 */
export async function dropFile(page, file, name = path.basename(file)) {
  return dropFiles(page, [file], [name]);
}

/**
 * Drops several files at once (one DataTransfer), on `target` (a CSS selector; default the body).
 */
export async function dropFiles(page, files, names = files.map((f) => path.basename(f)), target = 'body') {
  const handle = await page.evaluateHandle(() => []);
  const piece = 4 << 20;
  for (const file of files) {
    const bytes = fs.readFileSync(file);
    await page.evaluate((list) => list.push([]), handle);
    for (let o = 0; o < bytes.length; o += piece) {
      await page.evaluate(([list, b64]) => {
        const bin = atob(b64);
        const u = new Uint8Array(bin.length);
        for (let i = 0; i < bin.length; i++) u[i] = bin.charCodeAt(i);
        list[list.length - 1].push(u);
      }, [handle, bytes.subarray(o, o + piece).toString('base64')]);
    }
  }
  await page.evaluate(([list, fileNames, selector]) => {
    const dt = new DataTransfer();
    list.forEach((parts, k) => dt.items.add(new File(parts, fileNames[k])));
    const where = document.querySelector(selector);
    for (const type of ['dragenter', 'dragover', 'drop']) {
      where.dispatchEvent(new DragEvent(type, { bubbles: true, cancelable: true, dataTransfer: dt }));
    }
    list.length = 0;
  }, [handle, names, target]);
}

/** Waits until the page says the trace is analysed (or failed). */
export async function waitReady(page, timeout = 120_000) {
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout });
  const state = await page.evaluate(() => document.body.dataset.state);
  if (state !== 'ready') throw new Error(`page state ${state}: ${await page.textContent('#error')}`);
}

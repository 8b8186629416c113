// The largest traces the page opens here: builds plain-JSON traces of the given sizes (MB) from the
// llama fixture (and their gzip when --gzip), opens each in a warm page in Chromium, and prints
// whether it opened (with the time and the wasm memory) or the page's message. Prints figures;
// asserts nothing. The files are kept in DIR (default target/ceiling) for later runs.
//
//   node scripts/page-ceiling.mjs [--dir DIR] [--gzip] MB...
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT, launch, serve, pickFile } from '../tests/browser/browser.mjs';
import { buildBigTrace } from './big-trace.mjs';

const args = process.argv.slice(2);
let dir = path.join(ROOT, 'target/ceiling');
const di = args.indexOf('--dir');
if (di >= 0) {
  dir = args[di + 1];
  args.splice(di, 2);
}
const gzip = args.includes('--gzip');
const sizes = args.filter((a) => a !== '--gzip').map(Number).filter((n) => n > 0);
fs.mkdirSync(dir, { recursive: true });
const base = path.join(ROOT, 'fixtures/llama_dense_eager.pt.trace.json.gz');
const server = await serve();
const browser = await launch();
try {
  for (const mb of sizes) {
    const plain = path.join(dir, `llama_${mb}mb.json`);
    if (!fs.existsSync(plain)) buildBigTrace(base, mb, plain);
    const files = [plain];
    if (gzip) {
      const gz = `${plain}.gz`;
      if (!fs.existsSync(gz)) execFileSync('sh', ['-c', `gzip -1 -c '${plain}' > '${gz}'`]);
      files.push(gz);
    }
    for (const file of files) {
      const { page } = await browser.newPage();
      try {
        await page.goto(server.url);
        await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
        const t0 = Date.now();
        await pickFile(page, file);
        await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state), null, { timeout: 60 * 60_000, polling: 200 });
        const state = await page.evaluate(() => document.body.dataset.state);
        const secs = (Date.now() - t0) / 1000;
        const size = (fs.statSync(file).size / 1e6).toFixed(0);
        if (state === 'ready') {
          const memory = await page.evaluate(() => window.traceprismTiming.memory);
          console.log(`${path.basename(file)} (${size} MB): opened in ${secs.toFixed(1)} s, wasm memory ${(memory / 2 ** 20).toFixed(0)} MB`);
        } else {
          console.log(`${path.basename(file)} (${size} MB): not opened after ${secs.toFixed(1)} s: ${await page.textContent('#error')}`);
        }
      } catch (err) {
        console.log(`${path.basename(file)}: the page failed: ${err.message.split('\n')[0]}`);
      } finally {
        await page.close().catch(() => {});
      }
    }
  }
} finally {
  await browser.close();
  await server.close();
}

// Measures what cancelling a load frees: Chromium's resident memory (all its processes, from
// /proc) before a trace is picked, halfway through reading it, and after Cancel. Prints figures;
// asserts nothing. Linux only (reads /proc).
//
//   node scripts/cancel-memory.mjs [TRACE]     (default: target/bench-data/llama_300mb.json,
//                                               made by `TRACEPRISM_BENCH_MB=300 cargo bench`)
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { ROOT, launch, serve, pickFile } from '../tests/browser/browser.mjs';

const file = process.argv[2] || path.join(ROOT, 'target/bench-data/llama_300mb.json');
if (!fs.existsSync(file)) {
  console.error(`${file} missing: run TRACEPRISM_BENCH_MB=300 cargo bench (or pass a trace)`);
  process.exit(2);
}

/** Resident memory of every Chromium process, MB. */
function chromiumRssMb() {
  const out = execFileSync('ps', ['-C', 'chromium', '-o', 'rss=']).toString();
  return out.split('\n').filter(Boolean).reduce((t, kb) => t + Number(kb), 0) / 1024;
}

const server = await serve();
const browser = await launch();
try {
  const { page } = await browser.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
  const idle = chromiumRssMb();
  await pickFile(page, file);
  await page.waitForFunction(() => Number(document.getElementById('progress-bar').value) >= 0.5, null, { timeout: 300_000, polling: 20 });
  const loading = chromiumRssMb();
  const workers = page.workers().length;
  await page.click('#cancel-button');
  await page.waitForFunction(() => document.body.dataset.state === 'cancelled');
  await new Promise((r) => setTimeout(r, 3000));
  const cancelled = chromiumRssMb();
  console.log(`${path.basename(file)} (${(fs.statSync(file).size / 1e6).toFixed(0)} MB): Chromium resident memory idle ${idle.toFixed(0)} MB, halfway through reading ${loading.toFixed(0)} MB (${workers} workers), 3 s after Cancel ${cancelled.toFixed(0)} MB (${page.workers().length} workers): ${(loading - cancelled).toFixed(0)} MB freed`);
} finally {
  await browser.close();
  await server.close();
}

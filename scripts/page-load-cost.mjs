// What loading a trace costs the machine, beyond the page's own clock: for each load (the file
// picked after the worker's warm-up), the wall time from pick to the page being ready, and the CPU
// time and minor page faults of every Chromium process over that span, by process type (browser,
// renderer, gpu-process, utility). Page faults count fresh memory touched (each new buffer costs
// its pages' faults and zeroing), which unlike time does not drift with the host's load. Linux only
// (reads /proc). Prints figures; asserts nothing.
//
//   node scripts/page-load-cost.mjs TRACE [--runs N]
//
// TRACEPRISM_DIST=DIR measures another build of the page (e.g. a copy of dist/ from before a change).
import fs from 'node:fs';
import { launch, serve, pickFile, waitReady, staleFrontEnd } from '../tests/browser/browser.mjs';

const args = process.argv.slice(2);
const ri = args.indexOf('--runs');
const runs = ri >= 0 ? Number(args.splice(ri, 2)[1]) : 3;
const trace = args[0];
if (!trace) {
  console.error('usage: node scripts/page-load-cost.mjs TRACE [--runs N]');
  process.exit(2);
}
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** {pid: {type, cpuMs, minorFaults}} for every Chromium process. */
function chromiumProcesses() {
  const out = {};
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split(/[\0 ]/); // child processes rewrite it as one line
      if (!cmd[0].includes('chromium')) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields after the name: state is 3, minflt 10, utime 14, stime 15 (man 5 proc), so index k-3.
      const type = (cmd.find((a) => a.startsWith('--type=')) || '--type=browser').slice(7);
      out[pid] = { type, cpuMs: (Number(f[11]) + Number(f[12])) * TICK_MS, minorFaults: Number(f[7]) };
    } catch {
      // The process ended between listing and reading.
    }
  }
  return out;
}

/** Per process type: CPU ms and minor faults between two snapshots (new processes count in full). */
function difference(before, after) {
  const byType = {};
  for (const [pid, a] of Object.entries(after)) {
    const b = before[pid] || { cpuMs: 0, minorFaults: 0 };
    const t = (byType[a.type] ??= { cpuMs: 0, minorFaults: 0 });
    t.cpuMs += a.cpuMs - b.cpuMs;
    t.minorFaults += a.minorFaults - b.minorFaults;
  }
  return byType;
}

const stale = staleFrontEnd();
if (stale.length) console.warn(`warning: dist/ is older than www/ (${stale.slice(0, 3).join(', ')}${stale.length > 3 ? ', ...' : ''}): run \`npm run build\` to time the current page`);
const server = await serve();
const browser = await launch();
try {
  console.log(`trace: ${trace} (${(fs.statSync(trace).size / 1e6).toFixed(1)} MB)`);
  for (let run = 1; run <= runs; run++) {
    const page = await browser.context.newPage();
    await page.goto(server.url + '#overview', { waitUntil: 'load' });
    await page.waitForFunction(() => window.traceprismTiming.warm, null, { timeout: 120_000 });
    const before = chromiumProcesses();
    const t0 = Date.now();
    await pickFile(page, trace);
    await waitReady(page, 30 * 60_000);
    const ms = Date.now() - t0;
    const cost = difference(before, chromiumProcesses());
    const parts = Object.entries(cost)
      .filter(([, c]) => c.cpuMs > 0 || c.minorFaults > 100)
      .sort((x, y) => y[1].minorFaults - x[1].minorFaults)
      .map(([type, c]) => `${type}: ${c.cpuMs} ms CPU, ${c.minorFaults} faults`);
    console.log(`run ${run}: ready after ${ms} ms | ${parts.join(' | ')}`);
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
}

// CPU time of the running Chromium's processes and threads, from Linux /proc (empty elsewhere).
// The page's benches take a snapshot before and after a load: `bench-page.mjs` by thread,
// `page-floor.mjs` by process.
import fs from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ). */
const TICK = 100;

/** User + system seconds in a /proc `stat` line, and the name between its parentheses. */
function statOf(text) {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { name: text.slice(text.indexOf('(') + 1, text.lastIndexOf(')')), seconds: (Number(fields[11]) + Number(fields[12])) / TICK };
}

/** Every Chromium process: its pid and kind (`browser`, `renderer`, `gpu-process`, ...). */
function chromiumProcesses() {
  let pids = [];
  try {
    pids = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  const out = [];
  for (const pid of pids) {
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
      if (cmd.includes('chrom')) out.push({ pid, kind: (cmd.match(/--type=([a-z-]+)/) || [, 'browser'])[1] });
    } catch { /* gone */ }
  }
  return out;
}

/**
 * CPU seconds of every live Chromium thread: `pid/tid` → {key: "kind/thread name", seconds}. With
 * `splitWorkers`, each worker thread gets a key of its own (`#tid` added). A thread that ends
 * between two snapshots is missing from the second (its time counts in `processCpu` only).
 * @param {boolean} [splitWorkers]
 */
export function threadCpu(splitWorkers = false) {
  const out = new Map();
  for (const { pid, kind } of chromiumProcesses()) {
    let tids = [];
    try {
      tids = fs.readdirSync(`/proc/${pid}/task`);
    } catch {
      continue;
    }
    for (const tid of tids) {
      try {
        const { name, seconds } = statOf(fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8'));
        out.set(`${pid}/${tid}`, { key: splitWorkers && name.startsWith('Dedicated') ? `${kind}/${name}#${tid}` : `${kind}/${name}`, seconds });
      } catch { /* gone */ }
    }
  }
  return out;
}

/** CPU seconds of all Chromium processes so far, threads that have ended included. */
export function processCpu() {
  let total = 0;
  for (const { pid } of chromiumProcesses()) {
    try {
      total += statOf(fs.readFileSync(`/proc/${pid}/stat`, 'utf8')).seconds;
    } catch { /* gone */ }
  }
  return total;
}

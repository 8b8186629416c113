// Watch a folder (`traceprism watch` in the page): a directory handle (the File System Access API's
// `showDirectoryPicker`, or any handle: the tests use the origin-private file system) is polled;
// each new trace file is read once it has stopped growing for two polls and reads whole (a file
// found cut is read again only once it has grown), by a worker of its own, and kept only as its
// window (decode step time median and p90, prefill time, top categories). Nothing leaves the page.
import { el } from '../dom.js';
import { formatUs } from '../format.js';
import { stackedBars } from '../charts.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['page', 'route'];

/**
 * @typedef {{file: string, passes: [string, number][], decode_median_us: number|null, decode_p90_us: number|null,
 *   prefill_median_us: number|null, top_categories: [string, number][], straggler?: string|null, files?: string[]}} Window
 */

/**
 * What the watch needs from outside: how the core takes file names (whether it reads each, and
 * the key its window's rank files share: `gate::trend::WatchedName`, asked of the worker, never
 * decided here), and the reads.
 * @typedef {{
 *   names: (names: string[]) => Promise<{candidate: boolean, group: string|null}[]>,
 *   readFile: (file: File, name: string) => Promise<{window?: Window, cut?: string}>,
 *   readRun?: (files: {file: File, name: string}[]) => Promise<{window?: Window, straggler?: string|null, cut?: string}>,
 * }} WatchIo
 */

/**
 * Stops the watch (keeps its windows).
 * @param {import('../store.js').WatchState} s
 */
export function stopWatch(s) {
  if (s.timer) clearInterval(s.timer);
  s.timer = null;
}

/**
 * One look at the folder: new, grown, deleted files; reads what is complete. With `s.ranks`, the
 * files of one window across ranks (one name but for the rank token) are read together by
 * `io.readRun` once none of them is still being written, and the window carries the straggler.
 * @param {import('../store.js').WatchState} s
 * @param {WatchIo} io
 */
export async function pollOnce(s, io) {
  if (s.busy || !s.handle) return;
  s.busy = true;
  try {
    /** @type {[string, any][]} */
    const entries = [];
    for await (const [name, entry] of s.handle.entries()) if (entry.kind === 'file') entries.push([name, entry]);
    const taken = await io.names(entries.map(([name]) => name));
    const present = new Map();
    for (const [i, [name, entry]] of entries.entries()) {
      if (!taken[i].candidate) continue;
      // A file listed may be gone a moment later (the browser's own `.crswap` swap file renamed
      // on close, an editor's temporary file): it is absent from this poll, not an error.
      const file = await entry.getFile().catch((/** @type {any} */ err) => {
        if (err && err.name === 'NotFoundError') return null;
        throw err;
      });
      if (!file) continue;
      present.set(name, file);
      s.groups.set(name, taken[i].group);
    }
    for (const [name, f] of s.seen) {
      if (!present.has(name) && f.done && !f.deletedNoted) {
        f.deletedNoted = true;
        s.notes.push(`${name} was deleted (its window stays)`);
      }
    }
    /** @type {[string, File][]} */
    const ready = [];
    for (const [name, file] of [...present].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
      const f = s.seen.get(name);
      if (!f) {
        s.seen.set(name, { size: file.size, modified: file.lastModified, still: 0, done: false, cutAt: null });
      } else if (f.size !== file.size || f.modified !== file.lastModified) {
        if (!f.done) Object.assign(f, { size: file.size, modified: file.lastModified, still: 0 });
      } else {
        f.still += 1;
        if (!f.done && f.still >= 2 && f.cutAt !== f.size) ready.push([name, file]);
      }
    }
    if (s.ranks && io.readRun) await readRankWindows(s, ready, io.readRun);
    else for (const [name, file] of ready) {
      const f = s.seen.get(name);
      try {
        const r = await io.readFile(file, name);
        if (r.cut) {
          f.cutAt = f.size;
          f.still = 0;
        } else if (r.window) {
          f.done = true;
          s.windows.push(r.window);
        }
      } catch (err) {
        f.done = true;
        s.notes.push(`${name} cannot be read, skipped: ${err.message}`);
      }
    }
  } finally {
    s.busy = false;
  }
  s.onChange?.();
}

/**
 * With `ranks`: reads each window's rank files together once all of them are ready.
 * @param {import('../store.js').WatchState} s
 * @param {[string, File][]} ready
 * @param {(files: {file: File, name: string}[]) => Promise<{window?: Window, straggler?: string|null, cut?: string}>} readRun
 */
async function readRankWindows(s, ready, readRun) {
  const groups = new Map();
  for (const [name, file] of ready) {
    const key = s.groups.get(name) ?? name;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push({ file, name });
  }
  for (const [key, files] of groups) {
    const names = new Set(files.map((f) => f.name));
    const pending = [...s.seen].some(([n, f]) => !f.done && !names.has(n) && s.groups.get(n) === key);
    if (pending) continue;
    try {
      const r = await readRun(files);
      if (r.cut) {
        for (const { name } of files) {
          const f = s.seen.get(name);
          if (f) Object.assign(f, { cutAt: f.size, still: 0 });
        }
      } else if (r.window) {
        for (const { name } of files) s.seen.get(name).done = true;
        s.windows.push({ ...r.window, file: files.length > 1 ? `${key} (${files.length} ranks)` : r.window.file, files: files.map((f) => f.name), straggler: r.straggler ?? null });
      }
    } catch (err) {
      for (const { name } of files) s.seen.get(name).done = true;
      s.notes.push(`${key} cannot be read, skipped: ${err.message}`);
    }
  }
}

/**
 * Starts watching `handle` (any directory handle), polling every `intervalMs`.
 * @param {import('../store.js').WatchState} s
 * @param {any} handle
 * @param {WatchIo} io
 * @param {number} intervalMs
 */
export function startWatch(s, handle, io, intervalMs = 2000) {
  stopWatch(s);
  Object.assign(s, { windows: [], seen: new Map(), groups: new Map(), notes: [], handle });
  // A poll that fails (the folder's permission withdrawn, the folder gone) is said once, not thrown
  // every interval; the next poll tries again.
  const poll = () => pollOnce(s, io).catch((/** @type {any} */ err) => {
    const note = `the folder cannot be read: ${(err && err.message) || err}`;
    if (s.notes[s.notes.length - 1] !== note) s.notes.push(note);
    s.onChange?.();
  });
  s.timer = setInterval(poll, intervalMs);
  poll();
}

/** The trend: decode step median and p90 and prefill per window, as lines on one time axis. */
function trendChart(windows) {
  const width = 720, height = 220, left = 70, bottom = 24;
  const canvas = el('canvas', { width, height, attrs: { 'data-testid': 'watch-trend', 'data-windows': windows.length } });
  const g = canvas.getContext('2d');
  if (!g || !windows.length) return canvas;
  const series = [
    { key: 'decode_median_us', colour: '#4e79a7', label: 'decode median' },
    { key: 'decode_p90_us', colour: '#a0cbe8', label: 'decode p90' },
    { key: 'prefill_median_us', colour: '#f28e2b', label: 'prefill' },
  ];
  const max = Math.max(1, ...windows.flatMap((w) => series.map((s) => w[s.key] ?? 0)));
  const x = (k) => left + ((width - left - 20) * (windows.length === 1 ? 0.5 : k / (windows.length - 1)));
  const y = (v) => height - bottom - ((height - bottom - 10) * v) / max;
  g.font = '12px system-ui, sans-serif';
  g.fillStyle = '#555';
  g.fillText(formatUs(max), 4, 14);
  g.fillText('0', 4, height - bottom);
  series.forEach((s, i) => {
    g.strokeStyle = s.colour;
    g.fillStyle = s.colour;
    g.lineWidth = 2;
    g.beginPath();
    let started = false;
    windows.forEach((w, k) => {
      const v = w[s.key];
      if (v === null || v === undefined) return;
      if (started) g.lineTo(x(k), y(v));
      else g.moveTo(x(k), y(v));
      started = true;
      g.fillRect(x(k) - 2, y(v) - 2, 4, 4);
    });
    g.stroke();
    g.fillText(s.label, left + 10 + i * 120, height - 6);
  });
  return canvas;
}

/**
 * Renders the watch view.
 * @param {any} ctx the view context (watch: the store's watch state; loadMain, newSession, rerender)
 * @param {HTMLElement} root
 */
export async function watch(ctx, root) {
  /** @type {import('../store.js').WatchState} */
  const watchState = ctx.watch;
  root.append(el('h2', { text: 'Watch a folder' }),
    el('p', { class: 'note', text: 'Pick the folder a profiler writes its traces into (one file per window). Each new file is read in this browser once it has stopped growing and reads whole, and the trend grows by one window. Nothing is uploaded.' }));
  const session = () => {
    if (!watchState.session || watchState.session.broken) watchState.session = ctx.newSession();
    return watchState.session;
  };
  const readFile = async (file, name) => session().call('watchFile', { file, name, options: {} });
  watchState.onChange = () => { if (location.hash.startsWith('#watch')) ctx.rerender(); };
  // Tests (and other code) can watch any directory handle; the memory bench asks the watch's
  // worker how much memory its core holds.
  const readRun = async (files) => session().call('watchRun', { files, options: {} });
  /** @type {WatchIo} */
  const io = { names: (names) => session().call('watchNames', { names }), readFile, readRun };
  /** @type {any} */ (window).traceprismWatch = (handle, intervalMs, ranks = false) => {
    watchState.ranks = ranks;
    startWatch(watchState, handle, io, intervalMs);
  };
  /** @type {any} */ (window).traceprismWatchMemory = () => watchState.session?.call('memory') ?? null;
  const supported = 'showDirectoryPicker' in window;
  const controls = el('div', { class: 'compare-options' });
  if (supported) {
    controls.append(el('button', { type: 'button', id: 'watch-pick', text: watchState.handle ? 'Watch another folder…' : 'Watch a folder…', on: { click: async () => {
      try {
        const handle = await /** @type {any} */ (window).showDirectoryPicker();
        startWatch(watchState, handle, io, 2000);
      } catch (err) {
        if (err.name !== 'AbortError') ctx.showError?.(`Cannot watch that folder: ${err.message}`);
      }
    } } }));
  } else {
    controls.append(el('p', { class: 'warning', attrs: { 'data-testid': 'watch-unsupported' }, text: 'This browser cannot watch a folder (no File System Access API: Firefox and Safari). Open the window files instead; each is read once.' }));
    const input = el('input', { type: 'file', multiple: true, accept: '.json,.gz,.pb,.sqlite', id: 'watch-files' });
    input.addEventListener('change', async () => {
      const files = [...(input.files || [])];
      const taken = await io.names(files.map((f) => f.name));
      for (const file of files.filter((_, i) => taken[i].candidate)) {
        const r = await readFile(file, file.name);
        if (r.window) watchState.windows.push(r.window);
      }
      ctx.rerender();
    });
    controls.append(input);
  }
  const ranksBox = el('input', { type: 'checkbox', id: 'watch-ranks', checked: watchState.ranks, on: { change: (e) => { watchState.ranks = e.target.checked; } } });
  controls.append(el('label', { class: 'field' }, ranksBox, el('span', { text: 'a folder of rank files: read each window\'s ranks together and name the straggler' })));
  if (watchState.timer) controls.append(el('button', { type: 'button', text: 'Stop watching', on: { click: () => { stopWatch(watchState); ctx.rerender(); } } }));
  root.append(controls);
  const w = watchState.windows;
  root.append(el('p', { attrs: { 'data-testid': 'watch-status', 'data-windows': w.length } },
    watchState.timer ? `watching: ${w.length} window${w.length === 1 ? '' : 's'}` : `${w.length} window${w.length === 1 ? '' : 's'}`));
  for (const n of watchState.notes) root.append(el('div', { class: 'note', text: n }));
  if (!w.length) return;
  root.append(el('h3', { text: 'Step time per window' }), trendChart(w));
  root.append(el('h3', { text: 'Category shares of decode kernel time, per window (top three)' }),
    stackedBars(w.map((x, k) => ({ label: `window ${k}`, parts: x.top_categories.map(([label, value]) => ({ label, value })) }))));
  const rows = w.map((x, k) => el('tr', { class: 'clickable', attrs: { 'data-window': k }, on: { click: async () => {
    const name = x.files ? x.files[0] : x.file;
    const entry = await watchState.handle?.getFileHandle(name).catch(() => null);
    if (entry) ctx.loadMain(await entry.getFile(), name);
  } } },
  el('td', { text: String(k) }), el('td', { text: x.file }),
  el('td', { text: x.passes.map(([p, n]) => `${n} ${p}`).join(', ') }),
  el('td', { class: 'num', text: x.decode_median_us === null ? '' : formatUs(x.decode_median_us) }),
  el('td', { class: 'num', text: x.decode_p90_us === null ? '' : formatUs(x.decode_p90_us) }),
  el('td', { class: 'num', text: x.prefill_median_us === null ? '' : formatUs(x.prefill_median_us) }),
  el('td', { attrs: { 'data-straggler': '' }, text: x.straggler || '' })));
  root.append(el('table', { class: 'data', attrs: { 'data-testid': 'watch-windows' } },
    el('thead', {}, el('tr', {}, ...['window', 'file', 'passes', 'decode median', 'decode p90', 'prefill', 'straggler'].map((h) => el('th', { text: h })))),
    el('tbody', {}, ...rows)));
}

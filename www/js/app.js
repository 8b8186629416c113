// The page: loading (drop, picker, example), progress and cancel, tabs, exports, and the second
// trace of a comparison (worker slot `b`).
import { el, clear } from './dom.js';
import { Session } from './session.js';
import { formatBytes, formatCount } from './format.js';
import { VIEWS, readHash, writeHash, formatHash } from './routing.js';
import { saveFile, saveZip } from './download.js';
import { overview } from './views/overview.js';
import { categories } from './views/categories.js';
import { phases } from './views/phases.js';
import { layers } from './views/layers.js';
import { ops } from './views/ops.js';
import { kernels } from './views/kernels.js';
import { report } from './views/report.js';
import { compare } from './views/compare.js';
import { timeline } from './views/timeline.js';
import { rules } from './views/rules.js';
import { ranks } from './views/ranks.js';
import { watch } from './views/watch.js';
import { RULES_KEY } from './rules-text.js';
import { Store, emptyRun } from './store.js';
import { readStalled } from './constants.js';

const RENDER = { rules, timeline, overview, categories, phases, layers, ops, kernels, report, compare, ranks, watch };
const EXAMPLE = 'examples/sglang_qwen3-8b_decode_graph_mi300x.json.gz';
/** The page's element with that id (any: the page knows what each id is). @type {(id: string) => any} */
const $ = (id) => document.getElementById(id);

/** Everything the page has loaded and shows, and its generation counter (see store.js). */
const store = new Store();

/** For the browser tests: a request to the worker (e.g. the memory-ceiling test). */
window.traceprismTest = { call: (op, data = {}) => store.core.call(op, data) };

/** Timing marks for the benchmark and tests (no trace content). */
const timing = (window.traceprismTiming = /** @type {Record<string, any>} */ ({}));

function setState(state) {
  document.body.dataset.state = state;
}

function showError(message) {
  const box = $('error');
  box.textContent = message;
  box.hidden = !message;
}

/**
 * The banner for secret-looking metadata: the key paths (never the values), as the CLI's WARNING says it.
 * @param {string[]} keys
 */
function secretWarning(keys) {
  const shown = keys.slice(0, 5).join(', ');
  const more = keys.length > 5 ? ` and ${keys.length - 5} more` : '';
  return `Warning: the trace holds secret-looking metadata (${shown}${more}): redact it before sharing the trace itself (traceprism's outputs never copy it)`;
}

/** Shows how the input ended (a truncation warning, notes), or hides both when `summary` is null. */
function showInputStatus(summary) {
  const input = (summary && summary.input) || {};
  const warning = $('input-warning');
  warning.textContent = input.truncation ? `Warning: ${input.truncation.message}` : '';
  warning.hidden = !input.truncation;
  const secrets = (summary && summary.secret_metadata) || [];
  const secretBox = $('input-secrets');
  secretBox.textContent = secrets.length ? secretWarning(secrets) : '';
  secretBox.hidden = !secrets.length;
  const note = $('input-note');
  note.textContent = (input.notes || []).map((n) => `Note: ${n}`).join('\n');
  note.hidden = !(input.notes || []).length;
}

/** The user's category rules kept in this browser ('' if none). */
function userRules() {
  try {
    return localStorage.getItem(RULES_KEY) || '';
  } catch {
    return '';
  }
}

/** The options every load passes to the core (the page's settings and the user's rules). */
function loadOptions() {
  const rules = userRules();
  return { strict: $('strict-input').checked, ...(rules.trim() ? { category_rules: rules } : {}) };
}

function setProgress(visible, fraction = 0, text = '') {
  $('progress').hidden = !visible;
  $('progress-bar').value = fraction;
  $('progress-text').textContent = text;
}

/** Loads a File/Blob into a fresh worker, replacing whatever was loaded. */
async function loadTrace(blob, fileName) {
  if ((store.trace && document.body.dataset.state === 'loading') || store.core.broken) restartCore();
  const session = store.core;
  const trace = { session, fileName, blob, summary: null, tableNames: [], tableViews: {}, tables: new Map(), csvs: new Map(), rollup: null };
  store.trace = trace;
  const stamp = store.begin();
  store.comparison = null;
  showError('');
  showInputStatus(null);
  $('file-name').textContent = `${fileName} (${formatBytes(blob.size)})`;
  $('tabs').hidden = true;
  clear($('view')).append(el('div', { class: 'empty', text: 'reading…' }));
  setState('loading');
  timing.start = performance.now();
  timing.bytes = blob.size;
  timing.firstTable = null;
  timing.parallel = null;
  setProgress(true, 0, 'starting…');
  // A read that stops without an error (a worker that stops answering at the tab's memory ceiling)
  // is noticed: no progress for a minute before the end of the file stops the worker.
  const read = { at: performance.now(), bytes: 0 };
  const watchdog = setInterval(() => {
    if (!store.current(stamp)) return clearInterval(watchdog);
    if (!readStalled(read.at, performance.now(), read.bytes, blob.size)) return;
    clearInterval(watchdog);
    restartCore();
    store.trace = null;
    setProgress(false);
    clear($('view'));
    showError(`Reading ${fileName} stopped at ${formatBytes(read.bytes)} of ${formatBytes(blob.size)} and did not go on for a minute: the trace is likely too large for a browser tab. The traceprism command-line tool reads it: traceprism summary <file>. The page is ready for another trace.`);
    setState('error');
  }, 5000);
  try {
    const result = await session.load(blob, loadOptions(), ({ bytesRead, total, events }) => {
      if (!store.current(stamp)) return;
      read.at = performance.now();
      read.bytes = bytesRead;
      if (bytesRead === total) timing.parsed = performance.now();
      setProgress(true, total ? bytesRead / total : 1, `${formatBytes(bytesRead)} of ${formatBytes(total)} read · ${formatCount(events)} events`);
    });
    clearInterval(watchdog);
    if (!store.current(stamp)) return;
    timing.analysed = performance.now();
    timing.memory = result.memory;
    // How the file was parsed: {workers, parts, adopted} when the worker read it in ranges.
    timing.parallel = result.parallel || null;
    trace.summary = result.summary;
    showInputStatus(trace.summary);
    trace.tableNames = result.tables;
    trace.tableViews = result.views;
    prefetchTables(trace, readHash().view);
    setProgress(false);
    $('tabs').hidden = false;
    updateTabs();
    setState('ready');
    await showView();
  } catch (err) {
    clearInterval(watchdog);
    if (!store.current(stamp)) return;
    setProgress(false);
    store.trace = null;
    clear($('view'));
    if (err.message === 'cancelled') {
      showError('Loading cancelled.');
      setState('cancelled');
    } else {
      restartCore(); // a failed core may be left unusable (a trap): start clean for the next file
      showError(`Could not read ${fileName}: ${err.message}`);
      setState('error');
    }
  }
}

/**
 * Asks the worker for the tables of `view` at once (they are cached for the view): it builds them
 * while this thread lays the page out and renders the view's cards and charts, instead of after.
 */
function prefetchTables(trace, view) {
  const ctx = contextFor(trace, view);
  for (const name of trace.tableNames) {
    if (trace.tableViews[name] === view) ctx.table(name).catch(() => {}); // the view asks again and shows the error
  }
}

/** Stops the worker (the only way to interrupt the core mid-parse) and starts a fresh one. */
function restartCore() {
  if (store.core) store.core.close();
  startCore();
  // The worker held the second trace and the run too.
  store.dropWorkerState();
}

/** Shows the tabs that have something to show: without a trace, only the run's. */
function updateTabs() {
  const hasTrace = Boolean(store.trace && store.trace.summary);
  for (const a of $('tabs').querySelectorAll('a')) a.hidden = !hasTrace && a.dataset.view !== 'ranks' && a.dataset.view !== 'watch';
  for (const id of ['export-all', 'download-xlsx', 'download-html']) $(id).hidden = !hasTrace;
}

/**
 * Loads the traces of several ranks of one run into the worker (each as any trace is loaded,
 * then moved into the run) and analyses the run. A rank that cannot be read is named and left
 * out; the others are still analysed.
 * @param {File[]} files
 */
async function loadRun(files) {
  if (document.body.dataset.state === 'loading' || store.core.broken) restartCore();
  const session = store.core;
  const run = (store.run = emptyRun(store.run.align));
  const stamp = store.begin();
  run.session = session;
  run.loading = `reading ${files.length} rank traces…`;
  showError('');
  timing.runStart = performance.now();
  timing.runReady = null;
  timing.runBytes = files.reduce((t, f) => t + f.size, 0);
  writeHash('ranks');
  $('tabs').hidden = false;
  updateTabs();
  await showView();
  const say = (text) => {
    store.run.loading = text;
    const node = document.querySelector('[data-run-progress]');
    if (node) node.textContent = text;
  };
  try {
    await session.call('runStart');
    for (let i = 0; i < files.length; i++) {
      const f = files[i];
      try {
        await session.load(f, loadOptions(), ({ bytesRead, total, events }) => {
          if (store.current(stamp)) say(`rank file ${i + 1} of ${files.length}, ${f.name}: ${formatBytes(bytesRead)} of ${formatBytes(total)} read · ${formatCount(events)} events`);
        }, `r${i}`);
        await session.call('runAdd', { slot: `r${i}`, name: f.name });
      } catch (err) {
        if (err.message === 'cancelled' || !store.current(stamp)) throw err;
        store.run.failed.push(`${f.name}: ${err.message} (this rank is left out)`);
      }
    }
    store.run.summary = await session.call('runAnalyse', { align: store.run.align });
    timing.memory = await session.call('memory');
  } catch (err) {
    if (store.current(stamp) && err.message !== 'cancelled') showError(`Could not analyse the run: ${err.message}`);
  }
  run.loading = null;
  // Something else was loaded meanwhile: this run is no longer the one shown.
  if (!store.current(stamp)) return;
  timing.runReady = performance.now();
  if (readHash().view === 'ranks') await showView();
}

/** Analyses the loaded run again, clocks aligned or not. */
async function reanalyseRun(align) {
  store.run.align = align;
  if (!store.run.session || !store.run.summary) return;
  try {
    store.run.summary = await store.run.session.call('runAnalyse', { align });
    store.run.tables.clear();
    store.run.csvs.clear();
  } catch (err) {
    showError(`Could not analyse the run: ${err.message}`);
  }
  await showView();
}

/** The run's CSV of one table (cached). */
function runCsv(name) {
  if (!store.run.csvs.has(name)) store.run.csvs.set(name, store.run.session.call('runCsv', { name }));
  return store.run.csvs.get(name);
}

/** Loads the second trace of a comparison into the worker's slot `b` (trace A stays). */
async function loadSecond(blob, fileName) {
  if (!store.trace || document.body.dataset.state !== 'ready') {
    showError('Load trace A first, then the trace to compare it with.');
    return;
  }
  const session = store.core;
  const stamp = store.begin();
  store.second = null;
  store.comparison = null;
  store.secondLoading = `reading ${fileName}…`;
  showError('');
  writeHash('compare');
  await showView();
  const say = (text) => {
    store.secondLoading = text;
    const node = document.querySelector('[data-second-progress]');
    if (node) node.textContent = text;
  };
  try {
    const result = await session.load(blob, loadOptions(), ({ bytesRead, total, events }) => {
      if (store.current(stamp)) say(`${fileName}: ${formatBytes(bytesRead)} of ${formatBytes(total)} read · ${formatCount(events)} events`);
    }, 'b');
    if (!store.current(stamp)) return;
    store.second = { fileName, summary: result.summary };
  } catch (err) {
    if (!store.current(stamp)) return;
    if (err.message !== 'cancelled') showError(`Could not read ${fileName}: ${err.message}`);
  }
  store.secondLoading = null;
  if (readHash().view === 'compare') await showView();
}

/** The comparison of A and B for `options` (cached while the traces and options stay). */
function comparisonFor(session, options) {
  const key = `${store.generation}\u0000${JSON.stringify(options)}`;
  if (!store.comparison || store.comparison.key !== key) {
    const entry = { key, tables: new Map(), csvs: new Map() };
    entry.promise = session.call('compare', { options }).catch((e) => { if (store.comparison === entry) store.comparison = null; throw e; });
    store.comparison = entry;
  }
  return store.comparison;
}

function baseName(fileName) {
  return fileName.replace(/(\.pt)?\.trace\.json(\.gz)?$|\.json(\.gz)?$/, '') || 'trace';
}

async function downloadWorkbook() {
  if (!store.trace?.summary) return;
  try {
    const buffer = await store.trace.session.call('workbook');
    saveFile(`${baseName(store.trace.fileName)}.xlsx`, new Uint8Array(buffer), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
  } catch (err) {
    showError(`xlsx export failed: ${err.message}`);
  }
}

async function downloadHtml() {
  if (!store.trace?.summary) return;
  try {
    saveFile(`${baseName(store.trace.fileName)}-report.html`, await store.trace.session.call('html'), 'text/html;charset=utf-8');
  } catch (err) {
    showError(`HTML report failed: ${err.message}`);
  }
}

function cancel() {
  if (!store.trace || document.body.dataset.state !== 'loading') return;
  // A new worker, a new generation: the load's own ending sees it is stale and stays quiet.
  restartCore();
  store.trace = null;
  setProgress(false);
  clear($('view'));
  showError('Loading cancelled.');
  setState('cancelled');
}

/** Stands in for trace A when only a run is loaded (the ranks view reads none of it). */
function noTrace() {
  return { session: store.core, fileName: '', blob: null, summary: null, tableNames: [], tableViews: {}, tables: new Map(), csvs: new Map(), rollup: null };
}

/** The context a view renders with: summary, table names and cached fetchers. */
function contextFor(trace, view, params = {}) {
  const cached = (map, key, make) => {
    if (!map.has(key)) map.set(key, make().catch((e) => { map.delete(key); throw e; }));
    return map.get(key);
  };
  const ctx = {
    summary: trace.summary,
    fileName: trace.fileName,
    tableNames: trace.tableNames,
    // The view that shows each table, as the core declares it with the table.
    tableViews: trace.tableViews,
    table: (name) => cached(trace.tables, name, () => trace.session.call('table', { name })),
    csv: (name) => cached(trace.csvs, name, () => trace.session.call('csv', { name })),
    rollup: () => (trace.rollup ||= trace.session.call('rollup')),
    exportCsv: async (name) => {
      try {
        saveFile(`${name}.csv`, await trace.session.call('csv', { name }));
      } catch (err) {
        showError(`export of ${name} failed: ${err.message}`);
      }
    },
    setArgs: (args) => writeHash(view, args),
    // The view's address parameters (#timeline?from=…&to=…) and a way to change them without
    // drawing the view again (`record`: as a new history entry).
    params,
    setParams: (next, record = false) => {
      store.ignoreHash = location.hash;
      writeHash(view, [], next, record);
      store.ignoreHash = location.hash;
    },
    // The user's category rules: read, apply (the worker analyses the trace again), built-in text.
    userRules,
    applyRules: async (text) => {
      const result = await trace.session.call('setRules', { toml: text });
      try {
        if (text.trim()) localStorage.setItem(RULES_KEY, text); else localStorage.removeItem(RULES_KEY);
      } catch {
        // Storage may be off (private mode): the rules still apply to this trace.
      }
      trace.summary = result.summary;
      trace.tableNames = result.tables;
    trace.tableViews = result.views;
      trace.tables.clear();
      trace.csvs.clear();
      trace.rollup = null;
      // Trace A's categories changed: a comparison made before is stale.
      store.begin();
      return result.summary;
    },
    builtinRules: () => trace.session.call('builtinRules'),
    // Downloads one window of the trace as a .json.gz (traceprism split): `window` is {pass},
    // {phase} or {from_us, to_us}; `label` names the file.
    split: async (window, label) => {
      try {
        const bytes = await trace.session.call('split', { window, file: trace.blob });
        saveFile(`${baseName(trace.fileName)}-${label}.json.gz`, new Uint8Array(bytes), 'application/gzip');
      } catch (err) {
        showError(`split failed: ${err.message}`);
      }
    },
    // The timeline's selection ({fromUs, toUs} in the trace's clock, as the tables print times):
    // the per-kernel tables show only the kernels that start inside it until it is cleared.
    selection: trace.selection || null,
    setSelection: (s) => { trace.selection = s; },
    clearSelection: () => { trace.selection = null; showView(); },
    // Goes to another view (a new history entry), e.g. the timeline at a pass or a kernel.
    navigate: (to, params = {}) => { location.hash = formatHash(to, [], params); },
    // A request to the worker about the trace (the timeline's buckets and hit tests).
    call: (op, data = {}) => trace.session.call(op, data),
    rerender: () => showView(),
    // Comparison (view "compare").
    second: store.second,
    secondLoading: store.secondLoading,
    loadMain: (blob, name) => loadTrace(blob, name),
    loadSecond: (blob, name) => loadSecond(blob, name),
    compare: (options) => {
      const c = comparisonFor(trace.session, options);
      ctxComparison = c;
      return c.promise;
    },
    // The regression gate: a loaded trace's digest (slot a: this trace, b: the second) and a
    // candidate digest against a baseline digest.
    digestOf: (slot) => trace.session.call('digest', { slot, source: slot === 'b' ? store.second?.fileName || 'b' : trace.fileName }),
    gate: (base, candidate, options) => trace.session.call('gate', { base, candidate, options }),
    saveDigest: (text, name) => saveFile(`${baseName(name)}.digest.json`, text, 'application/json'),
    saveText: (text, fileName, type) => saveFile(fileName, text, type),
    // The watch view reads each window's file with a worker of its own.
    newSession: () => new Session(),
    showError,
    watch: store.watch,
    compareTable: (name) => {
      const c = ctxComparison;
      if (!c.tables.has(name)) c.tables.set(name, c.promise.then(() => trace.session.call('compareTable', { name })));
      return c.tables.get(name);
    },
    exportCompareCsv: async (name) => {
      try {
        saveFile(`${name}.csv`, await compareCsv(trace.session, ctxComparison, name));
      } catch (err) {
        showError(`export of ${name} failed: ${err.message}`);
      }
    },
    // A run of several ranks (view "ranks").
    run: store.run,
    loadRun: (files) => loadRun(files),
    reanalyseRun: (align) => reanalyseRun(align),
    runCall: (op, data = {}) => store.run.session.call(op, data),
    runTable: (name) => {
      if (!store.run.tables.has(name)) store.run.tables.set(name, store.run.session.call('runTable', { name }));
      return store.run.tables.get(name);
    },
    exportRunCsv: async (name) => {
      try {
        saveFile(`${name}.csv`, await runCsv(name));
      } catch (err) {
        showError(`export of ${name} failed: ${err.message}`);
      }
    },
    exportRunZip: async () => {
      try {
        const files = [];
        for (const name of store.run.summary.tables) files.push({ name: `${name}.csv`, text: await runCsv(name) });
        saveZip('run-tables.zip', files);
      } catch (err) {
        showError(`export failed: ${err.message}`);
      }
    },
    downloadRun: async (kind) => {
      try {
        if (kind === 'xlsx') saveFile('run.xlsx', new Uint8Array(await store.run.session.call('runWorkbook')), 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
        else saveFile('run-report.html', await store.run.session.call('runHtml'), 'text/html;charset=utf-8');
      } catch (err) {
        showError(`run export failed: ${err.message}`);
      }
    },
    exportCompareZip: async () => {
      try {
        const c = ctxComparison;
        const { tables } = await c.promise;
        const files = [];
        for (const name of tables) files.push({ name: `${name}.csv`, text: await compareCsv(trace.session, c, name) });
        saveZip(`compare-${baseName(trace.fileName)}-vs-${baseName(store.second?.fileName || 'b')}.zip`, files);
      } catch (err) {
        showError(`export failed: ${err.message}`);
      }
    },
  };
  let ctxComparison = null;
  return ctx;
}

/** CSV text of one comparison table (only while `c` is the current comparison). */
async function compareCsv(session, c, name) {
  if (!c) throw new Error('no comparison yet');
  await c.promise;
  if (store.comparison !== c) throw new Error('the comparison changed; try again');
  if (!c.csvs.has(name)) c.csvs.set(name, session.call('compareCsv', { name }));
  return c.csvs.get(name);
}

/** Renders the view named in the URL hash. */
async function showView() {
  const { view, args, params } = readHash();
  const trace = store.trace && store.trace.summary ? store.trace : null;
  const runShown = view === 'ranks' && (store.run.summary || store.run.loading || store.run.failed.length);
  // The watch view needs no trace: it reads a folder's files by itself.
  if (!trace && !runShown && view !== 'watch') return;
  writeHash(view, args, params);
  for (const a of $('tabs').querySelectorAll('a')) a.classList.toggle('active', a.dataset.view === view);
  const drawing = store.beginDrawing();
  const root = el('div', { attrs: { 'data-view': view } });
  clear($('view')).append(root);
  try {
    await RENDER[view](contextFor(trace || noTrace(), view, params), root, args);
    if (drawing() && timing.firstTable === null && root.querySelector('table.data')) timing.firstTable = performance.now();
    if (drawing()) root.dataset.rendered = 'true';
  } catch (err) {
    if (drawing() && err.message !== 'cancelled') root.append(el('div', { class: 'error', text: `This view failed: ${err.message}` }));
  }
}

async function exportAll() {
  if (!store.trace) return;
  const trace = store.trace;
  try {
    const files = [];
    for (const name of trace.tableNames) files.push({ name: `${name}.csv`, text: await trace.session.call('csv', { name }) });
    // The rules the tables were made with, when the user has any (the same file `--rules` reads).
    if (userRules().trim()) files.push({ name: 'rules.toml', text: userRules() });
    saveZip(`${baseName(trace.fileName)}-tables.zip`, files);
  } catch (err) {
    showError(`export failed: ${err.message}`);
  }
}

async function loadExample() {
  try {
    const res = await fetch(EXAMPLE);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    await loadTrace(await res.blob(), EXAMPLE.split('/').pop());
  } catch (err) {
    showError(`Could not load the example trace: ${err.message}`);
  }
}

function wireDrop() {
  let depth = 0;
  const overlay = $('drop-overlay');
  const hasFiles = (e) => [...(e.dataTransfer?.types || [])].includes('Files');
  window.addEventListener('dragenter', (e) => { if (hasFiles(e)) { depth++; overlay.hidden = false; } });
  window.addEventListener('dragleave', () => { depth = Math.max(0, depth - 1); if (!depth) overlay.hidden = true; });
  window.addEventListener('dragover', (e) => { if (hasFiles(e)) e.preventDefault(); });
  window.addEventListener('drop', (e) => {
    e.preventDefault();
    depth = 0;
    overlay.hidden = true;
    const files = [...(e.dataTransfer?.files || [])];
    const slot = /** @type {any} */ (e.target)?.closest?.('[data-drop-slot]')?.dataset.dropSlot;
    openFiles(files, slot);
  });
}

/**
 * Opens dropped or picked files: three or more (or any dropped on the ranks view) are the ranks
 * of one run; two files are compared (the first becomes A, the second B); one file dropped on the
 * compare view's B box becomes B; otherwise it replaces trace A.
 */
async function openFiles(files, slot) {
  if (!files.length) return;
  if (slot === 'run' || files.length >= 3) {
    await loadRun(files);
  } else if (files.length >= 2) {
    writeHash('compare');
    await loadTrace(files[0], files[0].name);
    if (store.trace && document.body.dataset.state === 'ready') await loadSecond(files[1], files[1].name);
  } else if (slot === 'b') {
    await loadSecond(files[0], files[0].name);
  } else {
    await loadTrace(files[0], files[0].name);
  }
}

/** Starts a worker; `timing.warm` marks when it has warmed up (the benchmark waits for it). */
function startCore() {
  const session = (store.core = new Session());
  timing.warm = null;
  session.warmed.then((ms) => {
    if (store.core === session) {
      timing.warm = performance.now();
      timing.warmUpMs = ms;
    }
  });
}

function main() {
  startCore();
  wireDrop();
  $('file-input').addEventListener('change', (e) => {
    const input = /** @type {HTMLInputElement} */ (e.target);
    const files = [...(input.files || [])];
    input.value = '';
    openFiles(files);
  });
  $('run-files-input').addEventListener('change', (e) => {
    const input = /** @type {HTMLInputElement} */ (e.target);
    const files = [...(input.files || [])];
    input.value = '';
    if (files.length) loadRun(files);
  });
  $('example-button').addEventListener('click', loadExample);
  $('watch-button').addEventListener('click', () => {
    $('tabs').hidden = false;
    updateTabs();
    if (readHash().view === 'watch') showView();
    else location.hash = '#watch';
  });
  $('cancel-button').addEventListener('click', cancel);
  $('export-all').addEventListener('click', exportAll);
  $('download-xlsx').addEventListener('click', downloadWorkbook);
  $('download-html').addEventListener('click', downloadHtml);
  // `?` lists the keyboard shortcuts; Esc hides the list.
  document.addEventListener('keydown', (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement || e.target instanceof HTMLSelectElement) return;
    const box = $('shortcuts');
    if (e.key === '?') box.hidden = !box.hidden;
    else if (e.key === 'Escape') box.hidden = true;
  });
  window.addEventListener('hashchange', () => {
    // A hash the current view wrote itself (the timeline's window) needs no new drawing.
    if (location.hash === store.ignoreHash) return;
    showView();
  });
  clear($('view')).append(el('div', { class: 'empty', text: 'Drop a trace anywhere on this page, or open one.' }));
  setState('empty');
}

if (!VIEWS.every((v) => RENDER[v])) throw new Error('a view has no renderer');
main();

// The page's spine: it wires the store, the loading functions (loading.js), the status line
// (status.js) and the views (views/*.js, each declaring what it shows) together: tabs, the view
// named in the URL, exports, drop and picker events.
import { el, clear } from './dom.js';
import { VIEWS, readHash, writeHash, formatHash } from './routing.js';
import { saveFile, saveZip } from './download.js';
import * as overviewView from './views/overview.js';
import * as categoriesView from './views/categories.js';
import * as phasesView from './views/phases.js';
import * as layersView from './views/layers.js';
import * as opsView from './views/ops.js';
import * as kernelsView from './views/kernels.js';
import * as codeView from './views/code.js';
import * as reportView from './views/report.js';
import * as compareView from './views/compare.js';
import * as timelineView from './views/timeline.js';
import * as rulesView from './views/rules.js';
import * as ranksView from './views/ranks.js';
import * as watchView from './views/watch.js';
import { Store } from './store.js';
import { RULES_KEY, userRules } from './rules-text.js';
import { Session } from './session.js';
import { $, setState, showError } from './status.js';
import { createLoading, declaredOptions } from './loading.js';

/** Every view's module: its renderer (named as the view) and the concerns it uses. */
const VIEW_MODULES = /** @type {Record<string, any>} */ ({ rules: rulesView, timeline: timelineView, overview: overviewView, categories: categoriesView, phases: phasesView, layers: layersView, ops: opsView, kernels: kernelsView, report: reportView, code: codeView, compare: compareView, ranks: ranksView, watch: watchView });
const RENDER = Object.fromEntries(Object.entries(VIEW_MODULES).map(([name, m]) => [name, m[name]]));
/** @type {Record<string, string[]>} */
const USES = Object.fromEntries(Object.entries(VIEW_MODULES).map(([name, m]) => [name, m.uses]));

/** Everything the page has loaded and shows, and its generation counter (see store.js). */
const store = new Store();

/** For the browser tests: a request to the worker (e.g. the memory-ceiling test). */
window.traceprismTest = { call: (op, data = {}) => store.core.call(/** @type {any} */ (op), data) };

/** Timing marks for the benchmark and tests (no trace content). */
const timing = (window.traceprismTiming = /** @type {Record<string, any>} */ ({}));

/** Loading traces, runs and the example; cancel (loading.js). */
const { loadTrace, loadSecond, loadRun, reanalyseRun, startCore, cancel, loadExample, openFiles, setCaptures } = createLoading({
  store,
  timing,
  showView: () => showView(),
  updateTabs: () => updateTabs(),
  prefetch: (trace, view) => prefetchTables(trace, view),
});

/**
 * Asks the worker for the tables of `view` at once (they are cached for the view): it builds them
 * while this thread lays the page out and renders the view's cards and charts, instead of after.
 */
function prefetchTables(trace, view) {
  const ctx = traceContext(trace);
  for (const name of trace.tableNames) {
    if (trace.tableViews[name] === view) ctx.table(name).catch(() => {}); // the view asks again and shows the error
  }
}

/** Shows the tabs that have something to show: without a trace, only the run's. */
function updateTabs() {
  const hasTrace = Boolean(store.trace && store.trace.summary);
  for (const a of $('tabs').querySelectorAll('a')) a.hidden = !hasTrace && a.dataset.view !== 'ranks' && a.dataset.view !== 'watch';
  for (const id of ['export-all', 'download-xlsx', 'download-html']) $(id).hidden = !hasTrace;
}

/** The run's CSV of one table (cached). */
function runCsv(name) {
  if (!store.run.csvs.has(name)) store.run.csvs.set(name, store.run.session.call('runCsv', { name }));
  return store.run.csvs.get(name);
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

/** Stands in for trace A when only a run is loaded (the ranks view reads none of it). */
function noTrace() {
  return { session: store.core, fileName: '', blob: null, summary: null, tableNames: [], tableViews: {}, tables: new Map(), csvs: new Map(), rollup: null };
}

/**
 * What each view's context is made of, by concern: a view declares the concerns it uses (its
 * module's `uses`) and gets those alone.
 * @type {Record<string, (trace: any, view: string, params: Record<string, string>) => Record<string, any>>}
 */
const CONCERNS = {
  trace: (trace) => traceContext(trace),
  route: (_, view, params) => routeContext(view, params),
  rules: (trace) => rulesContext(trace),
  compare: (trace) => compareContext(trace),
  run: () => runContext(),
  page: () => pageContext(),
};

/** The context `view` renders with: the concerns it declares ([`USES`]), merged. */
function contextFor(trace, view, params = {}) {
  return Object.assign({}, ...USES[view].map((c) => CONCERNS[c](trace, view, params)));
}

/** The loaded trace: its summary and tables (cached), CSV export, splitting a window out, the timeline's selection, requests about it. */
function traceContext(trace) {
  const cached = (map, key, make) => {
    if (!map.has(key)) map.set(key, make().catch((e) => { map.delete(key); throw e; }));
    return map.get(key);
  };
  return {
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
  // A request to the worker about the trace (the timeline's buckets and hit tests).
  call: (op, data = {}) => trace.session.call(op, data),
  };
}

/** Where the view stands: its address parameters, and going elsewhere or drawing again. */
function routeContext(view, params) {
  return {
  setArgs: (args) => writeHash(view, args),
  // The view's address parameters (#timeline?from=…&to=…) and a way to change them without
  // drawing the view again (`record`: as a new history entry).
  params,
  setParams: (next, record = false) => {
    store.ignoreHash = location.hash;
    writeHash(view, [], next, record);
    store.ignoreHash = location.hash;
  },
  // Goes to another view (a new history entry), e.g. the timeline at a pass or a kernel.
  navigate: (to, params = {}) => { location.hash = formatHash(to, [], params); },
  rerender: () => showView(),
  };
}

/** The user's category rules: read, apply (the worker analyses the trace again), the built-in text. */
function rulesContext(trace) {
  return {
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
  };
}

/** The comparison with a second trace (view "compare") and the regression gate. */
function compareContext(trace) {
  let ctxComparison = null;
  return {
  // Comparison (view "compare").
  second: store.second,
  secondLoading: store.secondLoading,
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
  // The options the core declares: the compare view's fields are made from them.
  declaredOptions: () => declaredOptions(store),
  saveDigest: (text, name) => saveFile(`${baseName(name)}.digest.json`, text, 'application/json'),
  saveText: (text, fileName, type) => saveFile(fileName, text, type),
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
}

/** A run of several ranks (view "ranks"). */
function runContext() {
  return {
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
  };
}

/** The page itself: loading a trace, a worker of one's own (the watch), errors, the watch's state. */
function pageContext() {
  return {
  loadMain: (blob, name) => loadTrace(blob, name),
  // The watch view reads each window's file with a worker of its own.
  newSession: () => new Session(),
  showError,
  watch: store.watch,
  };
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

function main() {
  startCore();
  wireDrop();
  $('file-input').addEventListener('change', (e) => {
    const input = /** @type {HTMLInputElement} */ (e.target);
    const files = [...(input.files || [])];
    input.value = '';
    openFiles(files);
  });
  $('capture-input').addEventListener('change', (e) => {
    const input = /** @type {HTMLInputElement} */ (e.target);
    const files = [...(input.files || [])];
    input.value = '';
    setCaptures(files);
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

if (!VIEWS.every((v) => RENDER[v] && USES[v]?.every((c) => CONCERNS[c]))) throw new Error('a view has no renderer, or uses a concern the page does not have');
main();

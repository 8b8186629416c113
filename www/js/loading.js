// Loading: a trace into the worker (slot `a`), the second trace of a comparison (slot `b`), the
// ranks of a run, the example; cancelling and restarting the worker. Each load begins a new
// generation of the store and drops its result once something else was loaded meanwhile.
// `createLoading` takes what the page wires in (the store, timing marks, drawing the view).
import { el, clear } from './dom.js';
import { Session } from './session.js';
import { formatBytes, formatCount } from './format.js';
import { readHash, writeHash } from './routing.js';
import { userRules } from './rules-text.js';
import { emptyRun } from './store.js';
import { choicesOf, declaredField } from './settings.js';
import { readStalled, GZIP_CRC_AUTO_MAX_BYTES, PROGRESS_PAINT_MS } from './constants.js';
import { $, setState, showError, showInputStatus, setProgress } from './status.js';
import { captureEntries, splitCaptures } from './captures.js';

const EXAMPLE = 'examples/sglang_qwen3-8b_decode_graph_mi300x.json.gz';

/**
 * The loading functions of the page.
 * @param {{store: import('./store.js').Store, timing: Record<string, any>, showView: () => Promise<void>,
 *   updateTabs: () => void, prefetch: (trace: any, view: string) => void}} page
 */
export function createLoading(page) {
  const { store, timing, showView, updateTabs } = page;
  /** @type {Loading} */
  const p = {
    ...page,
    loadTrace: (blob, fileName) => loadTrace(blob, fileName),
    restartCore: () => restartCore(),
    startCore: () => startCore(p),
    loadSecond: (blob, fileName) => loadSecond(p, blob, fileName),
    loadRun: (files) => loadRun(p, files),
    reanalyseRun: (align) => reanalyseRun(p, align),
    cancel: () => cancel(p),
    loadExample: () => loadExample(p),
    openFiles: (dropped, slot) => openFiles(p, dropped, slot),
    setCaptures: (files) => setCaptures(files),
  };

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
    // The page is loading from here on (tests and the user see it at once), before any await.
    setState('loading');
    timing.start = performance.now();
    timing.bytes = blob.size;
    timing.firstTable = null;
    timing.parallel = null;
    setProgress(true, 0, 'starting…');
    /** Ends this load before reading with `message` (the worker was not asked for anything yet). */
    const refuse = (message) => {
      store.trace = null;
      setProgress(false);
      clear($('view'));
      showError(message);
      setState('error');
    };
    // A trace that cannot fit in the page is refused at once, before reading for minutes.
    let refusal;
    try {
      refusal = await session.admit([{ file: blob, name: fileName }]);
    } catch (err) {
      if (store.current(stamp) && err.message !== 'cancelled') refuse(`Could not read ${fileName}: ${err.message}`);
      return;
    }
    if (!store.current(stamp)) return;
    if (refusal) return refuse(refusal);
    let captures;
    try {
      captures = await captureEntries(store.captures);
    } catch (err) {
      return refuse(`Could not read the capture traces: ${/** @type {Error} */ (err).message}`);
    }
    if (!store.current(stamp)) return;
    if (captures.length) {
      $('file-name').textContent += ` with ${captures.length} capture trace${captures.length > 1 ? 's' : ''} (${captures.map((c) => c.name).join(', ')})`;
    }
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
    // The bar is redrawn a few times a second, not at every note (a large file's workers send dozens
    // a second, and each redraw costs the page's threads time the workers could use).
    let painted = -Infinity;
    try {
      const result = await session.load(blob, loadOptions(blob.size), ({ bytesRead, total, events }) => {
        if (!store.current(stamp)) return;
        const now = performance.now();
        read.at = now;
        read.bytes = bytesRead;
        if (bytesRead === total) timing.parsed = now;
        if (bytesRead < total && now - painted < PROGRESS_PAINT_MS) return;
        painted = now;
        setProgress(true, total ? bytesRead / total : 1, `${formatBytes(bytesRead)} of ${formatBytes(total)} read · ${formatCount(events)} events`);
      }, 'a', captures);
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
      page.prefetch(trace, readHash().view);
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

  /** Stops the worker (the only way to interrupt the core mid-parse) and starts a fresh one. */
  function restartCore() {
    if (store.core) store.core.close();
    startCore(p);
    // The worker held the second trace and the run too.
    store.dropWorkerState();
  }

  /**
   * Capture traces picked with the page's control: read beside trace A, which is read again.
   * @param {File[]} files
   */
  async function setCaptures(files) {
    store.captures = files;
    if (store.trace) await loadTrace(store.trace.blob, store.trace.fileName);
  }

  return p;
}

/**
 * The page and the loading functions it is given ([`createLoading`]'s answer).
 * @typedef {{store: import('./store.js').Store, timing: Record<string, any>, showView: () => Promise<void>,
 *   updateTabs: () => void, prefetch: (trace: any, view: string) => void,
 *   loadTrace: (blob: Blob, fileName: string) => Promise<void>, restartCore: () => void, startCore: () => void,
 *   loadSecond: (blob: Blob, fileName: string) => Promise<void>, loadRun: (files: File[]) => Promise<void>,
 *   reanalyseRun: (align: boolean) => Promise<void>, cancel: () => void, loadExample: () => Promise<void>,
 *   openFiles: (dropped: File[], slot?: string) => Promise<void>, setCaptures: (files: File[]) => Promise<void>}} Loading
 */

/**
 * The options the core declares, asked of the core once (again after a failure): the header's
 * phase method and the compare view's fields are made from them.
 * @param {import('./store.js').Store} store
 * @returns {Promise<import('./worker-ops.js').DeclaredOptions>}
 */
export function declaredOptions(store) {
  if (!store.declared) store.declared = store.core.call('declaredOptions').catch((e) => { store.declared = null; throw e; });
  return store.declared;
}

/**
 * The header's phase-method setting, made from the core's declaration of it: its choices, its
 * default selected and its doc as the title.
 * @param {import('./worker-ops.js').DeclaredOptions} declared
 */
function fillPhaseMethods(declared) {
  const d = declaredField(declared.analysis, 'phase_method');
  const select = /** @type {HTMLSelectElement} */ ($('phase-method-input'));
  if (!d || select.options.length) return;
  $('phase-method-setting').title = d.doc;
  select.append(...choicesOf(d).map((c) => el('option', { value: c.value, text: c.value, selected: c.selected })));
}

/**
 * The options every load passes to the core (the page's settings and the user's rules) for a
 * file of `bytes`: the gzip CRC-32 is checked as the setting says (`auto`: files under 1 GB).
 * @param {number} [bytes]
 */
function loadOptions(bytes = 0) {
  const rules = userRules();
  const crc = /** @type {HTMLSelectElement} */ ($('crc-input')).value;
  const gzipCrc = crc === 'on' || (crc === 'auto' && bytes < GZIP_CRC_AUTO_MAX_BYTES);
  const method = /** @type {HTMLSelectElement} */ ($('phase-method-input')).value;
  return { strict: $('strict-input').checked, gzip_crc: gzipCrc, ...(method ? { phase_method: method } : {}), ...(rules.trim() ? { category_rules: rules } : {}) };
}

/**
 * Loads the traces of several ranks of one run into the worker (each as any trace is loaded,
 * then moved into the run) and analyses the run. A rank that cannot be read is named and left
 * out; the others are still analysed.
 * @param {File[]} files
 * @param {Loading} p the page and its loading functions
 */
async function loadRun(p, files) {
  const { store, timing, showView, updateTabs } = p;
  if (document.body.dataset.state === 'loading' || store.core.broken) p.restartCore();
  const session = store.core;
  const refusal = await session.admit(files.map((f) => ({ file: f, name: f.name })));
  if (refusal) {
    showError(refusal);
    setState('error');
    return;
  }
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
        await session.load(f, loadOptions(f.size), ({ bytesRead, total, events }) => {
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
    if (store.current(stamp) && err.message !== 'cancelled') {
      showError(`Could not analyse the run: ${err.message}`);
      store.run.failed.push(`Could not analyse the run: ${err.message}`);
    }
  }
  run.loading = null;
  // Something else was loaded meanwhile: this run is no longer the one shown.
  if (!store.current(stamp)) return;
  timing.runReady = performance.now();
  if (readHash().view === 'ranks') await showView();
}

/** Analyses the loaded run again, clocks aligned or not. * @param {Loading} p the page and its loading functions
 */
async function reanalyseRun(p, align) {
  const { store, showView } = p;
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

/**
 * Loads the second trace of a comparison into the worker's slot `b` (trace A stays; the two are
 * refused at once if they cannot fit in the page together).
 * @param {Loading} p the page and its loading functions
 */
async function loadSecond(p, blob, fileName) {
  const { store, showView } = p;
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
    // Trace A stays in the page: the two must fit in its memory together.
    const refusal = await session.admit([{ file: store.trace.blob, name: store.trace.fileName }, { file: blob, name: fileName }]);
    if (refusal) throw new Error(refusal);
    const result = await session.load(blob, loadOptions(blob.size), ({ bytesRead, total, events }) => {
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

/**
 * Cancels a load in progress: the worker is stopped (the only way to interrupt the core) and a
 * fresh one started.
 * @param {Loading} p the page and its loading functions
 */
function cancel(p) {
  const { store } = p;
  if (!store.trace || document.body.dataset.state !== 'loading') return;
  // A new worker, a new generation: the load's own ending sees it is stale and stays quiet.
  p.restartCore();
  store.trace = null;
  setProgress(false);
  clear($('view'));
  showError('Loading cancelled.');
  setState('cancelled');
}

/**
 * Loads the bundled example trace (one button, for a newcomer with no trace at hand).
 * @param {Loading} p the page and its loading functions
 */
async function loadExample(p) {
  try {
    const res = await fetch(EXAMPLE);
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    await p.loadTrace(await res.blob(), EXAMPLE.split('/').pop());
  } catch (err) {
    showError(`Could not load the example trace: ${err.message}`);
  }
}

/**
 * Opens dropped or picked files: three or more (or any dropped on the ranks view) are the ranks
 * of one run; two files are compared (the first becomes A, the second B); one file dropped on the
 * compare view's B box becomes B; otherwise it replaces trace A. Capture traces among them
 * (named as engines name them) are read beside trace A instead.
 * @param {File[]} dropped
 * @param {string} [slot]
 * @param {Loading} p the page and its loading functions
 */
async function openFiles(p, dropped, slot) {
  const { store } = p;
  // Capture traces (named as engines name them) go beside trace A; the rest are traces.
  const { traces: files, captures } = splitCaptures(dropped);
  if (captures.length) {
    store.captures = captures;
    if (!files.length && store.trace) return p.loadTrace(store.trace.blob, store.trace.fileName);
  }
  if (!files.length) return;
  if (slot === 'run' || files.length >= 3) {
    await loadRun(p, files);
  } else if (files.length >= 2) {
    writeHash('compare');
    await p.loadTrace(files[0], files[0].name);
    if (store.trace && document.body.dataset.state === 'ready') await loadSecond(p, files[1], files[1].name);
  } else if (slot === 'b') {
    await loadSecond(p, files[0], files[0].name);
  } else {
    await p.loadTrace(files[0], files[0].name);
  }
}

/**
 * Starts a worker; `timing.warm` marks when it has warmed up (the benchmark waits for it).
 * @param {Loading} p the page and its loading functions
 */
function startCore(p) {
  const { store, timing } = p;
  const session = (store.core = new Session());
  declaredOptions(store).then(fillPhaseMethods, () => {});
  timing.warm = null;
  session.warmed.then((ms) => {
    if (store.core === session) {
      timing.warm = performance.now();
      timing.warmUpMs = ms;
    }
  });
}

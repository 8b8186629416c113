// The Web Worker that owns the wasm core. The page never touches the core directly: it sends
// requests `{id, op, slot?, ...}` and gets back `{id, value}` or `{id, error}`.
//
// The worker holds up to two analyses, in slots `a` (the trace the views show) and `b` (the second
// trace of a comparison); `slot` defaults to `a`.
//
// Its ops, with their arguments and answers, are declared once in js/worker-ops.js (`tsc` holds
// `ops` below and every `Session.call` to them).
//
// The page opens a file with one request, `open`, and never asks what the file is: this worker asks
// the core (`sniff`: the format, and how it is read), then reads the File itself, posting `{id,
// progress}` as it goes. How depends only on the core's `reading`: `parts`, text cut into ranges
// parsed at once by this worker and its helper workers (parallel.js, part-worker.js); `inflate`, a
// large compressed file inflated by a helper while this one parses (parallel.js `readGzip`);
// `rows`, a database the SQLite module makes row bytes of; `stream`, slice by slice here. `admit`
// says beforehand whether files fit in the page's memory (limits.js).
//
// Right after the module is instantiated the worker warms the core up, so the engine compiles the
// wasm code (lazily, on first call) and the rule sets are built while the user is still picking a
// file: first the rule sets, then the whole pipeline on a small built-in trace, then a few larger
// rounds that make the hot functions reach V8's optimising tier (it swaps optimised code in only on
// a function's next call, so a function first made hot by a 16 MB slice would run that whole slice
// unoptimised). Each step runs only if no request has arrived yet; a request arriving during a step
// waits for that step alone. When done or interrupted the worker posts `{warmed: ms}` once (no id);
// when done uninterrupted it first starts its helper workers and waits for their own warm-up.
import init, { Analyzer, CaptureTrace, RankRun, allocate_for_test, builtin_category_rules, compare, declared_options, digest, gate, watch_window, failed_allocation_bytes, nsys_requests, sniff, warm_up, watch_names, warm_up_part, warm_up_rules } from '../pkg/traceprism.js';
import { trapMessage } from '../js/trap.js';
import { HelperPool, readFile, startReader, workerCount } from './parallel.js';
import { WORKER_SLICE_BYTES } from '../js/constants.js';
import { sizeRefusal } from './limits.js';

/** Warm-up rounds after the rule sets: decode steps of each synthetic trace (~25 kB of JSON a step). */
const WARM_UP_STEPS = [3, 40, 40, 40, 40, 40];
/**
 * Helper workers (one per further core, up to 3), started with the page: a file dropped the moment
 * the page opens is read by as many workers as one dropped later (issue 37). Each warms itself up
 * and stops warming the moment a request arrives, as this worker does.
 */
let pool = null;
const HELPERS = typeof Worker === 'undefined' ? 0 : workerCount() - 1;
function startHelpers() {
  try {
    pool = new HelperPool(HELPERS);
  } catch (err) {
    console.warn(`no helper workers: ${(err && err.message) || err}`);
  }
  return pool;
}
if (HELPERS > 0) startHelpers();
try {
  startReader();
} catch (err) {
  console.warn(`no file reader worker: ${(err && err.message) || err}`);
}
/** Set by the first request: no more warm-up. */
let requested = false;

// The rule sets are compiled first in any case (every trace needs them; done now, they overlap the
// page's reading of the first slice); the rest of the warm-up gives way to the first request.
let warmStart = 0;
const ready = init().then(() => {
  warmStart = performance.now();
  try {
    warm_up_rules();
  } catch {
    // Reported again, with its message, when a trace is analysed.
  }
});
ready.then(async () => {
  let error;
  for (const steps of WARM_UP_STEPS) {
    await new Promise((resolve) => setTimeout(resolve, 0)); // a waiting request goes first
    if (requested) break;
    try {
      warm_up(steps);
      // The adopting side of parallel parsing (decode and merge a part), when there are helpers.
      if (HELPERS > 0) warm_up_part(steps);
    } catch (err) {
      // Only a head start is lost: the user's file still goes through the same code.
      error = (err && err.message) || String(err);
      break;
    }
  }
  // Report warm once the helpers are warm too (they started with this worker).
  if (pool) await pool.warmed;
  self.postMessage({ warmed: performance.now() - warmStart, error });
}, () => {});

/**
 * The SQLite module (its own wasm, built from the crate in sqlite/), imported and instantiated on
 * the first Nsight Systems export: a Kineto trace never fetches it.
 * @type {Promise<any> | null}
 */
let sqlite = null;
function sqliteEngine() {
  sqlite ??= import('../pkg-sqlite/traceprism_sqlite.js').then(async (m) => {
    await m.default();
    return m;
  });
  // A failed fetch is tried again with the next export.
  sqlite.catch(() => {
    sqlite = null;
  });
  return sqlite;
}

/**
 * Pushes a whole file into an analyzer, on this worker alone. A database (`reading` `rows`: an
 * Nsight Systems export) goes through the SQLite module, which makes row bytes of the tables the
 * core reads (`nsys_requests`); the core reads those as it reads any trace. Anything else goes in
 * slices. Returns, for a database, what the module did: `{sqlite, rowBytes, ms: {engine, rows}}`;
 * else null.
 * @param {any} a an Analyzer (made with `sniffed`)
 * @param {Blob} file
 * @param {import('../pkg/traceprism.js').Sniffed} sniffed what the core said of the file's first bytes
 */
async function pushFile(a, file, sniffed) {
  if (sniffed.reading === 'rows') {
    const t0 = performance.now();
    const engine = await sqliteEngine();
    const t1 = performance.now();
    const rows = engine.dump_tables(new Uint8Array(await file.arrayBuffer()), nsys_requests());
    const t2 = performance.now();
    a.push(rows);
    return { sqlite: engine.sqlite_version(), rowBytes: rows.length, ms: { engine: t1 - t0, rows: t2 - t1 } };
  }
  for (let at = 0; at < file.size; at += WORKER_SLICE_BYTES) {
    a.push(new Uint8Array(await file.slice(at, at + WORKER_SLICE_BYTES).arrayBuffer()));
  }
  return null;
}

/** slot name → Analyzer */
const analyzers = new Map();
/** The last comparison of a and b (dropped whenever either side changes). */
let comparison = null;

/** A reply whose ArrayBuffer is moved to the page, not copied. */
class Transfer {
  constructor(buffer) {
    this.buffer = buffer;
  }
}

function memoryBytes() {
  try {
    return Analyzer.memory_bytes();
  } catch {
    return null;
  }
}

function slotOf(data) {
  const slot = data.slot || 'a';
  // `a` and `b`: the trace shown and the second of a comparison; `r0`, `r1`...: a rank of a run
  // being read (moved into the run once read, see `runAdd`).
  if (slot !== 'a' && slot !== 'b' && !/^r\d+$/.test(slot)) throw new Error(`unknown slot ${slot}`);
  return slot;
}

/** The run of several ranks (a RankRun), or null. */
let run = null;

function theRun() {
  if (!run) throw new Error('no run loaded');
  return run;
}

function analyzer(data) {
  const a = analyzers.get(slotOf(data));
  if (!a) throw new Error(slotOf(data) === 'b' ? 'no second trace loaded' : 'no trace loaded');
  return a;
}

function dropComparison() {
  if (comparison) comparison.free();
  comparison = null;
}

function dropSlot(slot) {
  dropComparison();
  const old = analyzers.get(slot);
  if (old) old.free();
  analyzers.delete(slot);
}

/** Size of the file being read (for the message if the tab's memory runs out), when known. */
let fileBytes = null;

/** Capture traces read for a slot, added to its analyzer when it finishes. */
const pendingCaptures = new Map();

function dropCaptures(slot) {
  for (const c of pendingCaptures.get(slot) || []) c.free();
  pendingCaptures.delete(slot);
}

/**
 * What `file` is, from its first bytes, as the core decides: the format and how it is read. Asked
 * once per file, here; the answer goes with the file to every reader of it.
 * @param {Blob} file
 * @returns {Promise<import('../pkg/traceprism.js').Sniffed>}
 */
async function sniffFile(file) {
  return sniff(new Uint8Array(await file.slice(0, 64).arrayBuffer()));
}

/**
 * A fresh analyzer in `slot` (the slot's previous trace dropped) for a file of `fileBytes` that
 * the core said is `sniffed`.
 */
function startSlot(slot, options, sniffed, bytes) {
  fileBytes = bytes;
  dropSlot(slot);
  const a = new Analyzer(JSON.stringify(options || {}), sniffed);
  analyzers.set(slot, a);
  return a;
}

/** Ends the reading of `slot`'s trace (its capture traces added) and analyses it. */
function finishSlot(slot) {
  const a = analyzer({ slot });
  for (const c of pendingCaptures.get(slot) || []) a.add_capture(c);
  dropCaptures(slot);
  const summary = a.finish();
  return { summary, tables: a.table_names(), views: a.table_views(), memory: memoryBytes() };
}

/** Each op the page may send (js/worker-ops.js declares them, with their arguments and answers). @type {import('../js/worker-ops.js').WorkerHandlers} */
const ops = {
  // Whether these files fit in the page's memory together: the refusal to show, or null.
  async admit({ files, noLimit }) {
    if (noLimit) return null;
    const sniffed = await Promise.all(files.map(({ file }) => sniffFile(file)));
    return sizeRefusal(files.map((f, i) => ({ ...f, sniffed: sniffed[i] })), (self.navigator && navigator.hardwareConcurrency) || 1);
  },
  // Opens a file into a slot: what it is, how to read it (see the top of this file), the reading
  // (with progress notes), and the analysis. `nsys` tells what the SQLite module did, `parallel`
  // how the file was read by several workers.
  async open(data, id) {
    const slot = slotOf(data);
    const { file, options } = data;
    const sniffed = await sniffFile(file);
    const a = startSlot(slot, options, sniffed, file.size);
    const progress = (p) => self.postMessage({ id, progress: p });
    if (sniffed.reading === 'rows') {
      progress({ bytesRead: 0, total: file.size, events: 0 });
      const nsys = await pushFile(a, file, sniffed);
      progress({ bytesRead: file.size, total: file.size, events: a.progress().events });
      return { ...finishSlot(slot), nsys };
    }
    const parallel = await readFile(a, file, sniffed, pool, progress, data.gzipPipeline, options?.gzip_crc !== false);
    return { ...finishSlot(slot), parallel };
  },
  // Capture traces for a slot's next trace: read whole (they are small), kept until it finishes.
  async captures({ slot, files }) {
    dropCaptures(slotOf({ slot }));
    const read = [];
    pendingCaptures.set(slotOf({ slot }), read);
    for (const { file, name, batch, mode } of files) {
      const c = new CaptureTrace(new Uint8Array(await file.arrayBuffer()), name, batch ?? undefined, mode ?? undefined);
      read.push(c);
    }
    return read.map((c, i) => ({ name: files[i].name, graphs: c.graphs() }));
  },
  table(data) {
    return analyzer(data).table(data.name);
  },
  csv(data) {
    return analyzer(data).csv(data.name);
  },
  rollup(data) {
    return analyzer(data).rollup();
  },
  timelineMeta(data) {
    return analyzer(data).timeline_meta();
  },
  timelinePyramid(data) {
    return analyzer(data).timeline_pyramid(data.lane);
  },
  timelineBuckets(data) {
    const bytes = analyzer(data).timeline_buckets(data.from, data.to, data.width);
    return new Transfer(bytes.buffer);
  },
  setRules(data) {
    const a = analyzer(data);
    const summary = a.set_category_rules(data.toml || '');
    return { summary, tables: a.table_names(), views: a.table_views() };
  },
  builtinRules() {
    return builtin_category_rules();
  },
  declaredOptions() {
    return JSON.parse(declared_options());
  },
  async split(data) {
    // The file is read again (an export: analyses never re-read) and only the window's events kept.
    const splitter = analyzer(data).splitter(JSON.stringify(data.window));
    try {
      const file = data.file;
      for (let at = 0; at < file.size; at += WORKER_SLICE_BYTES) {
        splitter.push(new Uint8Array(await file.slice(at, at + WORKER_SLICE_BYTES).arrayBuffer()));
      }
      const bytes = splitter.finish();
      return new Transfer(bytes.buffer);
    } finally {
      splitter.free();
    }
  },
  timelineHit(data) {
    return analyzer(data).timeline_hit(data.lane, data.at, data.slack);
  },
  workbook(data) {
    const bytes = analyzer(data).workbook();
    return new Transfer(bytes.buffer);
  },
  html(data) {
    return analyzer(data).html_report();
  },
  drop(data) {
    dropSlot(slotOf(data));
    return null;
  },
  compare({ options }) {
    dropComparison();
    comparison = compare(analyzer({ slot: 'a' }), analyzer({ slot: 'b' }), JSON.stringify(options || {}));
    return { tables: comparison.table_names(), headline: comparison.headline(), labels: comparison.labels() };
  },
  compareTable({ name }) {
    if (!comparison) throw new Error('no comparison yet');
    return comparison.table(name);
  },
  compareCsv({ name }) {
    if (!comparison) throw new Error('no comparison yet');
    return comparison.csv(name);
  },
  // The regression gate: a slot's digest (JSON text), and a digest against a baseline digest.
  digest(data) {
    return digest(analyzer(data), data.source || '');
  },
  gate({ base, candidate, options }) {
    return gate(base, candidate, JSON.stringify(options || {}));
  },
  // A watched rank folder's window: every rank file read into a scratch run; the first rank's
  // window and the run's straggler finding are kept, everything else freed.
  async watchRun({ files, options }) {
    const run = new RankRun();
    try {
      let first = null;
      for (const { file, name } of files) {
        const sniffed = await sniffFile(file);
        const a = new Analyzer(JSON.stringify(options || {}), sniffed);
        await pushFile(a, file, sniffed);
        const summary = a.finish();
        if (summary.input?.truncation) {
          a.free();
          return { cut: `${name}: ${summary.input.truncation.message}` };
        }
        if (!first) first = watch_window(digest(a, name), name);
        run.add(a, name); // consumes the analyzer
      }
      const result = files.length >= 2 ? run.analyse(true) : null;
      return { window: first, straggler: result ? result.finding || 'no rank arrives last by more than 1 µs' : null };
    } finally {
      run.free();
    }
  },
  // A watched folder's file: read in slices into a scratch analyzer, kept only as its digest and
  // window (the analyzer is freed at once); `{cut}` when the input is not whole yet.
  async watchFile({ file, name, options }) {
    const sniffed = await sniffFile(file);
    const a = new Analyzer(JSON.stringify(options || {}), sniffed);
    try {
      await pushFile(a, file, sniffed);
      const summary = a.finish();
      if (summary.input?.truncation) return { cut: summary.input.truncation.message };
      const text = digest(a, name);
      return { window: watch_window(text, name) };
    } finally {
      a.free();
    }
  },
  // How the folder watch takes file names (which it reads, and their rank group), as the CLI's.
  watchNames({ names }) {
    return watch_names(names);
  },
  memory() {
    return memoryBytes();
  },
  // A run of several ranks: each rank is loaded into a slot `rN` like any trace, then moved into
  // the run (`runAdd`); `runAnalyse` matches the collectives across the ranks.
  runStart() {
    if (run) run.free();
    run = new RankRun();
    for (const slot of [...analyzers.keys()]) if (slot.startsWith('r')) dropSlot(slot);
    return null;
  },
  runAdd(data) {
    const slot = slotOf(data);
    const a = analyzer(data);
    analyzers.delete(slot);
    theRun().add(a, String(data.name || slot)); // consumes the analyzer
    return theRun().len();
  },
  runAnalyse({ align }) {
    return theRun().analyse(align !== false);
  },
  runTable({ name }) {
    return theRun().table(name);
  },
  runCsv({ name }) {
    return theRun().csv(name);
  },
  runLanes() {
    return theRun().lanes();
  },
  runWorkbook() {
    const bytes = theRun().workbook();
    return new Transfer(bytes.buffer);
  },
  runHtml() {
    return theRun().html_report();
  },
  // Asks the core for `megabytes` at once: the browser test of the memory ceiling (a trace too
  // large for the tab ends the same way). The page never sends it.
  testAllocate({ megabytes }) {
    return allocate_for_test(megabytes);
  },
};

self.onmessage = async (event) => {
  const { id, op } = event.data;
  requested = true;
  try {
    await ready;
    if (!ops[op]) throw new Error(`unknown request ${op}`);
    const result = await ops[op](event.data, id);
    // An op may return a Transfer to move its buffer instead of copying it.
    if (result instanceof Transfer) /** @type {any} */ (self).postMessage({ id, value: result.buffer }, [result.buffer]);
    else self.postMessage({ id, value: result });
  } catch (err) {
    // Errors from the core arrive as JS Errors carrying the core's message; a wasm trap
    // (RuntimeError) leaves the module unusable, so say so.
    const trap = err instanceof WebAssembly.RuntimeError;
    const message = (err && err.message) || String(err);
    let failed = 0;
    try {
      failed = trap ? failed_allocation_bytes() : 0;
    } catch {
      // The module cannot answer: an internal error, as below.
    }
    // `trapped`: the module cannot be used again; the page starts a fresh worker for the next trace.
    self.postMessage({ id, error: trap ? trapMessage(message, failed, memoryBytes(), fileBytes) : message, trapped: trap });
  }
};

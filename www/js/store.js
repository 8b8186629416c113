// The page's one store: what is loaded (trace A, the second trace of a comparison, a run of
// ranks, the worker that holds them) and one generation counter. Every change of what is loaded
// begins with `begin()`, which bumps the generation and returns a stamp; an async job (a load, an
// analysis, a comparison) keeps its stamp and drops its result once `current(stamp)` is false.
// Drawing a view has its own sequence (a newer drawing replaces an older one) and is stale as well
// when what is loaded changed meanwhile.

/**
 * A run of several ranks (view "ranks"): its progress text while loading, the ranks that could not
 * be read, the run's summary and cached tables, the worker session that holds it.
 * @typedef {{loading: string|null, failed: string[], summary: any, align: boolean, tables: Map<string, Promise<any>>, csvs: Map<string, Promise<string>>, session: import('./session.js').Session|null}} RunState
 */

/**
 * An empty run.
 * @param {boolean} align whether clocks are to be aligned on the collectives
 * @returns {RunState}
 */
export function emptyRun(align = true) {
  return { loading: null, failed: [], summary: null, align, tables: new Map(), csvs: new Map(), session: null };
}

/**
 * A watched folder (view "watch"): its handle, the files seen, the windows read (each kept as its
 * digest's window only), notes, the poll timer and the worker session that reads the files.
 * @typedef {{windows: any[], seen: Map<string, {size: number, modified: number, still: number, done: boolean, cutAt: number|null, deletedNoted?: boolean}>,
 *   groups: Map<string, string|null>, notes: string[], handle: any, timer: any, session: import('./session.js').Session|null, busy: boolean, onChange: (() => void)|null, ranks: boolean}} WatchState
 */

/** @returns {WatchState} */
export function emptyWatch() {
  return { windows: [], seen: new Map(), groups: new Map(), notes: [], handle: null, timer: null, session: null, busy: false, onChange: null, ranks: false };
}

/** The page's state and its generation counter. */
export class Store {
  constructor() {
    /** Bumped by every change of what is loaded. */
    this.generation = 0;
    /** Bumped by every drawing of a view. */
    this.drawing = 0;
    /** The worker session that owns the core (replaced after a cancel; set as the page starts). @type {import('./session.js').Session} */
    this.core = /** @type {any} */ (null);
    /** The options the core declares (the page's settings are made from them), once asked (loading.js, `declaredOptions`). @type {Promise<import('./worker-ops.js').DeclaredOptions>|null} */
    this.declared = null;
    /** Trace A, the one the views show: {session, fileName, blob, summary, tables...}. @type {any} */
    this.trace = null;
    /** The second trace of a comparison: {fileName, summary} once analysed in the worker's slot `b`. @type {any} */
    this.second = null;
    /** Progress text while the second trace loads (null otherwise). @type {string|null} */
    this.secondLoading = null;
    /** The last comparison: {key, promise, tables, csvs}. @type {any} */
    this.comparison = null;
    /** The run of several ranks. @type {RunState} */
    this.run = emptyRun(true);
    /** The watched folder. @type {WatchState} */
    this.watch = emptyWatch();
    /** Capture traces read beside trace A (graph replays take their ops), as picked or dropped. @type {File[]} */
    this.captures = [];
    /** The hash a view wrote for itself last: its hashchange is not a navigation. */
    this.ignoreHash = '';
  }

  /** Begins a change of what is loaded: bumps the generation; returns the change's stamp. */
  begin() {
    this.generation += 1;
    return this.generation;
  }

  /**
   * True while nothing else was loaded since the change stamped `stamp` began.
   * @param {number} stamp
   */
  current(stamp) {
    return stamp === this.generation;
  }

  /** Begins drawing a view; returns a check that stays true while it is the newest drawing and nothing was loaded meanwhile. */
  beginDrawing() {
    const seq = (this.drawing += 1);
    const gen = this.generation;
    return () => seq === this.drawing && gen === this.generation;
  }

  /** Forgets the second trace, the comparison and the run (the worker that held them is gone). */
  dropWorkerState() {
    this.second = null;
    this.secondLoading = null;
    this.comparison = null;
    this.run = emptyRun(this.run.align);
    this.begin();
  }
}

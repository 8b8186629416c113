// The page's end of the Web Worker that owns the wasm core (www/worker/): requests and their
// answers. The page hands the worker whole files; what a file is and how it is read is the
// worker's business.
// The worker holds two slots: `a` (the trace the views show) and `b` (the second trace of a
// comparison). `load` replaces a slot's trace; `close` terminates the worker (cancel).

/** A worker running the core; up to two analysed traces (slots `a` and `b`). */
export class Session {
  constructor() {
    this.worker = new Worker(new URL('../worker/worker.js', import.meta.url), { type: 'module' });
    this.pending = new Map();
    this.nextId = 1;
    this.closed = false;
    /** True once the core trapped (e.g. the tab's memory ran out): the page replaces the worker. */
    this.broken = false;
    /** Resolves to the warm-up's duration (ms) once the worker has warmed the core up. */
    this.warmed = new Promise((resolve) => { this.onWarmed = resolve; });
    /** True once warmed: the worker's helper workers are then started (see `load`). */
    this.isWarm = false;
    this.warmed.then(() => { this.isWarm = true; });
    this.worker.onmessage = (e) => {
      const { id, value, error } = e.data;
      if ('progress' in e.data) {
        this.pending.get(id)?.onProgress?.(e.data.progress);
        return;
      }
      if (id === undefined && 'warmed' in e.data) {
        if (e.data.error) console.warn(`warm-up failed: ${e.data.error}`);
        this.onWarmed(e.data.warmed);
        return;
      }
      // After a trap the worker's core cannot be used again (see `broken`).
      if (e.data.trapped) this.broken = true;
      const p = this.pending.get(id);
      if (!p) return;
      this.pending.delete(id);
      if (error !== undefined) p.reject(new Error(error));
      else p.resolve(value);
    };
    this.worker.onerror = (e) => {
      e.preventDefault();
      this.failAll(new Error(`the analyzer worker failed to start: ${e.message || 'unknown error'}`));
    };
  }

  failAll(err) {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /**
   * Sends one request (its arguments and answer as js/worker-ops.js declares them); `transfer`
   * lists ArrayBuffers to move to the worker. `onProgress` gets the `{progress}` notes the worker
   * posts before its reply (the `load` op).
   * @template {keyof import('./worker-ops.js').WorkerOps} K
   * @param {K} op
   * @param {import('./worker-ops.js').WorkerOps[K][0]} [args]
   * @param {Transferable[]} [transfer]
   * @param {((p: any) => void) | null} [onProgress]
   * @returns {Promise<import('./worker-ops.js').WorkerOps[K][1]>}
   */
  call(op, args = /** @type {any} */ ({}), transfer = [], onProgress = null) {
    if (this.closed) return Promise.reject(new Error('cancelled'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, onProgress });
      this.worker.postMessage({ id, op, ...args }, transfer);
    });
  }

  /**
   * Opens `blob` in the core's `slot` and analyses it: the worker tells what the file is and how
   * to read it (the page never asks). `onProgress({bytesRead, total, events})` is called as the
   * worker reads. Resolves to `{summary, tables, views, memory}`, with `parallel` (how workers
   * shared the reading) or `nsys` (what the SQLite module did).
   * @param {Blob} blob
   * @param {object} options the analysis options (`loading.js` `loadOptions`)
   * @param {((p: {bytesRead: number, total: number, events: number}) => void) | null} [onProgress]
   * @param {string} [slot]
   * @param {{file: Blob, name: string, batch?: number|null, mode?: string|null}[]} [captures]
   * @returns {Promise<import('./worker-ops.js').Opened>}
   */
  async load(blob, options, onProgress = null, slot = 'a', captures = []) {
    // Capture traces first: the worker keeps them for the slot until the trace is finished.
    if (captures.length) await this.call('captures', { slot, files: captures });
    // `globalThis.traceprismGzipPipeline` ('always' / 'never'; tests and benchmarks) overrides the
    // worker's choice of inflating on a helper by core count.
    const gzipPipeline = globalThis.traceprismGzipPipeline || 'auto';
    return this.call('open', { slot, options, file: blob, gzipPipeline }, [], ({ bytesRead, total, events }) => {
      onProgress?.({ bytesRead, total, events });
    });
  }

  /**
   * Why `files` cannot be opened in the page together (their models would not fit in its
   * memory), or null; the worker tells, from what each file is and its size.
   * @param {{file: Blob, name: string}[]} files
   * @returns {Promise<string | null>}
   */
  admit(files) {
    // Tests of what happens past the limit turn the check off.
    return this.call('admit', { files, noLimit: Boolean(globalThis.traceprismNoSizeLimit) });
  }

  /** Stops the worker at once; pending requests reject with "cancelled". */
  close() {
    if (this.closed) return;
    this.closed = true;
    this.worker.terminate();
    this.failAll(new Error('cancelled'));
  }
}

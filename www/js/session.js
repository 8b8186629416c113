// The Web Worker that owns the wasm core, and how a file is fed to it slice by slice.
// The worker holds two slots: `a` (the trace the views show) and `b` (the second trace of a
// comparison). `start` drops the previous trace of a slot; `close` terminates the worker (cancel).

import { PAGE_SLICE_BYTES, FIRST_SLICE_BYTES, WORKER_READ_MIN_BYTES } from './constants.js';
import { gzipPipeline as wantsGzipPipeline } from './gzip-pipeline.js';

/** @typedef {import('../pkg/traceprism.js').Sniffed} Sniffed What the core said of a file's first bytes. */

/** A worker running the core; up to two analysed traces (slots `a` and `b`). */
export class Session {
  constructor() {
    this.worker = new Worker(new URL('../worker.js', import.meta.url), { type: 'module' });
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
   * What `blob` is, from its first bytes, as the core decides (`ingest::sniff`): asked once per
   * file, then handed to `load` (and by it to every worker that reads the file).
   * @param {Blob} blob
   * @returns {Promise<Sniffed>}
   */
  async sniff(blob) {
    return this.call('sniff', { head: await blob.slice(0, 64).arrayBuffer() });
  }

  /**
   * Streams `blob` (which `sniff` said is `sniffed`) into the core's `slot` and analyses it. `onProgress({bytesRead, total, events})`
   * is called after every slice. Resolves to `{summary, tables, memory}` (plus `parallel:
   * {workers, parts, adopted}` when the worker read the file itself).
   * @returns {Promise<import('./worker-ops.js').Finished & {parallel?: any, nsys?: any}>}
   */
  async load(blob, sniffed, options, onProgress, slot = 'a', captures = []) {
    // Capture traces first: the worker keeps them for the slot until the trace is finished.
    if (captures.length) await this.call('captures', { slot, files: captures });
    // A gzip file gains from the worker's own read only with a helper to inflate it (the helpers
    // start with the page, so a cold page has one too). `globalThis.traceprismGzipPipeline` ('always' / 'never'; tests and benchmarks) overrides the
    // worker's choice by core count (one decision for both: gzip-pipeline.js).
    const mode = globalThis.traceprismGzipPipeline || 'auto';
    const { format } = sniffed;
    const gzipPipeline = format === 'gzip' && wantsGzipPipeline(blob.size, mode, navigator.hardwareConcurrency || 2);
    // An Nsight Systems export goes through the worker's SQLite module.
    if (format === 'nsys') {
      return this.call('loadNsys', { slot, options, sniffed, file: blob }, [], ({ bytesRead, total, events }) => {
        onProgress?.({ bytesRead, total, events });
      });
    }
    // A JAX profile (protobuf) is read whole by the core: the parallel readers split JSON text.
    const xspace = format === 'xspace';
    if ((blob.size >= WORKER_READ_MIN_BYTES || gzipPipeline) && !xspace) {
      return this.call('load', { slot, options, sniffed, file: blob, gzipPipeline: mode }, [], ({ bytesRead, total, events }) => {
        onProgress?.({ bytesRead, total, events });
      });
    }
    await this.call('start', { slot, options, sniffed, fileBytes: blob.size });
    const total = blob.size;
    // Two slices in flight: the worker always has the next one queued while the page reads the
    // one after it, so it never waits for the page.
    const inFlight = [];
    let offset = 0;
    while (offset < total) {
      const end = Math.min(offset + (offset === 0 ? FIRST_SLICE_BYTES : PAGE_SLICE_BYTES), total);
      const buffer = await blob.slice(offset, end).arrayBuffer();
      if (this.closed) throw new Error('cancelled');
      offset = end;
      const pushed = this.call('push', { slot, buffer }, [buffer]).then((progress) => {
        onProgress?.({ bytesRead: end, total, events: progress.events, jsonBytes: progress.json_bytes });
      });
      pushed.catch(() => {}); // awaited below; this only keeps an early failure from being "unhandled"
      inFlight.push(pushed);
      if (inFlight.length >= 2) await inFlight.shift();
    }
    for (const pushed of inFlight) await pushed;
    return this.call('finish', { slot });
  }

  /** Stops the worker at once; pending requests reject with "cancelled". */
  close() {
    if (this.closed) return;
    this.closed = true;
    this.worker.terminate();
    this.failAll(new Error('cancelled'));
  }
}

// The Web Worker that owns the wasm core, and how a file is fed to it slice by slice.
// The worker holds two slots: `a` (the trace the views show) and `b` (the second trace of a
// comparison). `start` drops the previous trace of a slot; `close` terminates the worker (cancel).

/** Bytes per slice handed to the worker (transferred, not copied). */
export const SLICE_BYTES = 16 << 20;

/** A worker running the core; up to two analysed traces (slots `a` and `b`). */
export class Session {
  constructor() {
    this.worker = new Worker(new URL('../worker.js', import.meta.url), { type: 'module' });
    this.pending = new Map();
    this.nextId = 1;
    this.closed = false;
    this.worker.onmessage = (e) => {
      const { id, value, error } = e.data;
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

  /** Sends one request; `transfer` lists ArrayBuffers to move to the worker. */
  call(op, args = {}, transfer = []) {
    if (this.closed) return Promise.reject(new Error('cancelled'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, ...args }, transfer);
    });
  }

  /**
   * Streams `blob` into the core's `slot` and analyses it. `onProgress({bytesRead, total, events})`
   * is called after every slice. Resolves to `{summary, tables, memory}`.
   */
  async load(blob, options, onProgress, slot = 'a') {
    await this.call('start', { slot, options });
    const total = blob.size;
    let offset = 0;
    // Read the next slice while the worker parses the current one.
    let next = total > 0 ? blob.slice(0, Math.min(SLICE_BYTES, total)).arrayBuffer() : null;
    while (next) {
      const buffer = await next;
      if (this.closed) throw new Error('cancelled');
      offset += buffer.byteLength;
      next = offset < total ? blob.slice(offset, Math.min(offset + SLICE_BYTES, total)).arrayBuffer() : null;
      const progress = await this.call('push', { slot, buffer }, [buffer]);
      onProgress?.({ bytesRead: offset, total, events: progress.events, jsonBytes: progress.json_bytes });
    }
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

// The main worker's side of parallel parsing. A large plain-JSON trace is cut into N byte ranges
// at likely event starts (found in a small window of the file around each cut); the main worker
// parses range 0 with its Analyzer while helper workers (part-worker.js, nested workers started
// by the main worker once it has warmed up, so they are warm too) parse ranges 1..N-1. Each
// parsing worker reads its slices through a reader worker of its own (slice-reader.js). The main worker then adopts the
// parts in order: the core keeps a part only if its own stream stopped exactly at an event
// boundary where the part starts; otherwise (a wrong guess, a helper error) it reads and parses
// that range itself, so the model and any error message never depend on the guess.
import { find_event_start, Inflater } from '../pkg/traceprism.js';
import {
  PARALLEL_MIN_BYTES, INFLATE_BLOCK_BYTES, INFLATE_READ_BYTES,
  INFLATE_STEP_BYTES, WORKER_SLICE_BYTES, FIRST_SLICE_BYTES, READS_AHEAD, WINDOW_BYTES, WINDOW_BEFORE,
  RECYCLE_AFTER_BYTES, RECYCLE_DELAY_MS, RANGE_MIN_BYTES, GRANT_AHEAD_BYTES,
} from '../js/constants.js';
import { RangeClaims } from '../js/ranges.js';
import { gzipPipeline as wantsGzipPipeline } from './gzip-pipeline.js';


/** Reads the file for this worker's own ranges (started with the worker, on first use). */
let reader = null;
export function startReader() {
  reader ??= new SliceReader();
}

/** Workers parsing at once, counting the main worker: one per core, at most 4. */
export function workerCount() {
  const cores = (self.navigator && navigator.hardwareConcurrency) || 2;
  return Math.max(1, Math.min(cores, 4));
}

/**
 * The helper workers: started ahead of any file so their wasm is compiled and warm when one arrives.
 * A helper may hold several jobs: it runs them one after the other, in the order they were posted
 * (so the next range is already waiting when it finishes one).
 */
export class HelperPool {
  constructor(count) {
    this.count = count;
    this.helpers = [];
    this.nextJob = 1;
    let warm = 0;
    /** Resolves when every helper has reported its warm-up done (or failed). */
    this.warmed = new Promise((resolve) => {
      this.onWarmed = () => { if (++warm === count) resolve(); };
    });
    for (let i = 0; i < count; i++) this.helpers.push(this.spawn());
  }

  spawn() {
    /** jobs: id → job, in the order posted; bytes: of the ranges parsed since it started; busy: holds a job. */
    const helper = {
      worker: new Worker(new URL('./part-worker.js', import.meta.url), { type: 'module' }), jobs: new Map(), bytes: 0, warmed: false, failed: false,
      get busy() { return this.jobs.size > 0; },
    };
    helper.worker.onmessage = (e) => {
      const d = e.data;
      if (d.job === undefined && 'warmed' in d && !helper.warmed) {
        helper.warmed = true;
        this.onWarmed();
      }
      const job = d.job === undefined ? undefined : helper.jobs.get(d.job);
      if (!job) return; // a stale job
      if (job.stream) {
        if ('done' in d || 'error' in d) helper.jobs.delete(d.job);
        job.stream(d);
        return;
      }
      if ('progress' in d) {
        job.onProgress(d.progress, d.events);
        return;
      }
      helper.jobs.delete(d.job);
      job.resolve(d.part ? { part: d.part, ms: d.ms } : { error: d.error || 'helper failed' });
    };
    helper.worker.onerror = (e) => {
      e.preventDefault();
      helper.failed = true;
      if (!helper.warmed) {
        helper.warmed = true;
        this.onWarmed();
      }
      const error = `helper worker failed: ${e.message || 'unknown error'}`;
      const jobs = [...helper.jobs.values()];
      helper.jobs.clear();
      for (const job of jobs) {
        if (job.stream) job.stream({ error, crashed: true });
        else job.resolve({ error });
      }
    };
    return helper;
  }

  /**
   * Ends a helper that parsed a large range: wasm memory never shrinks, so it would keep the peak of
   * that range for the life of the page. A fresh helper takes its place a little later, once the
   * main worker's own work on this file is likely done, so it is warm for the next file.
   */
  recycle(helper) {
    helper.worker.terminate();
    helper.failed = true;
    setTimeout(() => {
      const i = this.helpers.indexOf(helper);
      if (i >= 0) this.helpers[i] = this.spawn();
    }, RECYCLE_DELAY_MS);
  }

  /**
   * Recycles the idle helpers that have parsed a lot (see `recycle`). Called once a file is read,
   * never between a helper's ranges: its next range may be on its way.
   */
  recycleLarge() {
    for (const helper of this.helpers) {
      if (!helper.busy && !helper.failed && helper.bytes >= RECYCLE_AFTER_BYTES) this.recycle(helper);
    }
  }

  /** Helpers ready for a job (a failed one is replaced). */
  available() {
    this.helpers = this.helpers.map((h) => (h.failed ? this.spawn() : h));
    return this.helpers.filter((h) => !h.busy);
  }

  /**
   * Parses `file[start, end)` on `helper` once its earlier jobs are done; resolves to {part} or
   * {error}. `onProgress(bytesDone, events)` as it goes (its first call: the job has started).
   */
  run(helper, file, start, end, bare, onProgress) {
    const id = this.nextJob++;
    helper.bytes += end - start;
    return new Promise((resolve) => {
      helper.jobs.set(id, { id, resolve, onProgress });
      helper.worker.postMessage({ job: id, file, start, end, bare });
    });
  }

  /**
   * Starts a streaming job on `helper`: `request` (plus its job id) is posted to it, and every reply
   * for the job goes to `onMessage` until one carries `done` or `error` (`crashed` too if the
   * helper itself failed). Returns `post(message, transfer)`, which posts a message (plus the job id)
   * to the helper, e.g. `{ack}` (a credit for flow control).
   */
  stream(helper, request, onMessage) {
    const id = this.nextJob++;
    helper.jobs.set(id, { id, stream: onMessage });
    helper.worker.postMessage({ ...request, job: id });
    return (message, transfer = []) => helper.worker.postMessage({ ...message, job: id }, transfer);
  }

  /** Stops helpers still working on a job that nobody waits for any more, and starts fresh ones. */
  abandon() {
    this.helpers = this.helpers.map((h) => {
      if (!h.busy) return h;
      h.worker.terminate();
      h.failed = true;
      for (const job of h.jobs.values()) job.resolve?.({ error: 'abandoned' });
      h.jobs.clear();
      return this.spawn();
    });
  }
}

async function bytesOf(file, start, end) {
  return new Uint8Array(await file.slice(start, end).arrayBuffer());
}

/**
 * The likely event start nearest after `guess` (searched in a small window around it, kept inside
 * `(lo, hi)`), or -1 if none was found there.
 */
async function eventStartNear(file, guess, lo, hi) {
  const from = Math.max(lo + 1, guess - WINDOW_BEFORE);
  const to = Math.min(hi, guess + WINDOW_BYTES);
  if (to <= from) return -1;
  const p = find_event_start(await bytesOf(file, from, to), guess - from);
  return p >= 0 ? from + p : -1;
}

/**
 * Reads slices of a File on its own thread (slice-reader.js), so the next slices arrive while this
 * worker parses. Falls back to reading here if that worker cannot start.
 */
export class SliceReader {
  constructor() {
    this.nextId = 1;
    this.inbox = null;
    try {
      this.worker = new Worker(new URL('./slice-reader.js', import.meta.url), { type: 'module' });
      this.worker.onmessage = (e) => this.inbox?.(e.data);
      this.worker.onerror = (e) => {
        e.preventDefault();
        this.worker = null;
        this.inbox?.({ error: `the file reader failed: ${e.message || 'unknown error'}` });
      };
    } catch {
      this.worker = null;
    }
  }

  /** As {@link readSlices}. */
  async read(file, start, end, sliceBytes, ahead, consume, ms = {}) {
    if (!this.worker) return readSlices(file, start, end, sliceBytes, ahead, consume, ms);
    const id = this.nextId++;
    const queue = [];
    let wake = null;
    this.inbox = (d) => {
      if (d.id !== undefined && d.id !== id) return;
      queue.push(d);
      wake?.();
    };
    this.worker.postMessage({ id, file, start, end, first: FIRST_SLICE_BYTES, slice: sliceBytes, ahead });
    let offset = start;
    try {
      while (offset < end) {
        const t = performance.now();
        while (!queue.length) await new Promise((resolve) => { wake = resolve; });
        wake = null;
        ms.read = (ms.read || 0) + performance.now() - t;
        const d = queue.shift();
        if (d.error) throw new Error(d.error);
        if (d.length === 0) break; // the file shrank under us: the parser reports the cut
        offset += d.length;
        this.worker.postMessage({ ack: id }); // the reader fetches the next slice while this one is parsed
        let more;
        try {
          more = await consume(new Uint8Array(d.buffer, 0, d.length), offset - start); // a consumer may wait (for flow control)
        } finally {
          // Copied into the core by now: the buffer goes back to the reader for a later slice.
          this.worker.postMessage({ recycle: d.buffer }, [d.buffer]);
        }
        if (more === false) {
          this.worker.postMessage({ stop: id }); // the reader stops reading ahead
          break;
        }
      }
    } finally {
      this.inbox = null;
    }
  }
}

/**
 * Reads `file[start, end)` in slices, a small one first (parsing starts without waiting for a large
 * read), keeping `ahead` reads in flight while `consume(bytes, done)` handles each slice (a
 * Uint8Array, to copy before returning: the reader may reuse its buffer). `ms.read` adds up the
 * time spent waiting for the file. `consume` may return a promise: the next slice waits for it.
 * If it returns (or resolves to) `false`, reading stops there.
 */
export async function readSlices(file, start, end, sliceBytes, ahead, consume, ms = {}) {
  const queue = [];
  let next = start;
  const fill = () => {
    while (queue.length < ahead && next < end) {
      const to = Math.min(next + (next === start ? FIRST_SLICE_BYTES : sliceBytes), end);
      queue.push(file.slice(next, to).arrayBuffer());
      next = to;
    }
  };
  fill();
  let offset = start;
  while (queue.length) {
    const t = performance.now();
    const buffer = await queue.shift();
    ms.read = (ms.read || 0) + performance.now() - t;
    fill();
    if (buffer.byteLength === 0) break; // the file shrank under us: the parser reports the cut
    offset += buffer.byteLength;
    if ((await consume(new Uint8Array(buffer), offset - start)) === false) break;
  }
}

/**
 * Pushes `file[start, end)` into `analyzer`; `onSlice(bytesDone)` after each slice. With `claim`,
 * each slice is first claimed: `claim(sliceEnd)` answers where the range may end now (a helper may
 * have taken the bytes after it meanwhile), and the push stops there.
 */
async function pushRange(analyzer, file, start, end, onSlice, ms = {}, claim = (to) => to) {
  await reader.read(file, start, end, WORKER_SLICE_BYTES, READS_AHEAD, (bytes, done) => {
    const from = start + done - bytes.length;
    const length = Math.min(bytes.length, claim(start + done) - from);
    const t = performance.now();
    if (length > 0) analyzer.push(length < bytes.length ? bytes.subarray(0, length) : bytes);
    ms.push = (ms.push || 0) + performance.now() - t;
    onSlice(from + length - start);
    return length === bytes.length;
  }, ms);
}

/**
 * Inflates `file` (gzip), handing each block of text to `deliver(text, compressedBytes)` as soon as
 * it is full (the last one, possibly empty, after the stream's end is checked); `deliver` may return
 * a promise, and inflating waits for it. On an error, the text inflated before it is delivered first
 * (so text before a corrupt spot is parsed, as in a sequential read), then the error is thrown. The
 * compressed bytes of all deliveries add up to the file's size. `spare()` may return a buffer to
 * copy the next block into (a delivered block may then be a view on part of a larger buffer).
 * Resolves to what is wrong at the stream's end (cut short, trailer missing or wrong: the text
 * delivered is all there is, for `Analyzer.input_cut`), or undefined if it ended cleanly.
 */
export async function inflateFile(file, readSlicesOf, deliver, ms = {}, spare = () => null, crc = true) {
  const inflater = new Inflater(INFLATE_BLOCK_BYTES);
  inflater.check_crc(crc);
  const drain = async () => {
    while (inflater.ready()) {
      const t = performance.now();
      const into = spare();
      const length = into ? inflater.take_into(into) : -1;
      const block = length > 0 ? into.subarray(0, length) : inflater.take();
      ms.take = (ms.take || 0) + performance.now() - t;
      await deliver(block, inflater.take_compressed());
    }
  };
  try {
    await readSlicesOf(file, 0, file.size, INFLATE_READ_BYTES, READS_AHEAD, async (bytes) => {
      for (let at = 0; at < bytes.length; at += INFLATE_STEP_BYTES) {
        const t = performance.now();
        inflater.push(bytes.subarray(at, at + INFLATE_STEP_BYTES));
        ms.inflate = (ms.inflate || 0) + performance.now() - t;
        await drain();
      }
    }, ms);
    const cut = inflater.finish();
    await drain();
    await deliver(inflater.finish_block(), inflater.take_compressed());
    return cut;
  } catch (err) {
    if (!(err instanceof WebAssembly.RuntimeError)) {
      try {
        await drain();
        const rest = inflater.finish_block();
        if (rest.length) await deliver(rest, inflater.take_compressed());
      } catch {
        // The error below is the one to report.
      }
    }
    throw err;
  } finally {
    inflater.free();
  }
}

/**
 * Reads a gzip `file` into `analyzer` on two threads: a helper worker of `pool` reads and inflates
 * the file (part-worker.js, `inflate` request) and sends the text in blocks, at most
 * INFLATE_BLOCKS_AHEAD ahead; this worker parses them in order (`Analyzer.push_inflated`, the
 * reader path a sequential read takes too, so the model and any error are the same). An error the
 * helper reports is the core's own (corrupt or truncated data) and is thrown here after the text
 * before it is parsed. When this worker is behind, the helper also parses a block itself from a
 * likely event start (as the native reader does): this worker parses the text before that start,
 * then adopts the part only if its own stream stops exactly there (`adopt_inflated_part`), else
 * parses the rest of the block itself, so the result never depends on the guess. If the helper itself fails, this worker inflates the file itself from the
 * start and goes on after the text it has already parsed.
 */
async function readGzip(analyzer, file, pool, helper, onProgress, ms, crc = true) {
  const queue = [];
  let wake = null;
  const post = pool.stream(helper, { op: 'inflate', file, crc }, (d) => {
    queue.push(d);
    wake?.();
  });
  const total = file.size;
  let compressedDone = 0;
  let textDone = 0;
  let blocks = 0;
  let adopted = 0;
  const report = () => onProgress({ bytesRead: Math.min(total, compressedDone), total, events: analyzer.progress().events });
  const parse = (text, compressed) => {
    const t = performance.now();
    analyzer.push_inflated(text, compressed);
    ms.push = (ms.push || 0) + performance.now() - t;
    compressedDone += compressed;
    textDone += text.length;
    report();
  };
  for (;;) {
    const t = performance.now();
    while (!queue.length) await new Promise((resolve) => { wake = resolve; });
    wake = null;
    ms.wait = (ms.wait || 0) + performance.now() - t;
    const d = queue.shift();
    if (d.block) {
      blocks++;
      const text = new Uint8Array(d.block, 0, d.length);
      if (d.part) {
        // Parsed by the helper from `split` on: the text before it here, then the part if this
        // worker's stream stops exactly there (else the rest of the text, in order).
        parse(text.subarray(0, d.split), d.compressed);
        const t = performance.now();
        const kept = analyzer.adopt_inflated_part(new Uint8Array(d.part));
        ms.adopt = (ms.adopt || 0) + performance.now() - t;
        if (kept) {
          adopted++;
          textDone += text.length - d.split;
          report();
        } else {
          parse(text.subarray(d.split), 0);
        }
      } else {
        parse(text, d.compressed);
      }
      // A credit for one more block, and this one's buffer back for reuse.
      post({ ack: true, buffer: d.block }, [d.block]);
    }
    if (d.done) {
      if (d.cut) analyzer.input_cut(d.cut);
      if (d.ms) ms.helper = Object.fromEntries(Object.entries(d.ms).map(([key, v]) => [key, Math.round(v)]));
      break;
    }
    if (d.crashed) {
      // The helper is gone (or its module trapped: it is replaced): inflate here, skipping the
      // text already parsed.
      pool.recycle(helper);
      ms.resumed = textDone;
      let skip = textDone;
      let credited = compressedDone;
      let read = 0;
      const readHere = (f, start, end, slice, ahead, consume, m) =>
        reader.read(f, start, end, slice, ahead, (bytes, done) => { read = done; return consume(bytes, done); }, m);
      const cut = await inflateFile(file, readHere, (text) => {
        if (skip > 0 && skip >= text.length) {
          skip -= text.length; // parsed already, from the helper's blocks
          return;
        }
        const credit = Math.max(0, read - credited);
        credited += credit;
        parse(text.subarray(skip), credit);
        skip = 0;
      }, {}, () => null, crc);
      if (credited < total) parse(new Uint8Array(0), total - credited);
      if (cut) analyzer.input_cut(cut);
      break;
    }
    if (d.error) throw new Error(d.error);
  }
  return { blocks, adopted };
}

/**
 * Reads `file` into `analyzer` (fresh, nothing pushed yet; `sniffed`: what the core said of the
 * file's first bytes, `{format, form, reading}`), using the helpers of `pool` for a large file read
 * in parts (`reading` `parts`), or one helper to inflate a large compressed file (`inflate`;
 * `gzipPipeline`: see `gzip-pipeline.js`;
 * `crc`: whether the gzip CRC-32 is checked). `onProgress({bytesRead, total, events})` is called as any worker advances.
 * Resolves to `{workers, parts, adopted, ms}`: workers that parsed, parts handed to helpers, parts
 * kept, and where this worker's time went (ms: plan, own range, read wait, push, wait for parts,
 * adopt; `helperK` for each helper).
 */
export async function readFile(analyzer, file, sniffed, pool, onProgress, gzipPipeline = 'auto', crc = true) {
  const t0 = performance.now();
  startReader();
  const total = file.size;
  const { reading, form } = sniffed;
  const helpers = pool ? pool.available() : [];
  if (reading === 'inflate' && helpers.length > 0 && wantsGzipPipeline(total, gzipPipeline, (self.navigator && navigator.hardwareConcurrency) || 2)) {
    const ms = { plan: performance.now() - t0 };
    try {
      const { blocks, adopted } = await readGzip(analyzer, file, pool, helpers[0], onProgress, ms, crc);
      ms.total = performance.now() - t0;
      return { workers: 2, parts: blocks, adopted, inflated: blocks, ms };
    } catch (err) {
      pool.abandon();
      throw err;
    }
  }
  const parallel = reading === 'parts' && total >= PARALLEL_MIN_BYTES && helpers.length > 0;
  // The file's bytes are handed out while the workers run (js/ranges.js): this worker parses from
  // the front, in order, a slice at a time; each helper parses ranges from the back, the next one
  // posted to it before it has finished the one before (see GRANT_AHEAD_BYTES), so it never waits
  // for this worker, busy parsing, to answer. At the meeting point this worker adopts the helpers'
  // parts in order.
  const claims = new RangeClaims(total, parallel ? helpers.length + 1 : 1, RANGE_MIN_BYTES);
  /** Helper ranges, in file order (each new one lies just before the others): {start, end, result, done, events}. */
  const parts = [];
  let mainDone = 0;
  const report = () => {
    const bytesRead = Math.min(total, mainDone + parts.reduce((s, p) => s + p.done, 0));
    onProgress({ bytesRead, total, events: analyzer.progress().events + parts.reduce((s, p) => s + p.events, 0) });
  };
  // Grants are made one at a time: each reads a small window of the file to find an event start.
  let granting = Promise.resolve();
  const grant = (helper) => {
    granting = granting.then(async () => {
      const guess = claims.backGuess();
      if (guess === null || helper.failed) return;
      const cut = await eventStartNear(file, guess, claims.lo, claims.hi);
      // The helper may have been stopped meanwhile (the read failed): nothing is given to it.
      const range = cut >= 0 && !helper.failed ? claims.takeBack(cut) : null;
      if (!range) return;
      const part = { start: range[0], end: range[1], done: 0, events: 0, result: null };
      let queued = false;
      part.result = pool.run(helper, file, range[0], range[1], form === 'array', (bytes, n) => {
        part.done = bytes;
        part.events = n;
        // The helper's next range is granted (and queued behind this one) as this one nears its
        // end: late enough to be a share of a small gap, early enough to be there when the helper
        // is free (this worker answers between its own slices).
        if (!queued && range[1] - range[0] - bytes <= GRANT_AHEAD_BYTES) {
          queued = true;
          grant(helper);
        }
        report();
      });
      parts.unshift(part);
    });
    return granting;
  };
  let adopted = 0;
  // Milliseconds spent by this worker: planning, its own range, waiting for parts, adopting them.
  const ms = { plan: 0, own: 0, wait: 0, adopt: 0 };
  try {
    if (parallel) {
      for (const helper of helpers) await grant(helper);
    }
    ms.plan = performance.now() - t0;
    // This worker's own range: from the start up to wherever the helpers' ranges begin by the time
    // it gets there, claimed slice by slice (one read of the file, never restarted).
    let t = performance.now();
    await pushRange(analyzer, file, 0, claims.hi, (bytes) => {
      mainDone = bytes;
      report();
    }, ms, (to) => claims.advanceFront(to));
    ms.own = performance.now() - t;
    // The front has met the back (no grant can take a range any more); one under way ends first.
    await granting;
    let k = 0;
    for (const part of parts) {
      k++;
      t = performance.now();
      const result = await part.result;
      ms.wait += performance.now() - t;
      if (result.ms) ms[`part${k}`] = Object.fromEntries(Object.entries(result.ms).map(([key, v]) => [key, Math.round(v)]));
      t = performance.now();
      const kept = result.part && analyzer.adopt_part(new Uint8Array(result.part));
      ms.adopt += performance.now() - t;
      // From here on this range counts as this worker's.
      part.events = 0;
      part.done = 0;
      if (kept) {
        adopted++;
        mainDone += part.end - part.start;
        report();
        continue;
      }
      // A wrong guess or a helper error: this range is parsed here, in order (a real error in it
      // is then reported with its byte offset, as in a sequential read).
      const base = mainDone;
      await pushRange(analyzer, file, part.start, part.end, (bytes) => {
        mainDone = base + bytes;
        report();
      });
    }
  } catch (err) {
    pool?.abandon();
    throw err;
  }
  pool?.recycleLarge();
  return { workers: parallel ? helpers.length + 1 : 1, parts: parts.length, adopted, ms };
}

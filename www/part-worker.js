// A helper worker, started by the main worker (worker.js) when the page loads: it parses one byte
// range of a large plain-JSON trace while the main worker parses the range before it, and sends
// the result back as bytes (a transferred ArrayBuffer) for the main worker to verify and adopt.
//
// It also inflates a gzip file for the main worker (request {op: 'inflate', job, file}; see
// `inflate` below), which then parses the text while this worker inflates the next block.
//
// Request: {job, file, start, end, bare}. Replies (all carry `job`): {progress, events} after each
// slice, then {part: ArrayBuffer} or {error}. An error is not shown to anyone: the main worker
// then parses that range itself, in order, and reports any real error with its byte offset.
//
// Right after start it warms the parse path up (the same rounds as the main worker), giving way to
// the first job; then it posts {warmed: ms}.
import init, { TextPart, warm_up_part } from './pkg/traceprism.js';
import { SliceReader, inflateFile, INFLATE_BLOCKS_AHEAD } from './parallel.js';

/** Bytes read from the file per push. */
const SLICE_BYTES = 16 << 20;
/** File reads kept in flight while a slice is parsed. */
const READS_AHEAD = 2;
/** Warm-up rounds: decode steps of the synthetic trace parsed as a part (~25 kB a step). */
const WARM_UP_STEPS = [3, 40, 40, 40, 40, 40];
let requested = false;
/** Reads this helper's range on a thread of its own while this one parses. */
const reader = new SliceReader();

const ready = init();
ready.then(async () => {
  const t0 = performance.now();
  let error;
  for (const steps of WARM_UP_STEPS) {
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (requested) break;
    try {
      warm_up_part(steps);
    } catch (err) {
      error = (err && err.message) || String(err);
      break;
    }
  }
  self.postMessage({ warmed: performance.now() - t0, error });
}, () => {});

/** Parses the range; returns the part's bytes and where the time went (ms). */
async function parse({ job, file, start, end, bare }) {
  const t0 = performance.now();
  const part = new TextPart(bare, start);
  const ms = { read: 0, push: 0, encode: 0, total: 0 };
  try {
    await reader.read(file, start, end, SLICE_BYTES, READS_AHEAD, (buffer, done) => {
      const t = performance.now();
      part.push(new Uint8Array(buffer));
      ms.push += performance.now() - t;
      self.postMessage({ job, progress: done, events: part.events() });
    }, ms);
    const t = performance.now();
    const bytes = part.finish();
    ms.encode = performance.now() - t;
    ms.total = performance.now() - t0;
    return { buffer: bytes.buffer, ms };
  } finally {
    part.free();
  }
}

/** The inflate job under way: {job, credit, wake}. */
let inflating = null;

/**
 * Reads and inflates a gzip file, posting {job, block: ArrayBuffer, length, compressed} for each
 * block of text (its first `length` bytes; at most INFLATE_BLOCKS_AHEAD not yet acknowledged by
 * {job, ack, buffer}: the main worker hands each block's buffer back for the next), then {job, done}.
 */
async function inflate({ job, file }) {
  const current = (inflating = { job, credit: INFLATE_BLOCKS_AHEAD, wake: null, spares: [] });
  const t0 = performance.now();
  const ms = { read: 0, inflate: 0, wait: 0 };
  try {
    await ready;
    await inflateFile(file, (...args) => reader.read(...args), async (text, compressed) => {
      const t = performance.now();
      while (current.credit <= 0) await new Promise((resolve) => { current.wake = resolve; });
      ms.wait += performance.now() - t;
      current.credit--;
      const buffer = text.buffer;
      self.postMessage({ job, block: buffer, length: text.length, compressed }, [buffer]);
    }, ms, () => current.spares.pop() || null);
    ms.total = performance.now() - t0;
    self.postMessage({ job, done: true, ms });
  } catch (err) {
    const message = (err && err.message) || String(err);
    // A trap (or a module that failed to load) is this worker's failure, not the file's: the main
    // worker then inflates the file itself.
    const crashed = err instanceof WebAssembly.RuntimeError || !(await ready.then(() => true, () => false));
    self.postMessage({ job, error: message, crashed });
  } finally {
    if (inflating === current) inflating = null;
  }
}

self.onmessage = async (event) => {
  const { job } = event.data;
  if (event.data.ack) {
    if (inflating && inflating.job === job) {
      if (event.data.buffer) inflating.spares.push(new Uint8Array(event.data.buffer));
      inflating.credit++;
      inflating.wake?.();
    }
    return;
  }
  requested = true;
  if (event.data.op === 'inflate') {
    await inflate(event.data);
    return;
  }
  try {
    await ready;
    const { buffer, ms } = await parse(event.data);
    self.postMessage({ job, part: buffer, ms }, [buffer]);
  } catch (err) {
    self.postMessage({ job, error: (err && err.message) || String(err) });
  }
};

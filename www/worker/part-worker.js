// A helper worker, started by the main worker (worker.js) when the page loads: it parses one byte
// range of a large plain-JSON trace while the main worker parses the range before it, and sends
// the result back as bytes (a transferred ArrayBuffer) for the main worker to verify and adopt.
//
// It also inflates a gzip file for the main worker (request {op: 'inflate', job, file}; see
// `inflate` below), which then parses the text while this worker inflates the next block.
//
// Request: {job, file, start, end, bare}. Replies (all carry `job`): {progress, events} after each
// slice, then {part: ArrayBuffer} or {error}. Requests are run one after the other, in order. An
// error is not shown to anyone: the main worker then parses that range itself, in order, and
// reports any real error with its byte offset.
//
// Right after start it warms the parse and inflate paths up (the same rounds as the main worker), giving way to
// the first job; then it posts {warmed: ms}.
import init, { TextPart, sniff, find_event_start, warm_up_inflate, warm_up_part } from '../pkg/traceprism.js';
import { SliceReader, inflateFile } from './parallel.js';
import { INFLATE_BLOCKS_AHEAD, SHARE_INFLATED_BLOCKS, WORKER_SLICE_BYTES, READS_AHEAD } from '../js/constants.js';

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
      warm_up_inflate(steps); // for a gzip file, which this worker inflates
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
    await reader.read(file, start, end, WORKER_SLICE_BYTES, READS_AHEAD, (bytes, done) => {
      const t = performance.now();
      part.push(bytes);
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

/**
 * Lets this worker's event loop run (so acks already posted by the main worker are counted):
 * a message to itself, which unlike setTimeout is never clamped.
 */
const channel = new MessageChannel();
const yielded = [];
channel.port1.onmessage = () => yielded.shift()?.();
function yieldToEvents() {
  return new Promise((resolve) => {
    yielded.push(resolve);
    channel.port2.postMessage(0);
  });
}

/** The inflate job under way: {job, credit, wake}. */
let inflating = null;

/**
 * Reads and inflates a gzip file, posting {job, block: ArrayBuffer, length, compressed} for each
 * block of text (its first `length` bytes; at most INFLATE_BLOCKS_AHEAD not yet acknowledged by
 * {job, ack, buffer}: the main worker hands each block's buffer back for the next), then
 * {job, done, cut} (`cut`: what is wrong at the stream's end, if anything).
 * When the main worker is behind, a block is also parsed here from a likely event start `split`
 * and sent with the part's bytes (`part`), as the native gzip reader does (gzip_pipeline.rs).
 */
async function inflate({ job, file, crc }) {
  const current = (inflating = { job, credit: INFLATE_BLOCKS_AHEAD, wake: null, spares: [] });
  const t0 = performance.now();
  const ms = { read: 0, inflate: 0, wait: 0 };
  try {
    await ready;
    let offset = 0; // of the block in the whole text
    let bare = null; // the document's form, once known (null: not JSON, never parsed here)
    const cut = await inflateFile(file, (...args) => reader.read(...args), async (text, compressed) => {
      if (offset === 0) {
        // What the gzip stream holds: its own first bytes tell (the file's said only "gzip").
        const { form } = sniff(text.subarray(0, 4096));
        bare = form === 'array' ? true : form === 'object' ? false : null;
      }
      if (current.credit <= 0) await yieldToEvents();
      const message = { job, block: text.buffer, length: text.length, compressed };
      const transfer = [text.buffer];
      // The main worker is behind (no credit): parse this block here meanwhile (never the first,
      // which holds the document's start).
      if (SHARE_INFLATED_BLOCKS && current.credit <= 0 && offset > 0 && bare !== null) {
        const t = performance.now();
        const split = find_event_start(text, 0);
        if (split >= 0) {
          const part = new TextPart(bare, offset + split);
          try {
            part.push(text.subarray(split));
            const bytes = part.finish();
            message.split = split;
            message.part = bytes.buffer;
            transfer.push(bytes.buffer);
          } catch {
            // A wrong guess: the main worker parses the whole block.
          } finally {
            part.free();
          }
        }
        ms.share = (ms.share || 0) + performance.now() - t;
        ms.shared = (ms.shared || 0) + (message.part ? 1 : 0);
      }
      offset += text.length;
      const t = performance.now();
      while (current.credit <= 0) await new Promise((resolve) => { current.wake = resolve; });
      ms.wait += performance.now() - t;
      current.credit--;
      /** @type {any} */ (self).postMessage(message, transfer);
    }, ms, () => current.spares.pop() || null, crc !== false);
    ms.total = performance.now() - t0;
    self.postMessage({ job, done: true, cut, ms });
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

/** The jobs posted so far, run in order. */
let queue = Promise.resolve();

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
  // Jobs run one after the other, in the order posted: the main worker posts a helper's next range
  // while it parses the current one.
  queue = queue.then(() => run(event.data));
};

/** Runs one job (it never rejects: a failure is posted as the job's error). */
async function run(request) {
  const { job } = request;
  if (request.op === 'inflate') {
    await inflate(request);
    return;
  }
  try {
    await ready;
    const { buffer, ms } = await parse(request);
    /** @type {any} */ (self).postMessage({ job, part: buffer, ms }, [buffer]);
  } catch (err) {
    self.postMessage({ job, error: (err && err.message) || String(err) });
  }
}

// A helper worker, started by the main worker (worker.js) when the page loads: it parses one byte
// range of a large plain-JSON trace while the main worker parses the range before it, and sends
// the result back as bytes (a transferred ArrayBuffer) for the main worker to verify and adopt.
//
// Request: {job, file, start, end, bare}. Replies (all carry `job`): {progress, events} after each
// slice, then {part: ArrayBuffer} or {error}. An error is not shown to anyone: the main worker
// then parses that range itself, in order, and reports any real error with its byte offset.
//
// Right after start it warms the parse path up (the same rounds as the main worker), giving way to
// the first job; then it posts {warmed: ms}.
import init, { TextPart, warm_up_part } from './pkg/traceprism.js';
import { SliceReader } from './parallel.js';

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

self.onmessage = async (event) => {
  const { job } = event.data;
  requested = true;
  try {
    await ready;
    const { buffer, ms } = await parse(event.data);
    self.postMessage({ job, part: buffer, ms }, [buffer]);
  } catch (err) {
    self.postMessage({ job, error: (err && err.message) || String(err) });
  }
};

// Reads slices of a File for one parsing worker, on a thread of its own. A worker busy in a long
// synchronous parse does not drain its own pending file reads (the data arrives through its event
// loop), so reading there stalls while it parses; this worker reads the next slices meanwhile and
// hands each one over as a transferred ArrayBuffer.
//
// Request: {id, file, start, end, first, slice, ahead}: reads file[start, end) in slices (`first`
// bytes, then `slice` bytes), at most `ahead` slices not yet acknowledged. Replies {id, buffer,
// length}: the slice is the first `length` bytes of `buffer` (length 0 if the file ended early), or
// {id, error}. The parser posts {ack: id} as it takes each slice, and {recycle: buffer} once it has
// copied a slice into the core, or {stop: id} when it needs no more; a new request ends the previous one.
//
// Slices are read with a BYOB ("bring your own buffer") reader of the file's stream into buffers
// the parser hands back, so reading a large file reuses a few buffers instead of allocating a new
// one per slice (each fresh buffer costs the OS page faults and zeroing, and the garbage collector
// unmapping it later: on a 1 GB trace that kept a core's worth of kernel threads busy). Where the
// stream has no BYOB reader, each slice is a new buffer from `Blob.arrayBuffer()`.
let current = null;

/** A stream read that made no progress for `STREAM_STALL_MS`. */
class StreamStalled extends Error {}
/** Buffers the parser has handed back, for the next slices. */
const spares = [];
/** Spare buffers kept at most (the parser holds `ahead` slices; more would only hold memory). */
const MAX_SPARES = 4;

/** A spare buffer of at least `size` bytes, or a new one. */
function bufferOf(size) {
  const k = spares.findIndex((b) => b.byteLength >= size);
  return k >= 0 ? spares.splice(k, 1)[0] : new ArrayBuffer(size);
}

/** A BYOB reader of `blob`'s bytes, or null where streams cannot be read into a given buffer. */
function byobReader(blob) {
  try {
    return blob.stream().getReader({ mode: 'byob' });
  } catch {
    return null;
  }
}

/**
 * A read of a file's stream that makes no progress for this long is given up, and the rest of
 * the job is read with `Blob.arrayBuffer()`: Chromium's BYOB reads of a multi-GB file's stream were
 * seen to stop for good after 3-5 GB (a 14 GB trace: no error, no more data), while slices read
 * with `arrayBuffer()` carried on to the end of the file.
 */
const STREAM_STALL_MS = 10_000;

/** Reads up to `want` bytes from `reader` into `buffer`: {buffer, length} (the buffer comes back as a new object). */
async function readInto(reader, buffer, want) {
  let length = 0;
  while (length < want) {
    let timer;
    const stalled = new Promise((_, reject) => { timer = setTimeout(() => reject(new StreamStalled()), STREAM_STALL_MS); });
    const { value, done } = await Promise.race([reader.read(new Uint8Array(buffer, length, want - length)), stalled]).finally(() => clearTimeout(timer));
    if (!value) return { buffer: new ArrayBuffer(0), length: 0 }; // cancelled: the buffer is gone
    buffer = value.buffer;
    if (done) break;
    length += value.byteLength;
  }
  return { buffer, length };
}

self.onmessage = async (event) => {
  const d = event.data;
  if (d.recycle) {
    if (spares.length < MAX_SPARES) spares.push(d.recycle);
    return;
  }
  if (d.stop !== undefined) {
    // The parser needs no more of this job: stop reading ahead.
    if (current && current.id === d.stop) {
      const job = current;
      current = null;
      job.wake?.();
    }
    return;
  }
  if (d.ack !== undefined) {
    if (current && current.id === d.ack) {
      current.credit++;
      current.wake?.();
    }
    return;
  }
  const job = (current = { id: d.id, credit: d.ahead, wake: null });
  let stream = byobReader(d.file.slice(d.start, d.end));
  let next = d.start;
  try {
    while (next < d.end && current === job) {
      while (job.credit <= 0 && current === job) await new Promise((resolve) => { job.wake = resolve; });
      if (current !== job) return;
      const to = Math.min(next + (next === d.start ? d.first : d.slice), d.end);
      let slice;
      try {
        if (stream) {
          try {
            slice = await readInto(stream, bufferOf(to - next), to - next);
          } catch (err) {
            if (!(err instanceof StreamStalled)) throw err;
            // The stream stopped: the rest of this job is read slice by slice.
            stream.cancel().catch(() => {});
            stream = null;
            const buffer = await d.file.slice(next, to).arrayBuffer();
            slice = { buffer, length: buffer.byteLength };
          }
        } else {
          const buffer = await d.file.slice(next, to).arrayBuffer();
          slice = { buffer, length: buffer.byteLength };
        }
      } catch (err) {
        self.postMessage({ id: job.id, error: `cannot read the file: ${(err && err.message) || err}` });
        return;
      }
      if (current !== job) return;
      job.credit--;
      /** @type {any} */ (self).postMessage({ id: job.id, buffer: slice.buffer, length: slice.length }, [slice.buffer]);
      if (slice.length === 0) return;
      next = to;
    }
  } finally {
    stream?.cancel().catch(() => {});
  }
};

// Reads slices of a File for one parsing worker, on a thread of its own. A worker busy in a long
// synchronous parse does not drain its own pending file reads (the data arrives through its event
// loop), so reading there stalls while it parses; this worker reads the next slices meanwhile and
// hands each one over as a transferred ArrayBuffer.
//
// Request: {id, file, start, end, first, slice, ahead}: reads file[start, end) in slices (`first`
// bytes, then `slice` bytes), at most `ahead` slices not yet acknowledged. Replies {id, buffer}
// (an empty buffer if the file ended early) or {id, error}. The parser posts {ack: id} as it takes
// each slice; a new request ends the previous one.
let current = null;

self.onmessage = async (event) => {
  const d = event.data;
  if (d.ack !== undefined) {
    if (current && current.id === d.ack) {
      current.credit++;
      current.wake?.();
    }
    return;
  }
  const job = (current = { id: d.id, credit: d.ahead, wake: null });
  let next = d.start;
  while (next < d.end && current === job) {
    while (job.credit <= 0 && current === job) await new Promise((resolve) => { job.wake = resolve; });
    if (current !== job) return;
    const to = Math.min(next + (next === d.start ? d.first : d.slice), d.end);
    let buffer;
    try {
      buffer = await d.file.slice(next, to).arrayBuffer();
    } catch (err) {
      self.postMessage({ id: job.id, error: `cannot read the file: ${(err && err.message) || err}` });
      return;
    }
    if (current !== job) return;
    job.credit--;
    const length = buffer.byteLength; // read before the transfer detaches the buffer
    self.postMessage({ id: job.id, buffer }, [buffer]);
    if (length === 0) return;
    next = to;
  }
};

// Big traces for the page's benchmarks, made from a real one (see buildBigTrace).
import fs from 'node:fs';
import zlib from 'node:zlib';

/**
 * Writes `out`: the events of the gzip trace `src` repeated until the JSON is about `mb` MB, each
 * copy shifted after the previous one in time and with its ids (correlation, External id, flow id)
 * offset, so it reads as one long trace. Returns `out`.
 * @param {string} src
 * @param {number} mb
 * @param {string} out
 */
export function buildBigTrace(src, mb, out) {
  const trace = JSON.parse(zlib.gunzipSync(fs.readFileSync(src)).toString());
  const events = trace.traceEvents;
  let lo = Infinity, hi = -Infinity;
  for (const e of events) if (typeof e.ts === 'number') { lo = Math.min(lo, e.ts); hi = Math.max(hi, e.ts + (e.dur || 0)); }
  const span = Math.ceil(hi - lo) + 1000;
  const fd = fs.openSync(out, 'w');
  const { traceEvents, ...header } = trace;
  const head = JSON.stringify(header);
  fs.writeSync(fd, head.slice(0, -1) + (head.length > 2 ? ',' : '') + '"traceEvents":[');
  let written = 0, copy = 0, first = true;
  while (written < mb * 1e6) {
    const shift = copy * span;
    const idShift = copy * 10_000_000;
    let chunk = '';
    for (const e of events) {
      const c = { ...e };
      if (typeof c.ts === 'number') c.ts = c.ts + shift;
      if (c.args && typeof c.args === 'object') {
        c.args = { ...c.args };
        for (const k of ['correlation', 'External id']) if (typeof c.args[k] === 'number' && c.args[k] > 0) c.args[k] += idShift;
      }
      if (c.ph === 's' || c.ph === 'f') c.id = typeof c.id === 'number' ? c.id + idShift : c.id;
      chunk += (first ? '' : ',') + JSON.stringify(c);
      first = false;
      if (chunk.length > 8 << 20) { fs.writeSync(fd, chunk); written += chunk.length; chunk = ''; }
    }
    fs.writeSync(fd, chunk);
    written += chunk.length;
    copy++;
  }
  fs.writeSync(fd, ']}');
  fs.closeSync(fd);
  return out;
}

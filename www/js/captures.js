// Capture traces (issue 33): profiles recorded while an engine captured its CUDA/HIP graphs. The
// page reads them beside the trace (nothing is uploaded); the core gives each kernel the trace
// replayed from a graph the op that dispatched it at capture. This module tells capture files
// apart from traces by name and reads `execution_details.json` (file, batch size, mode).

/**
 * @typedef {{file: Blob, name: string, batch: number | null, mode: string | null}} CaptureEntry
 */

/**
 * True for a file named as engines and TraceLens name capture traces or their list:
 * `graph_capture_rank_0.….pt.trace.json.gz` (vLLM), `bs_32_rank0.json.gz` (SGLang),
 * `capture_trace_rank_0.json.gz` (xDiT), `execution_details.json`.
 * @param {string} name
 */
export function isCaptureName(name) {
  const base = name.split(/[\\/]/).pop() || '';
  return base === 'execution_details.json' || /^graph_capture|^capture_trace|^bs_\d+_rank\d+\./i.test(base);
}

/**
 * The capture entries of some files: each trace file with what an `execution_details.json` among
 * them says of it (by file name); the list itself is not a trace.
 * @param {{name: string, text?: () => Promise<string>}[]} files
 * @returns {Promise<CaptureEntry[]>}
 */
export async function captureEntries(files) {
  /** @type {Map<string, {batch_size?: number, mode?: string}>} */
  const details = new Map();
  for (const f of files) {
    if (f.name.split(/[\\/]/).pop() !== 'execution_details.json' || !f.text) continue;
    let list;
    try {
      list = JSON.parse(await f.text());
    } catch (e) {
      throw new Error(`${f.name}: ${/** @type {Error} */ (e).message} (expected a list of {"file", "batch_size", "mode"})`);
    }
    if (!Array.isArray(list)) throw new Error(`${f.name}: expected a list of {"file", "batch_size", "mode"}`);
    for (const e of list) if (e && typeof e.file === 'string') details.set(e.file, e);
  }
  return files
    .filter((f) => f.name.split(/[\\/]/).pop() !== 'execution_details.json')
    .map((f) => {
      const d = details.get(f.name.split(/[\\/]/).pop() || '') || {};
      return {
        file: /** @type {Blob} */ (/** @type {unknown} */ (f)),
        name: f.name,
        batch: Number.isInteger(d.batch_size) ? /** @type {number} */ (d.batch_size) : null,
        mode: typeof d.mode === 'string' ? d.mode : null,
      };
    });
}

/**
 * Splits dropped files into traces and capture traces (by name, see `isCaptureName`).
 * @template {{name: string}} F
 * @param {F[]} files
 * @returns {{traces: F[], captures: F[]}}
 */
export function splitCaptures(files) {
  return { traces: files.filter((f) => !isCaptureName(f.name)), captures: files.filter((f) => isCaptureName(f.name)) };
}

// What the page can open (issue 37, item 3). A trace's model lives in the worker's WebAssembly
// memory, which a wasm32 module can grow to 4 GiB at most. Measured on a 14.0 GB plain trace
// (2 cores): read in ranges by two workers it opens in 40 s and the model takes 3,345 MiB (0.25 of
// the JSON); read by one worker, whose columns grow by doubling, memory reached 4,037 MiB after
// 12.6 GB and the next allocation failed (0.33). A gzip trace, which one worker parses, opened at
// 11.0 GB of JSON (3,233 MiB, 24 s) and ran out at 12.2 GB (4 GiB held, asking 256 MB more, after
// 23 s): the one-worker figure is 0.35, whose limit, ~11.7 GB, lies between the two. So the page
// says at once, before reading for a minute, when a trace cannot fit: over ~16 GB of JSON read in
// ranges, ~11.7 GB read by one worker (one core, or a gzip file).

/** wasm32's ceiling on one module's memory. */
export const WASM_MEMORY_LIMIT = 4 * 2 ** 30;
/** Wasm memory per byte of JSON text at its peak: read in ranges by several workers, or by one. */
export const MODEL_BYTES_PER_JSON_BYTE = { ranges: 0.25, one: 0.35 };
/** Share of the ceiling the model may take: the rest holds the tables built after the read. */
export const USABLE_SHARE = 0.95;

/**
 * The wasm memory a trace of `jsonBytes` of JSON is expected to need at its peak.
 * @param {number} jsonBytes
 * @param {boolean} [inRanges] read in ranges by several workers (plain JSON, two cores or more)
 */
export function expectedModelBytes(jsonBytes, inRanges = true) {
  return jsonBytes * (inRanges ? MODEL_BYTES_PER_JSON_BYTE.ranges : MODEL_BYTES_PER_JSON_BYTE.one);
}

/**
 * Why a trace cannot be opened in the page, or null when it is expected to fit.
 * @param {string} fileName
 * @param {number} jsonBytes its JSON text's size (for a .gz, estimated from its start)
 * @param {boolean} estimated whether `jsonBytes` is an estimate
 * @param {boolean} [inRanges] whether several workers read it in ranges
 */
export function tooLargeMessage(fileName, jsonBytes, estimated = false, inRanges = true) {
  const need = needOverLimit(jsonBytes, inRanges);
  if (need === null) return null;
  return `${fileName} holds ${sizeText(jsonBytes, estimated)} of JSON: its model would need about ${gb(need)} of the page's memory, ${CEILING} The traceprism command-line tool reads it: traceprism summary ${fileName}. Or split it first: traceprism split ${fileName} --pass N --out pass.json.gz.`;
}

/**
 * The memory the model of `jsonBytes` of JSON would need, when that is more than the page can
 * give it; null when it fits.
 * @param {number} jsonBytes
 * @param {boolean} inRanges
 */
function needOverLimit(jsonBytes, inRanges) {
  const need = expectedModelBytes(jsonBytes, inRanges);
  return need <= WASM_MEMORY_LIMIT * USABLE_SHARE ? null : need;
}

/** Why a model over the limit cannot be read, as both messages say it. */
const CEILING = "and a page's WebAssembly memory stops at 4 GiB (wasm32), so the read would fail or stall.";

/** @param {number} bytes */
const gb = (bytes) => `${(bytes / 1e9).toFixed(1)} GB`;

/**
 * @param {number} jsonBytes
 * @param {boolean} estimated
 */
const sizeText = (jsonBytes, estimated) => `${estimated ? 'about ' : ''}${gb(jsonBytes)}`;

/**
 * The JSON size of a gzip file, estimated from how much its first bytes inflate to
 * (`DecompressionStream`; the start of a trace compresses like the rest of it).
 * @param {Blob} blob
 * @param {number} [sample] compressed bytes to inflate
 * @returns {Promise<number>}
 */
export async function estimateGzipJsonBytes(blob, sample = 4 << 20) {
  const head = blob.slice(0, Math.min(sample, blob.size));
  if (typeof DecompressionStream === 'undefined') return blob.size * 10;
  const reader = head.stream().pipeThrough(new DecompressionStream('gzip')).getReader();
  let out = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      out += value.length;
    }
  } catch {
    // The sample stops mid-stream: what came out before is the measure.
  }
  if (head.size >= blob.size) return out;
  return (out / head.size) * blob.size;
}

/**
 * Why `files` cannot be opened in one page together (their models would not fit in wasm32's
 * 4 GiB), or null: known from their sizes at once, a compressed file's from how its start
 * inflates. `sniffed`: what the core said of each (`reading`: how it is read).
 * @param {{file: Blob, name: string, sniffed: {reading: string}}[]} files
 * @param {number} cores the machine's cores (plain JSON is read in ranges by one worker per core)
 * @returns {Promise<string | null>}
 */
export async function sizeRefusal(files, cores) {
  let json = 0, estimated = false;
  for (const { file, sniffed } of files) {
    const inflated = sniffed.reading === 'inflate';
    json += inflated ? await estimateGzipJsonBytes(file) : file.size;
    estimated ||= inflated;
  }
  // Text read in ranges by one worker per core needs less memory than text parsed by one worker.
  const inRanges = cores >= 2 && files.every(({ sniffed }) => sniffed.reading === 'parts');
  if (files.length === 1) return tooLargeMessage(files[0].name, json, estimated, inRanges);
  return tooLargeTogetherMessage(files.map((f) => f.name), json, estimated, inRanges);
}

/**
 * Why several traces cannot be open in one page together (a comparison, the ranks of a run), or
 * null: as `tooLargeMessage`, for their JSON text together.
 * @param {string[]} names
 * @param {number} jsonBytes their JSON text's size together
 * @param {boolean} estimated whether `jsonBytes` is an estimate
 * @param {boolean} inRanges whether several workers read each in ranges
 */
export function tooLargeTogetherMessage(names, jsonBytes, estimated, inRanges) {
  const need = needOverLimit(jsonBytes, inRanges);
  if (need === null) return null;
  const listed = names.length === 2 ? names.join(' and ') : `these ${names.length} traces (${names.join(', ')})`;
  return `${listed} together hold ${sizeText(jsonBytes, estimated)} of JSON: their models would need about ${gb(need)} of the page's memory, ${CEILING} The traceprism command-line tool reads them: traceprism compare ${names.slice(0, 2).join(' ')}, or traceprism ranks ${names.join(' ')}.`;
}

// Every size and tunable of reading a file in the page, in one place (the page, the worker and its
// helpers import them from here). Figures in the comments are what chose each value.

/** The first slice of a file is small, so parsing starts without waiting for a large read. */
export const FIRST_SLICE_BYTES = 1 << 20;

/** Plain-JSON files at least this large are parsed by several workers. */
export const PARALLEL_MIN_BYTES = 16 << 20;
/**
 * Gzip files at least this large are inflated by a helper worker while this one parses (see
 * `readGzip`). Measured warm in Chromium on a busy 2-core machine: 1.2-1.4 MB .gz files gained
 * nothing, a 2.9 MB one about broke even, the 4.2 MB llama trace gained ~10-15% and a 32 MB one ~20%.
 */
export const GZIP_PIPELINE_MIN_BYTES = 2 << 20;
/**
 * Cores needed before a gzip file is read this way by default: on a busy 2-core machine, once the
 * core's own inflate got twice as fast (zlib-rs), inflating on a helper no longer paid for its
 * copies and messages (58 MB llama .gz, warm, medians of 9: 0.35 s piped vs 0.30 s in one
 * worker; 290 MB of JSON in a 32 MB .gz: even). With a core to spare for the helper it should.
 * `gzipPipeline: 'always'` (tests, benchmarks) uses it on any machine.
 */
export const GZIP_PIPELINE_MIN_CORES = 3;

/** Decompressed text per block handed from the inflating helper to this worker. */
export const INFLATE_BLOCK_BYTES = 4 << 20;
/**
 * Blocks the inflating helper may send ahead of the one this worker is parsing. With no credit
 * left it parses a block itself, so this is also how far behind this worker falls before the
 * helper helps: 4 beat 2 on the 58 MB llama .gz (with 2 the helper parsed blocks while this worker
 * drained its short queue and then waited).
 */
export const INFLATE_BLOCKS_AHEAD = 4;
/**
 * Whether the inflating helper parses a block itself (as a part the main worker adopts) when the
 * main worker is behind, as the native gzip reader does.
 */
export const SHARE_INFLATED_BLOCKS = true;
/** Compressed bytes read from the file at a time when inflating. */
export const INFLATE_READ_BYTES = 1 << 20;
/** Compressed bytes inflated per step, so the text of one step stays small (flow control acts between steps). */
export const INFLATE_STEP_BYTES = 256 << 10;
/**
 * Bytes a worker reads from the file per push (the worker reads every file itself; the helpers
 * their ranges).
 */
export const WORKER_SLICE_BYTES = 16 << 20;
/**
 * Smallest byte range handed to a parsing worker (js/ranges.js): ranges shrink toward the point
 * where the main worker meets the helpers, down to this (about 50 ms of parsing on a 2-core machine).
 */
export const RANGE_MIN_BYTES = 16 << 20;
/**
 * A helper's next range is granted once this much of its current one is left (two slices, ~100 ms
 * of parsing): granted at the start of the current range instead, the next was a share of a gap
 * still large, and the main worker waited 0.2-0.45 s for it at the meeting point on the 1 GB bench.
 */
export const GRANT_AHEAD_BYTES = 2 * (16 << 20);
/** File reads kept in flight while a slice is parsed. */
export const READS_AHEAD = 2;
/** Bytes of the window searched for an event start after each cut (plus a little before it). */
export const WINDOW_BYTES = 1 << 20;
export const WINDOW_BEFORE = 256;
/** A helper that parsed at least this much is replaced by a fresh one (see `HelperPool.recycle`). */
export const RECYCLE_AFTER_BYTES = 128 << 20;
export const RECYCLE_DELAY_MS = 3000;

/**
 * While a file is read, a progress note comes every slice (16-32 MB, well under a second). If none
 * comes for this long before the whole file is read, the reading has stopped (seen with a 14 GB
 * trace: a worker stops answering at the tab's memory ceiling without an error): the page stops
 * the worker and says so.
 */
export const READ_STALL_MS = 60_000;

/**
 * Whether a read has stalled: bytes are still to read and no progress came for `READ_STALL_MS`.
 * @param {number} lastProgressAt ms (performance.now) of the last progress note
 * @param {number} now ms
 * @param {number} bytesRead
 * @param {number} total
 */
export function readStalled(lastProgressAt, now, bytesRead, total) {
  return bytesRead < total && now - lastProgressAt >= READ_STALL_MS;
}

/** Largest file whose gzip CRC-32 the page checks with its setting on `auto` (1 GB): the CRC costs
 * the inflating thread about 70% more time in wasm (no carry-less multiply), off the critical path
 * while parsing is the slower side; above this the setting's `on` turns it on. */
export const GZIP_CRC_AUTO_MAX_BYTES = 1e9;

/** Least time between two redraws of the progress bar while a file is read (ms). */
export const PROGRESS_PAINT_MS = 250;

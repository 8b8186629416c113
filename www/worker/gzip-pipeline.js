// Whether a gzip file is inflated by a helper worker while the core's worker parses it: decided
// here once, for the page (which then hands the worker the whole file) and for the worker (which
// then starts the helper).
import { GZIP_PIPELINE_MIN_BYTES, GZIP_PIPELINE_MIN_CORES } from '../js/constants.js';

/**
 * Whether a gzip file of `bytes` is inflated by a helper: from `GZIP_PIPELINE_MIN_BYTES` on,
 * with `GZIP_PIPELINE_MIN_CORES` cores (`cores`), unless `mode` ('always', 'never', 'auto'; tests
 * and benchmarks set it) says otherwise.
 * @param {number} bytes
 * @param {string} [mode]
 * @param {number} [cores]
 */
export function gzipPipeline(bytes, mode = 'auto', cores = 2) {
  if (bytes < GZIP_PIPELINE_MIN_BYTES || mode === 'never') return false;
  return mode === 'always' || cores >= GZIP_PIPELINE_MIN_CORES;
}

// One decision, for the page and the worker, of whether a gzip file is inflated by a helper worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { gzipPipeline } from '../../www/worker/gzip-pipeline.js';
import { GZIP_PIPELINE_MIN_BYTES, GZIP_PIPELINE_MIN_CORES } from '../../www/js/constants.js';

test('a gzip file is piped from its size threshold on, with the cores for a helper or when asked', () => {
  const big = GZIP_PIPELINE_MIN_BYTES;
  assert.equal(gzipPipeline(big - 1, 'always', 8), false, 'a small file never');
  assert.equal(gzipPipeline(big, 'auto', GZIP_PIPELINE_MIN_CORES), true);
  assert.equal(gzipPipeline(big, 'auto', GZIP_PIPELINE_MIN_CORES - 1), false, 'no core to spare');
  assert.equal(gzipPipeline(big, 'always', 2), true, 'asked for (tests, benchmarks)');
  assert.equal(gzipPipeline(big, 'never', 64), false);
});

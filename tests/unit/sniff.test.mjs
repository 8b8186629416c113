import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { looksLikeXSpace } from '../../www/js/sniff.js';

test('a JAX xplane.pb is told from JSON and gzip by its first bytes', () => {
  const xplane = fs.readFileSync(new URL('../../fixtures/jax_conv_mi300x.xplane.pb', import.meta.url));
  assert.ok(looksLikeXSpace(new Uint8Array(xplane.subarray(0, 64))));
  assert.ok(!looksLikeXSpace(new TextEncoder().encode('{"traceEvents": []}')));
  assert.ok(!looksLikeXSpace(new Uint8Array([0x1f, 0x8b, 8, 0])));
  assert.ok(!looksLikeXSpace(new Uint8Array([0x0a])));
});

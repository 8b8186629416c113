// The message of a trap of the core (www/js/trap.js): the memory ceiling is told apart from a bug.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { trapMessage, WASM_MAX_BYTES } from '../../www/js/trap.js';

test('a trap after a failed allocation is the memory ceiling, with the figures and the CLI', () => {
  const m = trapMessage('unreachable', 2 ** 31, 3 * 2 ** 30, 5e9);
  assert.match(m, /too large for a browser tab/);
  assert.match(m, /traceprism summary/);
  assert.match(m, /2\.1 GB|2\.0 GB|2048/);
  assert.equal(WASM_MAX_BYTES, 4 * 2 ** 30);
});

test('any other trap is an internal error to report', () => {
  assert.equal(trapMessage('unreachable', 0, 1e8, 1e6), 'internal error in the analyzer (unreachable); please report it');
});

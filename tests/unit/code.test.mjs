// The icicles' trees and layout (www/js/icicle.js), on tables shaped as the core writes
// `call_paths` and `compare_call_tree`.
import test from 'node:test';
import assert from 'node:assert/strict';
import { treeOf, layout, diffTree } from '../../www/js/icicle.js';

const CALL_PATHS = {
  columns: ['node', 'parent', 'depth', 'kind', 'name', 'self_us', 'total_us', 'kernels', 'prefill_us', 'decode_us', 'family', 'first_kernel_us', 'first_kernel_dur_us'],
  rows: [
    [0, null, 0, 'root', 'all', 0, 10, 3, 4, 6, null, null, null],
    [1, 0, 1, 'python', 'model.py(3): forward', 0, 10, 3, 4, 6, null, null, null],
    [2, 1, 2, 'kernel', 'gemm', 7, 7, 2, 1, 6, 'GEMM', 100, 5],
    [3, 1, 2, 'kernel', 'norm', 3, 3, 1, 3, 0, 'Norm', 90, 1],
  ],
};

test('the tree takes each node under its parent, largest first, with the phase asked', () => {
  const all = treeOf(CALL_PATHS, 'all');
  assert.deepEqual(all[1].children.map((n) => n.name), ['gemm', 'norm']);
  const prefill = treeOf(CALL_PATHS, 'prefill');
  assert.deepEqual(prefill[1].children.map((n) => [n.name, n.total]), [['norm', 3], ['gemm', 1]]);
  assert.equal(all[2].firstUs, 100);
});

test('the layout gives each node its share of the root, children side by side', () => {
  const rects = layout(treeOf(CALL_PATHS, 'all')[0]);
  const at = Object.fromEntries(rects.map((r) => [r.node.name, [r.x, r.w, r.row]]));
  assert.deepEqual(at.all, [0, 1, 0]);
  assert.deepEqual(at.gemm, [0, 0.7, 2]);
  assert.equal(at.norm[0], 0.7);
  assert.equal(at.norm[2], 2);
  assert.ok(Math.abs(at.norm[1] - 0.3) < 1e-12);
  // A root with no time draws nothing.
  assert.deepEqual(layout(treeOf(CALL_PATHS, 'mixed')[0]), []);
});

test('the differential tree links the core\'s rows, widths the mean of the sides', () => {
  // As `compare_call_tree` holds the paths x;k1 (4, 2), x;k2 (1, 3) and y (0, 5).
  const t = { columns: ['node', 'parent', 'depth', 'name', 'a_per_pass_us', 'b_per_pass_us'],
    rows: [[0, null, 0, 'all', 5, 10], [1, 0, 1, 'x', 5, 5], [2, 1, 2, 'k1', 4, 2], [3, 1, 2, 'k2', 1, 3], [4, 0, 1, 'y', 0, 5]] };
  const nodes = diffTree(t);
  assert.deepEqual(nodes[0].children.map((n) => n.name), ['x', 'y'], 'largest mean first (x 5, y 2.5)');
  const by = Object.fromEntries(nodes.map((n) => [n.name, [n.a, n.b]]));
  assert.deepEqual(by.all, [5, 10]);
  assert.deepEqual(by.x, [5, 5]);
  assert.deepEqual(by.y, [0, 5]);
  assert.equal(nodes[0].total, 7.5);
});

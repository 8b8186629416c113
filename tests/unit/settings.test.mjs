// The page's settings are made from the core's declared options (`declared_options`): the compare
// view's fields and defaults, the header's phase-method choices. (The browser tests check them
// against the real declaration, through the CLI's usage.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { choicesOf, compareDefaults, compareFields, declaredField } from '../../www/js/settings.js';

/** @type {import('../../www/js/worker-ops.js').DeclaredOption[]} */
const compare = [
  { field: 'phase', keyword: 'phase', flags: ['--phase'], kind: 'choice', choices: ['all', 'prefill', 'decode'], default: 'all', doc: 'Which kernels to compare.' },
  { field: 'label_a', keyword: 'label_a', flags: ['--label-a'], kind: 'text', choices: null, default: null, doc: 'Side A\'s label.' },
  { field: 'ratio_threshold', keyword: 'ratio_threshold', flags: ['--ratio-threshold'], kind: 'number', choices: null, default: 1.1, doc: 'A/B ratio.' },
  { field: 'min_change', keyword: 'min_change', flags: ['--min-change'], kind: 'share', choices: null, default: 0.01, doc: 'Smallest change.' },
  { field: 'max_align_cells', keyword: 'max_align_cells', flags: ['--max-align-cells'], kind: 'count', choices: null, default: 16000000, doc: 'Cells.' },
  { field: 'source_a', keyword: 'source_a', flags: [], kind: 'internal', choices: null, default: null, doc: 'File name.' },
];

test('the compare fields are the options a user sets, each with the input its kind takes and its doc', () => {
  const fields = compareFields(compare);
  assert.deepEqual(fields.map((f) => [f.field, f.input]), [
    ['phase', 'select'], ['label_a', 'text'], ['ratio_threshold', 'number'], ['min_change', 'number'], ['max_align_cells', 'number'],
  ]);
  assert.equal(fields.find((f) => f.field === 'ratio_threshold')?.min, 1);
  assert.equal(fields.find((f) => f.field === 'min_change')?.min, 0);
  assert.equal(fields.find((f) => f.field === 'label_a')?.title, 'Side A\'s label.');
  assert.equal(fields.find((f) => f.field === 'max_align_cells')?.label, 'max align cells');
});

test('the compare settings start from the declared defaults; a value without one is empty', () => {
  assert.deepEqual(compareDefaults(compare), { phase: 'all', label_a: '', ratio_threshold: 1.1, min_change: 0.01, max_align_cells: 16000000, source_a: '' });
});

test('a choice lists its choices with the current one (else the default) selected', () => {
  const method = { field: 'phase_method', keyword: 'phase_method', flags: ['--phase-method'], kind: 'choice', choices: ['union', 'hybrid', 'kernel_names'], default: 'union', doc: '' };
  assert.deepEqual(choicesOf(method).filter((c) => c.selected).map((c) => c.value), ['union']);
  assert.deepEqual(choicesOf(method, 'hybrid').filter((c) => c.selected).map((c) => c.value), ['hybrid']);
  assert.equal(declaredField([method], 'phase_method'), method);
  assert.equal(declaredField([method], 'nope'), undefined);
});

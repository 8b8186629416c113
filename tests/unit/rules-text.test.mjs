// Where a rules error points (www/js/rules-text.js), with messages as the core words them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorLine, countRules } from '../../www/js/rules-text.js';

const TEXT = '# mine\n[[rule]]\ncategory = "GEMM-cuBLAS"\npattern = "nvjet"\n\n[[rule]]\ncategory = "Nope"\npattern = "abc"\n';

test('a rule named by its index points at its [[rule]] header', () => {
  assert.equal(errorLine("user rule 1 (pattern 'abc'): unknown category 'Nope'", TEXT), 6);
  assert.equal(errorLine("user rule 0 (pattern 'nvjet(('): bad regex", TEXT), 2);
  assert.equal(errorLine('user rule 7: nothing', TEXT), null);
});

test('a TOML syntax error points at the parser\'s line', () => {
  assert.equal(errorLine('user rules: not valid TOML: TOML parse error at line 3, column 7', TEXT), 3);
  assert.equal(errorLine('something else', TEXT), null);
});

test('rules, categories and sequences are counted by their headers', () => {
  assert.deepEqual(countRules(TEXT + '[[category]]\nname = "X"\n'), { rules: 2, categories: 1, sequences: 0 });
});

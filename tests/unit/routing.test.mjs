// Addresses of the page (www/js/routing.js): #view/args?params, and the first view.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHash, formatHash, FIRST_VIEW, VIEWS } from '../../www/js/routing.js';

test('a hash names a view, its path arguments and its parameters, and formats back', () => {
  assert.deepEqual(parseHash('#timeline?from=1.5&to=20'), { view: 'timeline', args: [], params: { from: '1.5', to: '20' } });
  assert.deepEqual(parseHash('#layers/3/all'), { view: 'layers', args: ['3', 'all'], params: {} });
  for (const h of ['#timeline?from=1.5&to=20', '#layers/3/all', '#kernels']) {
    const { view, args, params } = parseHash(h);
    assert.equal(formatHash(view, args, params), h);
  }
});

test('an unknown or empty hash opens the first view, the timeline', () => {
  assert.equal(FIRST_VIEW, 'timeline');
  assert.equal(parseHash('').view, 'timeline');
  assert.equal(parseHash('#nope').view, 'timeline');
  assert.ok(VIEWS.includes('rules') && VIEWS[0] === 'timeline');
});

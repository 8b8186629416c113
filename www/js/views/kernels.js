// Kernels: kernel summary tables first, then one row per kernel.
import { el } from '../dom.js';
import { renderTables } from './common.js';
import { linkParams } from '../timeline/window.js';

/** Renders the kernels view. */
export async function kernels(ctx, root) {
  root.append(el('h2', { text: 'Kernels' }));
  await renderTables(ctx, 'kernels', root, { exclude: ['kernels'] });
  // A kernel row opens the timeline at that kernel.
  const toTimeline = (row, cols) => {
    const ts = row[cols.indexOf('ts_us')], dur = row[cols.indexOf('dur_us')];
    if (typeof ts === 'number' && typeof dur === 'number') ctx.navigate('timeline', linkParams(ts, dur, 3));
  };
  await renderTables(ctx, 'kernels', root, { exclude: ctx.tableNames.filter((n) => n !== 'kernels'), onRowClick: { kernels: toTimeline } });
}

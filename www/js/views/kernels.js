// Kernels: kernel summary tables first, then one row per kernel.
import { el } from '../dom.js';
import { renderTables } from './common.js';
import { linkParams } from '../timeline/window.js';
import { formatUs } from '../format.js';
import { inWindow } from '../table-view.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace', 'route'];

/** Renders the kernels view. */
export async function kernels(ctx, root) {
  root.append(el('h2', { text: 'Kernels' }));
  await renderTables(ctx, 'kernels', root, { exclude: ['kernels'] });
  // A kernel row opens the timeline at that kernel.
  const toTimeline = (row, cols) => {
    const ts = row[cols.indexOf('ts_us')], dur = row[cols.indexOf('dur_us')];
    if (typeof ts === 'number' && typeof dur === 'number') ctx.navigate('timeline', linkParams(ts, dur, 3));
  };
  // A selection made on the timeline keeps only the kernels that start inside it.
  const s = ctx.selection;
  if (s) {
    root.append(el('div', { class: 'warning', attrs: { 'data-testid': 'selection-filter', 'data-from-us': String(s.fromUs), 'data-to-us': String(s.toUs) } },
      `Kernels table filtered to the timeline selection: ${formatUs(s.toUs - s.fromUs)} from ${s.fromUs.toFixed(3)} µs. `,
      el('button', { type: 'button', text: 'Show all kernels', on: { click: () => ctx.clearSelection() } })));
  }
  const where = s ? { kernels: (row, cols) => inWindow(row[cols.indexOf('ts_us')], s) } : {};
  await renderTables(ctx, 'kernels', root, { exclude: ctx.tableNames.filter((n) => n !== 'kernels'), onRowClick: { kernels: toTimeline }, where });
}

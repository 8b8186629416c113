// Kernels: kernel summary tables first, then one row per kernel.
import { el } from '../dom.js';
import { renderTables } from './common.js';

/** Renders the kernels view. */
export async function kernels(ctx, root) {
  root.append(el('h2', { text: 'Kernels' }));
  await renderTables(ctx, 'kernels', root, { exclude: ['kernels'] });
  await renderTables(ctx, 'kernels', root, { exclude: ctx.tableNames.filter((n) => n !== 'kernels') });
}

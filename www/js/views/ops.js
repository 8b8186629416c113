// Ops: the CPU-op tables.
import { el } from '../dom.js';
import { renderTables } from './common.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace'];

/** Renders the ops view. */
export async function ops(ctx, root) {
  root.append(el('h2', { text: 'CPU ops' }));
  const names = await renderTables(ctx, 'ops', root);
  if (!names.length) root.append(el('p', { class: 'note', text: 'No op tables in this build of the core yet.' }));
}

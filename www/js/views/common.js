// Pieces shared by the views.
import { el } from '../dom.js';
import { tableView } from '../table-view.js';

/** A friendly title for a table name (`ops_summary` → `ops summary`). */
export function titleOf(name) {
  return name.replace(/_/g, ' ');
}

/**
 * Renders every table routed to `view` into `container`, in registry order. Tables for which
 * `collapse(name)` holds sit folded under their title (a click opens them), so a view opens on its
 * charts rather than on screens of tables.
 */
/**
 * @param {any} ctx
 * @param {string} view
 * @param {HTMLElement} container
 * @param {{exclude?: string[], onRowClick?: Record<string, (row: any[], columns: string[]) => void>, collapse?: (name: string) => boolean, where?: Record<string, (row: any[], columns: string[]) => boolean>}} [options]
 */
export async function renderTables(ctx, view, container, { exclude = [], onRowClick = {}, collapse = (_name) => false, where = {} } = {}) {
  const names = ctx.tableNames.filter((n) => ctx.tableViews[n] === view && !exclude.includes(n));
  // Every table is asked for at once (the worker answers in order; one round trip each would add
  // the page's and the worker's message latency once per table) and shown in place as it arrives.
  const shown = names.map((name) => {
    const slot = el('div', { class: 'note', text: `building ${titleOf(name)}…` });
    if (collapse(name)) {
      container.append(el('details', { class: 'folded-table', attrs: { 'data-folded': name } }, el('summary', { text: titleOf(name) }), slot));
    } else {
      container.append(slot);
    }
    return ctx.table(name).then(
      (table) => {
        const keep = where[name];
        slot.replaceWith(tableView({ title: titleOf(name), table, onExport: ctx.exportCsv, onRowClick: onRowClick[name], where: keep ? (row) => keep(row, table.columns) : undefined }));
      },
      (err) => { slot.textContent = `${titleOf(name)}: ${err.message}`; });
  });
  await Promise.all(shown);
  return names;
}

/** Groups the rollup by a key function; returns Map key → {dur, count}. */
export function groupRollup(r, keyOf) {
  const out = new Map();
  for (let i = 0; i < r.category.length; i++) {
    const k = keyOf(i);
    if (k === undefined) continue;
    const g = out.get(k) || { dur: 0, count: 0 };
    g.dur += r.dur_us[i];
    g.count += r.count[i];
    out.set(k, g);
  }
  return out;
}

/** Colour of a phase. */
export function phaseColour(phase) {
  return {
    prefill: '#4e79a7', decode: '#f28e2b', mixed: '#b07aa1', denoise: '#59a14f', stage: '#76b7b2', unknown: '#bab0ac',
    'not-inference': '#9c755f',
  }[phase] || '#bab0ac';
}

// A data table: sortable (click a header), filterable by text, paged (so 100k+ rows stay
// smooth: only one page is in the DOM), with a totals row for additive columns and a CSV export
// button. Cells are inserted as text only.
import { el, clear } from './dom.js';
import { cellText, shortKernelName } from './format.js';

const PAGE_SIZES = [50, 100, 500];

/** Columns whose sum means something (times, counts, shares), by name. */
export function isAdditive(column) {
  const c = column.toLowerCase();
  if (/(^|_)(mean|avg|median|min|max|p\d+|cum|cumulative|index|idx|pass|layer|device|stream|correlation|confidence|id|ts_us|start_us|end_us|rank|threshold|bin|first|last)(_|$)/.test(c)) return false;
  return /(dur|time|_us$|_ms$|count|kernels|calls|bytes|pct|percent|share|launches|events|n$)/.test(c);
}

/** Columns holding kernel / op names (shortened for display, full name on hover). */
function isNameColumn(column) {
  return /name|kernel|op$|^op_|cpu_op|launcher/i.test(column);
}

/**
 * Whether a time (µs, the trace's clock) lies in a window `{fromUs, toUs}` (start included).
 * @param {unknown} tsUs
 * @param {{fromUs: number, toUs: number}} w
 */
export function inWindow(tsUs, w) {
  return typeof tsUs === 'number' && tsUs >= w.fromUs && tsUs < w.toUs;
}

/**
 * Builds a table view.
 * @param {object} o
 * @param {string} o.title heading
 * @param {{name:string, columns:string[], types?:string[], rows:any[][]}} o.table data (types: each column's declared
 *   type from the core — integer, float, micros, text, boolean)
 * @param {(name:string)=>void} [o.onExport] CSV export for this table (by table name)
 * @param {(row:any[], columns:string[])=>void} [o.onRowClick]
 * @param {(row:any[])=>boolean} [o.where] fixed row predicate applied before the text filter
 * @param {string} [o.note] a line under the title
 */
export function tableView(o) {
  const { columns } = o.table;
  const allRows = o.where ? o.table.rows.filter(o.where) : o.table.rows;
  // The core declares each column's type; a table without declarations (built in the page) is read
  // from its cells.
  const numeric = o.table.types
    ? o.table.types.map((t) => t === 'integer' || t === 'float' || t === 'micros')
    : columns.map((_, j) => allRows.some((r) => typeof r[j] === 'number') && allRows.every((r) => r[j] === null || typeof r[j] === 'number'));
  const nameCol = columns.map((c, j) => !numeric[j] && isNameColumn(c));
  // A table that carries its own total rows (e.g. gpu_timeline's total_time) gets no sum row.
  const hasOwnTotals = allRows.some((r) => r.some((v) => typeof v === 'string' && /^total(_|$| )/i.test(v)));
  const additive = columns.map((c, j) => !hasOwnTotals && numeric[j] && isAdditive(c));
  const state = { sort: -1, desc: false, filter: '', page: 0, pageSize: 100 };
  let view = allRows;
  let haystack = null; // lower-cased row texts, built on first filter

  const count = el('span', { class: 'count' });
  const filter = el('input', {
    type: 'search',
    placeholder: 'filter rows…',
    attrs: { 'aria-label': `filter ${o.title}` },
    on: { input: () => { state.filter = filter.value; state.page = 0; refresh(); } },
  });
  const exportButton = o.onExport ? el('button', { type: 'button', class: 'export-csv', text: 'CSV', title: `download ${o.table.name}.csv (same as traceprism export)`, on: { click: () => o.onExport(o.table.name) } }) : null;
  const headers = columns.map((c, j) => el('th', { class: numeric[j] ? 'num' : '', text: c, title: 'click to sort', on: { click: () => sortBy(j) } }));
  const tbody = el('tbody');
  const tfoot = el('tfoot');
  const table = el('table', { class: 'data', attrs: { 'data-table': o.table.name } }, el('thead', {}, el('tr', {}, headers)), tbody, tfoot);
  const pageInfo = el('span');
  const prev = el('button', { type: 'button', text: '‹ prev', on: { click: () => { state.page--; render(); } } });
  const next = el('button', { type: 'button', text: 'next ›', on: { click: () => { state.page++; render(); } } });
  const sizeSelect = el('select', { attrs: { 'aria-label': 'rows per page' }, on: { change: () => { state.pageSize = Number(sizeSelect.value); state.page = 0; render(); } } },
    PAGE_SIZES.map((n) => el('option', { value: String(n), text: `${n} / page`, selected: n === state.pageSize })));
  const root = el('section', { class: 'table-box', attrs: { 'data-table-box': o.table.name } },
    el('div', { class: 'table-bar' }, el('h3', { text: o.title }), count, filter, exportButton),
    o.note ? el('div', { class: 'note', text: o.note }) : null,
    el('div', { class: 'table-wrap' }, table),
    el('div', { class: 'pager' }, prev, pageInfo, next, sizeSelect));

  function sortBy(j) {
    if (state.sort === j) state.desc = !state.desc;
    else { state.sort = j; state.desc = numeric[j]; }
    headers.forEach((h, k) => { h.classList.toggle('sorted-asc', k === j && !state.desc); h.classList.toggle('sorted-desc', k === j && state.desc); });
    state.page = 0;
    refresh();
  }

  function refresh() {
    const q = state.filter.trim().toLowerCase();
    let rows = allRows;
    if (q) {
      if (!haystack) haystack = allRows.map((r) => r.map(cellText).join('\u0001').toLowerCase());
      rows = [];
      for (let i = 0; i < allRows.length; i++) if (haystack[i].includes(q)) rows.push(allRows[i]);
    } else {
      rows = allRows.slice();
    }
    if (state.sort >= 0) {
      const j = state.sort;
      const dir = state.desc ? -1 : 1;
      rows.sort((a, b) => {
        const x = a[j], y = b[j];
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (x < y ? -1 : 1) * dir;
      });
    }
    view = rows;
    count.textContent = q ? `${view.length.toLocaleString('en-US')} of ${allRows.length.toLocaleString('en-US')} rows` : `${allRows.length.toLocaleString('en-US')} rows`;
    renderTotals();
    render();
  }

  function renderTotals() {
    clear(tfoot);
    if (!additive.some(Boolean) || view.length === 0) return;
    const sums = columns.map(() => 0);
    for (const r of view) for (let j = 0; j < columns.length; j++) if (additive[j] && typeof r[j] === 'number') sums[j] += r[j];
    tfoot.append(el('tr', {}, columns.map((c, j) => {
      if (j === 0 && !additive[0]) return el('td', { text: 'total' });
      return el('td', { class: numeric[j] ? 'num' : '', text: additive[j] ? cellText(Math.round(sums[j] * 1000) / 1000) : '' });
    })));
  }

  function render() {
    const pages = Math.max(1, Math.ceil(view.length / state.pageSize));
    state.page = Math.min(Math.max(0, state.page), pages - 1);
    const start = state.page * state.pageSize;
    const slice = view.slice(start, start + state.pageSize);
    const frag = document.createDocumentFragment();
    for (const r of slice) {
      const tr = el('tr', { class: o.onRowClick ? 'clickable' : '' });
      for (let j = 0; j < columns.length; j++) {
        const v = r[j];
        const text = cellText(v);
        const td = el('td', { class: numeric[j] ? 'num' : nameCol[j] ? 'name' : '' });
        if (nameCol[j] && typeof v === 'string') {
          td.textContent = shortKernelName(v);
          td.title = v;
        } else {
          td.textContent = text;
        }
        tr.append(td);
      }
      if (o.onRowClick) tr.addEventListener('click', () => o.onRowClick(r, columns));
      frag.append(tr);
    }
    clear(tbody).append(frag);
    pageInfo.textContent = view.length ? `rows ${start + 1}–${start + slice.length} of ${view.length.toLocaleString('en-US')} · page ${state.page + 1}/${pages}` : 'no rows';
    prev.disabled = state.page === 0;
    next.disabled = state.page >= pages - 1;
  }

  refresh();
  return root;
}

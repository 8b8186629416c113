// Layers: layer × pass heat map of kernel time, per-layer tables, and the kernels of a chosen layer.
import { el } from '../dom.js';
import { heatMap } from '../charts.js';
import { tableView } from '../table-view.js';
import { renderTables, phaseColour } from './common.js';
import { linkParams } from '../timeline/window.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace', 'route'];

/**
 * Renders the layers view. The address names a pass and a layer: `#layers?pass=3` marks pass 3 on
 * the heat map and lists its kernels by layer, `#layers?pass=3&layer=7` lists that layer's kernels
 * in that pass (the older path form `#layers/7/3` still works).
 */
export async function layers(ctx, root, args) {
  const params = ctx.params || {};
  const num = (v) => (v !== undefined && v !== '' && v !== 'all' && Number.isFinite(Number(v)) ? Number(v) : undefined);
  const wantedPass = num(params.pass) ?? num(args[1]);
  const wantedLayer = num(params.layer) ?? num(args[0]);
  root.append(el('h2', { text: 'Transformer layers' }));
  // A layer per token mixer: a hybrid's kinds (gated delta net, full attention...) counted apart.
  const kinds = ctx.summary?.layer_kinds || [];
  if (kinds.length > 1) {
    const total = kinds.reduce((n, k) => n + k.count, 0);
    root.append(el('p', { class: 'layer-kinds', text: `${total} layers a pass: ${kinds.map((k) => `${k.count} ${k.type}`).join(' + ')}` }));
  }
  const r = await ctx.rollup();
  const passSet = new Set(), layerSet = new Set();
  for (let i = 0; i < r.layer.length; i++) if (r.layer[i] >= 0) { layerSet.add(r.layer[i]); passSet.add(r.pass[i]); }
  const detail = el('div', { class: 'layer-detail' });
  const pick = async (layer, pass, phase) => {
    const next = { layer: String(layer) };
    if (pass !== undefined && pass !== null) next.pass = String(pass);
    if (phase) next.phase = phase;
    ctx.setParams(next, true);
    await showKernels(ctx, detail, layer, pass ?? undefined, phase);
  };
  if (layerSet.size) {
    const layersSorted = [...layerSet].sort((a, b) => a - b);
    const passesSorted = [...passSet].sort((a, b) => a - b);
    const li = new Map(layersSorted.map((l, k) => [l, k]));
    const pi = new Map(passesSorted.map((p, k) => [p, k]));
    const values = layersSorted.map(() => new Array(passesSorted.length).fill(0));
    // Each pass's phase: a cell is coloured against the median of its phase (a prefill pass often
    // takes ten times a decode step's time, so one scale for both would say nothing per layer).
    const phaseOfPass = new Array(passesSorted.length).fill(null);
    for (let i = 0; i < r.layer.length; i++) {
      if (r.layer[i] < 0) continue;
      values[li.get(r.layer[i])][pi.get(r.pass[i])] += r.dur_us[i];
      phaseOfPass[pi.get(r.pass[i])] ??= r.phase[i] ?? null;
    }
    root.append(el('h3', { text: 'Kernel time: layer (rows) × forward pass (columns)' }),
      heatMap(values, layersSorted.map((l) => `layer ${l}`), passesSorted.map((p) => `pass ${p}`), {
        onPick: (row, col) => pick(layersSorted[row], passesSorted[col]),
        columnGroups: phaseOfPass.map((p) => p ?? 'unassigned'),
        groupColour: phaseColour,
        rowTitle: 'layer',
        colTitle: 'forward pass',
        highlightCol: wantedPass === undefined ? -1 : passesSorted.indexOf(wantedPass),
      }));
  } else {
    root.append(el('p', { class: 'note', text: 'No transformer layers were detected in this trace.' }));
  }
  const layerCol = (cols) => cols.indexOf('layer');
  const passCol = (cols) => cols.indexOf('pass');
  const onLayerRow = (row, cols) => {
    const l = row[layerCol(cols)];
    const pass = passCol(cols) >= 0 && typeof row[passCol(cols)] === 'number' ? row[passCol(cols)] : undefined;
    // A per-layer row without a pass (layer_summary) stands for one phase: show that phase's kernels.
    const phase = pass === undefined && cols.includes('phase') && typeof row[cols.indexOf('phase')] === 'string' ? row[cols.indexOf('phase')] : undefined;
    if (typeof l === 'number') pick(l, pass, phase);
  };
  const clickers = Object.fromEntries(ctx.tableNames.map((n) => [n, onLayerRow]));
  await renderTables(ctx, 'layers', root, { onRowClick: clickers });
  root.append(detail);
  if (wantedLayer !== undefined) {
    await showKernels(ctx, detail, wantedLayer, wantedPass, params.phase ?? args[2]);
  } else if (wantedPass !== undefined) {
    await showKernels(ctx, detail, undefined, wantedPass, undefined);
  }
}

async function showKernels(ctx, detail, layer, pass, phase) {
  detail.replaceChildren(el('div', { class: 'note', text: 'loading kernels…' }));
  const table = await ctx.table('kernels');
  const lc = table.columns.indexOf('layer');
  const pc = table.columns.indexOf('pass');
  const phc = table.columns.indexOf('phase');
  // No layer: every kernel of the pass that sits in a layer.
  const where = (row) => (layer === undefined ? row[lc] !== null : row[lc] === layer) && (pass === undefined || row[pc] === pass) && (!phase || row[phc] === phase);
  const title = layer === undefined
    ? `kernels of pass ${pass} in its layers`
    : `kernels of layer ${layer}${pass === undefined ? ` (all ${phase ? `${phase} ` : ''}passes)` : `, pass ${pass}`}`;
  // The layer's stretch of time (first start to last end of its kernels) on the timeline.
  const tc = table.columns.indexOf('ts_us');
  const dc = table.columns.indexOf('dur_us');
  let first = Infinity, last = -Infinity;
  for (const row of table.rows) {
    if (!where(row)) continue;
    first = Math.min(first, row[tc]);
    last = Math.max(last, row[tc] + row[dc]);
  }
  const link = Number.isFinite(first) ? el('button', { attrs: { type: 'button', 'data-testid': 'layer-on-timeline' }, text: 'Show on the timeline' }) : null;
  link?.addEventListener('click', () => ctx.navigate('timeline', linkParams(first, last - first)));
  detail.replaceChildren(...[link, tableView({ title, table, where, onExport: ctx.exportCsv, note: 'CSV exports the whole kernels table' })].filter(Boolean));
  detail.scrollIntoView({ block: 'nearest' });
}

// Ranks: all ranks of one run (several traces opened at once, or a folder). Pictures first: the
// ranks as aligned lanes of collectives coloured by wait, a rank × layer wait heat map and the
// per-rank time by category; then the straggler table and the run's other tables, each exported
// as CSV byte for byte what `traceprism ranks --out` writes.
import { el } from '../dom.js';
import { heatMap, stackedBars } from '../charts.js';
import { formatUs } from '../format.js';
import { tableView } from '../table-view.js';
import { titleOf } from './common.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['run'];

/** Tables shown, in order (what to fix first, then the straggler summary). */
const ORDER = ['run_findings', 'straggler_summary', 'lateness', 'collective_classes', 'ranks', 'straggler_cause', 'wait_by_layer', 'collectives', 'rank_categories', 'rank_phases', 'unmatched_collectives'];

/** Colour of each cost class (see `collective_classes`). */
export const CLASS_COLOURS = { transfer: '#4f7fb8', skew: '#d2462f', mixed: '#f2a93b', inconclusive: '#c8c8c8' };

/**
 * The inputs that open a run: several files, or a folder.
 * @param {any} ctx
 */
function openControls(ctx) {
  const files = el('input', { type: 'file', id: 'run-input', attrs: { multiple: '', accept: '.json,.gz,application/json,application/gzip' }, class: 'compare-input' });
  files.addEventListener('change', () => {
    const list = [...(files.files || [])];
    files.value = '';
    if (list.length) ctx.loadRun(list);
  });
  const folder = el('input', { type: 'file', id: 'run-folder-input', attrs: { webkitdirectory: '', multiple: '' }, class: 'compare-input' });
  folder.addEventListener('change', () => {
    const list = [...(folder.files || [])].filter((f) => /\.json(\.gz)?$/.test(f.name) && !/truth/.test(f.name));
    folder.value = '';
    if (list.length) ctx.loadRun(list);
  });
  const align = el('input', { type: 'checkbox', id: 'run-align', checked: ctx.run.align !== false });
  align.addEventListener('change', () => ctx.reanalyseRun(align.checked));
  return el('div', { class: 'compare-options', attrs: { 'data-drop-slot': 'run' } },
    el('label', { class: 'button', attrs: { for: 'run-input' }, text: 'Open rank traces…' }), files,
    el('label', { class: 'button', attrs: { for: 'run-folder-input' }, text: 'Open a folder…' }), folder,
    el('label', { class: 'field' }, align, el('span', { text: 'align clocks on the collectives' })));
}

/**
 * Ranks as lanes on one aligned time axis: each matched collective a mark from its aligned start
 * to its end, its colour the rank's wait there (grey: none; red: the longest wait of the run).
 * Before a late arrival, the part of its lateness the rank's GPU sat idle waiting for its host is
 * drawn apart (amber, below the lane's middle) from extra GPU work (violet, above).
 * @param {{ranks: number[], start_us: number[], end_us: number[], wait_us: number[], class?: string[], late_rank?: number[],
 *   late_arrival_us?: number[], late_idle_us?: number[], late_busy_us?: number[]}} lanes
 */
function laneCanvas(lanes) {
  const n = lanes.ranks.length;
  const count = n ? lanes.start_us.length / n : 0;
  const labelW = 70, laneH = 22, width = 1100, top = laneH;
  const canvas = el('canvas', { width, height: top + n * laneH + 24, attrs: { 'data-testid': 'rank-lanes' } });
  const g = canvas.getContext('2d');
  if (!g || !count) return canvas;
  const end = Math.max(...lanes.end_us);
  const maxWait = Math.max(1e-9, ...lanes.wait_us);
  const x = (us) => labelW + ((width - labelW - 10) * us) / Math.max(end, 1e-9);
  g.font = '12px system-ui, sans-serif';
  // The top lane: each collective from its earliest start to its latest end, on whole pixels,
  // coloured by class; waiting drawn last, so a pixel holding several collectives shows it.
  g.fillStyle = '#222';
  g.fillText('class', 6, 15);
  const order = ['inconclusive', 'transfer', 'mixed', 'skew'];
  const byClass = [...Array(count).keys()].sort((a, b) => order.indexOf(lanes.class?.[a] ?? '') - order.indexOf(lanes.class?.[b] ?? ''));
  for (const c of byClass) {
    const starts = lanes.start_us.slice(c * n, c * n + n), ends = lanes.end_us.slice(c * n, c * n + n);
    g.fillStyle = CLASS_COLOURS[/** @type {keyof typeof CLASS_COLOURS} */ (lanes.class?.[c] ?? 'inconclusive')] ?? '#c8c8c8';
    const x0 = Math.floor(x(Math.min(...starts)));
    g.fillRect(x0, 3, Math.max(1, Math.ceil(x(Math.max(...ends))) - x0), laneH - 6);
  }
  for (let r = 0; r < n; r++) {
    const y = top + r * laneH;
    g.fillStyle = r % 2 ? '#f6f6f6' : '#ffffff';
    g.fillRect(labelW, y, width - labelW, laneH);
    g.fillStyle = '#222';
    g.fillText(`rank ${lanes.ranks[r]}`, 6, y + 15);
    for (let c = 0; c < count; c++) {
      const k = c * n + r;
      const w = lanes.wait_us[k] / maxWait;
      g.fillStyle = w < 0.02 ? '#9aa7b4' : `rgb(${Math.round(225 + 30 * w)}, ${Math.round(200 - 170 * w)}, ${Math.round(160 - 140 * w)})`;
      const x0 = x(lanes.start_us[k]);
      g.fillRect(x0, y + 3, Math.max(1, x(lanes.end_us[k]) - x0), laneH - 6);
    }
  }
  const late = lanes.late_rank || [];
  for (let i = 0; i < late.length; i++) {
    const y = top + late[i] * laneH;
    const at = lanes.late_arrival_us?.[i] ?? 0;
    const idle = lanes.late_idle_us?.[i] ?? 0, busy = lanes.late_busy_us?.[i] ?? 0;
    const half = (laneH - 6) / 2;
    g.fillStyle = '#f2a93b';
    if (idle > 0) g.fillRect(x(at - idle), y + 3 + half, Math.max(2, x(at) - x(at - idle)), half);
    g.fillStyle = '#7b4fb8';
    if (busy > 0) g.fillRect(x(at - busy), y + 3, Math.max(2, x(at) - x(at - busy)), half);
  }
  g.fillStyle = '#555';
  g.fillText('0', labelW, top + n * laneH + 16);
  const last = formatUs(end);
  g.fillText(last, width - 10 - g.measureText(last).width, top + n * laneH + 16);
  return canvas;
}

/**
 * Where the collectives' time went, per phase and kind (`collective_classes` rows of all layers):
 * a bar each, the zero-skew transfer cost beside the waiting, labelled with its class.
 * @param {{columns: string[], rows: any[][]}} t
 */
function classBars(t) {
  const c = (name) => t.columns.indexOf(name);
  const [ip, ik, il, it, iw, ic] = [c('phase'), c('kind'), c('layer'), c('transfer_cost_us'), c('wait_us'), c('class')];
  const stacks = t.rows
    .filter((r) => r[il] === null || r[il] === undefined || r[il] === '')
    .map((r) => ({
      // Short enough for the bar's label; the share waiting and the rank waited for are in
      // collective_classes and the sentence above.
      label: `${r[ip]} ${r[ik]} (${r[ic]})`,
      parts: [{ label: 'transfer', value: r[it] || 0, colour: CLASS_COLOURS.transfer }, { label: 'waiting', value: r[iw] || 0, colour: CLASS_COLOURS.skew }],
    }));
  const bars = stackedBars(stacks);
  bars.dataset.testid = 'class-bars';
  return bars;
}

/** The colour key of the class lane. */
function classLegend() {
  return el('div', { class: 'legend', attrs: { 'data-testid': 'class-legend' } },
    Object.entries(CLASS_COLOURS).map(([name, colour]) => el('span', {}, el('span', { class: 'swatch', style: `background:${colour}` }), name)));
}

/**
 * Rank × layer wait heat map from `wait_by_layer` (summed over passes).
 * @param {{columns: string[], rows: any[][]}} t
 */
function waitHeatMap(t) {
  const c = (name) => t.columns.indexOf(name);
  const [ir, il, iw] = [c('rank'), c('layer'), c('wait_us')];
  const ranks = [...new Set(t.rows.map((r) => r[ir]))].sort((a, b) => a - b);
  const layers = [...new Set(t.rows.map((r) => r[il]).filter((l) => l !== null && l !== undefined && l !== ''))].sort((a, b) => a - b);
  // A run without layers (training steps, a model we find no layers in) is one labelled column.
  const columns = layers.length ? layers.map((l) => `layer ${l}`) : ['all collectives (no layers found)'];
  const values = ranks.map(() => new Array(columns.length).fill(0));
  for (const row of t.rows) {
    const inLayer = row[il] !== null && row[il] !== undefined && row[il] !== '';
    if (layers.length && !inLayer) continue;
    values[ranks.indexOf(row[ir])][layers.length ? layers.indexOf(row[il]) : 0] += row[iw] || 0;
  }
  const map = heatMap(values, ranks.map((r) => `rank ${r}`), columns, { rowTitle: 'rank', colTitle: layers.length ? 'layer' : '' });
  map.dataset.testid = 'rank-heatmap';
  return map;
}

/**
 * Per-rank kernel time by category (the run's top categories; the rest summed as "other").
 * @param {{columns: string[], rows: any[][]}} t
 */
function categoryBars(t) {
  const c = (name) => t.columns.indexOf(name);
  const [ir, ic, iv] = [c('rank'), c('category'), c('total_us')];
  const total = new Map();
  for (const row of t.rows) total.set(row[ic], (total.get(row[ic]) || 0) + row[iv]);
  const top = [...total.entries()].sort((a, b) => b[1] - a[1]).slice(0, 8).map(([name]) => name);
  const ranks = [...new Set(t.rows.map((r) => r[ir]))].sort((a, b) => a - b);
  const stacks = ranks.map((rank) => {
    const parts = [...top.map((label) => ({ label, value: 0 })), { label: 'other', value: 0 }];
    for (const row of t.rows.filter((r) => r[ir] === rank)) {
      const k = top.indexOf(row[ic]);
      parts[k < 0 ? top.length : k].value += row[iv];
    }
    return { label: `rank ${rank}`, parts };
  });
  return stackedBars(stacks);
}

/** Renders the ranks view. */
export async function ranks(ctx, root) {
  root.append(el('h2', { text: 'All ranks of a run' }),
    el('p', { class: 'note', text: 'Open the traces of several ranks at once (or their folder), or drop three or more traces anywhere. Each is read in this browser; collectives are matched across the ranks, clocks aligned on them, and the rank that arrives last is named with the phase and layer it is late in.' }),
    openControls(ctx));
  const run = ctx.run;
  if (run.loading) {
    root.append(el('div', { class: 'note', attrs: { 'data-run-progress': '' }, text: run.loading }));
    return;
  }
  for (const failure of run.failed || []) root.append(el('div', { class: 'warning', attrs: { 'data-testid': 'run-failed' }, text: failure }));
  const s = run.summary;
  if (!s) return;
  root.append(el('p', { attrs: { 'data-testid': 'run-head' }, text: `${s.ranks.length} ranks · ${s.collectives} collectives matched on every rank · ${s.missing ? `${s.missing} lacked by some rank · ` : ''}${s.unmatched} collective names unmatched · ${s.aligned ? 'clocks aligned on the collectives' : 'clocks as recorded'}` }));
  if (s.missing) {
    root.append(el('div', { class: 'warning', attrs: { 'data-testid': 'run-divergence' }, text: `The ranks' collective sequences differ: ${s.missing} collectives ran on some ranks only. Each is named below and in unmatched_collectives, and left out; the collectives after it are paired with their right partners.` }));
  }
  for (const w of s.warnings) root.append(el('div', { class: 'warning', text: w }));
  root.append(el('p', { class: 'finding', attrs: { 'data-testid': 'run-finding' }, text: s.finding || 'No rank arrives last by more than 1 µs at any collective.' }));
  if (s.cost_finding) root.append(el('p', { class: 'finding', attrs: { 'data-testid': 'run-cost-finding' }, text: `Collectives: ${s.cost_finding}.` }));
  root.append(el('div', { class: 'compare-options' },
    el('button', { type: 'button', id: 'run-export-all', text: 'Export run tables (.zip)', on: { click: () => ctx.exportRunZip() } }),
    el('button', { type: 'button', id: 'run-xlsx', text: 'Download .xlsx', on: { click: () => ctx.downloadRun('xlsx') } }),
    el('button', { type: 'button', id: 'run-html', text: 'Download HTML report', on: { click: () => ctx.downloadRun('html') } })));
  const lanes = await ctx.runCall('runLanes');
  root.append(el('h3', { text: 'Collectives on aligned lanes: the top lane by cost class, each rank\'s lane by its wait' }), laneCanvas(lanes), classLegend(),
    el('p', { class: 'note', text: 'Before a late arrival: amber = its GPU idle waiting for its host, violet = GPU work beyond the median rank.' }));
  const tables = new Map();
  for (const name of s.tables) tables.set(name, await ctx.runTable(name));
  const classes = tables.get('collective_classes');
  if (classes) root.append(el('h3', { text: 'Where the collectives\' time went: transfer (every rank arriving together) and waiting, per phase and kind' }), classBars(classes));
  const wbl = tables.get('wait_by_layer');
  if (wbl) root.append(el('h3', { text: 'Wait at collectives: rank (rows) × layer (columns), summed over passes' }), waitHeatMap(wbl));
  const cats = tables.get('rank_categories');
  if (cats) root.append(el('h3', { text: 'Kernel time by category, per rank' }), categoryBars(cats));
  for (const name of ORDER) {
    const table = tables.get(name);
    if (table) root.append(tableView({ title: titleOf(name), table, onExport: ctx.exportRunCsv }));
  }
}

// Compare: the loaded trace (A) against a second one (B) — labels (default: their GPU names),
// phase and thresholds, what A's findings became in B, side-by-side bars per category and per
// layer sorted by gap, and the seven comparison tables, each with a CSV export byte for byte what `traceprism compare --out` writes.
import { el } from '../dom.js';
import { pairedBars } from '../charts.js';
import { formatCount, formatUs } from '../format.js';
import { tableView } from '../table-view.js';
import { titleOf } from './common.js';
import { gateSection } from '../gate-section.js';
import { diffIcicle } from '../icicle.js';
import { compareDefaults, compareFields } from '../settings.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace', 'route', 'compare', 'page'];

/**
 * Compare options the user set in this page session (labels are per pair of files), from the
 * core's declaration of them on first use.
 * @type {Record<string, any>|null}
 */
let settings = null;

/**
 * The phases a comparison can select: `all`, then prefill and decode (always offered, as before),
 * then mixed, denoise and stage where both traces have them (a diffusion pair compares step by
 * step), and the current choice.
 * @param {{phases?: {phase: string}[]}} a
 * @param {{phases?: {phase: string}[]}} b
 * @param {string} current
 * @returns {string[]}
 */
export function phaseChoices(a, b, current) {
  const both = (p) => [a, b].every((s) => (s.phases || []).some((x) => x.phase === p));
  const out = ['all', 'prefill', 'decode', ...['mixed', 'denoise', 'stage'].filter(both)];
  return out.includes(current) ? out : [...out, current];
}
let labelsFor = '';

function sideBox(slot, info, ctx) {
  const input = el('input', { type: 'file', accept: '.json,.gz,application/json,application/gzip', id: `compare-input-${slot}`, class: 'compare-input' });
  input.addEventListener('change', () => {
    const file = input.files?.[0];
    input.value = '';
    if (file) (slot === 'a' ? ctx.loadMain(file, file.name, 'compare') : ctx.loadSecond(file, file.name));
  });
  const what = info
    ? [el('div', { class: 'mono', text: info.fileName }), el('div', { class: 'note', text: `${info.summary.device} · ${formatCount(info.summary.counts?.kernels)} kernels · ${formatUs(info.summary.kernel_time_ms * 1000)} kernel time` })]
    : [el('div', { class: 'note', text: 'drop a trace here, or open one' })];
  return el('div', { class: 'drop-slot', attrs: { 'data-drop-slot': slot } },
    el('div', { class: 'slot-title', text: slot === 'a' ? 'Trace A (the loaded trace)' : 'Trace B' }),
    what,
    el('label', { class: 'button', attrs: { for: `compare-input-${slot}` }, text: info ? 'Replace…' : 'Open trace…' }), input);
}

/**
 * What A's findings became in B: one line per finding, its predicted saving, the step before and
 * after, and the verdict (`held`, `gone, but…`, `still there`, `not comparable`).
 * @param {{columns: string[], rows: any[][]}} t the `compare_findings` table
 */
export function findingsOutcomes(t) {
  const c = (n) => t.columns.indexOf(n);
  const box = el('section', { class: 'compare-findings', attrs: { 'data-compare-findings': '' } },
    el('h3', { text: "A's findings, checked in B (B as the trace after a fix)" }));
  if (!t.rows.length) {
    box.append(el('p', { class: 'note', text: 'A has no finding to check: nothing in A predicted a saving.' }));
    return box;
  }
  box.append(el('ol', {}, t.rows.map((row) => {
    const measured = row[c('measured_us')];
    const steps = measured === null || measured === undefined ? ''
      : ` · step ${formatUs(row[c('a_step_us')])} → ${formatUs(row[c('b_step_us')])} (measured ${formatUs(measured)})`;
    return el('li', {},
      el('strong', { text: `${row[c('kind')]} ` }), el('span', { text: `(${row[c('scope')]}): predicted ${formatUs(row[c('predicted_us')])} a step${steps}` }),
      el('div', { class: 'note', text: String(row[c('verdict')]) }));
  })));
  return box;
}

/**
 * The difference of the two budgets, a chart per phase: the two steps, then each row of
 * `compare_budget` as A's and B's bars, biggest delta first (the rows add up to the step's).
 * @param {{columns: string[], rows: any[][]}} t the `compare_budget` table
 * @param {string[]} names the sides' labels
 */
export function budgetPicture(t, names) {
  const c = (n) => t.columns.indexOf(n);
  /** @type {Map<string, {label: string, a: number, b: number, gap: number, note: string}[]>} */
  const phases = new Map();
  for (const row of t.rows) {
    const phase = String(row[c('phase')]);
    if (!phases.has(phase)) phases.set(phase, []);
    const part = String(row[c('part')]);
    const what = String(row[c('what')] ?? '');
    const count = part === 'only_a' ? row[c('a_count')] : part === 'only_b' ? row[c('b_count')] : null;
    phases.get(phase)?.push({
      label: part === 'step' ? 'the step' : `${part}: ${what}`,
      a: row[c('a_us')] ?? 0, b: row[c('b_us')] ?? 0, gap: row[c('delta_us')] ?? 0,
      note: `${part === 'step' ? what : `delta ${formatUs(row[c('delta_us')])} a step`}${count ? ` · ${count} kernels a step` : ''}`,
    });
  }
  const out = [];
  for (const [phase, items] of phases) {
    out.push(el('h3', { text: `Where a ${phase} step's time went, A against B (rows add up to the step)` }),
      el('div', { attrs: { 'data-compare-budget': phase } }, pairedBars(items, names)));
  }
  return out;
}

/** Renders the compare view. */
export async function compare(ctx, root) {
  root.append(el('h2', { text: 'Compare two traces' }),
    el('p', { class: 'note', text: 'Drop two traces at once anywhere on the page, or drop/open the second one here. Both are analysed in this browser.' }));
  const a = { fileName: ctx.fileName, summary: ctx.summary };
  const b = ctx.second;
  root.append(el('div', { class: 'compare-slots' }, sideBox('a', a, ctx), sideBox('b', b, ctx)));
  if (ctx.secondLoading) {
    root.append(el('div', { class: 'note', attrs: { 'data-second-progress': '' }, text: ctx.secondLoading }));
    return;
  }
  // The regression gate: B against A, or A against a baseline digest the user opens.
  root.append(await gateSection(ctx));
  if (!b) return;

  // Labels are the core's (the GPU names, or on one GPU model what tells the file names apart)
  // until the user types one (reset when the pair of files changes).
  const declared = await ctx.declaredOptions();
  if (!settings) settings = compareDefaults(declared.compare);
  const pair = `${ctx.fileName}\u0000${b.fileName}`;
  if (labelsFor !== pair) {
    settings.label_a = '';
    settings.label_b = '';
    settings.source_a = ctx.fileName;
    settings.source_b = b.fileName;
    labelsFor = pair;
  }
  const rerender = () => ctx.rerender();
  const set = settings;
  const field = (label, title, node) => el('label', { class: 'field', title }, el('span', { text: label }), node);
  // One field per option the core declares, as it declares it (the phase: those both traces have).
  // A field draws the view again only when its value changed (a field removed while focused
  // fires `change` again as the view is redrawn).
  const update = (field, v) => { if (set[field] !== v) { set[field] = v; rerender(); } };
  const input = (f) => {
    const id = `compare-${f.field}`;
    if (f.input === 'select') {
      return el('select', { id, on: { change: (e) => update(f.field, e.target.value) } },
        // The phases both traces have (prefill / decode for LLM inference, denoise / stage for diffusion).
        phaseChoices(a.summary, b.summary, set[f.field]).map((p) => el('option', { value: p, text: p, selected: p === set[f.field] })));
    }
    if (f.input === 'text') return el('input', { type: 'text', value: set[f.field], id, on: { change: (e) => update(f.field, e.target.value) } });
    return el('input', { type: 'number', value: String(set[f.field]), id, step: 'any', ...(f.min === undefined ? {} : { min: String(f.min) }),
      on: { change: (e) => { const v = Number(e.target.value); if (Number.isFinite(v)) update(f.field, v); } } });
  };
  root.append(el('div', { class: 'compare-options' },
    ...compareFields(declared.compare).map((f) => field(f.label, f.title, input(f))),
    el('button', { type: 'button', id: 'compare-export-all', text: 'Export compare tables (.zip)', on: { click: () => ctx.exportCompareZip() } })));

  const result = await ctx.compare({ ...settings });
  // The labels every text and chart uses: the core's, shown in the fields.
  const names = result.labels;
  /** @type {HTMLInputElement} */ (root.querySelector('#compare-label_a')).value = names[0];
  /** @type {HTMLInputElement} */ (root.querySelector('#compare-label_b')).value = names[1];
  const tables = new Map();
  for (const name of result.tables) tables.set(name, await ctx.compareTable(name));

  // First, the answer in words; then the difference of the two budgets as a picture.
  root.append(el('p', { class: 'compare-headline', attrs: { 'data-compare-headline': '' }, text: result.headline }));
  const budget = tables.get('compare_budget');
  if (budget) root.append(...budgetPicture(budget, names));

  const outcomes = tables.get('compare_findings');
  if (outcomes) root.append(findingsOutcomes(outcomes));
  const tree = tables.get('compare_call_tree');
  if (tree && tree.rows.length > 1) {
    root.append(el('h3', { text: 'Where in the code it changed: the differential flame graph (per pass)' }), diffIcicle(tree, names));
  }

  const byGap = (t, labelOf, where = () => true) => {
    const c = (n) => t.columns.indexOf(n);
    const ia = c('a_per_pass_us'), ib = c('b_per_pass_us'), ig = c('gap_per_pass_us'), ir = c('ratio'), is = c('status');
    return t.rows.filter(where).map((row) => ({
      label: labelOf(row, c), a: row[ia] ?? 0, b: row[ib] ?? 0, gap: row[ig] ?? 0,
      note: `ratio ${row[ir] ?? '—'} · gap ${formatUs(row[ig])}/pass · ${row[is]}`,
    })).sort((x, y) => Math.abs(y.gap) - Math.abs(x.gap));
  };
  const cats = tables.get('compare_categories');
  if (cats) {
    root.append(el('h3', { text: 'Per category, mean time per pass, biggest gap first' }),
      pairedBars(byGap(cats, (row, c) => String(row[c('category')]), (row) => row[cats.columns.indexOf('level')] === 'category'), names));
  }
  const lay = tables.get('compare_layers');
  if (lay) {
    const items = byGap(lay, (row, c) => [row[c('phase')], row[c('part')] === 'layer' ? `layer ${row[c('layer')]}` : row[c('part')]].filter((x) => x !== null && x !== '').join(' · '));
    root.append(el('h3', { text: 'Per layer, mean time per pass, biggest gap first' }),
      items.length ? pairedBars(items, names) : el('p', { class: 'note', text: 'No layers on either side.' }));
  }
  for (const [name, table] of tables) {
    root.append(tableView({ title: titleOf(name), table, onExport: ctx.exportCompareCsv }));
  }
}

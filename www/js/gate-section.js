// The regression gate in the page (`traceprism gate`): the loaded trace (A) against a baseline
// digest the user opens, or trace B against trace A. The verdict, each phase's change with its
// interval as a picture (the band of no change shaded), and the attribution table; the digests
// and the Markdown summary download. Everything is computed by the core in the worker.
import { el } from './dom.js';
import { tableView } from './table-view.js';

/** What this page session holds: a baseline digest opened by the user (JSON text) and its name. */
const state = { baseline: /** @type {string|null} */ (null), baselineName: '', maxSlowdown: 0.03 };

/**
 * Each phase's change as a horizontal interval on a shared axis, the band of no change shaded.
 * @param {{phase: string, test: {ratio: number|null, interval: [number, number]|null, verdict: string}}[]} phases
 * @param {number} band
 */
export function intervalPicture(phases, band) {
  const width = 640, rowH = 26, left = 90;
  const canvas = el('canvas', { width, height: phases.length * rowH + 28, attrs: { 'data-testid': 'gate-intervals' } });
  const g = canvas.getContext('2d');
  if (!g) return canvas;
  const pct = (r) => 100 * (r - 1);
  const extent = Math.max(2 * 100 * band, ...phases.flatMap((p) => (p.test.interval || [p.test.ratio ?? 1, p.test.ratio ?? 1]).map((r) => Math.abs(pct(r)) * 1.15)));
  const x = (v) => left + ((width - left - 20) * (v + extent)) / (2 * extent);
  const h = phases.length * rowH;
  g.fillStyle = '#e8f4e8';
  g.fillRect(x(-100 * band), 0, x(100 * band) - x(-100 * band), h);
  g.strokeStyle = '#999';
  g.beginPath();
  g.moveTo(x(0), 0);
  g.lineTo(x(0), h);
  g.stroke();
  g.font = '12px system-ui, sans-serif';
  const colour = { regression: '#c62828', improvement: '#2e7d32', no_change: '#37474f', inconclusive: '#9e9e9e' };
  phases.forEach((p, k) => {
    const y = k * rowH + rowH / 2;
    g.fillStyle = '#222';
    g.fillText(p.phase, 6, y + 4);
    const c = colour[p.test.verdict] || '#555';
    g.strokeStyle = c;
    g.fillStyle = c;
    g.lineWidth = 3;
    if (p.test.interval) {
      g.beginPath();
      g.moveTo(x(pct(p.test.interval[0])), y);
      g.lineTo(x(pct(p.test.interval[1])), y);
      g.stroke();
    }
    if (p.test.ratio !== null) g.fillRect(x(pct(p.test.ratio)) - 3, y - 6, 6, 12);
  });
  g.fillStyle = '#555';
  g.lineWidth = 1;
  for (const v of [-extent, -100 * band, 0, 100 * band, extent]) {
    const t = `${v > 0 ? '+' : ''}${v.toFixed(1)}%`;
    g.fillText(t, x(v) - g.measureText(t).width / 2, h + 18);
  }
  return canvas;
}

/** The attribution of every phase as one table. */
function attributionTable(report) {
  const rows = report.phases.flatMap((p) => p.attribution.map((m) => [p.phase, m.level, m.name, m.delta_us_per_pass, 100 * m.share_of_change]));
  return {
    name: 'gate_attribution',
    columns: ['phase', 'level', 'name', 'delta_us_per_pass', 'share_of_change_pct'],
    types: ['text', 'text', 'text', 'micros', 'float'],
    rows,
  };
}

/**
 * The gate section of the compare view.
 * @param {any} ctx the view context (digestOf, gate, saveDigest, fileName, second)
 * @returns {Promise<HTMLElement>}
 */
export async function gateSection(ctx) {
  const box = el('section', { class: 'gate', attrs: { 'data-testid': 'gate' } });
  box.append(el('h3', { text: 'Regression gate' }),
    el('p', { class: 'note', text: 'Is the new trace slower than the baseline beyond noise? Per phase, the median per-pass GPU kernel time with a 99% bootstrap interval (as `traceprism gate`). The baseline is trace A against trace B, or a digest you open against trace A.' }));
  const input = el('input', { type: 'file', accept: '.json,application/json', id: 'gate-baseline-input', class: 'compare-input' });
  input.addEventListener('change', async () => {
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    state.baseline = await file.text();
    state.baselineName = file.name;
    ctx.rerender();
  });
  const download = async (slot, name) => ctx.saveDigest(await ctx.digestOf(slot), name);
  box.append(el('div', { class: 'compare-options' },
    el('label', { class: 'button', attrs: { for: 'gate-baseline-input' }, text: 'Open a baseline digest…' }), input,
    el('button', { type: 'button', id: 'gate-digest-a', text: 'Download digest of A', on: { click: () => download('a', ctx.fileName) } }),
    ctx.second ? el('button', { type: 'button', id: 'gate-digest-b', text: 'Download digest of B', on: { click: () => download('b', ctx.second.fileName) } }) : null,
    state.baseline ? el('button', { type: 'button', text: 'Forget the baseline digest', on: { click: () => { state.baseline = null; ctx.rerender(); } } }) : null));
  let base, candidate, what;
  if (state.baseline) {
    [base, candidate, what] = [state.baseline, await ctx.digestOf('a'), `A (${ctx.fileName}) against the baseline digest ${state.baselineName}`];
  } else if (ctx.second) {
    [base, candidate, what] = [await ctx.digestOf('a'), await ctx.digestOf('b'), `B (${ctx.second.fileName}) against A (${ctx.fileName})`];
  } else {
    box.append(el('p', { class: 'note', text: 'Open a baseline digest, or a trace B, to run the gate.' }));
    return box;
  }
  let result;
  try {
    result = await ctx.gate(base, candidate, { max_slowdown: state.maxSlowdown });
  } catch (err) {
    box.append(el('div', { class: 'error', attrs: { 'data-testid': 'gate-error' }, text: `The gate failed: ${err.message}` }));
    return box;
  }
  const r = result.report;
  box.append(el('p', { class: 'finding', attrs: { 'data-testid': 'gate-verdict', 'data-value': r.overall } }, `${r.overall.replace('_', ' ')}: ${what}`));
  for (const w of r.warnings) box.append(el('div', { class: 'warning', text: w }));
  box.append(intervalPicture(r.phases, r.options.max_slowdown));
  for (const p of r.phases) {
    const t = p.test;
    box.append(el('p', { class: 'note', attrs: { 'data-gate-phase': p.phase, 'data-value': t.verdict } },
      `${p.phase}: ${t.verdict.replace('_', ' ')} — ${t.base_passes} / ${t.new_passes} passes, median ${t.base_median_us.toFixed(1)} → ${t.new_median_us.toFixed(1)} µs${t.note ? ` (${t.note})` : ''}`));
  }
  box.append(el('button', { type: 'button', id: 'gate-markdown', text: 'Download the verdict (.md)', on: { click: () => ctx.saveText(result.markdown, 'gate-verdict.md', 'text/markdown;charset=utf-8') } }));
  box.append(tableView({ title: 'What moved (per pass, NEW − BASELINE)', table: attributionTable(r) }));
  return box;
}

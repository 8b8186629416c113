// Phases: prefill vs decode time, per-pass durations, then the phase tables.
import { el } from '../dom.js';
import { barChart, columnChart, stackedBars } from '../charts.js';
import { renderTables, groupRollup, phaseColour } from './common.js';
import { linkParams } from '../timeline/window.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace', 'route'];

/** Renders the phases view. */
export async function phases(ctx, root) {
  root.append(el('h2', { text: 'Prefill / decode phases' }));
  const r = await ctx.rollup();
  const byPhase = [...groupRollup(r, (i) => r.phase[i] ?? 'unassigned')].map(([p, g]) => ({ label: p, value: g.dur, colour: phaseColour(p), title: `${p} (${g.count} kernels)` }));
  byPhase.sort((a, b) => b.value - a.value);
  root.append(el('h3', { text: 'Kernel time by phase' }), barChart(byPhase));
  const passes = new Map();
  for (let i = 0; i < r.pass.length; i++) {
    if (r.pass[i] < 0) continue;
    const p = passes.get(r.pass[i]) || { dur: 0, phases: new Map() };
    p.dur += r.dur_us[i];
    const ph = r.phase[i] ?? 'unknown';
    p.phases.set(ph, (p.phases.get(ph) || 0) + r.dur_us[i]);
    passes.set(r.pass[i], p);
  }
  if (passes.size) {
    const items = [...passes].sort((a, b) => a[0] - b[0]).map(([idx, p]) => {
      const main = [...p.phases].sort((a, b) => b[1] - a[1])[0][0];
      return { label: `pass ${idx}`, value: p.dur, colour: phaseColour(main), title: `pass ${idx} (${main})` };
    });
    const legend = [...new Set(r.phase.filter(Boolean))].map((p) => ({ label: p, colour: phaseColour(p) }));
    root.append(el('h3', { text: 'Kernel time per forward pass' }), columnChart(items, { legend }));
    // What each pass spends its time on: one stacked bar per pass, by category family, the
    // prefill passes first and the decode passes after them (at most 64 passes drawn).
    const families = [...new Set(r.families)];
    const perPass = new Map();
    for (let i = 0; i < r.pass.length; i++) {
      if (r.pass[i] < 0) continue;
      const m = perPass.get(r.pass[i]) || new Map();
      const f = r.families[r.category[i]];
      m.set(f, (m.get(f) || 0) + r.dur_us[i]);
      perPass.set(r.pass[i], m);
    }
    const mainPhase = (idx) => [...passes.get(idx).phases].sort((a, b) => b[1] - a[1])[0][0];
    // Diffusion: steps and stages in time order (stages have no rank, so all rank alike).
    const order = ctx.summary.workload === 'diffusion' ? {} : { prefill: 0, mixed: 1, decode: 2 };
    const stacks = [...perPass.keys()]
      .sort((a, b) => (order[mainPhase(a)] ?? 3) - (order[mainPhase(b)] ?? 3) || a - b)
      .slice(0, 64)
      .map((idx) => ({ label: `pass ${idx} · ${mainPhase(idx)}`, parts: families.map((f) => ({ label: f, value: perPass.get(idx).get(f) || 0, colour: r.family_colours[f] })) }));
    const diffusion = ctx.summary.workload === 'diffusion';
    root.append(el('h3', { text: diffusion ? 'Kernel time per denoising step and stage by category family' : 'Kernel time per pass by category family (prefill, then decode)' }), stackedBars(stacks));
  } else {
    root.append(el('p', { class: 'note', text: 'No forward passes were detected in this trace.' }));
  }
  // Split: one pass or one phase as a .json.gz that Perfetto and traceprism open.
  const passCount = ctx.summary.passes + (ctx.summary.incomplete_passes || 0) + (ctx.summary.stages?.length || 0);
  if (passCount > 0) {
    const which = el('select', { attrs: { 'aria-label': 'pass to download', 'data-testid': 'split-pass' } },
      Array.from({ length: passCount }, (_, k) => el('option', { attrs: { value: String(k) }, text: `pass ${k}` })));
    const passButton = el('button', { attrs: { type: 'button', 'data-testid': 'split-pass-button' }, text: 'Download pass (.json.gz)' });
    passButton.addEventListener('click', () => ctx.split({ pass: Number(which.value) }, `pass${which.value}`));
    const phaseButtons = ['prefill', 'decode', 'denoise'].filter((p) => (ctx.summary.phases || []).some((x) => x.phase === p && x.passes > 0)).map((p) => {
      const b = el('button', { attrs: { type: 'button' }, text: `Download all ${p} (.json.gz)` });
      b.addEventListener('click', () => ctx.split({ phase: p }, p));
      return b;
    });
    root.append(el('div', { class: 'split-bar', title: 'Only the events of that window, plus the metadata events: opens in Perfetto and here' }, 'Split the trace: ', which, ' ', passButton, ' ', ...phaseButtons));
  }
  // A pass row opens the timeline at that pass.
  const toTimeline = (row, cols) => {
    const start = row[cols.indexOf('start_us')], dur = row[cols.indexOf('duration_us')];
    if (typeof start === 'number' && typeof dur === 'number') ctx.navigate('timeline', linkParams(start, dur));
  };
  root.append(el('h3', { text: 'Tables' }));
  await renderTables(ctx, 'phases', root, { onRowClick: { passes: toTimeline }, collapse: (name) => name !== 'passes' && name !== 'phase_summary' });
}

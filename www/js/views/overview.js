// Overview: device, trace span, kernel count, GPU busy/idle breakdown per device, warnings.
// Reads the core's Summary (the object `traceprism summary --json` prints).
import { el } from '../dom.js';
import { formatUs, formatCount, formatBytes } from '../format.js';
import { shareBar, stackedBars } from '../charts.js';
import { renderTables, phaseColour } from './common.js';
import { linkParams } from '../timeline/window.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace', 'route'];

function fact(key, label, shown, value) {
  return el('div', { class: 'fact', attrs: { 'data-fact': key, 'data-value': value ?? '' } },
    el('div', { class: 'k', text: label }), el('div', { class: 'v', text: shown, attrs: { title: String(shown ?? '') } }));
}

/**
 * The trace's phase and its forward passes: `decode · 32` when every pass has one phase, the passes
 * of each phase when they differ (`prefill 1 + decode 32`), `unknown · N` when none was detected.
 */
function phaseText(s) {
  const passes = formatCount(s.passes ?? 0);
  const incomplete = s.incomplete_passes ? ` (+ ${formatCount(s.incomplete_passes)} incomplete: the trace starts or stops inside it)` : '';
  return phaseOnly(s, passes) + incomplete;
}

/** {@link phaseText} without the incomplete passes of a truncated trace. */
function phaseOnly(s, passes) {
  if (s.workload === 'diffusion') return `${passes} denoising steps${s.stages?.length ? ` + ${s.stages.length} stages` : ''}`;
  if (s.trace_phase) return `${s.trace_phase} · ${passes}`;
  const order = ['prefill', 'decode'];
  const rank = (p) => (order.indexOf(p) + 1 || order.length + 1);
  const parts = (s.phases || []).filter((p) => p.passes > 0).sort((a, b) => rank(a.phase) - rank(b.phase));
  return parts.length ? parts.map((p) => `${p.phase} ${formatCount(p.passes)}`).join(' + ') : `unknown · ${passes}`;
}

/** The workload's name for people. */
export function workloadLabel(kind) {
  return {
    llm_inference: 'LLM inference', diffusion: 'diffusion (repeated denoising steps)', single_pass: 'single-pass model',
    training: 'training', unknown: 'unknown',
  }[kind] || kind || 'unknown';
}

/** Layers per pass with their kinds: `57 per step: 19 MHA_FC·14gemm + 38 MHA_FC·6gemm`. */
function layersText(s) {
  const per = [...new Set(s.layers_per_pass || [])].sort((a, b) => a - b);
  if (!per.length) return '—';
  const unit = s.workload === 'diffusion' ? 'per step' : 'per pass';
  const kinds = (s.layer_kinds || []).length > 1 ? `: ${s.layer_kinds.map((k) => `${k.count} ${k.type}`).join(' + ')}` : '';
  return `${per.join(', ')} ${unit}${kinds}`;
}

/**
 * The Health panel: what the profiler recorded and what went wrong, one row per check (the
 * `health` table, `traceprism doctor`): status, what was found, what it limits, the fix. Checks
 * that need attention first; the ones in order fold below.
 * @param {{check: string, status: string, count: number, found: string, limits: string, fix: string}[]} health
 */
export function healthPanel(health) {
  const attention = (/** @type {{status: string}} */ c) => c.status === 'warning' || c.status === 'missing' || c.status === 'partial';
  const row = (/** @type {typeof health[number]} */ c) => el('tr', { attrs: { 'data-check': c.check, 'data-status': c.status } },
    el('td', { class: `st st-${c.status}`, text: c.status }),
    el('td', { class: 'mono', text: c.check }),
    el('td', {},
      el('div', { text: c.found }),
      c.limits ? el('div', { class: 'lim', text: `limits: ${c.limits}` }) : null,
      c.fix ? el('div', { class: 'fix', text: `fix: ${c.fix}` }) : null));
  const bad = health.filter(attention), good = health.filter((c) => !attention(c));
  const counts = ['warning', 'missing', 'partial'].map((st) => [st, health.filter((c) => c.status === st).length])
    .filter(([, n]) => n).map(([st, n]) => `${n} ${st}`).join(', ');
  return el('section', { attrs: { 'data-testid': 'health' } },
    el('h3', { text: `Health: ${counts || 'everything recorded, nothing wrong'}` }),
    bad.length ? el('table', { class: 'health' }, el('tbody', {}, bad.map(row))) : null,
    el('details', {}, el('summary', { text: `${good.length} checks present or ok` }),
      el('table', { class: 'health' }, el('tbody', {}, good.map(row)))));
}

/**
 * The Findings panel: what to fix first, largest saving first (the `findings` table, `traceprism
 * findings`): the saving per step and its share of the step, the evidence, the fix and what a
 * re-profile should show. A finding opens the timeline at its evidence.
 * @param {{columns: string[], rows: any[][]}} table
 * @param {(startUs: number, durUs: number) => void} open
 */
export function findingsPanel(table, open) {
  const at = (/** @type {any[]} */ row, /** @type {string} */ name) => row[table.columns.indexOf(name)];
  const item = (/** @type {any[]} */ row) => {
    const li = el('li', { attrs: { 'data-kind': at(row, 'kind'), 'data-saving-us': at(row, 'saving_us') } },
      el('div', { class: 'finding-head',
        text: Number(at(row, 'saving_us')) > 0
          ? `${at(row, 'kind')} (${at(row, 'scope')}): saves ${formatUs(at(row, 'saving_us'))} ${at(row, 'per') ?? 'a step'} (${Number(at(row, 'saving_pct')).toFixed(1)} % of it); confidence ${at(row, 'confidence')}`
          : `${at(row, 'kind')} (${at(row, 'scope')}): no idle to win back; confidence ${at(row, 'confidence')}` }),
      el('div', { text: at(row, 'evidence') }),
      el('div', { class: 'fix', text: `fix: ${at(row, 'fix')}` }),
      el('div', { class: 'lim', text: `check: ${at(row, 'check')}` }));
    const from = at(row, 'from_us'), to = at(row, 'to_us');
    if (typeof from === 'number' && typeof to === 'number') {
      li.title = 'open the timeline at the evidence';
      li.classList.add('clickable');
      li.addEventListener('click', () => open(from, to - from));
    }
    return li;
  };
  return el('section', { attrs: { 'data-testid': 'findings' } },
    el('h3', { text: table.rows.length ? `Findings: what to fix first (${table.rows.length})` : 'Findings: none this trace\'s records can put a cause and a saving on' }),
    table.rows.length ? el('ol', { class: 'findings' }, table.rows.map(item)) : null);
}

/** Steps drawn in the step-budget chart at most (the table holds every one). */
const BUDGET_STEPS = 64;
/** Labels drawn by name in the step-budget chart; the rest are summed as `other`. */
const BUDGET_LABELS = 9;

/**
 * The step budget (the `step_budget` table, `traceprism table TRACE step_budget`): one stacked bar
 * per step, its wall time split into what the GPU ran and what held it when idle; the rows add up
 * to the step. Clicking a segment opens the timeline at that row's longest stretch in that step.
 * @param {{columns: string[], rows: any[][]}} table
 * @param {(startUs: number, durUs: number) => void} open
 */
export function budgetPanel(table, open) {
  const at = (/** @type {any[]} */ row, /** @type {string} */ name) => row[table.columns.indexOf(name)];
  const label = (/** @type {any[]} */ row) => `${at(row, 'part')}: ${at(row, 'what')}`;
  /** @type {Map<string, any[][]>} */
  const steps = new Map();
  for (const row of table.rows) {
    const key = `${at(row, 'device')}/${at(row, 'pass') ?? 'capture'}`;
    if (!steps.has(key)) steps.set(key, []);
    steps.get(key)?.push(row);
  }
  /** @type {Map<string, number>} */
  const totals = new Map();
  for (const row of table.rows) totals.set(label(row), (totals.get(label(row)) || 0) + Number(at(row, 'us')));
  const named = [...totals.entries()].sort((x, y) => y[1] - x[1]).slice(0, BUDGET_LABELS).map(([k]) => k);
  const labels = [...named, 'other'];
  const shown = [...steps.entries()].slice(0, BUDGET_STEPS);
  const stacks = shown.map(([key, rows]) => {
    const [device, pass] = key.split('/');
    const values = labels.map(() => 0);
    for (const row of rows) {
      const k = named.indexOf(label(row));
      values[k < 0 ? labels.length - 1 : k] += Number(at(row, 'us'));
    }
    return {
      label: pass === 'capture' ? `GPU ${device} capture` : `GPU ${device} pass ${pass} ${at(rows[0], 'phase')}`,
      parts: labels.map((l, k) => ({ label: l, value: values[k] })),
    };
  });
  const pick = (/** @type {number} */ s, /** @type {number} */ p) => {
    const rows = shown[s][1].filter((row) => p < named.length ? label(row) === named[p] : !named.includes(label(row)));
    const longest = rows.sort((x, y) => (at(y, 'to_us') - at(y, 'from_us')) - (at(x, 'to_us') - at(x, 'from_us')))[0];
    if (longest) open(at(longest, 'from_us'), at(longest, 'to_us') - at(longest, 'from_us'));
  };
  const more = steps.size > shown.length ? ` (first ${shown.length} of ${steps.size} steps)` : '';
  return el('section', { attrs: { 'data-testid': 'step-budget', 'data-steps': steps.size } },
    el('h3', { text: `Where each step's time went: what the GPU ran, what held it when idle${more}` }),
    stackedBars(stacks, { onPick: pick }),
    el('p', { class: 'note', text: 'Each bar adds up to its step (first kernel to the next step\'s first kernel). Click a segment for its longest stretch on the timeline; the step_budget table below has every row.' }));
}

/** Renders the overview. */
export async function overview(ctx, root) {
  const s = ctx.summary;
  const input = s.input || {};
  const c = s.counts || {};
  const tl = s.timeline || [];
  const span = tl.reduce((m, t) => Math.max(m, t.total), 0) / 1000;
  root.append(el('h2', { text: 'Overview' }));
  root.append(el('div', { class: 'facts' },
    fact('file', 'file', ctx.fileName, ctx.fileName),
    fact('device', 'device', `${s.device}${s.world_size > 1 ? ` · rank ${s.rank ?? '?'} of ${s.world_size}` : ''}`, s.device),
    fact('span', 'GPU span (longest device)', formatUs(span), span),
    fact('kernels', 'kernels', formatCount(c.kernels), c.kernels),
    fact('kernel_time', 'kernel time (sum)', formatUs(s.kernel_time_ms * 1000), s.kernel_time_ms),
    fact('workload', 'workload', workloadLabel(s.workload), s.workload),
    fact('phase', s.workload === 'diffusion' ? 'steps · stages' : 'phase · forward passes', phaseText(s), s.passes),
    fact('layers', s.workload === 'diffusion' ? 'blocks' : 'layers', layersText(s), (s.layers_per_pass || [])[0]),
    fact('events', 'events read', formatCount(input.events), input.events),
    fact('size', `file / ${s.input_text || 'text'} size`, `${formatBytes(input.bytes_in)} / ${formatBytes(input.json_bytes)}`, input.bytes_in),
    fact('cpu_ops', 'CPU ops · runtime calls', `${formatCount(c.cpu_ops)} · ${formatCount(c.runtime_calls)}${c.graph_launches ? ` (${formatCount(c.graph_launches)} graph)` : ''}`, c.cpu_ops),
    fact('memcpy', 'memcpy · memset', `${formatCount(c.memcpy)} · ${formatCount(c.memset)}${c.memcpy_bytes ? ` (${formatBytes(c.memcpy_bytes)} copied)` : ''}`, c.memcpy),
    s.links ? fact('links', 'kernels linked to a launch', `${(s.links.launch_link_pct ?? 0).toFixed(1)} %`, s.links.launch_link_pct) : null));

  const open = (/** @type {number} */ start, /** @type {number} */ dur) => ctx.navigate('timeline', linkParams(start, dur));
  if (ctx.tableNames.includes('findings')) {
    const slot = el('div', { class: 'note', text: 'finding what to fix first…' });
    root.append(slot);
    ctx.table('findings').then((t) => slot.replaceWith(findingsPanel(t, open)), (err) => { slot.textContent = `findings: ${err.message}`; });
  }
  if (ctx.tableNames.includes('step_budget')) {
    const slot = el('div', { class: 'note', text: 'accounting for every step…' });
    root.append(slot);
    ctx.table('step_budget').then((t) => slot.replaceWith(budgetPanel(t, open)), (err) => { slot.textContent = `step budget: ${err.message}`; });
  }
  if (s.health?.length) root.append(healthPanel(s.health));
  if (s.doubtful_passes) {
    root.append(el('p', { class: 'warning', attrs: { 'data-testid': 'doubtful-passes', 'data-value': s.doubtful_passes } },
      `${formatCount(s.doubtful_passes)} of ${formatCount((s.passes ?? 0) + (s.incomplete_passes ?? 0))} passes have a doubtful phase (thin or conflicting evidence): the passes table's doubt column says why.`));
  }
  if (s.workload_evidence?.length) {
    root.append(el('details', { class: 'evidence', attrs: { 'data-testid': 'workload-evidence' } },
      el('summary', { text: `Why ${workloadLabel(s.workload)}` }),
      el('ul', {}, s.workload_evidence.map((e) => el('li', { text: e })))));
  }
  if (s.stages?.length) {
    root.append(el('h3', { text: 'Stages around the steps' }),
      el('ul', { attrs: { 'data-testid': 'stages' } }, s.stages.map((st) =>
        el('li', { text: `pass ${st.pass}: ${st.label} — ${formatCount(st.kernels)} kernels, ${formatUs(st.time_ms * 1000)}` }))));
  }
  const mixed = s.mixed;
  if (mixed?.estimated) {
    const tokens = mixed.prefill_tokens + mixed.decode_tokens;
    root.append(el('h3', { text: `Mixed steps: ${formatCount(mixed.steps)} step${mixed.steps === 1 ? '' : 's'} batching prefill with decode (kernel time, from the ${mixed.sources.join(' and the ')})` }),
      el('div', { attrs: { 'data-testid': 'mixed-split' } },
        shareBar([
          { label: `prefill (${formatCount(mixed.prefill_tokens)} tokens)`, value: mixed.prefill_time_ms * 1000, colour: phaseColour('prefill') },
          { label: `decode (${formatCount(mixed.decode_tokens)} tokens)`, value: mixed.decode_time_ms * 1000, colour: phaseColour('decode') },
        ]),
        el('p', { class: 'note', text: `${(100 * mixed.prefill_tokens / Math.max(1, tokens)).toFixed(1)} % of the mixed steps' tokens are prefill; kernel time follows the tokens, except attention kernels whose names say prefill or decode.` })));
  }
  for (const t of tl) {
    const us = (ns) => (ns || 0) / 1000;
    const exposed = us(t.exposed_comm), memcpy = us(t.exposed_memcpy);
    const other = Math.max(0, us(t.busy) - us(t.compute) - exposed - memcpy);
    root.append(el('h3', { text: `GPU ${t.device}: busy / idle over ${formatUs(us(t.total))}` }),
      shareBar([
        { label: 'compute', value: us(t.compute), colour: '#4e79a7' },
        { label: 'exposed communication', value: exposed, colour: '#e15759' },
        { label: 'exposed memcpy', value: memcpy, colour: '#edc948' },
        { label: 'other busy', value: other, colour: '#76b7b2' },
        { label: `idle ≥ micro threshold (${formatCount(t.idle_gaps - t.micro_idle_gaps)} gaps)`, value: us(t.idle) - us(t.micro_idle), colour: '#d9dee5' },
        { label: `micro-idle (${formatCount(t.micro_idle_gaps)} gaps)`, value: us(t.micro_idle), colour: '#bab0ac' },
      ]));
  }
  const warnings = Object.entries(s.warnings?.counts || {});
  if (warnings.length) {
    root.append(el('h3', { text: 'Warnings (what was skipped, repaired or found wrong)' }),
      el('ul', { class: 'warnings' }, warnings.map(([k, n]) => el('li', { text: `${k}: ${formatCount(n)}` }))),
      el('details', {}, el('summary', { text: 'examples' }), el('ul', {}, (s.warnings.examples || []).map((w) => el('li', { class: 'mono', text: `event ${w.event}: ${w.kind}: ${w.detail}` })))));
  }
  const toTimeline = (/** @type {any[]} */ row, /** @type {string[]} */ cols) => {
    const from = row[cols.indexOf('from_us')], to = row[cols.indexOf('to_us')];
    if (typeof from === 'number' && typeof to === 'number') open(from, to - from);
  };
  await renderTables(ctx, 'overview', root, { onRowClick: { findings: toTimeline, step_budget: toTimeline }, collapse: (name) => name === 'findings' || name === 'step_budget' });
}

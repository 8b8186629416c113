// Overview: device, trace span, kernel count, GPU busy/idle, warnings.
import { el } from '../dom.js';
import { formatUs, formatCount, formatBytes } from '../format.js';
import { shareBar } from '../charts.js';
import { renderTables } from './common.js';

function fact(key, label, shown, value) {
  return el('div', { class: 'fact', attrs: { 'data-fact': key, 'data-value': value ?? '' } },
    el('div', { class: 'k', text: label }), el('div', { class: 'v', text: shown }));
}

/** Renders the overview. */
export async function overview(ctx, root) {
  const s = ctx.summary;
  const st = s.stats || {};
  root.append(el('h2', { text: 'Overview' }));
  const phase = s.trace_phase ? ` · ${s.trace_phase}` : '';
  root.append(el('div', { class: 'facts' },
    fact('file', 'file', ctx.fileName, ctx.fileName),
    fact('device', 'device', `${s.device}${s.world_size ? ` · rank ${s.rank ?? '?'} of ${s.world_size}` : ''}`, s.device),
    fact('span', 'GPU span', formatUs(s.gpu_span_us), s.gpu_span_us),
    fact('kernels', 'kernels', formatCount(s.kernels), s.kernels),
    fact('kernel_time', 'kernel time (sum)', formatUs(s.kernel_time_us), s.kernel_time_us),
    fact('busy', 'GPU busy', formatUs(s.gpu_busy_us), s.gpu_busy_us),
    fact('idle', 'GPU idle', formatUs(s.gpu_idle_us), s.gpu_idle_us),
    fact('passes', 'forward passes', `${formatCount(s.passes ?? 0)}${phase}`, s.passes),
    fact('events', 'events read', formatCount(st.events), st.events),
    fact('size', 'file size / JSON', `${formatBytes(st.bytes_in)} / ${formatBytes(st.json_bytes)}`, st.bytes_in),
    fact('cpu_ops', 'CPU ops · launches', `${formatCount(s.cpu_ops)} · ${formatCount(s.launches)}${s.graph_launches ? ` (${formatCount(s.graph_launches)} graph)` : ''}`, s.cpu_ops),
    fact('memcpy', 'memcpy · memset', `${formatCount(s.memcpys)} · ${formatCount(s.memsets)}`, s.memcpys)));
  root.append(el('h3', { text: 'GPU time line: busy vs idle' }),
    shareBar([{ label: 'busy', value: s.gpu_busy_us || 0, colour: '#4e79a7' }, { label: 'idle', value: s.gpu_idle_us || 0, colour: '#d9dee5' }]));
  const warnings = Object.entries(s.warnings || {});
  if (warnings.length) {
    root.append(el('h3', { text: 'Warnings (what was skipped or repaired while reading)' }),
      el('ul', { class: 'warnings' }, warnings.map(([k, n]) => el('li', { text: `${k}: ${formatCount(n)}` }))),
      el('details', {}, el('summary', { text: 'examples' }), el('ul', {}, (s.warning_examples || []).map((w) => el('li', { class: 'mono', text: w })))));
  }
  await renderTables(ctx, 'overview', root);
}

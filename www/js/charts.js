// Small dependency-free charts: horizontal bars, per-pass columns, a stacked share bar and a
// canvas heat map. Labels are SVG text nodes (textContent), never markup.
import { el, svg } from './dom.js';
import { formatUs } from './format.js';

/** Categorical colours (colour-blind friendly Tableau 10). */
export const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];

/** Colour for the k-th series. */
export function colour(k) {
  return PALETTE[((k % PALETTE.length) + PALETTE.length) % PALETTE.length];
}

/**
 * Horizontal bar chart. items: [{label, value, title?, colour?}] (value in µs unless `format`).
 */
export function barChart(items, { format = formatUs, width = 760, max = 30 } = {}) {
  const shown = items.slice(0, max);
  const labelW = 260, valueW = 110, rowH = 20;
  const top = Math.max(1e-12, ...shown.map((d) => d.value));
  const total = items.reduce((s, d) => s + d.value, 0) || 1;
  const h = shown.length * rowH + 4;
  const root = svg('svg', { attrs: { width, height: h, viewBox: `0 0 ${width} ${h}`, role: 'img' } });
  shown.forEach((d, i) => {
    const y = i * rowH + 2;
    const w = Math.max(1, ((width - labelW - valueW) * d.value) / top);
    const label = d.label.length > 40 ? d.label.slice(0, 39) + '…' : d.label;
    root.append(
      svg('text', { attrs: { x: labelW - 6, y: y + 13, 'text-anchor': 'end' }, text: label }),
      svg('rect', { attrs: { x: labelW, y: y + 2, width: w, height: rowH - 5, fill: d.colour || colour(0) }, title: `${d.title || d.label}: ${format(d.value)} (${((100 * d.value) / total).toFixed(1)}%)` }),
      svg('text', { attrs: { x: labelW + w + 4, y: y + 13 }, text: `${format(d.value)} · ${((100 * d.value) / total).toFixed(1)}%` }),
    );
  });
  const note = items.length > max ? el('div', { class: 'note', text: `top ${max} of ${items.length}` }) : null;
  return el('div', { class: 'chart' }, root, note);
}

/** One stacked horizontal bar of shares: parts [{label, value, colour?}]. */
export function shareBar(parts, { width = 760, format = formatUs } = {}) {
  const total = parts.reduce((s, p) => s + Math.max(0, p.value), 0) || 1;
  const root = svg('svg', { attrs: { width, height: 26, viewBox: `0 0 ${width} 26`, role: 'img' } });
  let x = 0;
  parts.forEach((p, k) => {
    const w = (width * Math.max(0, p.value)) / total;
    root.append(svg('rect', { attrs: { x, y: 2, width: Math.max(0, w), height: 22, fill: p.colour || colour(k) }, title: `${p.label}: ${format(p.value)} (${((100 * p.value) / total).toFixed(1)}%)` }));
    x += w;
  });
  const legend = el('div', { class: 'legend' }, parts.map((p, k) => el('span', {},
    el('span', { class: 'swatch', style: `background:${p.colour || colour(k)}` }),
    `${p.label} ${format(p.value)} (${((100 * p.value) / total).toFixed(1)}%)`)));
  return el('div', { class: 'chart' }, root, legend);
}

/**
 * Vertical columns, one per item in order (e.g. per forward pass): [{label, value, colour, title}].
 */
export function columnChart(items, { width = 900, height = 160, format = formatUs, legend = [] } = {}) {
  const top = Math.max(1e-12, ...items.map((d) => d.value));
  const bw = Math.max(1, Math.min(24, (width - 50) / Math.max(1, items.length)));
  const w = Math.min(width, 50 + bw * items.length);
  const root = svg('svg', { attrs: { width: w, height: height + 20, viewBox: `0 0 ${w} ${height + 20}`, role: 'img' } });
  root.append(svg('text', { attrs: { x: 0, y: 10 }, text: format(top) }));
  items.forEach((d, i) => {
    const h = Math.max(1, ((height - 14) * d.value) / top);
    root.append(svg('rect', { attrs: { x: 50 + i * bw, y: height - h, width: Math.max(1, bw - 1), height: h, fill: d.colour || colour(0) }, title: `${d.title || d.label}: ${format(d.value)}` }));
  });
  root.append(svg('text', { attrs: { x: 50, y: height + 14 }, text: items.length ? String(items[0].label) : '' }));
  if (items.length > 1) root.append(svg('text', { attrs: { x: w - 2, y: height + 14, 'text-anchor': 'end' }, text: String(items[items.length - 1].label) }));
  const leg = legend.length ? el('div', { class: 'legend' }, legend.map((l) => el('span', {}, el('span', { class: 'swatch', style: `background:${l.colour}` }), l.label))) : null;
  return el('div', { class: 'chart' }, root, leg);
}

/**
 * Heat map on a canvas: rows × cols of values (µs); `onPick(row, col)` on click.
 * rowLabels/colLabels are shown on hover via the caption line.
 */
export function heatMap(values, rowLabels, colLabels, { onPick, cell = 14, format = formatUs } = {}) {
  const rows = rowLabels.length, cols = colLabels.length;
  const cw = Math.max(2, Math.min(cell, Math.floor(1100 / Math.max(1, cols))));
  const ch = Math.max(4, Math.min(cell, Math.floor(600 / Math.max(1, rows))));
  const canvas = el('canvas', { width: cols * cw, height: rows * ch });
  const ctx = canvas.getContext('2d');
  let top = 0;
  for (const r of values) for (const v of r) if (v > top) top = v;
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = values[r][c];
      if (!v) continue;
      const t = Math.sqrt(v / (top || 1));
      ctx.fillStyle = `rgb(${Math.round(255 - 200 * t)}, ${Math.round(245 - 160 * t)}, ${Math.round(255 - 60 * t)})`;
      ctx.fillRect(c * cw, r * ch, cw, ch);
    }
  }
  const caption = el('div', { class: 'note', text: 'hover a cell; click to see its kernels' });
  const at = (e) => {
    const rect = canvas.getBoundingClientRect();
    const c = Math.floor(((e.clientX - rect.left) * canvas.width) / rect.width / cw);
    const r = Math.floor(((e.clientY - rect.top) * canvas.height) / rect.height / ch);
    return r >= 0 && r < rows && c >= 0 && c < cols ? [r, c] : null;
  };
  canvas.addEventListener('mousemove', (e) => {
    const p = at(e);
    caption.textContent = p ? `${rowLabels[p[0]]} · ${colLabels[p[1]]}: ${format(values[p[0]][p[1]] || 0)}` : '';
  });
  if (onPick) canvas.addEventListener('click', (e) => { const p = at(e); if (p) onPick(p[0], p[1]); });
  return el('div', { class: 'chart heatmap' }, canvas, caption);
}

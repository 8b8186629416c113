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
  // valueW holds the longest value label ("761.997 ms · 100.0%") beside the longest bar.
  const labelW = 260, valueW = 150, rowH = 20;
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
 *
 * Without `columnGroups`, colours scale with the value (darker is longer). With `columnGroups` (a
 * key per column, e.g. each pass's phase), a cell is coloured by its value against the median of
 * its group: blue faster, red slower, white at the median, full colour at ±`spread` (a fraction).
 * Layers of a model take nearly the same time, so an absolute scale paints them one shade; against
 * the median, a slow layer or a hiccup in one pass stands out.
 */
/**
 * @param {number[][]} values
 * @param {string[]} rowLabels
 * @param {string[]} colLabels
 * @param {{onPick?: (row: number, col: number) => void, cell?: number, format?: (us: number) => string, columnGroups?: string[] | null, spread?: number,
 *   rowTitle?: string, colTitle?: string, groupColour?: (group: string) => string, highlightCol?: number, width?: number}} [options]
 */
export function heatMap(values, rowLabels, colLabels, { onPick, cell = 120, format = formatUs, columnGroups = null, spread = 0.1, rowTitle = '', colTitle = '', groupColour = () => '#bab0ac', highlightCol = -1, width = 1100 } = {}) {
  const rows = rowLabels.length, cols = colLabels.length;
  const LABEL_W = 76, AXIS_H = 34;
  // Cells fill the width (up to `cell` px wide); rows share about 520 px.
  const cw = Math.max(3, Math.min(cell, Math.floor((width - LABEL_W) / Math.max(1, cols))));
  const ch = Math.max(6, Math.min(22, Math.floor(520 / Math.max(1, rows))));
  const canvas = el('canvas', { width: cols * cw, height: rows * ch });
  const ctx = canvas.getContext('2d');
  const relative = Boolean(columnGroups);
  const groupOf = (c) => columnGroups[c];
  // Absolute scale: the largest value; against the median: the median of each group's cells with time.
  let top = 0;
  const cellsOf = new Map();
  for (const r of values) {
    r.forEach((v, c) => {
      if (!(v > 0)) return;
      top = Math.max(top, v);
      if (!relative) return;
      if (!cellsOf.has(groupOf(c))) cellsOf.set(groupOf(c), []);
      cellsOf.get(groupOf(c)).push(v);
    });
  }
  const median = new Map();
  for (const [g, vs] of cellsOf) {
    vs.sort((a, b) => a - b);
    median.set(g, vs.length % 2 ? vs[(vs.length - 1) / 2] : (vs[vs.length / 2 - 1] + vs[vs.length / 2]) / 2);
  }
  const mix = (from, to, t) => from.map((x, k) => Math.round(x + (to[k] - x) * t));
  const WHITE = [247, 247, 247], BLUE = [33, 102, 172], RED = [178, 24, 43];
  const absolute = (t) => [255 - 200 * Math.sqrt(t), 245 - 160 * Math.sqrt(t), 255 - 60 * Math.sqrt(t)].map(Math.round);
  const against = (d) => (d < 0 ? mix(WHITE, BLUE, -d) : mix(WHITE, RED, d));
  const colour = (v, c) => (relative ? against(Math.max(-1, Math.min(1, (v / median.get(groupOf(c)) - 1) / spread))) : absolute(v / (top || 1)));
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = values[r][c];
      if (!v) continue;
      const [red, green, blue] = colour(v, c);
      ctx.fillStyle = `rgb(${red}, ${green}, ${blue})`;
      ctx.fillRect(c * cw, r * ch, cw - (cw > 6 ? 1 : 0), ch - (ch > 8 ? 1 : 0));
    }
  }
  if (highlightCol >= 0 && highlightCol < cols) {
    ctx.strokeStyle = '#222';
    ctx.lineWidth = 2;
    ctx.strokeRect(highlightCol * cw + 1, 1, cw - 2, rows * ch - 2);
  }
  // Axes: column labels (and each column's group as a coloured strip) above, row labels left,
  // a label every few cells so they never overlap.
  const every = (size, room) => Math.max(1, Math.ceil(room / size));
  const colAxis = svg('svg', { attrs: { width: cols * cw, height: AXIS_H, class: 'heatmap-axis' } });
  const colStep = every(cw, 46);
  for (let c = 0; c < cols; c++) {
    if (columnGroups) colAxis.append(svg('rect', { attrs: { x: c * cw, y: AXIS_H - 7, width: cw, height: 6, fill: groupColour(groupOf(c)) } }));
    if (c % colStep === 0) colAxis.append(svg('text', { attrs: { x: c * cw + cw / 2, y: AXIS_H - 11, 'text-anchor': 'middle', class: 'ax' }, text: colLabels[c].replace(/^\D+\s/, '') }));
  }
  const rowAxis = svg('svg', { attrs: { width: LABEL_W, height: rows * ch, class: 'heatmap-axis' } });
  const rowStep = every(ch, 13);
  for (let r = 0; r < rows; r += rowStep) {
    rowAxis.append(svg('text', { attrs: { x: LABEL_W - 6, y: r * ch + ch / 2 + 4, 'text-anchor': 'end', class: 'ax' }, text: rowLabels[r] }));
  }
  const corner = el('div', { class: 'heatmap-titles' }, el('div', { class: 'ax-title', text: colTitle ? `${colTitle} →` : '' }), el('div', { class: 'ax-title', text: rowTitle ? `${rowTitle} ↓` : '' }));
  // The colour scale, with units.
  const scaleW = 260;
  const scale = svg('svg', { attrs: { width: scaleW + 200, height: 30, class: 'heatmap-scale', 'data-testid': 'heatmap-scale' } });
  for (let k = 0; k < 52; k++) {
    const t = k / 51;
    const [red, green, blue] = relative ? against(2 * t - 1) : absolute(t);
    scale.append(svg('rect', { attrs: { x: (k * scaleW) / 52, y: 2, width: scaleW / 52 + 0.5, height: 12, fill: `rgb(${red}, ${green}, ${blue})` } }));
  }
  const tick = (x, text, anchor) => scale.append(svg('text', { attrs: { x, y: 27, 'text-anchor': anchor, class: 'ax' }, text }));
  if (relative) {
    tick(0, `−${Math.round(spread * 100)}% (faster)`, 'start');
    tick(scaleW / 2, 'median of the phase', 'middle');
    tick(scaleW, `+${Math.round(spread * 100)}% (slower)`, 'end');
  } else {
    tick(0, format(0), 'start');
    tick(scaleW, format(top), 'end');
  }
  const groups = columnGroups ? [...new Set(columnGroups)] : [];
  const legend = groups.length > 1 || (groups.length === 1 && relative)
    ? el('div', { class: 'legend' }, groups.map((g) => el('span', {}, el('span', { class: 'swatch', style: `background:${groupColour(g)}` }), `${g}${median.has(g) ? ` (median cell ${format(median.get(g))})` : ''}`)))
    : null;
  const pct = (v, c) => {
    const p = (100 * (v - median.get(groupOf(c)))) / median.get(groupOf(c));
    return ` (${p >= 0 ? '+' : ''}${p.toFixed(1)}% against the ${groupOf(c)} median)`;
  };
  const hint = onPick ? 'hover a cell for its time; click to see its kernels' : 'hover a cell for its time';
  const caption = el('div', { class: 'note', text: hint });
  const key = relative
    ? el('div', { class: 'note heatmap-key', text: `colour: time against the median cell of the same phase — blue faster, red slower, full colour at ±${Math.round(spread * 100)}%` })
    : null;
  const at = (e) => {
    const rect = canvas.getBoundingClientRect();
    const c = Math.floor(((e.clientX - rect.left) * canvas.width) / rect.width / cw);
    const r = Math.floor(((e.clientY - rect.top) * canvas.height) / rect.height / ch);
    return r >= 0 && r < rows && c >= 0 && c < cols ? [r, c] : null;
  };
  canvas.addEventListener('mousemove', (e) => {
    const p = at(e);
    const v = p ? values[p[0]][p[1]] || 0 : 0;
    caption.textContent = p ? `${rowLabels[p[0]]} · ${colLabels[p[1]]}: ${format(v)}${relative && v ? pct(v, p[1]) : ''}` : hint;
  });
  if (onPick) canvas.addEventListener('click', (e) => { const p = at(e); if (p) onPick(p[0], p[1]); });
  const grid = el('div', { class: 'heatmap-grid', style: `grid-template-columns: ${LABEL_W}px ${cols * cw}px` }, corner, colAxis, rowAxis, canvas);
  return el('div', { class: 'chart heatmap', attrs: { 'data-testid': 'heatmap', 'data-scale': relative ? 'vs-median' : 'absolute' } }, grid, caption, scale, legend, key);
}

/**
 * A caption line under a chart that shows the hovered mark's text (`data-hover` of the mark).
 * Hover text is trace data, so it goes in as textContent only.
 */
function hoverCaption(root, hint) {
  const caption = el('div', { class: 'note hover-caption', text: hint });
  root.addEventListener('mouseover', (e) => {
    const mark = e.target.closest?.('[data-hover]');
    if (mark) caption.textContent = mark.getAttribute('data-hover');
  });
  return caption;
}

function mark(tag, attrs, hover) {
  return svg(tag, { attrs: { ...attrs, 'data-hover': hover }, title: hover });
}

function clip(label, n = 40) {
  return label.length > n ? label.slice(0, n - 1) + '…' : label;
}

/**
 * Side-by-side bars: two bars per row (A and B), e.g. per category or per layer of a comparison.
 * items: [{label, a, b, note?}] in display order; `names` = [label of A, label of B].
 */
export function pairedBars(items, names, { format = formatUs, width = 820, max = 30, colours = ['#4e79a7', '#f28e2b'] } = {}) {
  const shown = items.slice(0, max);
  const labelW = 260, valueW = 150, rowH = 30;
  const top = Math.max(1e-12, ...shown.map((d) => Math.max(d.a || 0, d.b || 0)));
  const h = shown.length * rowH + 4;
  const root = svg('svg', { attrs: { width, height: h, viewBox: `0 0 ${width} ${h}`, role: 'img' } });
  shown.forEach((d, i) => {
    const y = i * rowH + 2;
    const hover = `${d.label}: ${names[0]} ${format(d.a)} · ${names[1]} ${format(d.b)}${d.note ? ` · ${d.note}` : ''}`;
    root.append(svg('text', { attrs: { x: labelW - 6, y: y + 17, 'text-anchor': 'end' }, text: clip(d.label) }));
    [d.a, d.b].forEach((v, k) => {
      const w = Math.max(v > 0 ? 1 : 0, ((width - labelW - valueW) * (v || 0)) / top);
      root.append(mark('rect', { x: labelW, y: y + 2 + k * 12, width: w, height: 11, fill: colours[k] }, hover));
      root.append(svg('text', { attrs: { x: labelW + w + 4, y: y + 11 + k * 12 }, text: v === null || v === undefined ? '—' : format(v) }));
    });
  });
  const legend = el('div', { class: 'legend' }, names.map((n, k) => el('span', {}, el('span', { class: 'swatch', style: `background:${colours[k]}` }), n)));
  const note = items.length > max ? el('div', { class: 'note', text: `top ${max} of ${items.length}` }) : null;
  return el('div', { class: 'chart' }, legend, root, hoverCaption(root, 'hover a bar for both sides'), note);
}

/**
 * Stacked horizontal bars, one per group: stacks [{label, parts: [{label, value}]}]; every stack
 * lists the same part labels in the same order (colours by position). `onPick(stack, part)`, when
 * given, is called with the indices of a clicked segment.
 * @param {{label: string, parts: {label: string, value: number, colour?: string}[]}[]} stacks
 * @param {{format?: (v: number) => string, width?: number, onPick?: ((stack: number, part: number) => void) | null}} [options]
 */
export function stackedBars(stacks, { format = formatUs, width = 820, onPick = null } = {}) {
  const labelW = 160, rowH = 26;
  const top = Math.max(1e-12, ...stacks.map((s) => s.parts.reduce((t, p) => t + p.value, 0)));
  const h = stacks.length * rowH + 4;
  const root = svg('svg', { attrs: { width, height: h, viewBox: `0 0 ${width} ${h}`, role: 'img' } });
  stacks.forEach((s, i) => {
    const y = i * rowH + 2;
    const total = s.parts.reduce((t, p) => t + p.value, 0) || 1;
    root.append(svg('text', { attrs: { x: labelW - 6, y: y + 15, 'text-anchor': 'end' }, text: clip(s.label, 24) }));
    let x = labelW;
    s.parts.forEach((p, k) => {
      const w = ((width - labelW - 10) * p.value) / top;
      if (w <= 0) return;
      const seg = mark('rect', { x, y: y + 2, width: w, height: rowH - 6, fill: p.colour || colour(k) }, `${s.label} · ${p.label}: ${format(p.value)} (${((100 * p.value) / total).toFixed(1)}% of ${s.label})`);
      if (onPick) {
        seg.setAttribute('class', 'clickable');
        seg.setAttribute('data-stack', String(i));
        seg.setAttribute('data-part', String(k));
        seg.addEventListener('click', () => onPick(i, k));
      }
      root.append(seg);
      x += w;
    });
  });
  const parts = stacks[0]?.parts || [];
  const legend = el('div', { class: 'legend' }, parts.map((p, k) => el('span', {}, el('span', { class: 'swatch', style: `background:${p.colour || colour(k)}` }), p.label)));
  return el('div', { class: 'chart' }, root, legend, hoverCaption(root, 'hover a segment for its share'));
}

/**
 * Roofline scatter on log-log axes: x = arithmetic intensity (FLOP/byte), y = achieved TFLOP/s.
 * points: [{x, y, weight (share of GPU time), series, hover}]; roofs: [{name, peak (TFLOP/s),
 * bandwidth (TB/s)}] drawn as min(peak, bandwidth·x); seriesNames label the colours.
 */
export function rooflineScatter(points, roofs, seriesNames, { width = 820, height = 420 } = {}) {
  const pad = { l: 60, r: 20, t: 14, b: 40 };
  const pts = points.filter((p) => p.x > 0 && p.y > 0 && Number.isFinite(p.x) && Number.isFinite(p.y));
  const xs = pts.map((p) => p.x), ys = pts.map((p) => p.y).concat(roofs.map((r) => r.peak));
  const lo = (v, d) => Math.pow(10, Math.floor(Math.log10(Math.min(...v, d))));
  const hi = (v, d) => Math.pow(10, Math.ceil(Math.log10(Math.max(...v, d))));
  const x0 = lo(xs, 1), x1 = hi(xs, 1000), y0 = lo(ys, 0.01), y1 = hi(ys, 10);
  const X = (v) => pad.l + ((Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0))) * (width - pad.l - pad.r);
  const Y = (v) => height - pad.b - ((Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * (height - pad.t - pad.b);
  const root = svg('svg', { class: 'roofline', attrs: { width, height, viewBox: `0 0 ${width} ${height}`, role: 'img' } });
  for (let d = x0; d <= x1 * 1.0001; d *= 10) {
    root.append(svg('line', { attrs: { x1: X(d), x2: X(d), y1: pad.t, y2: height - pad.b, stroke: '#eceff3' } }),
      svg('text', { attrs: { x: X(d), y: height - pad.b + 14, 'text-anchor': 'middle' }, text: String(d) }));
  }
  for (let d = y0; d <= y1 * 1.0001; d *= 10) {
    root.append(svg('line', { attrs: { x1: pad.l, x2: width - pad.r, y1: Y(d), y2: Y(d), stroke: '#eceff3' } }),
      svg('text', { attrs: { x: pad.l - 4, y: Y(d) + 4, 'text-anchor': 'end' }, text: String(Number(d.toPrecision(3))) }));
  }
  root.append(svg('text', { attrs: { x: (pad.l + width - pad.r) / 2, y: height - 6, 'text-anchor': 'middle' }, text: 'arithmetic intensity (FLOP/byte)' }),
    svg('text', { attrs: { x: 12, y: (pad.t + height - pad.b) / 2, transform: `rotate(-90 12 ${(pad.t + height - pad.b) / 2})`, 'text-anchor': 'middle' }, text: 'achieved TFLOP/s' }));
  roofs.forEach((r, k) => {
    const knee = r.peak / r.bandwidth;
    const a = Math.max(x0, (y0 / r.bandwidth)), b = Math.min(x1, knee);
    const path = `M${X(a)},${Y(Math.max(y0, r.bandwidth * a))} L${X(Math.max(a, b))},${Y(Math.min(r.peak, r.bandwidth * Math.max(a, b)))} L${X(x1)},${Y(r.peak)}`;
    root.append(mark('path', { d: path, fill: 'none', stroke: k ? '#e15759' : '#b3261e', 'stroke-width': 2, 'stroke-dasharray': k ? '6 4' : '' },
      `${r.name} roof: ${r.peak} TFLOP/s peak, ${r.bandwidth} TB/s HBM, ridge at ${knee.toFixed(1)} FLOP/byte`));
    root.append(svg('text', { attrs: { x: width - pad.r - 4, y: Y(r.peak) - 4, 'text-anchor': 'end', fill: '#b3261e' }, text: `${r.name} ${r.peak} TFLOP/s` }));
  });
  const sorted = pts.slice().sort((p, q) => q.weight - p.weight);
  for (const p of sorted) {
    const radius = 3 + Math.sqrt(Math.max(0, p.weight)) * 22;
    root.append(mark('circle', { cx: X(p.x), cy: Y(p.y), r: radius.toFixed(2), fill: colour(p.series), 'fill-opacity': 0.55, stroke: colour(p.series), class: 'point' }, p.hover));
  }
  const legend = el('div', { class: 'legend' }, seriesNames.map((n, k) => el('span', {}, el('span', { class: 'swatch', style: `background:${colour(k)}` }), n)));
  const note = pts.length < points.length ? el('div', { class: 'note', text: `${points.length - pts.length} ops without FLOPs or time are not drawn` }) : null;
  return el('div', { class: 'chart' }, root, legend, hoverCaption(root, 'hover a circle: op, shapes and numbers'), note);
}

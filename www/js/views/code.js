// Where in the code: GPU time by call path as an icicle (the root on top, a node's width its GPU
// time), a phase filter, search, colours by kernel family; a click zooms into a node, a kernel
// opens the timeline at its first launch. Then the `sources` table (GPU time per source line)
// and the `call_paths` table, each exported as `traceprism export` writes them.
import { el } from '../dom.js';
import { colour } from '../charts.js';
import { formatUs } from '../format.js';
import { linkParams } from '../timeline/window.js';
import { renderTables } from './common.js';

/**
 * @typedef {{ id: number, parent: number, depth: number, kind: string, name: string, family: string,
 *   total: number, firstUs: number|null, firstDurUs: number|null, children: IcicleNode[] }} IcicleNode
 */

/** What the view shows, kept across renders of one trace. */
const state = { phase: 'all', search: '', zoom: 0, file: '' };

/**
 * The call-path tree of a `call_paths` (or differential) table: nodes by id, each with its
 * children, its total for `phase` (`all` or a phase's column), and kernel facts.
 * @param {{columns: string[], rows: any[][]}} t
 * @param {string} phase
 * @returns {IcicleNode[]}
 */
export function treeOf(t, phase) {
  const c = (n) => t.columns.indexOf(n);
  const col = phase === 'all' ? c('total_us') : c(`${phase.replace('-', '_')}_us`);
  /** @type {IcicleNode[]} */
  const nodes = t.rows.map((r) => ({
    id: r[c('node')], parent: r[c('parent')] ?? -1, depth: r[c('depth')], kind: r[c('kind')], name: String(r[c('name')]),
    family: r[c('family')] ?? '', total: Number(r[col] ?? 0), firstUs: r[c('first_kernel_us')] ?? null,
    firstDurUs: r[c('first_kernel_dur_us')] ?? null, children: [],
  }));
  for (const n of nodes) if (n.parent >= 0 && nodes[n.parent]) nodes[n.parent].children.push(n);
  for (const n of nodes) n.children.sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  return nodes;
}

/**
 * Rectangles of the icicle under `root`: x and width as shares of the root's total, one row per
 * depth below it; nodes narrower than `minShare` are left out (with their children).
 * @param {IcicleNode} root
 * @param {number} [minShare]
 * @returns {{node: IcicleNode, x: number, w: number, row: number}[]}
 */
export function layout(root, minShare = 0.001) {
  const out = [];
  if (!(root.total > 0)) return out;
  const walk = (/** @type {IcicleNode} */ n, /** @type {number} */ x, /** @type {number} */ row) => {
    const w = n.total / root.total;
    if (w < minShare) return;
    out.push({ node: n, x, w, row });
    let at = x;
    for (const ch of n.children) {
      walk(ch, at, row + 1);
      at += ch.total / root.total;
    }
  };
  walk(root, 0, 0);
  return out;
}

/** Row height of the icicles, px. */
const ROW_H = 18;

/**
 * Draws the rectangles of an icicle on `canvas` (its width the icicle's), each filled by
 * `fillOf`, named where it is wide enough.
 * @param {HTMLCanvasElement} canvas
 * @param {{node: IcicleNode, x: number, w: number, row: number}[]} rects
 * @param {(n: any) => string} fillOf
 */
function draw(canvas, rects, fillOf) {
  const g = canvas.getContext('2d');
  if (!g) return;
  const width = canvas.width;
  g.font = '11px system-ui, sans-serif';
  for (const r of rects) {
    const x = r.x * width, w = Math.max(1, r.w * width), y = r.row * ROW_H;
    g.fillStyle = fillOf(r.node);
    g.fillRect(x, y, w - 0.5, ROW_H - 1);
    if (w > 40) {
      g.fillStyle = '#222';
      g.save();
      g.beginPath();
      g.rect(x, y, w - 2, ROW_H);
      g.clip();
      g.fillText(r.node.name, x + 3, y + 13);
      g.restore();
    }
  }
}

/**
 * The rectangle under a mouse event, if any.
 * @param {HTMLCanvasElement} canvas
 * @param {{node: IcicleNode, x: number, w: number, row: number}[]} rects
 * @param {MouseEvent} e
 */
function rectAt(canvas, rects, e) {
  const box = canvas.getBoundingClientRect();
  const px = ((e.clientX - box.left) * canvas.width) / box.width;
  const row = Math.floor(((e.clientY - box.top) * canvas.height) / box.height / ROW_H);
  return rects.find((r) => r.row === row && px >= r.x * canvas.width && px <= (r.x + r.w) * canvas.width);
}

/**
 * The differential tree of a `compare_call_paths` table: each path's frames as nodes, a node's
 * `a` and `b` its GPU time per pass on each side (its own and everything under it), its width
 * their mean.
 * @param {{columns: string[], rows: any[][]}} t
 * @returns {(IcicleNode & {a: number, b: number})[]}
 */
export function diffTree(t) {
  const c = (n) => t.columns.indexOf(n);
  const ia = c('a_per_pass_us'), ib = c('b_per_pass_us'), ip = c('path');
  /** @type {(IcicleNode & {a: number, b: number})[]} */
  const nodes = [{ id: 0, parent: -1, depth: 0, kind: 'root', name: 'all', family: '', total: 0, firstUs: null, firstDurUs: null, children: [], a: 0, b: 0 }];
  /** @type {Map<string, number>} */
  const index = new Map();
  for (const r of t.rows) {
    const a = Number(r[ia] || 0), b = Number(r[ib] || 0);
    let at = 0, key = '';
    nodes[0].a += a; nodes[0].b += b;
    for (const frame of String(r[ip]).split(';')) {
      key += `\u0000${frame}`;
      let id = index.get(key);
      if (id === undefined) {
        id = nodes.length;
        index.set(key, id);
        const node = { id, parent: at, depth: nodes[at].depth + 1, kind: 'frame', name: frame, family: '', total: 0, firstUs: null, firstDurUs: null, children: [], a: 0, b: 0 };
        nodes.push(node);
        nodes[at].children.push(node);
      }
      nodes[id].a += a; nodes[id].b += b;
      at = id;
    }
  }
  for (const n of nodes) n.total = (n.a + n.b) / 2;
  for (const n of nodes) n.children.sort((x, y) => y.total - x.total || x.name.localeCompare(y.name));
  return nodes;
}

/**
 * The differential icicle of two traces: widths by mean time per pass, red where B takes more
 * than A, blue where less, the deeper the colour the larger the change against the largest.
 * @param {{columns: string[], rows: any[][]}} t the `compare_call_paths` table
 * @param {string[]} names the two sides' labels
 */
export function diffIcicle(t, names) {
  const nodes = diffTree(t);
  const rects = layout(nodes[0]);
  const rows = rects.reduce((m, r) => Math.max(m, r.row + 1), 1);
  const canvas = /** @type {HTMLCanvasElement} */ (el('canvas', { width: 1100, height: rows * ROW_H, attrs: { 'data-testid': 'diff-flame', 'data-nodes': String(rects.length) } }));
  const caption = el('div', { class: 'hover-caption note', text: `widths: mean GPU time per pass; red: more in ${names[1]} than in ${names[0]}, blue: less` });
  const most = Math.max(1e-9, ...nodes.map((n) => Math.abs(n.b - n.a)));
  draw(canvas, rects, (n) => {
    const light = Math.round(235 - 150 * Math.min(1, Math.abs(n.b - n.a) / most));
    return n.b > n.a ? `rgb(235, ${light}, ${light})` : n.b < n.a ? `rgb(${light}, ${light}, 235)` : 'rgb(235, 235, 235)';
  });
  canvas.addEventListener('mousemove', (e) => {
    const n = /** @type {any} */ (rectAt(canvas, rects, e)?.node);
    caption.textContent = n ? `${n.name}: ${names[0]} ${formatUs(n.a)}/pass, ${names[1]} ${formatUs(n.b)}/pass (${n.b >= n.a ? '+' : ''}${formatUs(n.b - n.a)})` : '';
  });
  return el('div', { class: 'flame' }, canvas, caption);
}

/** Colours of the kernel families (rules/palette.rs, as every view draws them). */
let familyColours = /** @type {Record<string, string>} */ ({});

/** The colour of a node: its kernel family for kernels, grey shades for the code above them. */
function fill(/** @type {IcicleNode} */ n) {
  if (n.kind === 'kernel') return familyColours[n.family] || colour(0);
  return { python: '#d9d2c3', op: '#c9d6e3', annotation: '#e3d9ec', graph: '#f4c7a1', no_launch: '#e0e0e0', place: '#e6e6d8', root: '#bdbdbd' }[n.kind] || '#ddd';
}

/**
 * The icicle: a canvas, its caption, and a breadcrumb to zoom out.
 * @param {IcicleNode[]} nodes
 * @param {any} ctx
 * @param {() => void} rerender
 */
function icicle(nodes, ctx, rerender) {
  const root = nodes[state.zoom] || nodes[0];
  const rects = layout(root);
  const rows = rects.reduce((m, r) => Math.max(m, r.row + 1), 1);
  const canvas = /** @type {HTMLCanvasElement} */ (el('canvas', { width: 1100, height: rows * ROW_H, attrs: { 'data-testid': 'flame', 'data-nodes': String(rects.length) } }));
  const caption = el('div', { class: 'hover-caption note', text: 'hover a frame; click to zoom in; a kernel opens the timeline' });
  const q = state.search.toLowerCase();
  draw(canvas, rects, (n) => (q && !n.name.toLowerCase().includes(q) ? '#f3f3f3' : fill(n)));
  const at = (/** @type {MouseEvent} */ e) => rectAt(canvas, rects, e);
  canvas.addEventListener('mousemove', (e) => {
    const r = at(e);
    caption.textContent = r ? `${r.node.name}: ${formatUs(r.node.total)} (${(100 * r.w).toFixed(1)}% of ${root.name})${r.node.family ? ` · ${r.node.family}` : ''}` : '';
  });
  canvas.addEventListener('click', (e) => {
    const r = at(e);
    if (!r) return;
    if (r.node.kind === 'kernel' && typeof r.node.firstUs === 'number') {
      ctx.navigate('timeline', linkParams(r.node.firstUs, r.node.firstDurUs || 1, 3));
      return;
    }
    state.zoom = r.node.id;
    rerender();
  });
  // The way back up: the zoomed node's ancestors.
  const crumbs = [];
  for (let n = root; n; n = nodes[n.parent]) {
    const id = n.id;
    crumbs.unshift(el('button', { type: 'button', class: 'crumb', text: n.name.length > 40 ? `${n.name.slice(0, 38)}…` : n.name, on: { click: () => { state.zoom = id; rerender(); } } }));
    if (n.parent < 0) break;
  }
  return el('div', { class: 'flame' }, el('div', { class: 'crumbs', attrs: { 'data-testid': 'flame-crumbs' } }, crumbs), canvas, caption);
}

/** Renders the code view. */
export async function code(ctx, root) {
  if (state.file !== ctx.fileName) Object.assign(state, { phase: 'all', search: '', zoom: 0, file: ctx.fileName });
  root.append(el('h2', { text: 'Where in the code: GPU time by call path' }));
  const [t, rollup] = await Promise.all([ctx.table('call_paths'), ctx.rollup()]);
  familyColours = rollup?.family_colours || {};
  const nodes = treeOf(t, state.phase);
  const stacks = nodes.some((n) => n.kind === 'python');
  root.append(el('p', { class: 'note', attrs: { 'data-testid': 'stack-note' },
    text: stacks
      ? 'Python frames, nn.Module ranges and the op chain down to each kernel; graph replays sit under their launch.'
      : 'This trace has no Python stacks: the paths start at the phase and the layer, then the op chain. Recorded with torch.profiler.profile(with_stack=True, with_modules=True), each kernel would sit under the line of code that launched it (and the sources table would name it).' }));
  const phases = ['all', ...t.columns.filter((c) => c.endsWith('_us') && !['self_us', 'total_us', 'first_kernel_us', 'first_kernel_dur_us'].includes(c))
    .map((c) => c.slice(0, -3)).filter((p) => nodes[0] && t.rows[0][t.columns.indexOf(`${p}_us`)] > 0).map((p) => p.replace('_', '-'))];
  const rerender = () => ctx.rerender();
  const phase = el('select', { id: 'flame-phase', on: { change: (e) => { state.phase = e.target.value; state.zoom = 0; rerender(); } } },
    phases.map((p) => el('option', { value: p, text: p, selected: p === state.phase })));
  const search = el('input', { type: 'search', id: 'flame-search', value: state.search, placeholder: 'highlight frames containing…',
    on: { change: (e) => { state.search = e.target.value; rerender(); } } });
  root.append(el('div', { class: 'compare-options' },
    el('label', { class: 'field' }, el('span', { text: 'phase' }), phase),
    el('label', { class: 'field' }, el('span', { text: 'search' }), search)));
  if (nodes.length) root.append(icicle(nodes, ctx, rerender));
  await renderTables(ctx, 'code', root, { collapse: (name) => name === 'call_paths' });
}

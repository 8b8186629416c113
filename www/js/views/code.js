// Where in the code: GPU time by call path as an icicle (the root on top, a node's width its GPU
// time), a phase filter, search, colours by kernel family; a click zooms into a node, a kernel
// opens the timeline at its first launch. Then the `sources` table (GPU time per source line)
// and the `call_paths` table, each exported as `traceprism export` writes them.
import { el } from '../dom.js';
import { colour } from '../charts.js';
import { formatUs } from '../format.js';
import { draw, layout, rectAt, ROW_H, treeOf } from '../icicle.js';
import { linkParams } from '../timeline/window.js';
import { renderTables } from './common.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace', 'route'];

/** What the view shows, kept across renders of one trace. */
const state = { phase: 'all', search: '', zoom: 0, file: '' };

/** Colours of the kernel families (rules/palette.rs, as every view draws them). */
let familyColours = /** @type {Record<string, string>} */ ({});

/** The colour of a node: its kernel family for kernels, grey shades for the code above them. */
function fill(/** @type {import('../icicle.js').IcicleNode} */ n) {
  if (n.kind === 'kernel') return familyColours[n.family] || colour(0);
  return { python: '#d9d2c3', op: '#c9d6e3', annotation: '#e3d9ec', graph: '#f4c7a1', no_launch: '#e0e0e0', place: '#e6e6d8', root: '#bdbdbd' }[n.kind] || '#ddd';
}

/**
 * The icicle: a canvas, its caption, and a breadcrumb to zoom out.
 * @param {import('../icicle.js').IcicleNode[]} nodes
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

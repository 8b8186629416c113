// Icicles: a tree of GPU time drawn with the root on top, a node's width its time. The trees come
// from the core as rows with `node` and `parent` (`call_paths`, `compare_call_tree`): the page only
// links each row under its parent. The Code view draws one trace's; the Compare view the
// differential of two.
import { el } from './dom.js';
import { formatUs } from './format.js';

/**
 * @typedef {{ id: number, parent: number, depth: number, kind: string, name: string, family: string,
 *   total: number, firstUs: number|null, firstDurUs: number|null, children: IcicleNode[] }} IcicleNode
 */

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
  linkChildren(nodes);
  return nodes;
}

/**
 * Puts each node under its parent (by the core's `parent` column), largest first.
 * @param {IcicleNode[]} nodes
 */
function linkChildren(nodes) {
  for (const n of nodes) if (n.parent >= 0 && nodes[n.parent]) nodes[n.parent].children.push(n);
  for (const n of nodes) n.children.sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
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
export const ROW_H = 18;

/**
 * Draws the rectangles of an icicle on `canvas` (its width the icicle's), each filled by
 * `fillOf`, named where it is wide enough.
 * @param {HTMLCanvasElement} canvas
 * @param {{node: IcicleNode, x: number, w: number, row: number}[]} rects
 * @param {(n: any) => string} fillOf
 */
export function draw(canvas, rects, fillOf) {
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
export function rectAt(canvas, rects, e) {
  const box = canvas.getBoundingClientRect();
  const px = ((e.clientX - box.left) * canvas.width) / box.width;
  const row = Math.floor(((e.clientY - box.top) * canvas.height) / box.height / ROW_H);
  return rects.find((r) => r.row === row && px >= r.x * canvas.width && px <= (r.x + r.w) * canvas.width);
}

/**
 * The differential tree of a `compare_call_tree` table (the core makes the tree from the call
 * paths: `code::differential::tree`): each node with its children, `a` and `b` its
 * GPU time per pass on each side (its own and everything under it), its width their mean.
 * @param {{columns: string[], rows: any[][]}} t
 * @returns {(IcicleNode & {a: number, b: number})[]}
 */
export function diffTree(t) {
  const c = (n) => t.columns.indexOf(n);
  /** @type {(IcicleNode & {a: number, b: number})[]} */
  const nodes = t.rows.map((r) => {
    const a = Number(r[c('a_per_pass_us')] || 0), b = Number(r[c('b_per_pass_us')] || 0);
    return { id: r[c('node')], parent: r[c('parent')] ?? -1, depth: r[c('depth')], kind: r[c('parent')] === null ? 'root' : 'frame',
      name: String(r[c('name')]), family: '', total: (a + b) / 2, firstUs: null, firstDurUs: null, children: [], a, b };
  });
  linkChildren(nodes);
  return nodes;
}

/**
 * The differential icicle of two traces: widths by mean time per pass, red where B takes more
 * than A, blue where less, the deeper the colour the larger the change against the largest.
 * @param {{columns: string[], rows: any[][]}} t the `compare_call_tree` table
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

// Timeline: one lane per GPU stream and per CPU thread, bands for phase, pass, layer and
// collectives above them, drawn on a canvas from the level-of-detail buckets the core computes in
// the worker (per lane and pixel column: dominant family and busy fraction), never a DOM node per
// kernel. Wheel and W/S zoom, drag and A/D pan, F fits the trace (or the selection), shift-drag
// selects; hover shows the kernel under the pointer, click shows it in the side panel. The window
// lives in the address (#timeline?from=<µs>&to=<µs>). Everything from the trace is drawn as text.
import { el } from '../dom.js';
import { phaseColour } from './common.js';
import { readPyramid, drawsWindow, pyramidBuckets } from '../timeline/pyramid.js';
import { zoom, pan, clamp, timeAt, xAt, formatSpan, spanFromParams, paramsOfSpan, visibleRange } from '../timeline/window.js';

/** What of the page this view uses (app.js makes its context of these concerns alone). */
export const uses = ['trace', 'route'];

/** Pixel heights of the rows. */
const BAND_H = 16;
const LANE_H = 22;
const LABEL_W = 170;
const OVERVIEW_H = 36;

/** Renders the timeline view. */
export async function timeline(ctx, root) {
  const meta = await ctx.call('timelineMeta');
  // Each lane's pyramid, read once: zoomed-out windows are then drawn here, at once.
  const pyramids = await Promise.all(meta.lanes.map((_, lane) => ctx.call('timelinePyramid', { lane }).then((f) => (f ? readPyramid(f) : null))));
  // Colours by family name, as in every other view (rules/palette.rs).
  const colours = meta.colours;
  const hidden = new Set();
  const bounds = { from: meta.start, to: Math.max(meta.end, meta.start + 1000) };
  let view = clamp(spanFromParams(ctx.params || {}, meta.origin) || bounds, bounds);
  /** @type {{from: number, to: number} | null} */
  let selection = null;
  const lanes = meta.lanes;
  const bands = bandsOf(meta);

  root.append(el('h2', { text: 'Timeline' }));
  const legend = el('div', { class: 'legend timeline-legend' });
  meta.families.forEach((f, k) => {
    const button = el('button', { attrs: { type: 'button', 'aria-pressed': 'true', title: `show or hide ${f}` } },
      el('span', { class: 'swatch', style: `background:${colours[k]}` }), f);
    button.addEventListener('click', () => {
      if (hidden.has(k)) hidden.delete(k); else hidden.add(k);
      button.setAttribute('aria-pressed', String(!hidden.has(k)));
      paint();
    });
    legend.append(button);
  });
  const range = el('div', { class: 'timeline-range', attrs: { 'data-testid': 'timeline-range' } });
  // Split: the selection (or the visible window) as a .json.gz.
  const splitButton = el('button', { attrs: { type: 'button', 'data-testid': 'split-window' }, text: 'Download visible window (.json.gz)' });
  splitButton.addEventListener('click', () => {
    const w = selection || view;
    ctx.split({ from_us: w.from / 1e3, to_us: w.to / 1e3 }, `${Math.round(w.from / 1e3)}-${Math.round(w.to / 1e3)}us`);
  });
  const help = el('div', { class: 'note', text: 'W/S or wheel: zoom · A/D or drag: pan · F: fit · shift-drag: select · click: details' });
  const overview = el('canvas', { class: 'timeline-overview', attrs: { height: String(OVERVIEW_H), 'aria-label': 'whole trace; drag to move the window' } });
  const height = bands.length * BAND_H + lanes.length * LANE_H + 4;
  const canvas = el('canvas', { class: 'timeline-canvas', attrs: { 'data-testid': 'timeline', tabindex: '0', height: String(height), 'aria-label': 'timeline' } });
  const tooltip = el('div', { class: 'timeline-tooltip', attrs: { 'data-testid': 'timeline-tooltip' } });
  tooltip.hidden = true;
  const panel = el('div', { class: 'timeline-details', attrs: { 'data-testid': 'timeline-details' } }, el('p', { class: 'note', text: 'Click a kernel for its details.' }));
  const stage = el('div', { class: 'timeline-stage' }, overview, canvas, tooltip);
  root.append(legend, el('div', { class: 'timeline-bar' }, range, splitButton), help, el('div', { class: 'timeline-layout' }, stage, panel));

  const width = () => Math.max(200, Math.floor(stage.clientWidth || 900));
  let buckets = null;
  let bucketsFor = null;
  let inFlight = false;
  let wanted = true;
  let overviewBuckets = null;

  /** Asks the worker for the buckets of the current window (one request at a time). */
  async function refresh() {
    wanted = true;
    if (inFlight) return;
    inFlight = true;
    try {
      while (wanted && root.isConnected) {
        wanted = false;
        const w = { ...view };
        const cols = width() - LABEL_W;
        if (pyramids.every((p) => !p || drawsWindow(p, w.from, w.to, cols))) {
          buckets = pyramidBuckets(pyramids, w.from, w.to, cols, meta.families.length);
        } else {
          buckets = new Uint8Array(await ctx.call('timelineBuckets', { from: w.from, to: w.to, width: cols }));
        }
        bucketsFor = { ...w, cols };
        paint();
        // Frame time: from the input that moved the window to the picture of that window drawn
        // from fresh buckets (the bench reports p50/p95).
        if (changedAt !== null && !wanted) {
          frames.push(performance.now() - changedAt);
          changedAt = null;
        }
      }
    } finally {
      inFlight = false;
    }
  }

  /** When the window last changed with no fresh buckets drawn since (for frame times). */
  let changedAt = null;
  const frames = [];

  function setView(w, record = false) {
    changedAt ??= performance.now();
    view = clamp(w, bounds);
    range.textContent = formatSpan(view);
    ctx.setParams(paramsOfSpan(view), record);
    paint();
    refresh();
  }

  /** Draws bands, lanes (from the last buckets) and the overview strip. */
  function paint() {
    const W = width();
    if (canvas.width !== W) canvas.width = W;
    if (overview.width !== W) overview.width = W;
    paintCanvas(canvas, { bands, lanes, view, buckets, bucketsFor, hidden, colours, selection });
    paintOverview();
  }

  function paintOverview() {
    paintOverviewStrip(overview, { overviewBuckets, lanes, hidden, colours, view, bounds });
  }

  const whileShown = (target, type, fn) => listenWhileShown(root, target, type, fn);

  wireInput({
    get view() { return view; },
    get selection() { return selection; },
    set selection(s) { selection = s; },
    setView, paint, refresh, width, whileShown, showDetails: (d) => showDetails(panel, d, (w) => setView(w, true)),
    canvas, overview, tooltip, splitButton, bounds, meta, ctx, lanes, bands,
  });

  // The overview strip's buckets, once, then the first window.
  const overviewCols = Math.max(100, width() - LABEL_W);
  ctx.call('timelineBuckets', { from: bounds.from, to: bounds.to, width: overviewCols }).then((bytes) => {
    overviewBuckets = { data: new Uint8Array(bytes), cols: overviewCols };
    paintOverview();
  });
  range.textContent = formatSpan(view);
  // For tests and the bench: the shape of what is drawn (no trace content).
  window.traceprismTimeline = { gpuLanes: lanes.filter((l) => l.kind === 'gpu').length, lanes: lanes.length, laneTop: bands.length * BAND_H, laneHeight: LANE_H, originUs: meta.origin / 1e3, frames };
  paint();
  await refresh();
}

/** The facts of a hit as [label, text] pairs. */
function facts(d) {
  const out = [];
  if (d.kind === 'gpu') {
    out.push(['category', `${d.category} (${d.family})`]);
    if (d.phase) out.push(['phase', d.phase]);
    if (d.pass >= 0) out.push(['pass', String(d.pass)]);
    if (d.layer >= 0) out.push(['layer', String(d.layer)]);
    out.push(['device · stream', `${d.device} · ${d.stream}`]);
  } else {
    out.push(['process · thread', `${d.device} · ${d.stream}`]);
  }
  out.push(['start', `${d.start_us.toFixed(3)} µs`], ['duration', `${d.dur_us.toFixed(3)} µs`]);
  if (d.cpu_op) out.push(['CPU op', d.cpu_op]);
  if (d.launcher) out.push(['launched by', d.launcher]);
  return out;
}

/** The tooltip's lines. */
function describe(d) {
  const lines = [d.name, ...facts(d).map(([k, v]) => `${k}: ${v}`)];
  if (d.python_stack && d.python_stack.length) lines.push(`python: ${d.python_stack.slice(0, 4).join(' ← ')}`);
  return lines;
}

/**
 * The bands above the lanes (phase, pass, layer, collectives) that have items, each sorted by
 * start with its longest duration, so painting walks only the visible items.
 */
function bandsOf(meta) {
return [
  { name: 'phase', items: meta.passes, text: (b) => b.label + (b.incomplete ? ' (incomplete)' : ''), fill: (b) => phaseColour(b.label) },
  { name: 'pass', items: meta.passes, text: (b) => `pass ${b.pass}`, fill: (b) => (b.pass % 2 ? '#d5dbe3' : '#e9edf2') },
  { name: 'layer', items: meta.layers, text: (b) => `L${b.layer}`, fill: (b) => (b.layer % 2 ? '#dfe6d5' : '#eef2e8') },
  { name: 'collectives', items: meta.collectives, text: () => '', fill: () => '#e15759' },
].filter((b) => b.items.length > 0).map((band) => {
  // Sorted by start with the longest duration, so painting walks only the visible items.
  const items = [...band.items].sort((a, b) => a.start - b.start);
  const starts = Float64Array.from(items, (b) => b.start);
  const maxDur = items.reduce((m, b) => Math.max(m, b.end - b.start), 0);
  return { ...band, items, starts, maxDur };
});
}

/**
 * Draws the bands, the lanes (from the last buckets, scaled to the window shown) and the
 * selection on `canvas` (already as wide as the stage).
 */
function paintCanvas(canvas, { bands, lanes, view, buckets, bucketsFor, hidden, colours, selection }) {
  const W = canvas.width;
  const g = canvas.getContext('2d');
  if (!g) return;
  g.clearRect(0, 0, W, canvas.height);
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'middle';
  const cols = W - LABEL_W;
  let y = 0;
  for (const band of bands) {
    g.fillStyle = '#555';
    g.fillText(band.name, 4, y + BAND_H / 2);
    const [lo, hi] = visibleRange(band.starts, band.maxDur, view);
    // Items narrower than a pixel: one per pixel column (zoomed out, thousands share a pixel).
    let lastPixel = -1;
    for (let i = lo; i < hi; i++) {
      const b = band.items[i];
      if (b.end < view.from) continue;
      const x0 = LABEL_W + Math.max(0, xAt(b.start, cols, view));
      const x1 = LABEL_W + Math.min(cols, xAt(b.end, cols, view));
      if (x1 - x0 < 1 && Math.floor(x0) === lastPixel) continue;
      lastPixel = Math.floor(x0);
      g.fillStyle = band.fill(b);
      g.fillRect(x0, y + 1, Math.max(1, x1 - x0), BAND_H - 2);
      const text = x1 - x0 > 14 ? band.text(b) : '';
      if (text && x1 - x0 > g.measureText(text).width + 6) {
        g.fillStyle = '#222';
        g.fillText(text, x0 + 3, y + BAND_H / 2);
      }
    }
    y += BAND_H;
  }
  const n = lanes.length;
  lanes.forEach((lane, k) => {
    const top = y + k * LANE_H;
    g.fillStyle = k % 2 ? '#fafbfc' : '#f3f5f8';
    g.fillRect(0, top, W, LANE_H);
    g.fillStyle = '#333';
    g.fillText(lane.label.length > 26 ? lane.label.slice(0, 25) + '…' : lane.label, 4, top + LANE_H / 2);
    if (!buckets || !bucketsFor) return;
    const scale = (bucketsFor.to - bucketsFor.from) / (view.to - view.from);
    const shift = xAt(bucketsFor.from, cols, view);
    const cw = bucketsFor.cols;
    // Runs of columns with the same family and busy fraction are one rectangle.
    for (let c = 0; c < cw;) {
      const fam = buckets[k * cw + c];
      const busyByte = buckets[(n + k) * cw + c];
      let end = c + 1;
      while (end < cw && buckets[k * cw + end] === fam && buckets[(n + k) * cw + end] === busyByte) end++;
      const x = LABEL_W + shift + c * scale;
      const w = (end - c) * scale;
      c = end;
      if (fam === 255 || hidden.has(fam) || x + w < LABEL_W || x > W) continue;
      g.globalAlpha = 0.35 + 0.65 * (busyByte / 255);
      g.fillStyle = colours[fam] || '#888';
      g.fillRect(Math.max(LABEL_W, x), top + 2, Math.max(1, w - Math.max(0, LABEL_W - x)), LANE_H - 4);
    }
    g.globalAlpha = 1;
  });
  if (selection) {
    const x0 = LABEL_W + xAt(selection.from, cols, view);
    const x1 = LABEL_W + xAt(selection.to, cols, view);
    g.fillStyle = 'rgba(255, 200, 0, 0.18)';
    g.fillRect(Math.max(LABEL_W, x0), 0, Math.max(1, Math.min(W, x1) - Math.max(LABEL_W, x0)), canvas.height);
  }
}

/** Draws the whole trace's strip (its buckets once they came) and the window's frame on it. */
function paintOverviewStrip(overview, { overviewBuckets, lanes, hidden, colours, view, bounds }) {
  const W = overview.width;
  const g = overview.getContext('2d');
  if (!g) return;
  g.clearRect(0, 0, W, OVERVIEW_H);
  const cols = W - LABEL_W;
  g.fillStyle = '#555';
  g.font = '11px system-ui, sans-serif';
  g.textBaseline = 'middle';
  g.fillText('whole trace', 4, OVERVIEW_H / 2);
  if (overviewBuckets) {
    const gpu = lanes.filter((l) => l.kind === 'gpu').length || lanes.length;
    const h = Math.max(2, Math.floor((OVERVIEW_H - 4) / gpu));
    for (let k = 0; k < gpu; k++) {
      for (let c = 0; c < overviewBuckets.cols; c++) {
        const fam = overviewBuckets.data[k * overviewBuckets.cols + c];
        if (fam === 255 || hidden.has(fam)) continue;
        g.fillStyle = colours[fam] || '#888';
        g.fillRect(LABEL_W + c, 2 + k * h, 1, h - 1);
      }
    }
  }
  const x0 = LABEL_W + xAt(view.from, cols, bounds);
  const x1 = LABEL_W + xAt(view.to, cols, bounds);
  g.strokeStyle = '#222';
  g.lineWidth = 1.5;
  g.strokeRect(x0, 1, Math.max(2, x1 - x0), OVERVIEW_H - 2);
}

/**
 * Listens on `target` (window or document) while this view is on the page: the listener removes
 * itself at the first event after the view was replaced, so views shown again do not pile up.
 * @param {HTMLElement} root the view's root
 * @param {EventTarget} target
 * @param {string} type
 * @param {(e: any) => void} fn
 */
function listenWhileShown(root, target, type, fn) {
  const listener = (e) => {
    if (!root.isConnected) {
      target.removeEventListener(type, listener);
      return;
    }
    fn(e);
  };
  target.addEventListener(type, listener);
}

/**
 * The timeline's input: wheel and keys zoom and pan, drag pans, shift-drag selects, hover shows a
 * tooltip, a click the details, the overview strip moves the window. `io` hands in the view's
 * elements and its state (the window and the selection, read and set through it).
 * @param {any} io
 */
function wireInput(io) {
  const { canvas, overview, tooltip, splitButton, bounds, meta, ctx, lanes, bands } = io;
  const colsNow = () => io.width() - LABEL_W;
  const xOf = (e) => e.offsetX - LABEL_W;
  canvas.addEventListener('wheel', (e) => {
    e.preventDefault();
    const anchor = Math.min(1, Math.max(0, xOf(e) / colsNow()));
    io.setView(zoom(io.view, e.deltaY > 0 ? 1.25 : 0.8, anchor, bounds));
  }, { passive: false });
  let drag = null;
  canvas.addEventListener('mousedown', (e) => {
    canvas.focus();
    drag = { x: e.offsetX, view: { ...io.view }, select: e.shiftKey, moved: false };
  });
  io.whileShown(window, 'mousemove', (e) => {
    if (!drag) return;
    const rect = canvas.getBoundingClientRect();
    const x = e.clientX - rect.left;
    if (Math.abs(x - drag.x) > 3) drag.moved = true;
    if (!drag.moved) return;
    const cols = colsNow();
    if (drag.select) {
      const a = timeAt(drag.x - LABEL_W, cols, io.view);
      const b = timeAt(x - LABEL_W, cols, io.view);
      io.selection = { from: Math.min(a, b), to: Math.max(a, b) };
      splitButton.textContent = 'Download selection (.json.gz)';
      io.paint();
    } else {
      const dt = ((x - drag.x) / cols) * (drag.view.to - drag.view.from);
      io.setView({ from: drag.view.from - dt, to: drag.view.to - dt });
    }
  });
  io.whileShown(window, 'mouseup', async (e) => {
    if (!drag) return;
    const wasDrag = drag.moved;
    const select = drag.select;
    drag = null;
    // The selection, in the tables' clock (µs of the trace), filters the per-kernel tables.
    if (wasDrag && select && io.selection) ctx.setSelection({ fromUs: (io.selection.from + meta.origin) / 1e3, toUs: (io.selection.to + meta.origin) / 1e3 });
    if (wasDrag) return;
    const rect = canvas.getBoundingClientRect();
    const details = await hitAt(e.clientX - rect.left, e.clientY - rect.top);
    io.showDetails(details);
  });
  let hoverToken = 0;
  canvas.addEventListener('mousemove', async (e) => {
    if (drag) return;
    const token = ++hoverToken;
    const d = await hitAt(e.offsetX, e.offsetY);
    if (token !== hoverToken) return;
    if (!d) {
      tooltip.hidden = true;
      return;
    }
    tooltip.textContent = describe(d).join('\n');
    tooltip.style.left = `${Math.min(e.offsetX + 14, io.width() - 320)}px`;
    tooltip.style.top = `${e.offsetY + OVERVIEW_H + 14}px`;
    tooltip.hidden = false;
  });
  canvas.addEventListener('mouseleave', () => { hoverToken++; tooltip.hidden = true; });

  /** The row under canvas pixel (x, y), via the worker, or null. */
  async function hitAt(x, y) {
    const laneTop = bands.length * BAND_H;
    const k = Math.floor((y - laneTop) / LANE_H);
    if (k < 0 || k >= lanes.length || x < LABEL_W) return null;
    const cols = colsNow();
    const at = timeAt(x - LABEL_W, cols, io.view);
    const slack = (3 * (io.view.to - io.view.from)) / cols;
    return ctx.call('timelineHit', { lane: k, at, slack });
  }

  overview.addEventListener('mousedown', (e) => {
    const move = (clientX) => {
      const rect = overview.getBoundingClientRect();
      const t = timeAt(clientX - rect.left - LABEL_W, overview.width - LABEL_W, bounds);
      const half = (io.view.to - io.view.from) / 2;
      io.setView({ from: t - half, to: t + half });
    };
    move(e.clientX);
    const onMove = (ev) => move(ev.clientX);
    const onUp = () => { window.removeEventListener('mousemove', onMove); window.removeEventListener('mouseup', onUp); };
    window.addEventListener('mousemove', onMove);
    window.addEventListener('mouseup', onUp);
  });

  io.whileShown(document, 'keydown', (e) => {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement || e.ctrlKey || e.metaKey || e.altKey) return;
    const key = e.key.toLowerCase();
    if (key === 'w') io.setView(zoom(io.view, 0.8, 0.5, bounds));
    else if (key === 's') io.setView(zoom(io.view, 1.25, 0.5, bounds));
    else if (key === 'a') io.setView(pan(io.view, -0.2, bounds));
    else if (key === 'd') io.setView(pan(io.view, 0.2, bounds));
    else if (key === 'f') io.setView(io.selection || bounds, true);
    else return;
    e.preventDefault();
  });
  io.whileShown(window, 'resize', () => { io.paint(); io.refresh(); });
}

/**
 * Shows hit `d` (or that nothing is there) in the side `panel`, with a button that zooms to it
 * (`zoomTo(window)`).
 */
function showDetails(panel, d, zoomTo) {
  panel.replaceChildren();
  if (!d) {
    panel.append(el('p', { class: 'note', text: 'Nothing there. Click a kernel for its details.' }));
    return;
  }
  panel.append(el('h3', { text: d.kind === 'gpu' ? 'Kernel' : 'CPU op' }), el('pre', { class: 'timeline-name', text: d.name }));
  const dl = el('dl');
  for (const [k, v] of facts(d)) dl.append(el('dt', { text: k }), el('dd', { text: v }));
  panel.append(dl);
  if (d.python_stack && d.python_stack.length) panel.append(el('h4', { text: 'Python stack' }), el('pre', { text: d.python_stack.join('\n') }));
  const zoomButton = el('button', { attrs: { type: 'button' }, text: 'Zoom to it' });
  zoomButton.addEventListener('click', () => {
    const start = d.start_us * 1e3;
    const pad = Math.max(d.dur_us * 1e3 * 2, 2000);
    zoomTo({ from: start - pad, to: start + d.dur_us * 1e3 + pad });
  });
  panel.append(zoomButton);
}

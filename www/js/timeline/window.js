// The visible window of the timeline and how keys, wheel and drags move it. Pure functions over
// plain numbers (ns since the trace's time origin), unit-tested with `node --test`.

/** @typedef {{from: number, to: number}} Span  A time window, ns since the time origin. */

/** The narrowest window shown: 1 µs. */
export const MIN_SPAN_NS = 1000;

/**
 * Keeps `w` inside `bounds` (moving it, not shrinking it, when it fits) and at least MIN_SPAN_NS wide.
 * @param {Span} w
 * @param {Span} bounds
 * @returns {Span}
 */
export function clamp(w, bounds) {
  const whole = Math.max(bounds.to - bounds.from, MIN_SPAN_NS);
  let span = Math.min(Math.max(w.to - w.from, MIN_SPAN_NS), whole);
  let from = Math.min(Math.max(w.from, bounds.from), bounds.from + whole - span);
  return { from, to: from + span };
}

/**
 * Zooms by `factor` (< 1 narrows the window) around the point `anchor` (0 = left edge, 1 = right
 * edge), which stays where it is on screen.
 * @param {Span} w
 * @param {number} factor
 * @param {number} anchor
 * @param {Span} bounds
 * @returns {Span}
 */
export function zoom(w, factor, anchor, bounds) {
  const at = w.from + (w.to - w.from) * anchor;
  const span = Math.max((w.to - w.from) * factor, MIN_SPAN_NS);
  return clamp({ from: at - span * anchor, to: at - span * anchor + span }, bounds);
}

/**
 * Moves the window by `fraction` of its width (positive: later).
 * @param {Span} w
 * @param {number} fraction
 * @param {Span} bounds
 * @returns {Span}
 */
export function pan(w, fraction, bounds) {
  const by = (w.to - w.from) * fraction;
  return clamp({ from: w.from + by, to: w.to + by }, bounds);
}

/**
 * The time under pixel `x` of a canvas `width` pixels wide showing `w`.
 * @param {number} x
 * @param {number} width
 * @param {Span} w
 */
export function timeAt(x, width, w) {
  return w.from + (x / width) * (w.to - w.from);
}

/**
 * The pixel of time `t`.
 * @param {number} t
 * @param {number} width
 * @param {Span} w
 */
export function xAt(t, width, w) {
  return ((t - w.from) / (w.to - w.from)) * width;
}

/**
 * The window as text, `<start> – <end> <unit>`: ms with 3 decimals for windows of 10 ms or more,
 * else µs with 1 decimal.
 * @param {Span} w
 * @returns {string}
 */
export function formatSpan(w) {
  const ms = w.to - w.from >= 1e7;
  const f = (ns) => (ms ? (ns / 1e6).toFixed(3) : (ns / 1e3).toFixed(1));
  return `${f(w.from)} – ${f(w.to)} ${ms ? 'ms' : 'µs'}`;
}

/**
 * The window named by the address (`from` and `to` in µs since the time origin; with `abs=1`, in
 * µs of the trace's own clock, as the tables print them, and `originNs` converts), or null when
 * absent or not a window.
 * @param {Record<string, string>} params
 * @param {number} [originNs]
 * @returns {Span | null}
 */
export function spanFromParams(params, originNs = 0) {
  const shift = params.abs === '1' ? originNs : 0;
  const from = Number(params.from);
  const to = Number(params.to);
  if (params.from === undefined || params.to === undefined || !Number.isFinite(from) || !Number.isFinite(to) || to <= from) return null;
  return { from: from * 1e3 - shift, to: to * 1e3 - shift };
}

/**
 * The address of a stretch of trace time as the tables print it (absolute µs), with a margin of
 * `margin` of its length on each side (at least 10 µs), for links to the timeline.
 * @param {number} startUs
 * @param {number} durUs
 * @param {number} [margin]
 * @returns {{from: string, to: string, abs: string}}
 */
export function linkParams(startUs, durUs, margin = 0.05) {
  const pad = Math.max(durUs * margin, 10);
  return { from: String(startUs - pad), to: String(startUs + durUs + pad), abs: '1' };
}

/**
 * The address form of a window (µs, rounded to 0.001).
 * @param {Span} w
 * @returns {{from: string, to: string}}
 */
export function paramsOfSpan(w) {
  const us = (ns) => String(Math.round(ns) / 1e3);
  return { from: us(w.from), to: us(w.to) };
}

/**
 * The index range `[lo, hi)` of a band's items (sorted by `starts`, ascending) that can show in
 * `view`: those starting after `view.to` cannot, nor those starting before `view.from - maxDur`
 * (the longest item ends before the window). Painting walks only this range, not every pass and
 * layer of the trace.
 * @param {ArrayLike<number>} starts
 * @param {number} maxDur
 * @param {Span} view
 * @returns {[number, number]}
 */
export function visibleRange(starts, maxDur, view) {
  const firstAtOrAfter = (t) => {
    let lo = 0;
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] < t) lo = mid + 1; else hi = mid;
    }
    return lo;
  };
  const hi = firstAtOrAfter(view.to + 1e-9);
  return [Math.min(firstAtOrAfter(view.from - maxDur), hi), hi];
}

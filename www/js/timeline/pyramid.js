// A lane's pyramid on the page's own thread (issue 37, item 2): the worker's pre-merged coverage
// per family at every power-of-two resolution (analysis/lod/pyramid.rs), read here so that a
// zoomed-out window is drawn at once, without a round trip to the worker (which measured ~10 ms
// of waiting for a reply computed in 0.1-0.3 ms). The same arithmetic as the core's `cover`.

/** Nothing runs in the column. */
export const EMPTY = 255;

/**
 * @typedef {{origin: number, end: number, bin0: number, families: number[],
 *   levels: {offset: number, bins: number}[], cover: Float32Array}} Pyramid
 */

/**
 * Reads the worker's flat form: `head` = [origin, end, bin0, families, levels, ...family indexes,
 * ...bins per level]; `cover` = every level's bins × families, level after level.
 * @param {{head: Float64Array, cover: Float32Array}} flat
 * @returns {Pyramid}
 */
export function readPyramid({ head, cover }) {
  const [origin, end, bin0, nf, nl] = head;
  const families = Array.from(head.subarray(5, 5 + nf));
  const levels = [];
  let offset = 0;
  for (let l = 0; l < nl; l++) {
    const bins = head[5 + nf + l];
    levels.push({ offset, bins });
    offset += bins * nf;
  }
  return { origin, end, bin0, families, levels, cover };
}

/**
 * Whether the pyramid draws a window of `width` columns over [from, to) as finely as the worker
 * would: its level-0 bins are at most a sixteenth of a column.
 * @param {Pyramid} p
 */
export function drawsWindow(p, from, to, width) {
  return (to - from) / width >= 16 * p.bin0;
}

/**
 * Time each family (global index) covers in [from, to), read at the coarsest level whose bins are
 * at most `maxBin` wide; edge bins count in proportion. Adds into `cover` (by global family).
 * @param {Pyramid} p
 * @param {number} from
 * @param {number} to
 * @param {number} maxBin
 * @param {Float64Array} cover
 */
export function addCover(p, from, to, maxBin, cover) {
  const nf = p.families.length;
  let l = 0;
  while (l + 1 < p.levels.length && p.bin0 * 2 ** (l + 1) <= maxBin) l++;
  const { offset, bins } = p.levels[l];
  const width = p.bin0 * 2 ** l;
  const lo = Math.max(from, p.origin), hi = Math.min(to, p.end);
  if (hi <= lo) return;
  const i0 = Math.floor((lo - p.origin) / width);
  const i1 = Math.min(bins, Math.ceil((hi - p.origin) / width));
  for (let i = i0; i < i1; i++) {
    const left = p.origin + i * width, right = Math.min(p.origin + (i + 1) * width, p.end);
    if (right <= left) continue;
    const share = (Math.min(hi, right) - Math.max(lo, left)) / (right - left);
    if (share <= 0) continue;
    const base = offset + i * nf;
    for (let f = 0; f < nf; f++) cover[p.families[f]] += share >= 1 ? p.cover[base + f] : p.cover[base + f] * share;
  }
}

/**
 * The worker's bucket layout for lanes drawn from their pyramids: per lane `width` family indexes
 * (EMPTY where nothing runs), then per lane `width` busy fractions (0-255).
 * @param {(Pyramid | null)[]} pyramids one per lane
 * @param {number} families how many families there are
 */
export function pyramidBuckets(pyramids, from, to, width, families) {
  const lanes = pyramids.length;
  const out = new Uint8Array(2 * lanes * width);
  const perPx = (to - from) / width;
  const cover = new Float64Array(families);
  pyramids.forEach((p, k) => {
    for (let c = 0; c < width; c++) {
      let family = EMPTY, busy = 0;
      if (p) {
        cover.fill(0);
        const left = from + c * perPx;
        addCover(p, left, left + perPx, perPx / 16, cover);
        let best = -1, amount = 0;
        for (let f = 0; f < families; f++) {
          busy += cover[f];
          if (cover[f] >= amount && cover[f] > 0) { best = f; amount = cover[f]; }
        }
        if (best >= 0) family = best;
      }
      out[k * width + c] = family;
      out[(lanes + k) * width + c] = Math.round(Math.min(1, busy / perPx) * 255);
    }
  });
  return out;
}

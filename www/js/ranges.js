// Hands out the byte ranges of a large plain-JSON file to the workers that parse it, while they run
// (guided self-scheduling). The main worker parses from the front, in order, claiming each slice
// as it comes; helpers take ranges from the back, each the range just before the previous one.
// Every helper range is an equal share of what is still unclaimed between all workers, halved,
// and at least `minBytes`: ranges shrink as front and back meet, so whichever worker is slower
// (a helper still compiling its wasm on a page just opened, a core shared with the file's
// readers) gets less to do, and the main worker, at the meeting point, waits for a small range
// at most. A fixed split into equal halves made the
// main worker wait 0.2-0.5 s for the helper on the 1 GB bench (or the helper idle as long).

/** The unclaimed gap of a file, `[lo, hi)`, shared between a front (the main worker) and a back (helpers). */
export class RangeClaims {
  /**
   * @param {number} size the file's bytes
   * @param {number} workers parsing workers, the main one included
   * @param {number} minBytes smallest range handed out (a smaller gap is left to the main worker)
   */
  constructor(size, workers, minBytes) {
    this.lo = 0;
    this.hi = size;
    this.workers = Math.max(1, workers);
    this.minBytes = Math.max(1, minBytes);
  }

  /** Bytes the next range takes: half an equal share of the gap, at least `minBytes`. */
  share() {
    return Math.max(this.minBytes, Math.ceil((this.hi - this.lo) / (2 * this.workers)));
  }

  /**
   * Extends the main worker's claim on the front to `end`, or to the back if a helper's range
   * begins sooner. Returns where the claim now ends: the main worker parses up to there and stops.
   * @param {number} end
   */
  advanceFront(end) {
    this.lo = Math.max(this.lo, Math.min(end, this.hi));
    return this.lo;
  }

  /**
   * Where a helper's next range should start (it ends at the back, `hi`): a guess to move to an
   * event start, or null when the gap is too small to give any of it away.
   * @returns {number | null}
   */
  backGuess() {
    if (this.hi - this.lo < 2 * this.minBytes) return null;
    return this.hi - this.share();
  }

  /**
   * Gives `[cut, hi)` to a helper: `cut` is the guess moved to an event start. Returns that range,
   * or null if the cut no longer lies inside the gap (the front moved past it meanwhile).
   * @param {number} cut
   * @returns {[number, number] | null}
   */
  takeBack(cut) {
    if (!(cut > this.lo && cut < this.hi)) return null;
    const range = /** @type {[number, number]} */ ([cut, this.hi]);
    this.hi = cut;
    return range;
  }
}

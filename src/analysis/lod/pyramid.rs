//! Pre-merged coverage of one timeline lane at every power-of-two resolution, so that a
//! zoomed-out window costs O(columns), not O(spans): level 0 splits the lane's time into bins
//! (about two spans each, at least 4,096 bins), each level above merges pairs of bins of the one below. A bin holds
//! the time each family covers in it.

/// One lane's pyramid.
pub struct Pyramid {
    /// Start of bin 0 (ns since the origin): the lane's first start.
    origin: i64,
    /// The lane's last end (bins end here, not at their full width).
    end: i64,
    /// Width of a level-0 bin (ns, a power of two).
    bin0: i64,
    /// The families present in the lane (global family index), in local order.
    pub families: Vec<u8>,
    /// Per level: `bins × families.len()` covered ns.
    levels: Vec<Vec<f32>>,
}

/// Fewest level-0 bins of a lane.
const MIN_BINS: usize = 4096;

/// A span of zero duration still counts this much (ns), so that it shows.
const INSTANT: f32 = 1e-3;

impl Pyramid {
    /// Builds the pyramid of spans `(start, end, family)` sorted by start.
    pub fn new(spans: &[(i64, i64, u8)]) -> Option<Pyramid> {
        let (first, last) = (spans.first()?.0, spans.iter().map(|s| s.1).max()?);
        let mut families: Vec<u8> = spans.iter().map(|s| s.2).collect();
        families.sort_unstable();
        families.dedup();
        let nf = families.len();
        let mut local = [0u8; 256];
        for (k, &f) in families.iter().enumerate() {
            local[f as usize] = k as u8;
        }
        let length = (last - first).max(1);
        // About two spans a bin, and never fewer than 4,096 bins: a lane of a few spans still
        // draws a zoomed-out window from its pyramid.
        let want_bins = (spans.len() / 2).max(MIN_BINS) as i64;
        let bin0 = ((length + want_bins - 1) / want_bins).max(1) as u64;
        let bin0 = bin0.next_power_of_two() as i64;
        let bins = ((length + bin0 - 1) / bin0 + 1) as usize;
        let mut level = vec![0f32; bins * nf];
        for &(s, e, fam) in spans {
            let f = local[fam as usize] as usize;
            if e <= s {
                let b = ((s - first) / bin0) as usize;
                level[b * nf + f] += INSTANT;
                continue;
            }
            let (b0, b1) = (((s - first) / bin0) as usize, ((e - 1 - first) / bin0) as usize);
            for b in b0..=b1 {
                let left = first + b as i64 * bin0;
                let part = e.min(left + bin0) - s.max(left);
                level[b * nf + f] += part as f32;
            }
        }
        let mut levels = vec![level];
        while levels.last().expect("level 0").len() > nf {
            let below = levels.last().expect("a level");
            let n = below.len() / nf;
            let mut up = vec![0f32; n.div_ceil(2) * nf];
            for b in 0..n {
                for f in 0..nf {
                    up[(b / 2) * nf + f] += below[b * nf + f];
                }
            }
            levels.push(up);
        }
        Some(Pyramid { origin: first, end: last.max(first + 1), bin0, families, levels })
    }

    /// The pyramid flat, for a page to read windows without asking the worker: `[origin, end,
    /// bin0, families, levels, then per level its bin count]` as f64 in `head`, and every level's
    /// coverage, level after level, in `cover`.
    pub fn export(&self) -> (Vec<f64>, Vec<f32>) {
        let mut head =
            vec![self.origin as f64, self.end as f64, self.bin0 as f64, self.families.len() as f64, self.levels.len() as f64];
        head.extend(self.families.iter().map(|&f| f as f64));
        head.extend(self.levels.iter().map(|l| (l.len() / self.families.len().max(1)) as f64));
        (head, self.levels.concat())
    }

    /// Bytes held.
    pub fn bytes(&self) -> usize {
        self.levels.iter().map(|l| l.len() * 4).sum::<usize>() + self.families.len()
    }

    /// Adds to `cover` (per local family) the time covered in `[from, to)`, read at the coarsest
    /// level whose bins are at most `max_bin` ns wide; bins at the edges count in proportion to
    /// their overlap.
    pub fn cover(&self, from: f64, to: f64, max_bin: f64, cover: &mut [f32]) {
        let nf = self.families.len();
        let mut l = 0;
        while l + 1 < self.levels.len() && (self.bin0 << (l + 1)) as f64 <= max_bin {
            l += 1;
        }
        let level = &self.levels[l];
        let width = (self.bin0 << l) as f64;
        let bins = level.len() / nf;
        let (origin, end) = (self.origin as f64, self.end as f64);
        let (from, to) = (from.max(origin), to.min(end));
        if to <= from {
            return;
        }
        let i0 = ((from - origin) / width).floor() as usize;
        let i1 = (((to - origin) / width).ceil() as usize).min(bins);
        for i in i0..i1 {
            // The bin's own span (the last one stops at the lane's end).
            let (left, right) = (origin + i as f64 * width, (origin + (i + 1) as f64 * width).min(end));
            if right <= left {
                continue;
            }
            let share = (to.min(right) - from.max(left)) / (right - left);
            if share <= 0.0 {
                continue;
            }
            let row = &level[i * nf..(i + 1) * nf];
            if share >= 1.0 {
                for f in 0..nf {
                    cover[f] += row[f];
                }
            } else {
                for f in 0..nf {
                    cover[f] += row[f] * share as f32;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coverage_read_at_any_level_adds_up_to_the_spans() {
        // Two families, spans of assorted lengths with gaps.
        let mut spans = Vec::new();
        let mut t = 0;
        for k in 0..10_000i64 {
            let d = 1 + (k * 37) % 500;
            spans.push((t, t + d, (k % 2) as u8 * 3));
            t += d + (k * 13) % 200;
        }
        let p = Pyramid::new(&spans).unwrap();
        assert_eq!(p.families, vec![0, 3]);
        let total: [f64; 2] = [0, 1].map(|f| spans.iter().filter(|s| s.2 == f * 3).map(|s| (s.1 - s.0) as f64).sum());
        for max_bin in [1.0, 1e3, 1e5, 1e9] {
            let mut cover = [0f32; 2];
            p.cover(-1.0, t as f64 + 1.0, max_bin, &mut cover);
            for f in 0..2 {
                assert!((cover[f] as f64 - total[f]).abs() / total[f] < 1e-4, "level for {max_bin}: {cover:?} vs {total:?}");
            }
        }
        // A window inside: within a bin's width of the exact coverage.
        let (from, to) = (t as f64 * 0.3, t as f64 * 0.6);
        let exact: f64 = spans.iter().map(|s| (s.1.min(to as i64) - s.0.max(from as i64)).max(0) as f64).sum();
        let mut cover = [0f32; 2];
        p.cover(from, to, (to - from) / 64.0, &mut cover);
        let got = (cover[0] + cover[1]) as f64;
        assert!((got - exact).abs() <= 2.0 * (to - from) / 64.0, "{got} vs {exact}");
    }
}

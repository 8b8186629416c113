//! Running two independent pieces of work at once, natively, when they are big enough to pay for
//! a thread (the page's wasm build has no threads: there they run one after the other).

/// Rows below which starting a thread costs more than it saves.
#[cfg(not(target_arch = "wasm32"))]
const TWO_THREADS_FROM_ROWS: usize = 1 << 16;

/// Whether work covering `rows` rows runs on two threads: natively, from
/// [`TWO_THREADS_FROM_ROWS`] rows on a machine with two cores; never in wasm. Work that is split
/// only to run on two threads should not be split otherwise (each half repeats the other's setup).
pub(crate) fn two_threads(rows: usize) -> bool {
    // The core count is asked once per process: on Linux `available_parallelism` reads the
    // affinity mask and cgroup quota files each time, and the analyses ask before every split.
    #[cfg(not(target_arch = "wasm32"))]
    static TWO_CORES: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    #[cfg(not(target_arch = "wasm32"))]
    return rows >= TWO_THREADS_FROM_ROWS
        && *TWO_CORES.get_or_init(|| std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2));
    #[cfg(target_arch = "wasm32")]
    {
        let _ = rows;
        false
    }
}

/// Runs `a` and `b`; on two threads when [`two_threads`] says so for `rows` rows.
pub(crate) fn both(rows: usize, a: impl FnOnce() + Send, b: impl FnOnce()) {
    #[cfg(not(target_arch = "wasm32"))]
    if two_threads(rows) {
        std::thread::scope(|scope| {
            scope.spawn(a);
            b();
        });
        return;
    }
    let _ = rows;
    a();
    b();
}

/// `f` applied to `items`: on two threads when [`two_threads`] says so for the items' total
/// `weight` (rows), `items` cut where half the weight lies and the results concatenated in order;
/// otherwise one call on all of them.
/// `f` must give the same results for any cut (each item's result depends on that item only).
pub(crate) fn map_in_halves<T: Sync, R: Send>(
    items: &[T],
    weight: impl Fn(&T) -> usize,
    f: impl Fn(&[T]) -> Vec<R> + Sync,
) -> Vec<R> {
    let total: usize = items.iter().map(&weight).sum();
    if !two_threads(total) {
        return f(items);
    }
    let (mut cut, mut before) = (items.len(), 0);
    for (k, item) in items.iter().enumerate() {
        if 2 * before >= total {
            cut = k;
            break;
        }
        before += weight(item);
    }
    let (first, second) = items.split_at(cut);
    let (mut head, mut tail) = (Vec::new(), Vec::new());
    both(total, || tail = f(second), || head = f(first));
    head.extend(tail);
    head
}

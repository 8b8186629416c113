//! Running two independent pieces of work at once, natively, when they are big enough to pay for
//! a thread (the page's wasm build has no threads: there they run one after the other).

/// Rows below which starting a thread costs more than it saves.
#[cfg(not(target_arch = "wasm32"))]
const TWO_THREADS_FROM_ROWS: usize = 1 << 16;

/// Runs `a` and `b`; natively on two threads when the work covers `rows` rows (at least
/// [`TWO_THREADS_FROM_ROWS`]) and the machine has two cores.
pub(crate) fn both(rows: usize, a: impl FnOnce() + Send, b: impl FnOnce()) {
    #[cfg(not(target_arch = "wasm32"))]
    if rows >= TWO_THREADS_FROM_ROWS && std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2) {
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

/// `f` applied to `items` and the results concatenated in order: natively, on two threads when
/// the items' total `weight` (rows) is large enough, `items` cut where half the weight lies.
/// `f` must give the same results for any cut (each item's result depends on that item only).
pub(crate) fn map_in_halves<T: Sync, R: Send>(
    items: &[T],
    weight: impl Fn(&T) -> usize,
    f: impl Fn(&[T]) -> Vec<R> + Sync,
) -> Vec<R> {
    let total: usize = items.iter().map(&weight).sum();
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

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

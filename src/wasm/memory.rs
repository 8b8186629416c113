//! The page's memory ceiling: a wasm32 module has at most 4 GiB, and a trace too large for it
//! ends in an allocation that fails. The global allocator here is the system one, plus a record
//! of the size of the last allocation that failed, so the worker can say "too large for this
//! tab" (with the figures) instead of "internal error" when the module traps after it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use wasm_bindgen::prelude::*;

/// Bytes of the last allocation that failed (0: none has).
static FAILED: AtomicUsize = AtomicUsize::new(0);

/// The system allocator, noting failures.
struct NotingAllocator;

// SAFETY: every call goes to `System` unchanged; only a null result is noted.
unsafe impl GlobalAlloc for NotingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if p.is_null() {
            FAILED.store(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            FAILED.store(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if p.is_null() {
            FAILED.store(new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: NotingAllocator = NotingAllocator;

/// Bytes of the last allocation that failed, 0 if none has: after the module traps, a non-zero
/// answer means the trace did not fit in the tab's memory.
#[wasm_bindgen]
pub fn failed_allocation_bytes() -> f64 {
    FAILED.load(Ordering::Relaxed) as f64
}

/// Asks for `megabytes` of memory at once and keeps it, as a trace too large for the tab does
/// (the page's browser test of the memory ceiling calls it until the tab's memory runs out; the
/// page never does). Returns the module's memory after it.
#[wasm_bindgen]
pub fn allocate_for_test(megabytes: u32) -> f64 {
    let mut v: Vec<u8> = Vec::with_capacity((megabytes.min(1024) as usize) << 20);
    // Touch it: memory that is only reserved might not count.
    v.resize(v.capacity(), 1);
    std::mem::forget(v);
    super::Analyzer::memory_bytes()
}

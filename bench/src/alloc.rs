//! A counting global allocator: how many heap bytes the whole process holds now, and the most it
//! held since the last [`reset_peak`]. Peak memory figures are "peak minus the bytes held when
//! the measurement started", so data made before (the input bytes, a running server's state)
//! does not count.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting the bytes it hands out.
#[derive(Debug)]
pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(bytes: usize) {
    let now = CURRENT.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
}

fn shrank(bytes: usize) {
    CURRENT.fetch_sub(bytes, Ordering::Relaxed);
}

// SAFETY: every method forwards its arguments unchanged to `System`, which upholds the
// `GlobalAlloc` contract, and returns `System`'s pointer unchanged; the only other thing done is
// adding or subtracting sizes on two atomics, which never allocates, never unwinds and never
// touches the memory handed out. So each method keeps exactly the guarantees of `System`'s.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: same contract as ours: `layout` has a non-zero size (caller's duty).
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by this allocator, hence by `System`, with `layout`
        // (caller's duty).
        unsafe { System.dealloc(ptr, layout) };
        shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`, `new_size` is valid for it (caller's
        // duty).
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            if new_size >= layout.size() {
                grew(new_size - layout.size());
            } else {
                shrank(layout.size() - new_size);
            }
        }
        new
    }
}

/// Bytes held now.
pub fn current() -> usize {
    CURRENT.load(Ordering::Relaxed)
}

/// Starts a peak measurement: the peak becomes what is held now, which is returned.
pub fn reset_peak() -> usize {
    let now = current();
    PEAK.store(now, Ordering::Relaxed);
    now
}

/// The most bytes held since the last [`reset_peak`].
pub fn peak() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Runs `f` and returns its output with the peak bytes it added over what was held before.
pub fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let start = reset_peak();
    let out = f();
    (out, peak().saturating_sub(start))
}

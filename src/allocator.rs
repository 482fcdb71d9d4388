//! The command-line tool's memory allocator: mimalloc, asked the cheapest way for each block.
//!
//! The simulator makes and frees many small, short-lived objects in every run (futures,
//! lane work items, channel cells, checker state); mimalloc's per-thread free lists serve
//! them faster than the system allocator (about 4% more smoke seeds per second, measured
//! by `sutra-sim bench`). Only the command-line tool sets it: the library leaves the
//! allocator to whoever links it.
//!
//! The `mimalloc` crate's allocator asks for every block with `mi_malloc_aligned`, whose
//! check for a free block of the right alignment costs more than the allocation itself.
//! Nearly every block Rust asks for needs no more alignment than every mimalloc block
//! already has, and then a plain `mi_malloc` serves it: 210.2 → 207.4 M instructions for
//! 100 smoke seeds (callgrind). This is the rule the standard library's own allocator on
//! top of `malloc` follows.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::{c_int, c_long};

// mimalloc's C API, linked in by `libmimalloc-sys` through the `mimalloc` crate.
extern crate mimalloc;

unsafe extern "C" {
    #[cfg(test)]
    fn mi_option_get(option: c_int) -> c_long;
    fn mi_option_set(option: c_int, value: c_long);
    fn mi_malloc(size: usize) -> *mut u8;
    fn mi_zalloc(size: usize) -> *mut u8;
    fn mi_realloc(ptr: *mut u8, size: usize) -> *mut u8;
    fn mi_malloc_aligned(size: usize, align: usize) -> *mut u8;
    fn mi_zalloc_aligned(size: usize, align: usize) -> *mut u8;
    fn mi_realloc_aligned(ptr: *mut u8, size: usize, align: usize) -> *mut u8;
    fn mi_free(ptr: *mut u8);
}

#[global_allocator]
static ALLOCATOR: Allocator = Allocator;

/// mimalloc, asked for a plain block wherever a plain block is aligned enough.
struct Allocator;

/// The alignment of every mimalloc block of at least this many bytes
/// (`MI_MAX_ALIGN_SIZE`, `sizeof(max_align_t)`); a smaller block is aligned to its size.
const PLAIN_ALIGN: usize = 16;

/// Whether a plain block of `size` bytes is aligned to `align`.
fn plain(size: usize, align: usize) -> bool {
    align <= PLAIN_ALIGN && align <= size
}

// SAFETY: each method forwards to the mimalloc function for the same job, asking for the
// alignment explicitly unless a plain block has it (`plain`); mimalloc frees and resizes a
// block however it was allocated.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(layout.size(), layout.align()) {
            unsafe { mi_malloc(layout.size()) }
        } else {
            unsafe { mi_malloc_aligned(layout.size(), layout.align()) }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(layout.size(), layout.align()) {
            unsafe { mi_zalloc(layout.size()) }
        } else {
            unsafe { mi_zalloc_aligned(layout.size(), layout.align()) }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        unsafe { mi_free(ptr) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain(new_size, layout.align()) {
            unsafe { mi_realloc(ptr, new_size) }
        } else {
            unsafe { mi_realloc_aligned(ptr, new_size, layout.align()) }
        }
    }
}

/// mimalloc's `mi_option_purge_delay`: its index in `mi_option_t` (mimalloc v3, the
/// version `libmimalloc-sys` builds), whose default there is 1,000 (ms).
const MI_OPTION_PURGE_DELAY: c_int = 15;

/// How long freed pages stay with the process before mimalloc gives them back, in ms.
const PURGE_DELAY_MS: c_long = 10;

/// Gives the pages a finished world freed back to the system soon — [`PURGE_DELAY_MS`]
/// after they empty — instead of after mimalloc's default second: with the default, a
/// sweep of 6,000-instance worlds held on to the freed pages of earlier worlds and its
/// peak memory grew with the seeds it ran (55 MB for one seed, 73 MB for 20, 83 MB for 60,
/// `--jobs 1`). Not at once (a delay of 0): then every page that emptied went back to the
/// system and the next allocation faulted a fresh one in, so a sweep re-faulted its
/// world's pages on every seed, and `check` its line buffers' on every few lines (perf on
/// `check` of 1M events: a third of the time in `madvise`, page faults and zeroing
/// pages). A smoke seed takes well under the delay, so the next one reuses the pages.
pub(crate) fn purge_freed_memory_soon() {
    // SAFETY: setting a documented option to a documented value (a delay in ms), before
    // any thread starts.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, PURGE_DELAY_MS) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_purge_option_index_names_mimallocs_purge_delay() {
        // SAFETY: reading and setting a mimalloc option; no other test touches options.
        unsafe {
            assert_eq!(mi_option_get(MI_OPTION_PURGE_DELAY), 1_000, "not the purge delay: its default is 1,000 ms");
        }
        purge_freed_memory_soon();
        // SAFETY: as above.
        assert_eq!(unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }, PURGE_DELAY_MS);
    }

    #[test]
    fn only_blocks_a_plain_block_aligns_go_the_plain_way() {
        assert!(plain(16, 16) && plain(24, 8) && plain(8, 8) && plain(1, 1) && plain(4096, 16));
        assert!(!plain(8, 16), "an 8-byte block is aligned to 8 only");
        assert!(!plain(64, 32) && !plain(4096, 64) && !plain(0, 1));
    }

    #[test]
    fn every_block_has_the_alignment_it_asked_for() {
        // Through the global allocator, so both of its paths, for every size up to a few
        // pages and every alignment up to a page; written to its last byte and resized.
        for align in (0..13).map(|shift| 1usize << shift) {
            for size in (1..=3 * 4096).step_by(7).chain([align, 2 * align + 1]) {
                let layout = Layout::from_size_align(size, align).expect("a valid layout");
                // SAFETY: a non-zero size; the block is written within its size, resized
                // with its own layout and freed once.
                unsafe {
                    let block = std::alloc::alloc_zeroed(layout);
                    assert!(!block.is_null() && block as usize % align == 0, "{size} bytes aligned to {align}");
                    assert_eq!(*block.add(size - 1), 0, "a zeroed block of {size} bytes");
                    *block.add(size - 1) = 7;
                    let grown = std::alloc::realloc(block, layout, size * 2 + 3);
                    assert!(
                        grown as usize % align == 0 && *grown.add(size - 1) == 7,
                        "{size} bytes regrown, align {align}"
                    );
                    std::alloc::dealloc(grown, Layout::from_size_align(size * 2 + 3, align).expect("valid"));
                }
            }
        }
    }
}

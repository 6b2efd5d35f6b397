//! Exact placements of the contract, error messages, and the extern ABI.

mod child;

use tern_runtime::abi::mem::{tern_mem_release, tern_mem_reservation, tern_mem_reserve};
use tern_runtime::abi::reusable::{
    tern_reusable_alloc, tern_reusable_free, tern_reusable_offset, tern_reusable_resize,
    tern_reusable_resize_packed,
};
use tern_runtime::abi::span::*;
use tern_runtime::span_tree::error::{self, *};
use tern_runtime::span_tree::layout::{self, HEADER_WORDS};
use tern_runtime::span_tree::library::PoolMemory;
use tern_runtime::span_tree::mirrored;
use tern_runtime::span_tree::model::Model;
use tern_runtime::{Mirrored, Shared, SpanPool, Unchecked};

#[test]
fn fresh_pool_places_first_fit_from_offset_zero() {
    let mut p = SpanPool::<Unchecked>::new(1024).unwrap();
    assert_eq!(p.alloc(1), Ok(0)); // rounds to 8
    assert_eq!(p.alloc(16), Ok(8));
    assert_eq!(p.alloc(24), Ok(24));
    p.free(8, 16).unwrap();
    // First fit: the hole at 8 takes an 8-byte request, a 24-byte one goes after 48.
    assert_eq!(p.alloc(24), Ok(48));
    assert_eq!(p.alloc(8), Ok(8));
    assert_eq!(p.check_invariants().unwrap(), vec![(16, 8), (72, 952)]);
}

#[test]
fn free_coalesces_with_both_neighbours() {
    let mut p = SpanPool::<Mirrored>::new(256).unwrap();
    let a = p.alloc(32).unwrap();
    let b = p.alloc(32).unwrap();
    let c = p.alloc(32).unwrap();
    assert_eq!((a, b, c), (0, 32, 64));
    p.free(a, 32).unwrap();
    p.free(c, 32).unwrap();
    assert_eq!(p.check_invariants().unwrap(), vec![(0, 32), (64, 192)]);
    p.free(b, 32).unwrap();
    assert_eq!(p.check_invariants().unwrap(), vec![(0, 256)]);
}

#[test]
fn resize_shrinks_grows_in_place_or_moves() {
    let mut p = SpanPool::<Unchecked>::new(512).unwrap();
    let a = p.alloc(64).unwrap();
    assert_eq!(p.resize_in_place(a, 64, 16), Ok(0)); // shrink frees [16, 64)
    assert_eq!(p.check_invariants().unwrap(), vec![(16, 496)]);
    assert_eq!(p.resize_in_place(a, 16, 100), Ok(0)); // grow in place to 104
    let b = p.alloc(8).unwrap();
    assert_eq!(b, 104);
    assert_eq!(p.resize_in_place(a, 104, 112), Err(MUST_MOVE));
    // The full contract moves it: alloc while held, copy, free the old span.
    assert_eq!(p.resize(a, 104, 112), Ok(112));
    assert_eq!(p.check_invariants().unwrap(), vec![(0, 104), (224, 288)]);
    assert_eq!(p.resize(112, 112, 0), Ok(-1));
    assert_eq!(p.resize(-1, 0, 8), Ok(0));
}

#[test]
fn resize_moves_data_and_zero_fills_growth() {
    let mut p = SpanPool::<Unchecked>::new(4096).unwrap();
    let a = p.alloc_zeroed(16).unwrap();
    let _guard = p.alloc(8).unwrap();
    // SAFETY: [a, a+16) is our span inside the arena.
    unsafe { std::ptr::copy_nonoverlapping([7u8; 16].as_ptr(), p.base().add(a as usize), 16) };
    let to = p.resize(a, 16, 40).unwrap();
    assert_eq!(to, 24);
    // SAFETY: [to, to+40) is our span.
    let bytes = unsafe { std::slice::from_raw_parts(p.base().add(to as usize), 40) };
    assert_eq!(&bytes[..16], &[7u8; 16]);
    assert_eq!(&bytes[16..], &[0u8; 24]);
}

#[test]
fn zero_fill_skips_memory_no_allocation_ever_reached() {
    // Past the high-water mark the arena is the zero pages of the
    // reservation: a large zeroed allocation there writes nothing, so it
    // commits nothing either (calloc's economy).
    let mut p = SpanPool::<Unchecked>::new(1 << 30).unwrap();
    let big = 256 << 20;
    let a = p.alloc_zeroed(big).unwrap();
    assert_eq!(a, 0);
    assert!(p.resident_bytes().0 < 1 << 20, "{:?}", p.resident_bytes());
    // Memory an allocation reached is zero-filled when reused, in part:
    // dirty the first 64 KiB, free everything, and allocate 128 KiB.
    // SAFETY: [0, 64 KiB) lies in the live span `a`.
    unsafe { std::ptr::write_bytes(p.base(), 0x5a, 64 << 10) };
    p.free(a, big).unwrap();
    let b = p.alloc_zeroed(128 << 10).unwrap();
    assert_eq!(b, 0);
    // SAFETY: [0, 128 KiB) is the live span `b`.
    let bytes = unsafe { std::slice::from_raw_parts(p.base(), 128 << 10) };
    assert!(bytes.iter().all(|&x| x == 0));
    // Growth in place clears the same way: dirty the span, shrink it (its
    // dirty tail is free again), grow it back past its old end.
    // SAFETY: as above.
    unsafe { std::ptr::write_bytes(p.base(), 0x77, 128 << 10) };
    assert_eq!(p.resize(b, 128 << 10, 64 << 10), Ok(0));
    let c = p.resize(b, 64 << 10, (256 << 10) + 8).unwrap();
    assert_eq!(c, 0);
    // SAFETY: [0, 256 KiB + 8) is the live span `c`.
    let bytes = unsafe { std::slice::from_raw_parts(p.base(), (256 << 10) + 8) };
    assert!(bytes[..64 << 10].iter().all(|&x| x == 0x77));
    assert!(bytes[64 << 10..].iter().all(|&x| x == 0));
}

/// A fill of a MiB or more below the high-water mark writes the pages the OS
/// holds and gives the others back: the span reads zeros throughout, and
/// no page the first span left untouched is committed by the fill. On both
/// instantiations (the builtin's and the library's), for an allocation and
/// for a growth in place over a freed neighbour.
#[test]
fn a_large_reused_span_is_zeroed_where_resident_and_discarded_elsewhere() {
    fn check<V: tern_runtime::span_tree::Validate>(mut p: SpanPool<V>) {
        const MIB: i64 = 1 << 20;
        const PAGE: usize = 4096;
        // Every third page of `[off, off + bytes)` written, the rest untouched.
        let dirty = |p: &mut SpanPool<V>, off: i64, bytes: i64| {
            for page in (0..bytes as usize / PAGE).step_by(3) {
                // SAFETY: the page lies in a live span of the arena.
                unsafe {
                    std::ptr::write_bytes(p.base().add(off as usize + page * PAGE), 0x5a, PAGE)
                };
            }
        };
        let zeros = |p: &SpanPool<V>, off: i64, bytes: i64| {
            // SAFETY: `[off, off + bytes)` is a live span of the arena.
            let s =
                unsafe { std::slice::from_raw_parts(p.base().add(off as usize), bytes as usize) };
            s.iter().all(|&b| b == 0)
        };
        let a = p.alloc_zeroed(8 * MIB).unwrap();
        dirty(&mut p, a, 8 * MIB);
        let resident = p.resident_bytes().0;
        p.free(a, 8 * MIB).unwrap();
        let b = p.alloc_zeroed(8 * MIB).unwrap();
        assert_eq!(b, a);
        assert_eq!(p.resident_bytes().0, resident, "the fill committed pages");
        assert!(zeros(&p, b, 8 * MIB));
        // A growth in place over a freed, dirty neighbour.
        let c = p.alloc_zeroed(MIB).unwrap();
        dirty(&mut p, c, MIB);
        p.free(c, MIB).unwrap();
        p.free(b, 8 * MIB).unwrap();
        let d = p.alloc_zeroed(16).unwrap();
        let e = p.resize(d, 16, 9 * MIB).unwrap();
        assert_eq!((d, e), (a, a));
        assert!(zeros(&p, e, 9 * MIB));
    }
    check(SpanPool::<Unchecked>::new(64 << 20).unwrap());
    check(SpanPool::<Mirrored>::new(64 << 20).unwrap());
}

/// An arena size that is not a multiple of 8 rounds down: a partial granule
/// at the end holds no span, as in the reference model's arena of exactly
/// that size (it rounded up, and handed out bytes past the size asked for).
#[test]
fn an_arena_that_is_not_a_multiple_of_8_rounds_down() {
    for n in [4097, 4100, 4103] {
        let mut p = SpanPool::<Unchecked>::new(n).unwrap();
        assert_eq!(p.alloc(4096), Ok(0), "{n}");
        assert_eq!(p.alloc(1), Err(EXHAUSTED), "{n}");
        let mut m = Model::new(n);
        assert_eq!(m.alloc(4096), Ok(0));
        assert_eq!(m.alloc(1), Err(EXHAUSTED));
    }
    let mut p = SpanPool::<Unchecked>::new(7).unwrap();
    assert_eq!(p.alloc(1), Err(EXHAUSTED));
    assert_eq!(
        error::message_with_size(EXHAUSTED, 1),
        "pool exhausted: no free span of 8 bytes"
    );
}

#[test]
fn user_errors_get_codes_and_clear_messages() {
    let mut p = SpanPool::<Unchecked>::new(128).unwrap();
    let a = p.alloc(64).unwrap();
    p.free(a, 64).unwrap();
    assert_eq!(p.free(a, 64), Err(DOUBLE_FREE));
    assert_eq!(p.free(120, 16), Err(OUTSIDE_ARENA));
    assert_eq!(p.free(-8, 8), Err(OUTSIDE_ARENA));
    assert_eq!(p.free(4, 8), Err(OUTSIDE_ARENA));
    assert_eq!(p.alloc(0), Err(BAD_SIZE));
    assert_eq!(p.alloc(136), Err(EXHAUSTED));
    p.alloc(128).unwrap();
    assert_eq!(p.alloc(8), Err(EXHAUSTED));
    assert_eq!(
        error::message(DOUBLE_FREE),
        "double free: the span overlaps free space"
    );
    assert_eq!(error::message(OUTSIDE_ARENA), "span outside the arena");
    assert_eq!(
        error::message_with_size(EXHAUSTED, 64),
        "pool exhausted: no free span of 64 bytes"
    );
    assert_eq!(
        error::message(error::corrupt_header(2)),
        "corrupt tree: header field root (word 2)"
    );
    assert_eq!(
        error::message(error::corrupt_node(5, 1)),
        "corrupt tree: node 5, field level (word 1)"
    );
    assert_eq!(error::message(-99), "unknown error code -99");
}

#[test]
fn resize_of_a_freed_span_is_an_error() {
    let mut p = SpanPool::<Mirrored>::new(256).unwrap();
    let a = p.alloc(32).unwrap();
    p.alloc(32).unwrap();
    p.free(a, 32).unwrap();
    assert_eq!(p.resize_in_place(a, 32, 64), Err(RESIZE_FREE_SPAN));
    assert_eq!(p.resize_in_place(a, 32, 8), Err(DOUBLE_FREE));
}

/// The program of issue 13 on both instantiations: a stale copy of a slice
/// that has shrunk names its old extent, which now holds another slice; that
/// free (and every other span that is not exactly one live allocation) is
/// refused, and nothing changes.
#[test]
fn stale_spans_are_refused_with_what_is_live() {
    fn scenario<V: tern_runtime::span_tree::Validate>() {
        let mut p = SpanPool::<V>::new(4096).unwrap();
        let a = p.alloc(32).unwrap();
        assert_eq!(a, 0);
        assert_eq!(p.resize(a, 32, 8), Ok(0));
        let d = p.alloc(24).unwrap();
        assert_eq!(d, 8);
        assert_eq!(p.free(0, 32), Err(STALE_FREE));
        assert_eq!(p.live_bytes_at(0), 8);
        assert_eq!(p.live_bytes_at(8), 24);
        assert_eq!(p.live_bytes_at(16), 0);
        // Part of a span, a range starting inside one, two spans at once.
        assert_eq!(p.free(8, 8), Err(STALE_FREE));
        assert_eq!(p.free(16, 16), Err(STALE_FREE));
        assert_eq!(p.resize(8, 8, 64), Err(STALE_RESIZE));
        assert_eq!(p.resize(0, 32, 40), Err(STALE_RESIZE));
        assert_eq!(p.resize(0, 32, 0), Err(STALE_RESIZE));
        // Overlapping free space is still a double free.
        assert_eq!(p.free(8, 40), Err(DOUBLE_FREE));
        // Nothing changed: both slices free exactly.
        p.free(0, 8).unwrap();
        p.free(8, 24).unwrap();
        assert_eq!(p.check_invariants().unwrap(), vec![(0, 4096)]);
        // A double free after the span was reallocated at another size.
        let x = p.alloc(64).unwrap();
        p.free(x, 64).unwrap();
        let y = p.alloc(16).unwrap();
        let _z = p.alloc(48).unwrap();
        assert_eq!(y, x);
        assert_eq!(p.free(x, 64), Err(STALE_FREE));
    }
    scenario::<Unchecked>();
    scenario::<Mirrored>();
    scenario::<Shared>();
    assert_eq!(
        error::stale_message(STALE_FREE, 0, 32, 8),
        "free of a stale slice: the span at offset 0 is 8 bytes, not 32"
    );
    assert_eq!(
        error::stale_message(STALE_RESIZE, 16, 16, 0),
        "resize of a stale slice: no live span starts at offset 16"
    );
}

#[test]
fn checked_externs_over_program_memory() {
    checked_extern_sequence();
}

/// The checked externs' contract, step by step (run on the CPU's copies by
/// the test above, on the portable copies by a child fixture below).
fn checked_extern_sequence() {
    let arena_bytes = 1 << 16;
    let words = tern_span_node_words(arena_bytes);
    assert_eq!(words, layout::node_array_words(arena_bytes));
    assert_eq!(tern_span_header_words(), HEADER_WORDS as i64);
    let nodes = tern_mem_reserve(words * 4);
    let arena = tern_mem_reserve(arena_bytes);
    assert!(nodes > 0 && arena > 0);
    let mut hdr = [0i64; HEADER_WORDS];
    let h = hdr.as_mut_ptr();
    let n = nodes as *mut i32;
    // SAFETY: the header and node array are live locals of the sizes passed, the
    // arena a fresh mapping of `arena_bytes`.
    unsafe {
        let id = tern_span_init(h, n, words, arena as *mut u8, arena_bytes);
        assert!(id > 0);
        // Spans are named by address inside the registered arena.
        let a = tern_span_alloc(h, n, 24);
        assert_eq!(a, arena);
        // Alloc zero-fills: dirty the span, free it, allocate it again.
        std::ptr::write_bytes(arena as *mut u8, 0xAB, 24);
        assert_eq!(tern_span_free(h, n, a, 24), 0);
        assert_eq!(tern_span_alloc(h, n, 24), arena);
        assert_eq!(*(arena as *const u8).add(23), 0);
        // Grow in place: the new bytes (from the old exact size) are zero.
        std::ptr::write_bytes(arena as *mut u8, 0xCD, 48);
        assert_eq!(tern_span_resize(h, n, arena, 20, 48), arena);
        assert_eq!(*(arena as *const u8).add(19), 0xCD);
        assert_eq!(*(arena as *const u8).add(20), 0);
        let b = tern_span_alloc(h, n, 8);
        assert_eq!(b, arena + 48);
        // Dirty the memory the move will land in, through an allocation
        // (the runtime zero-fills only what an allocation ever reached: past
        // the pool's high-water mark the reservation is still zero).
        let d = tern_span_alloc(h, n, 56);
        assert_eq!(d, arena + 56);
        std::ptr::write_bytes((arena + 56) as *mut u8, 0xEE, 56);
        assert_eq!(tern_span_free(h, n, d, 56), 0);
        // No room after it: the move is placed in the same call (first fit
        // while the old span is held, then the old span is freed), the new
        // span zero-filled past the old bytes, the old bytes left intact.
        let c = tern_span_resize(h, n, arena, 48, 56);
        assert_eq!(c, arena + 56);
        assert_eq!(*(arena as *const u8).add(19), 0xCD, "old bytes untouched");
        assert_eq!(
            *((arena + 56) as *const u8).add(47),
            0xEE,
            "the caller copies"
        );
        assert_eq!(*((arena + 56) as *const u8).add(48), 0);
        assert_eq!(tern_span_free(h, n, arena, 48), DOUBLE_FREE);
        assert_eq!(tern_span_free(h, n, c, 56), 0);
        // Addresses outside the registered arena are refused.
        assert_eq!(tern_span_free(h, n, arena - 8, 8), OUTSIDE_ARENA);
        assert_eq!(
            tern_span_free(h, n, arena + arena_bytes + 8, 8),
            OUTSIDE_ARENA
        );
        assert_eq!(tern_span_free(h, n, 8, 8), OUTSIDE_ARENA);
        // The node array's address plays no part (the registry names the
        // pool's): another one, or null, gets the answer the pool's gets.
        assert_eq!(tern_span_alloc(h, n.add(8), 8), arena);
        assert_eq!(tern_span_free(h, std::ptr::null_mut(), arena, 8), 0);
        assert_eq!(tern_span_alloc(std::ptr::null_mut(), n, 8), BAD_POOL);
        // A header may lie at any address: a copy of it one byte into a
        // buffer names the pool, and the call writes the copy's words.
        let mut bytes = [0u8; HEADER_WORDS * 8 + 1];
        std::ptr::copy_nonoverlapping(h.cast::<u8>(), bytes.as_mut_ptr().add(1), HEADER_WORDS * 8);
        let copy = bytes.as_mut_ptr().add(1).cast::<i64>();
        let free_bytes = |t: *mut i64| t.add(layout::H_FREE_BYTES).read_unaligned();
        assert_eq!(tern_span_alloc(copy, n, 16), arena);
        assert_eq!(free_bytes(copy), free_bytes(h) - 16);
        assert_eq!(tern_span_free(copy, n, arena, 16), 0);
        assert_eq!(free_bytes(copy), free_bytes(h));
        // `b` is still allocated: the runtime's record says so, whatever
        // the header's totals claim, and the finish changes nothing (what
        // `slice_pool::finish` reports as a leak).
        *h.add(layout::H_FREE_BYTES) += 8;
        assert_eq!(tern_span_finish(h, n), error::STALE_POOL);
        *h.add(layout::H_FREE_BYTES) -= 8;
        assert_eq!(tern_span_finish(h, n), error::LEAKED);
        assert_eq!(tern_span_free(h, n, b, 8), 0);
        assert_eq!(tern_span_finish(h, n), 0);
        assert_eq!(tern_span_alloc(h, n, 8), BAD_POOL);
        let (nodes_id, arena_id) = (tern_mem_reservation(nodes), tern_mem_reservation(arena));
        assert!(nodes_id > 0 && arena_id > 0 && nodes_id != arena_id);
        // Another reservation's id is refused.
        assert_eq!(
            tern_mem_release(arena, arena_bytes, nodes_id),
            error::NOT_RESERVED
        );
        assert_eq!(tern_mem_release(nodes, words * 4, nodes_id), 0);
        assert_eq!(tern_mem_release(arena, arena_bytes, arena_id), 0);
        // Memory given back already (a pool finished through a second copy
        // of its value) is refused, and so is part of a reservation.
        assert_eq!(
            tern_mem_release(arena, arena_bytes, arena_id),
            error::NOT_RESERVED
        );
        assert_eq!(tern_mem_reservation(arena), error::NOT_RESERVED);
        // A later reservation (the same range, unless a test beside took it:
        // retired ranges are reused lowest first) has a new id: the old one
        // (a stale copy of the pool that held it) cannot give it back.
        let again = tern_mem_reserve(arena_bytes);
        let again_id = tern_mem_reservation(again);
        assert!(again_id > arena_id);
        assert_eq!(
            tern_mem_release(again, arena_bytes, arena_id),
            error::NOT_RESERVED
        );
        assert_eq!(tern_mem_release(again, arena_bytes, again_id), 0);
        let more = tern_mem_reserve(2 * arena_bytes);
        let more_id = tern_mem_reservation(more);
        assert_eq!(
            tern_mem_release(more, arena_bytes, more_id),
            error::NOT_RESERVED
        );
        assert_eq!(tern_mem_release(more, 2 * arena_bytes, more_id), 0);
    }
}

#[test]
fn runtime_owned_pools_are_created_and_released_by_the_runtime() {
    let mut hdr = [0i64; HEADER_WORDS];
    let mut mem = PoolMemory::default();
    let h = hdr.as_mut_ptr();
    // SAFETY: `h` is a live header of HEADER_WORDS words; `n` and every
    // address used are what `tern_span_new` and `tern_span_alloc` gave, used
    // before `tern_span_finish` releases them.
    unsafe {
        assert_eq!(tern_span_new(h, 0, &mut mem), BAD_SIZE);
        // 100 bytes hold 96: no span reaches past the size asked for.
        let id = tern_span_new(h, 100, &mut mem);
        assert!(id > 0);
        assert_eq!(hdr[layout::H_ARENA_BYTES], 96);
        assert_eq!(mem.node_words, layout::node_array_words(96));
        let n = mem.nodes as *mut i32;
        assert_eq!(tern_span_alloc(h, n, 97), EXHAUSTED);
        let a = tern_span_alloc(h, n, 96);
        assert_eq!(a, mem.arena);
        // The arena is real memory the runtime owns.
        *(a as *mut i64) = 7;
        assert_eq!(tern_span_alloc(h, n, 8), EXHAUSTED);
        assert_eq!(tern_span_free(h, n, a, 96), 0);
        assert_eq!(tern_span_finish(h, n), 0);
        assert_eq!(tern_span_finish(h, n), BAD_POOL);
    }
}

#[test]
fn the_checked_externs_refuse_stale_spans_and_stale_pools() {
    let mut hdr = [0i64; HEADER_WORDS];
    let mut mem = PoolMemory::default();
    let h = hdr.as_mut_ptr();
    // SAFETY: `h` is a live header of HEADER_WORDS words; `n` and every
    // address used are what `tern_span_new` and `tern_span_alloc` gave, used
    // before `tern_span_finish` releases them.
    unsafe {
        assert!(tern_span_new(h, 4096, &mut mem) > 0);
        let n = mem.nodes as *mut i32;
        let a = tern_span_alloc(h, n, 32);
        assert_eq!(tern_span_resize(h, n, a, 32, 8), a);
        let d = tern_span_alloc(h, n, 24);
        assert_eq!(d, a + 8);
        let mut buf = [0u8; 100];
        let failure = |code: i64, buf: &mut [u8; 100]| {
            let len = tern_span_failure_message(h, n, code, buf.as_mut_ptr(), 100);
            String::from_utf8(buf[..len as usize].to_vec()).unwrap()
        };
        // The message of a refused call names the span it named, which the
        // runtime noted as it refused it, and what its record has there.
        assert_eq!(tern_span_free(h, n, a, 32), STALE_FREE);
        assert_eq!(
            failure(STALE_FREE, &mut buf),
            "free of a stale slice: the span at offset 0 is 8 bytes, not 32"
        );
        assert_eq!(tern_span_resize(h, n, a + 16, 8, 16), STALE_RESIZE);
        assert_eq!(
            failure(STALE_RESIZE, &mut buf),
            "resize of a stale slice: no live span starts at offset 16"
        );
        assert_eq!(failure(DOUBLE_FREE, &mut buf), error::message(DOUBLE_FREE));
        assert_eq!(tern_span_live_bytes(h, n, a), 8);
        assert_eq!(tern_span_live_bytes(h, n, a + 8), 24);
        assert_eq!(tern_span_live_bytes(h, n, a + 16), 0);
        assert_eq!(tern_span_live_bytes(h, n, a - 8), OUTSIDE_ARENA);
        let len = tern_span_stale_message(STALE_FREE, 0, 25, 8, buf.as_mut_ptr(), 100);
        assert_eq!(
            &buf[..len as usize],
            b"free of a stale slice: the span at offset 0 is 8 bytes, not 32"
        );
        let len = tern_span_stale_message(DOUBLE_FREE, 0, 32, 8, buf.as_mut_ptr(), 100);
        assert_eq!(&buf[..len as usize], error::message(DOUBLE_FREE).as_bytes());
        // A copy of the header, then the pool used through the original: the
        // copy no longer describes the tree, and finish refuses it.
        let mut copy = hdr;
        assert_eq!(tern_span_free(h, n, d, 24), 0);
        assert_eq!(tern_span_finish(copy.as_mut_ptr(), n), STALE_POOL);
        assert_eq!(tern_span_free(h, n, a, 8), 0);
        assert_eq!(tern_span_finish(h, n), 0);
    }
}

#[test]
fn reset_frees_every_span_in_place_and_refuses_a_stale_header() {
    let mut hdr = [0i64; HEADER_WORDS];
    let mut mem = PoolMemory::default();
    let h = hdr.as_mut_ptr();
    // SAFETY: `h` is a live header of HEADER_WORDS words; `n` and every
    // address used are what `tern_span_new` and `tern_span_alloc` gave, used
    // before `tern_span_finish` releases them.
    unsafe {
        let id = tern_span_new(h, 4096, &mut mem);
        assert!(id > 0);
        let n = mem.nodes as *mut i32;
        let spans: Vec<i64> = (0..40).map(|_| tern_span_alloc(h, n, 24)).collect();
        // Holes, so the tree has many spans.
        for s in spans.iter().step_by(2) {
            assert_eq!(tern_span_free(h, n, *s, 24), 0);
        }
        *(spans[1] as *mut i64) = 7;
        let copy = hdr;
        assert_eq!(tern_span_reset(h, n), 0);
        // One free span over the whole arena, the same pool id, the same arena.
        assert_eq!(hdr[layout::H_SPANS], 1);
        assert_eq!(hdr[layout::H_FREE_BYTES], 4096);
        assert_eq!(hdr[layout::H_POOL_ID], id);
        // The record forgot every span: the old ones are not live...
        assert_eq!(tern_span_live_bytes(h, n, spans[1]), 0);
        assert_eq!(tern_span_free(h, n, spans[1], 24), DOUBLE_FREE);
        // ... and allocation starts again at the arena's start, zero-filled.
        let a = tern_span_alloc(h, n, 4096);
        assert_eq!(a, mem.arena);
        assert_eq!(*(spans[1] as *const i64), 0);
        assert_eq!(tern_span_free(h, n, a, 4096), 0);
        // A copy of the header taken before the reset no longer describes
        // the tree: refused, and the pool is unchanged.
        let mut copy = copy;
        assert_eq!(tern_span_reset(copy.as_mut_ptr(), n), STALE_POOL);
        assert_eq!(tern_span_alloc(h, n, 8), mem.arena);
        assert_eq!(tern_span_reset(h, n), 0);
        assert_eq!(tern_span_finish(h, n), 0);
        assert_eq!(tern_span_reset(h, n), BAD_POOL);
    }
}

#[test]
fn init_refuses_a_node_array_smaller_than_the_worst_case() {
    let mut hdr = [0i64; HEADER_WORDS];
    let mut nodes = vec![0i32; 64];
    // SAFETY: header and node array are live locals; the call must refuse the
    // short array without writing past it.
    let r = unsafe {
        tern_span_init(
            hdr.as_mut_ptr(),
            nodes.as_mut_ptr(),
            64,
            std::ptr::null_mut(),
            1 << 16,
        )
    };
    assert_eq!(r, BAD_SIZE);
}

#[test]
fn error_message_extern_copies_and_truncates() {
    let mut buf = [0u8; 64];
    // SAFETY: `buf` holds the 64 bytes the call is told of.
    let n = unsafe { tern_span_error_message(DOUBLE_FREE, buf.as_mut_ptr(), 64) };
    assert_eq!(
        &buf[..n as usize],
        b"double free: the span overlaps free space"
    );
    assert_eq!(
        // SAFETY: a length of 0 lets the call only measure; it never touches the
        // null pointer.
        unsafe { tern_span_error_message(DOUBLE_FREE, std::ptr::null_mut(), 0) },
        n
    );
    assert_eq!(
        // SAFETY: `buf` holds 64 bytes, more than the 6 the call is told of.
        unsafe { tern_span_error_message(DOUBLE_FREE, buf.as_mut_ptr(), 6) },
        6
    );
    assert_eq!(&buf[..6], b"double");
}

#[test]
fn reusable_externs_alloc_resize_free_offset() {
    // The builtin pool is process-wide; this is the only test of this
    // process that uses it.
    reusable_extern_sequence();
}

/// The entry points run one of two copies of each operation, chosen by the
/// CPU (`span_tree::scan`): the tests above run the AVX2 copies on a CPU that
/// has it; this child fixture forces the portable ones in a process of its
/// own (the switch is process-wide, and so is the builtin pool).
#[test]
#[ignore = "child fixture: run by the_portable_copies_of_the_entry_points_keep_the_contract with --ignored --exact"]
fn child_entry_points_on_portable_copies() {
    child::require_child();
    tern_runtime::span_tree::scan::set_portable_only(true);
    reusable_extern_sequence();
    checked_extern_sequence();
}

#[test]
fn the_portable_copies_of_the_entry_points_keep_the_contract() {
    let (status, err) = child::run_child("child_entry_points_on_portable_copies", &[]);
    assert_eq!((status, err.as_str()), (Some(0), ""));
}

/// The `tern_reusable_*` externs' contract on a fresh builtin pool.
fn reusable_extern_sequence() {
    // SAFETY: the location is a NUL-terminated literal and every slice handed
    // back came from the pool in this block.
    unsafe {
        let loc = c"t.tern:1:1".as_ptr();
        assert!(tern_reusable_alloc(0, loc).is_null());
        assert_eq!(tern_reusable_offset(std::ptr::null(), loc), -1);
        let p = tern_reusable_alloc(20, loc);
        assert_eq!(tern_reusable_offset(p, loc), 0);
        *p = 9;
        let q = tern_reusable_alloc(8, loc);
        assert_eq!(tern_reusable_offset(q, loc), 24);
        let p2 = tern_reusable_resize(p, 20, 40, loc);
        assert_eq!(tern_reusable_offset(p2, loc), 32);
        assert_eq!(*p2, 9);
        assert_eq!(*p2.add(39), 0);
        let p3 = tern_reusable_resize(p2, 40, 0, loc);
        assert!(p3.is_null());
        tern_reusable_free(q, 8, loc);
        tern_reusable_free(std::ptr::null_mut(), 0, loc);
        let r = tern_reusable_resize(std::ptr::null_mut(), 0, 8, loc);
        assert_eq!(tern_reusable_offset(r, loc), 0);
        tern_reusable_free(r, 8, loc);

        // `_packed`: a growth inside the last granule stays put and zeroes
        // the bytes a shrink left behind; past the granule it is the
        // contract's resize (here a growth in place, then a move).
        let s = tern_reusable_resize_packed(std::ptr::null_mut(), 0, 3, loc);
        assert_eq!(tern_reusable_offset(s, loc), 0);
        std::ptr::write_bytes(s, 0xAA, 3);
        let s = tern_reusable_resize_packed(s, 3, 1, loc);
        let s = tern_reusable_resize_packed(s, 1, 8, loc);
        assert_eq!(tern_reusable_offset(s, loc), 0);
        let bytes: Vec<u8> = (0..8).map(|i| *s.add(i)).collect();
        assert_eq!(bytes, [0xAA, 0, 0, 0, 0, 0, 0, 0]);
        let s = tern_reusable_resize_packed(s, 8, 13, loc);
        assert_eq!(tern_reusable_offset(s, loc), 0);
        let t = tern_reusable_alloc(8, loc);
        assert_eq!(tern_reusable_offset(t, loc), 16);
        let s = tern_reusable_resize_packed(s, 13, 16, loc);
        assert_eq!(tern_reusable_offset(s, loc), 0);
        let s2 = tern_reusable_resize_packed(s, 16, 17, loc);
        assert_eq!(tern_reusable_offset(s2, loc), 24);
        assert_eq!(*s2, 0xAA);
        tern_reusable_free(s2, 17, loc);
        tern_reusable_free(t, 8, loc);
    }
}

/// Runs one of the `child_*` tests below in a fresh process (so the builtin pool is
/// created from `TERN_POOL_BYTES` there) and returns its exit status and stderr.
fn run_child(name: &str, pool_bytes: &str) -> (Option<i32>, String) {
    child::run_child(name, &[("TERN_POOL_BYTES", pool_bytes)])
}

#[test]
#[ignore = "child fixture: run by builtin_pool_errors_end_the_run_with_the_table_message with --ignored --exact"]
fn child_exhausts_the_builtin_pool() {
    // The pool is created from it on first use (and, invalid, refused there).
    child::fixture_env("TERN_POOL_BYTES");
    // SAFETY: the location is a NUL-terminated literal; the pool refuses the bad
    // size before any memory is touched.
    unsafe {
        let loc = c"t.tern:3:5".as_ptr();
        tern_reusable_alloc(64, loc);
        tern_reusable_alloc(128, loc);
    }
}

#[test]
#[ignore = "child fixture: run by builtin_pool_errors_end_the_run_with_the_table_message with --ignored --exact"]
fn child_double_frees() {
    child::fixture_env("TERN_POOL_BYTES");
    // SAFETY: the location is a NUL-terminated literal; the second free is
    // the point: the runtime finds the span already free and ends the
    // process without touching it.
    unsafe {
        let loc = c"t.tern:7:2".as_ptr();
        let p = tern_reusable_alloc(16, loc);
        tern_reusable_free(p, 16, loc);
        tern_reusable_free(p, 16, loc);
    }
}

#[test]
fn builtin_pool_errors_end_the_run_with_the_table_message() {
    assert_eq!(
        run_child("child_exhausts_the_builtin_pool", "100"),
        (
            Some(101),
            "error: t.tern:3:5: pool exhausted: no free span of 128 bytes".to_string()
        )
    );
    // 190 bytes hold 184: the 128 after the 64 do not fit.
    assert_eq!(
        run_child("child_exhausts_the_builtin_pool", "190"),
        (
            Some(101),
            "error: t.tern:3:5: pool exhausted: no free span of 128 bytes".to_string()
        )
    );
    assert_eq!(
        run_child("child_double_frees", "4096"),
        (
            Some(101),
            "error: t.tern:7:2: double free: the span overlaps free space".to_string()
        )
    );
    let (status, line) = run_child("child_exhausts_the_builtin_pool", "lots");
    assert_eq!(status, Some(101));
    assert_eq!(
        line,
        "error: t.tern:3:5: TERN_POOL_BYTES must be a positive number of bytes, got `lots`"
    );
}

#[test]
fn mirrored_layout_constants_have_their_documented_values() {
    let get = |n: &str| {
        mirrored::MIRRORED
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, v)| *v)
    };
    assert_eq!(get("FANOUT"), Some(32));
    assert_eq!(get("HEADER_WORDS"), Some(10));
    assert_eq!(get("N_KEYS"), Some(8));
    assert_eq!(get("N_LENS"), Some(48));
    assert_eq!(get("N_KIDS"), Some(88));
    assert_eq!(get("NODE_WORDS"), Some(128));
    assert_eq!(get("EMPTY_KEY"), Some(i32::MAX as i64));
    assert_eq!(get("MAX_ARENA_BYTES"), Some((i32::MAX as i64) * 8));
    assert_eq!(get("MAGIC"), Some(0x5445_524E_5350_4E32));
    assert_eq!(get("DOUBLE_FREE"), Some(-3));
    let mut names: Vec<_> = mirrored::MIRRORED.iter().map(|(k, _)| *k).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), mirrored::MIRRORED.len());
}

/// A `Tree<Mirrored>` made over plain memory (`Tree::from_raw`, no second
/// copy to mirror into) is a tree like any other: each write lands twice on
/// the same word (its mirror once pointed at address 0).
#[test]
fn a_mirrored_view_without_a_second_copy_is_a_plain_tree() {
    use tern_runtime::span_tree::Tree;
    let arena = 4096;
    let cap = layout::node_capacity(arena);
    let mut hdr = vec![0i64; HEADER_WORDS];
    let mut nodes = vec![0i32; cap as usize * layout::NODE_WORDS];
    // SAFETY: both buffers outlive the view and nothing else touches them.
    let mut t: Tree<Mirrored> =
        unsafe { Tree::from_raw(hdr.as_mut_ptr(), nodes.as_mut_ptr(), cap, arena) };
    t.init(0);
    assert_eq!(t.alloc(64), Ok(0));
    assert_eq!(t.alloc(8), Ok(64));
    assert_eq!(t.free(0, 64), Ok(()));
    assert_eq!(t.resize(64, 8, 16), Ok(64));
    assert_eq!(t.check_invariants().unwrap(), vec![(0, 64), (80, 4016)]);
}

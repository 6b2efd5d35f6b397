//! The sanitizer (`runtime/src/sanitize.rs`) through its externs, as code
//! compiled with `--sanitize` calls them: tags, checks, in-place and moving
//! resizes, frees, sites, sanitized library pools. The sanitizer's state is
//! process-wide and, like the builtin pool, not meant for concurrent use, so
//! the in-process checks are one test; each failing check runs in a child
//! process (a failed check ends the run) and is held to its `error:` line.

mod child;

use std::ffi::c_char;

use tern_runtime::abi::reusable::{tern_reusable_alloc, tern_reusable_free, tern_reusable_resize};
use tern_runtime::abi::sanitize::*;
use tern_runtime::abi::span::{tern_span_alloc, tern_span_finish, tern_span_free, tern_span_new};
use tern_runtime::sanitize::{ADDR_MASK, BUILTIN_REGION, TAG_SHIFT};
use tern_runtime::span_tree::layout::HEADER_WORDS;
use tern_runtime::span_tree::library::PoolMemory;

const FREE_AT: *const c_char = c"t.tern:3:5".as_ptr();
const USE_AT: *const c_char = c"t.tern:9:1".as_ptr();

/// `tern_reusable_alloc` + tag, as the backend lowers `reusable::alloc`.
unsafe fn alloc(bytes: i64) -> i64 {
    // SAFETY: `tern_reusable_alloc` takes a size and a NUL-terminated location;
    // the sanitizer tags what it returned.
    unsafe {
        let p = tern_reusable_alloc(bytes, FREE_AT) as i64;
        tern_sanitize_tag(BUILTIN_REGION, p, bytes)
    }
}

/// Check, resize, retag, as the backend lowers `reusable::resize`.
unsafe fn resize(p: i64, old: i64, new: i64, at: *const c_char) -> i64 {
    // SAFETY: the caller passes a live tagged allocation of `old` bytes; `at` is
    // a NUL-terminated location.
    unsafe {
        let a = tern_sanitize_check(p, old, at);
        let np = tern_reusable_resize(a as *mut u8, old, new, at) as i64;
        tern_sanitize_retag(BUILTIN_REGION, a, old, np, new, at)
    }
}

/// Check, free, release, as the backend lowers `reusable::free`.
unsafe fn free(p: i64, bytes: i64, at: *const c_char) {
    // SAFETY: the caller passes a live tagged allocation of `bytes` bytes; `at`
    // is a NUL-terminated location.
    unsafe {
        let a = tern_sanitize_check(p, bytes, at);
        tern_reusable_free(a as *mut u8, bytes, at);
        tern_sanitize_release(BUILTIN_REGION, a, bytes, at);
    }
}

fn tag_of(p: i64) -> i64 {
    p >> TAG_SHIFT
}

#[test]
fn tags_follow_allocations_resizes_and_frees() {
    tern_sanitize_enable();
    // SAFETY: every address used comes from `alloc`, `resize` or the pool's own
    // externs and is used before it is freed; `hdr` and `mem` outlive the pool.
    unsafe {
        let a = alloc(32);
        assert!(tag_of(a) > 0, "allocations are tagged");
        let base = a & ADDR_MASK;
        // Checks of live memory return the untagged address.
        assert_eq!(tern_sanitize_check(a, 8, USE_AT), base);
        assert_eq!(tern_sanitize_check(a + 24, 8, USE_AT), base + 24);
        // Untagged pointers, and empty ranges, are not checked.
        assert_eq!(tern_sanitize_check(base, 8, USE_AT), base);
        assert_eq!(tern_sanitize_check(a + 4096, 0, USE_AT), base + 4096);
        // In place the tag stays: a shorter copy stays valid for its part.
        let grown = resize(a, 32, 40, FREE_AT);
        assert_eq!(grown, a, "grew in place with its tag");
        assert_eq!(tern_sanitize_check(a, 40, USE_AT), base);
        // An untagged address inside it (an array behind a `ref`) takes its
        // tag by address; bytes past its exact end, or an already tagged
        // address, or no bytes, are returned as they are.
        assert_eq!(tern_sanitize_tag_at(base + 8, 16), a + 8);
        assert_eq!(tern_sanitize_tag_at(base + 32, 16), base + 32);
        assert_eq!(tern_sanitize_tag_at(a + 8, 16), a + 8);
        assert_eq!(tern_sanitize_tag_at(base + 8, 0), base + 8);
        // A new allocation gets another tag.
        let b = alloc(8);
        assert_ne!(tag_of(b), tag_of(a));
        // A move tags the new span; the old one is released.
        let moved = resize(grown, 40, 64, FREE_AT);
        assert_ne!(moved & ADDR_MASK, base);
        assert_ne!(tag_of(moved), tag_of(grown));
        // The old span is free: nothing to take a tag from (and nothing
        // once `b` is freed below).
        assert_eq!(tern_sanitize_tag_at(base + 8, 16), base + 8);
        let bb = b & ADDR_MASK;
        assert_eq!(tern_sanitize_tag_at(bb, 8), b);
        free(moved, 64, FREE_AT);
        free(b, 8, FREE_AT);
        assert_eq!(tern_sanitize_tag_at(bb, 8), bb);
        // A library pool made while the sanitizer is on is sanitized: its
        // allocations and its node array come back tagged, and the checked
        // externs take tagged addresses.
        let mut hdr = [0i64; HEADER_WORDS];
        let mut mem = PoolMemory::default();
        assert!(tern_span_new(hdr.as_mut_ptr(), 4096, &mut mem) > 0);
        assert!(
            tag_of(mem.nodes) > 0,
            "the node array is one tagged allocation"
        );
        let n = mem.nodes as *mut i32;
        let s = tern_span_alloc(hdr.as_mut_ptr(), n, 24);
        assert!(tag_of(s) > 0);
        assert_eq!(s & ADDR_MASK, mem.arena);
        assert_eq!(tern_sanitize_check(s, 24, USE_AT), mem.arena);
        assert_eq!(tern_span_free(hdr.as_mut_ptr(), n, s, 24), 0);
        assert_eq!(tern_span_finish(hdr.as_mut_ptr(), n), 0);
        // A pool of its own (what slice_pool_pure does).
        let region = tern_sanitize_region(mem.arena, 4096);
        assert!(region > BUILTIN_REGION);
        let t = tern_sanitize_tag(region, mem.arena + 64, 16);
        assert_eq!(tern_sanitize_check(t, 16, USE_AT), mem.arena + 64);
        tern_sanitize_region_end(region, FREE_AT);
        // Tags are never shared by live allocations: 100 stay live while
        // 40 000 come and go (a bounded search once handed a live tag out
        // again when 64 live ones held the next tags)...
        let kept: Vec<i64> = (0..100).map(|_| alloc(8)).collect();
        for _ in 0..40_000 {
            let t = alloc(8);
            free(t, 8, FREE_AT);
        }
        for &k in &kept {
            assert_eq!(tern_sanitize_check(k, 8, USE_AT), k & ADDR_MASK);
        }
        // ... and a finished pool gives its tags back: after more pools than
        // there are tags, allocations are still tagged.
        for _ in 0..40_000 {
            let region = tern_sanitize_region(mem.arena, 4096);
            tern_sanitize_tag(region, mem.arena, 16);
            tern_sanitize_region_end(region, FREE_AT);
        }
        let after = alloc(8);
        assert!(tag_of(after) > 0, "tags came back from finished pools");
        free(after, 8, FREE_AT);
        for k in kept {
            free(k, 8, FREE_AT);
        }
    }
}

/// Runs the child test `name` in a fresh process; its exit status and `error:` line.
fn run_child(name: &str) -> (Option<i32>, String) {
    child::run_child(name, &[])
}

#[test]
#[ignore = "child fixture: run by failed_checks_name_where_the_slice_was_freed with --ignored --exact"]
fn child_use_after_free() {
    child::require_child();
    tern_sanitize_enable();
    // SAFETY: the check of the freed `a` is the point: the sanitizer refuses it
    // and ends the process before any access.
    unsafe {
        let a = alloc(32);
        free(a, 32, FREE_AT);
        let _b = alloc(32);
        tern_sanitize_check(a, 8, USE_AT);
    }
}

#[test]
#[ignore = "child fixture: run by failed_checks_name_where_the_slice_was_freed with --ignored --exact"]
fn child_use_past_a_shrink() {
    child::require_child();
    tern_sanitize_enable();
    // SAFETY: the check past the shrink is the point: the sanitizer refuses it
    // and ends the process before any access.
    unsafe {
        let a = alloc(32);
        resize(a, 32, 8, FREE_AT);
        tern_sanitize_check(a + 16, 8, USE_AT);
    }
}

#[test]
#[ignore = "child fixture: run by failed_checks_name_where_the_slice_was_freed with --ignored --exact"]
fn child_use_after_finish_at_the_site() {
    child::require_child();
    tern_sanitize_enable();
    let mut hdr = [0i64; HEADER_WORDS];
    let mut mem = PoolMemory::default();
    // SAFETY: `hdr` and `mem` outlive the pool; the check of its released node
    // array is the point: the sanitizer refuses it and ends the process.
    unsafe {
        assert!(tern_span_new(hdr.as_mut_ptr(), 4096, &mut mem) > 0);
        // Library code reports at the latest call site into it.
        tern_sanitize_site(FREE_AT);
        assert_eq!(tern_span_finish(hdr.as_mut_ptr(), mem.nodes as *mut i32), 0);
        tern_sanitize_site(USE_AT);
        tern_sanitize_check(mem.nodes, 8, std::ptr::null());
    }
}

/// This process's resident memory, from `/proc/self/statm`.
fn resident_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: usize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * tern_runtime::memory::page_size()
}

#[test]
#[ignore = "child fixture: run by failed_checks_name_where_the_slice_was_freed with --ignored --exact"]
fn child_use_after_a_large_free() {
    child::require_child();
    tern_sanitize_enable();
    const ARENA: i64 = 256 << 20;
    let mut hdr = [0i64; HEADER_WORDS];
    let mut mem = PoolMemory::default();
    // SAFETY: `hdr` and `mem` outlive the pool; the check of the freed slice
    // is the point: the sanitizer refuses it and ends the process.
    unsafe {
        assert!(tern_span_new(hdr.as_mut_ptr(), ARENA, &mut mem) > 0);
        let n = mem.nodes as *mut i32;
        let s = tern_span_alloc(hdr.as_mut_ptr(), n, ARENA);
        assert!(tag_of(s) > 0);
        // The shadow of the whole arena (two bytes a granule) is now
        // resident; freed, it is given back, not just cleared.
        let tagged = resident_bytes();
        tern_sanitize_site(FREE_AT);
        assert_eq!(tern_span_free(hdr.as_mut_ptr(), n, s, ARENA), 0);
        let freed = resident_bytes();
        let shadow = ARENA as usize / 4;
        assert!(
            freed + shadow * 9 / 10 < tagged,
            "resident {tagged} bytes with the slice live, {freed} after its free"
        );
        tern_sanitize_site(USE_AT);
        tern_sanitize_check(s + ARENA / 2, 8, std::ptr::null());
    }
}

#[test]
fn failed_checks_name_where_the_slice_was_freed() {
    for (name, line) in [
        (
            "child_use_after_free",
            "error: t.tern:9:1: use of a freed slice (freed at t.tern:3:5)",
        ),
        (
            "child_use_past_a_shrink",
            "error: t.tern:9:1: use of a freed slice (freed at t.tern:3:5)",
        ),
        (
            "child_use_after_a_large_free",
            "error: t.tern:9:1: use of a freed slice (freed at t.tern:3:5)",
        ),
        (
            "child_use_after_finish_at_the_site",
            "error: t.tern:9:1: use of a freed slice (its pool was finished at t.tern:3:5)",
        ),
    ] {
        assert_eq!(run_child(name), (Some(101), line.to_string()), "{name}");
    }
}

//! Allocators under test behind one small interface, shared by the benches.
#![allow(dead_code)]

pub mod trace;

use std::alloc::{GlobalAlloc, Layout, System};
use std::mem::MaybeUninit;
use std::ptr::NonNull;

use mimalloc::MiMalloc;
use rlsf::Tlsf;
use tern_bench::slab::SlabPool;
use tern_runtime::span_tree::Validate;
use tern_runtime::{Shared, SpanPool, Unchecked};

/// An allocator as the workloads see it: sizes in, handles (address or offset) out.
pub trait Alloc {
    /// Allocates `n` bytes and returns a handle.
    fn alloc(&mut self, n: usize) -> usize;
    /// Frees a handle returned for `n` bytes.
    fn free(&mut self, h: usize, n: usize);
    /// Resizes the block `h` of `old` bytes to `new` bytes (both > 0), keeping
    /// its first `min(old, new)` bytes; returns its handle after the call.
    fn realloc(&mut self, h: usize, old: usize, new: usize) -> usize;
    /// The address of byte 0 of block `h`.
    fn addr(&self, h: usize) -> *mut u8 {
        h as *mut u8
    }
    /// Called at the end of a hot-path iteration (the slab resets here).
    fn end_round(&mut self) {}
}

/// The span pool (either instantiation); handles are offsets.
pub struct Span<V: Validate>(pub SpanPool<V>);

impl<V: Validate> Span<V> {
    pub fn new(arena: i64) -> Self {
        Span(SpanPool::new(arena).expect("span pool"))
    }
}

impl<V: Validate> Alloc for Span<V> {
    #[inline(always)]
    fn alloc(&mut self, n: usize) -> usize {
        match self.0.alloc(n as i64) {
            Ok(o) => o as usize,
            Err(e) => panic!("span alloc: {e}"),
        }
    }
    #[inline(always)]
    fn free(&mut self, h: usize, n: usize) {
        if let Err(e) = self.0.free(h as i64, n as i64) {
            panic!("span free: {e}")
        }
    }
    #[inline(always)]
    fn realloc(&mut self, h: usize, old: usize, new: usize) -> usize {
        match self.0.resize(h as i64, old as i64, new as i64) {
            Ok(o) => o as usize,
            Err(e) => panic!("span resize: {e}"),
        }
    }
    fn addr(&self, h: usize) -> *mut u8 {
        // SAFETY: handles are offsets of live spans inside the arena.
        unsafe { self.0.base().add(h) }
    }
}

pub type SpanUnchecked = Span<Unchecked>;
pub type SpanLibrary = Span<Shared>;

/// mimalloc through its `GlobalAlloc` impl (not installed as the global allocator).
pub struct Mi;

impl Alloc for Mi {
    #[inline(always)]
    fn alloc(&mut self, n: usize) -> usize {
        // SAFETY: n > 0 in every workload.
        unsafe { MiMalloc.alloc(Layout::from_size_align_unchecked(n, 8)) as usize }
    }
    #[inline(always)]
    fn free(&mut self, h: usize, n: usize) {
        // SAFETY: h came from `alloc` with this layout.
        unsafe { MiMalloc.dealloc(h as *mut u8, Layout::from_size_align_unchecked(n, 8)) }
    }
    #[inline(always)]
    fn realloc(&mut self, h: usize, old: usize, new: usize) -> usize {
        // SAFETY: h came from `alloc` with this layout; new > 0.
        unsafe {
            MiMalloc.realloc(h as *mut u8, Layout::from_size_align_unchecked(old, 8), new) as usize
        }
    }
}

/// The system allocator (glibc malloc/free).
pub struct Glibc;

impl Alloc for Glibc {
    #[inline(always)]
    fn alloc(&mut self, n: usize) -> usize {
        // SAFETY: n > 0.
        unsafe { System.alloc(Layout::from_size_align_unchecked(n, 8)) as usize }
    }
    #[inline(always)]
    fn free(&mut self, h: usize, n: usize) {
        // SAFETY: h came from `alloc` with this layout.
        unsafe { System.dealloc(h as *mut u8, Layout::from_size_align_unchecked(n, 8)) }
    }
    #[inline(always)]
    fn realloc(&mut self, h: usize, old: usize, new: usize) -> usize {
        // SAFETY: h came from `alloc` with this layout; new > 0.
        unsafe {
            System.realloc(h as *mut u8, Layout::from_size_align_unchecked(old, 8), new) as usize
        }
    }
}

/// rlsf's TLSF over one memory block of its own.
pub struct Rlsf {
    tlsf: Tlsf<'static, u32, u32, 28, 32>,
}

impl Rlsf {
    pub fn new(bytes: usize) -> Self {
        let mem: &'static mut [MaybeUninit<u8>] =
            Box::leak(vec![MaybeUninit::uninit(); bytes].into_boxed_slice());
        let mut tlsf = Tlsf::new();
        tlsf.insert_free_block(mem);
        Rlsf { tlsf }
    }
}

impl Alloc for Rlsf {
    #[inline(always)]
    fn alloc(&mut self, n: usize) -> usize {
        // SAFETY: valid layout.
        let l = unsafe { Layout::from_size_align_unchecked(n, 8) };
        self.tlsf.allocate(l).expect("rlsf alloc").as_ptr() as usize
    }
    #[inline(always)]
    fn free(&mut self, h: usize, _n: usize) {
        // SAFETY: h came from `allocate` with align 8.
        unsafe {
            self.tlsf
                .deallocate(NonNull::new_unchecked(h as *mut u8), 8)
        }
    }
    #[inline(always)]
    fn realloc(&mut self, h: usize, _old: usize, new: usize) -> usize {
        // SAFETY: h came from `allocate` with align 8; valid layout.
        unsafe {
            let l = Layout::from_size_align_unchecked(new, 8);
            self.tlsf
                .reallocate(NonNull::new_unchecked(h as *mut u8), l)
                .expect("rlsf realloc")
                .as_ptr() as usize
        }
    }
}

/// The slab pool: free is a no-op, the pool resets at the end of each round.
pub struct Slab(pub SlabPool);

impl Alloc for Slab {
    #[inline(always)]
    fn alloc(&mut self, n: usize) -> usize {
        self.0.alloc(n) as usize
    }
    #[inline(always)]
    fn free(&mut self, _h: usize, _n: usize) {}
    fn realloc(&mut self, h: usize, old: usize, new: usize) -> usize {
        let to = self.0.alloc(new) as usize;
        // SAFETY: both blocks are the slab's, disjoint, at least min(old, new) long.
        unsafe { std::ptr::copy_nonoverlapping(h as *const u8, to as *mut u8, old.min(new)) };
        to
    }
    fn end_round(&mut self) {
        self.0.reset();
    }
}

/// xorshift64: a deterministic stream for the workloads.
pub struct Rng(pub u64);

impl Rng {
    #[inline(always)]
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
}

/// Live spans for the churn workload.
pub const CHURN_LIVE: usize = 1000;

/// Live-span counts of the scale workloads, with their names.
pub const SCALE: [(&str, usize); 4] = [
    ("1k", 1_000),
    ("10k", 10_000),
    ("100k", 100_000),
    ("1m", 1_000_000),
];

/// Warm-up steps for a churn over `live` spans: enough for fragmentation to
/// reach steady state (every block replaced about twice), at least 200 000.
pub const fn scale_warmup(live: usize) -> usize {
    if 2 * live > 200_000 {
        2 * live
    } else {
        200_000
    }
}

/// An arena (or TLSF block) large enough for a churn over `live` spans of at
/// most 1024 bytes with first fit's fragmentation: 2 KiB per live span, at
/// least 64 MiB. Reserved lazily, so only what is touched is resident.
pub const fn scale_arena(live: usize) -> i64 {
    let bytes = live as i64 * 2048;
    if bytes > 64 << 20 { bytes } else { 64 << 20 }
}

/// The churn workload's state: live blocks of random 16–1024 bytes (multiples
/// of 8); each step frees a random one and allocates a new one.
pub struct Churn {
    pub live: Vec<(usize, usize)>,
    pub rng: Rng,
}

impl Churn {
    /// Fills `CHURN_LIVE` live blocks and runs `warm` steps.
    pub fn new<A: Alloc>(a: &mut A, warm: usize) -> Self {
        Self::with_live(a, CHURN_LIVE, warm)
    }

    /// Fills the live set with `live` blocks and runs `warm` steps so
    /// fragmentation reaches steady state.
    pub fn with_live<A: Alloc>(a: &mut A, live: usize, warm: usize) -> Self {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let live = (0..live)
            .map(|_| {
                let n = Self::size(&mut rng);
                (a.alloc(n), n)
            })
            .collect();
        let mut c = Churn { live, rng };
        c.steps(a, warm);
        c
    }

    #[inline(always)]
    fn size(rng: &mut Rng) -> usize {
        16 + (rng.next() % 127) as usize * 8
    }

    /// Runs `k` churn steps.
    #[inline(always)]
    pub fn steps<A: Alloc>(&mut self, a: &mut A, k: usize) {
        let live = self.live.len();
        for _ in 0..k {
            let r = self.rng.next();
            let i = (r >> 32) as usize % live;
            let (h, n) = self.live[i];
            a.free(h, n);
            let n = Self::size(&mut self.rng);
            self.live[i] = (a.alloc(n), n);
        }
    }
}

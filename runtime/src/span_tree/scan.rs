//! Node scans: the loops that dominate the tree's time, in a portable form and
//! (for the two over lengths) an AVX2 form, chosen by the CPU the program runs on.
//!
//! * [`fit_index`] — the first of a node's lengths (span lengths or subtree
//!   maxima) that can hold `b` bytes: the step of every `alloc` descent;
//! * [`max`] — the largest length in a node: the summary its parent keeps;
//! * [`count_le`] — how many of a node's keys are `<= off`: the step of every
//!   descent by key (`free`, `resize`); portable only (see there).
//!
//! Each reads a fixed block of `K` slots (the fanout) rather than the node's `n`
//! entries, so it compiles to straight-line code with no branch on the count
//! (smaller blocks for small nodes saved instructions but mispredicted on churn,
//! where node counts vary, and measured slower). Slots past `n` are empty (key
//! `i64::MAX`, length 0; `tree.rs` keeps that invariant): `max` and `count_le`
//! rely on it, `fit_index` clamps its answer to `n` anyway. In a checked tree that
//! the program corrupted, a wrong maximum can only send a later descent into a
//! child without a fit, which is reported as corruption; the checked tree clamps
//! `count_le` to `n`.
//!
//! Dispatch is per scan: the tree operation stays inlined into its caller (the
//! hot path of one- and two-span nodes never scans), and a scan of a larger node
//! reads a cached byte and calls the AVX2 scan directly when it says so; the
//! first test of the CPU and the portable form sit behind one out-of-line call.
//! Measured against the alternatives: `is_x86_feature_detected!` inline at every
//! scan (its rare first-use path in every operation) cost the hot path 3 to 9
//! instructions per alloc+free pair; the whole dispatch out of line (two calls per
//! scan) cost churn 31 instructions per step; compiling whole operations twice and
//! dispatching at their entry cost the hot path 156 → 264 instructions per pair
//! and churn 579 → 664 per step (the operation no longer inlines into its
//! caller). x86-64's baseline (SSE2) has no 64-bit compare, so the portable form
//! is branch-free scalar code.

use std::hint::select_unpredictable;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// A way to scan a node's length slots.
pub trait Scan: Copy + 'static {
    /// The first `i < n` with `lens[i] >= b`, or `n`; reads slots `0..K`.
    ///
    /// # Safety
    /// `lens` must be valid for reads of `K` words; `b >= 1`; `n <= K`; `K` is
    /// 8, 16 or 32.
    unsafe fn fit_index<const K: usize>(lens: *const i64, n: usize, b: i64) -> usize;

    /// The largest of slots `0..K` (all lengths are `>= 0`).
    ///
    /// # Safety
    /// `lens` must be valid for reads of `K` words; `K` is 8, 16 or 32.
    unsafe fn max<const K: usize>(lens: *const i64) -> i64;
}

/// Branch-free scalar scans (any CPU).
#[derive(Clone, Copy, Debug)]
pub struct Portable;

impl Scan for Portable {
    #[inline(always)]
    unsafe fn fit_index<const K: usize>(lens: *const i64, n: usize, b: i64) -> usize {
        let mut mask: u64 = 0;
        for i in 0..K {
            // SAFETY: i < K (the caller's contract).
            mask |= ((unsafe { lens.add(i).read() } >= b) as u64) << i;
        }
        (mask.trailing_zeros() as usize).min(n)
    }

    #[inline(always)]
    unsafe fn max<const K: usize>(lens: *const i64) -> i64 {
        // Reduced pairwise: a running max is a dependency chain that the
        // compiler turns back into branches.
        let mut a = [0i64; K];
        for (i, v) in a.iter_mut().enumerate() {
            // SAFETY: i < K (the caller's contract).
            *v = unsafe { lens.add(i).read() };
        }
        let mut w = K / 2;
        while w > 0 {
            for i in 0..w {
                a[i] = select_unpredictable(a[i + w] > a[i], a[i + w], a[i]);
            }
            w /= 2;
        }
        a[0]
    }
}

/// AVX2 scans: four 64-bit compares per instruction (only inside functions
/// compiled for AVX2, as [`fit_index`] and [`max`] call them).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub struct Avx2;

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    /// Loads slots `4j..4j+4`.
    ///
    /// # Safety
    /// Inside an AVX2 function; `p` valid for 4 words past `4 * j`.
    #[inline(always)]
    pub(super) unsafe fn load(p: *const i64, j: usize) -> __m256i {
        unsafe { _mm256_loadu_si256(p.add(4 * j).cast()) }
    }

    /// Two mask bits per element for 16 compare results (4 vectors of 4), in
    /// element order: bits `2e` and `2e + 1` are element `e`'s.
    ///
    /// # Safety
    /// Inside an AVX2 function.
    #[inline(always)]
    pub(super) unsafe fn mask16(c: [__m256i; 4]) -> u32 {
        unsafe {
            // Each 64-bit all-ones/zero lane becomes 16 bits after two saturating
            // packs, which work per 128-bit half: the 32-bit units come out as
            // elements (0,1) (4,5) (8,9) (12,13) (2,3) (6,7) (10,11) (14,15).
            let p01 = _mm256_packs_epi32(c[0], c[1]);
            let p23 = _mm256_packs_epi32(c[2], c[3]);
            let q = _mm256_packs_epi16(p01, p23);
            let q = _mm256_permutevar8x32_epi32(q, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_movemask_epi8(q) as u32
        }
    }

    /// Lane-wise signed maximum (AVX2 has no `vpmaxsq`).
    ///
    /// # Safety
    /// Inside an AVX2 function.
    #[inline(always)]
    pub(super) unsafe fn max2(a: __m256i, b: __m256i) -> __m256i {
        unsafe { _mm256_blendv_epi8(a, b, _mm256_cmpgt_epi64(b, a)) }
    }
}

#[cfg(target_arch = "x86_64")]
impl Scan for Avx2 {
    #[inline(always)]
    unsafe fn fit_index<const K: usize>(lens: *const i64, n: usize, b: i64) -> usize {
        use std::arch::x86_64::*;
        // SAFETY: only called from functions compiled for AVX2; reads stay
        // within the caller's K slots.
        unsafe {
            // The compares ask `b > len` (too short), so that each load folds
            // into its compare as the memory operand; the fit mask is the
            // complement.
            let t = _mm256_set1_epi64x(b);
            let short = |j| _mm256_cmpgt_epi64(t, avx2::load(lens, j));
            let first = if K == 8 {
                let m = _mm256_movemask_pd(_mm256_castsi256_pd(short(0)))
                    | (_mm256_movemask_pd(_mm256_castsi256_pd(short(1))) << 4);
                (!m as u32 & 0xff | 1 << 8).trailing_zeros() as usize
            } else if K == 16 {
                let m = avx2::mask16([short(0), short(1), short(2), short(3)]);
                (!m).trailing_zeros() as usize / 2
            } else {
                let lo = u64::from(avx2::mask16([short(0), short(1), short(2), short(3)]));
                let hi = u64::from(avx2::mask16([short(4), short(5), short(6), short(7)]));
                (!(lo | hi << 32)).trailing_zeros() as usize / 2
            };
            first.min(n)
        }
    }

    #[inline(always)]
    unsafe fn max<const K: usize>(lens: *const i64) -> i64 {
        use std::arch::x86_64::*;
        // SAFETY: as in `fit_index`.
        unsafe {
            let v = |j| avx2::load(lens, j);
            let mut m = avx2::max2(v(0), v(1));
            if K >= 16 {
                m = avx2::max2(m, avx2::max2(v(2), v(3)));
            }
            if K == 32 {
                let a = avx2::max2(v(4), v(5));
                let b = avx2::max2(v(6), v(7));
                m = avx2::max2(m, avx2::max2(a, b));
            }
            let m = avx2::max2(m, _mm256_permute2x128_si256(m, m, 1));
            let m = avx2::max2(m, _mm256_shuffle_epi32(m, 0x4E));
            _mm_cvtsi128_si64(_mm256_castsi256_si128(m))
        }
    }
}

/// The first `i < n` with `lens[i] >= b`, or `n`, reading slots `0..K`.
///
/// # Safety
/// `lens` must be valid for reads of `K` words; `b >= 1`; `n <= K`; `K` is 8,
/// 16 or 32.
#[inline(always)]
pub unsafe fn fit_index<const K: usize>(lens: *const i64, n: usize, b: i64) -> usize {
    #[target_feature(enable = "avx2")]
    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    unsafe fn avx2<const K: usize>(lens: *const i64, n: usize, b: i64) -> usize {
        // SAFETY: the caller's contract.
        unsafe { Avx2::fit_index::<K>(lens, n, b) }
    }
    #[inline(never)]
    unsafe fn other<const K: usize>(lens: *const i64, n: usize, b: i64) -> usize {
        #[cfg(target_arch = "x86_64")]
        if use_avx2() {
            // SAFETY: the CPU has AVX2; the caller's contract.
            return unsafe { avx2::<K>(lens, n, b) };
        }
        // SAFETY: the caller's contract.
        unsafe { Portable::fit_index::<K>(lens, n, b) }
    }
    #[cfg(target_arch = "x86_64")]
    if USE_AVX2.load(Ordering::Relaxed) == YES {
        // SAFETY: `YES` is stored only when the CPU has AVX2.
        return unsafe { avx2::<K>(lens, n, b) };
    }
    // SAFETY: the caller's contract.
    unsafe { other::<K>(lens, n, b) }
}

/// The largest of slots `0..K` (lengths `>= 0`).
///
/// # Safety
/// `lens` must be valid for reads of `K` words; `K` is 8, 16 or 32.
#[inline(always)]
pub unsafe fn max<const K: usize>(lens: *const i64) -> i64 {
    #[target_feature(enable = "avx2")]
    #[cfg(target_arch = "x86_64")]
    #[inline(never)]
    unsafe fn avx2<const K: usize>(lens: *const i64) -> i64 {
        // SAFETY: the caller's contract.
        unsafe { Avx2::max::<K>(lens) }
    }
    #[inline(never)]
    unsafe fn other<const K: usize>(lens: *const i64) -> i64 {
        #[cfg(target_arch = "x86_64")]
        if use_avx2() {
            // SAFETY: the CPU has AVX2; the caller's contract.
            return unsafe { avx2::<K>(lens) };
        }
        // SAFETY: the caller's contract.
        unsafe { Portable::max::<K>(lens) }
    }
    #[cfg(target_arch = "x86_64")]
    if USE_AVX2.load(Ordering::Relaxed) == YES {
        // SAFETY: `YES` is stored only when the CPU has AVX2.
        return unsafe { avx2::<K>(lens) };
    }
    // SAFETY: the caller's contract.
    unsafe { other::<K>(lens) }
}

/// How many of slots `0..K` hold a key `<= off` (keys increasing; slots past a
/// node's count hold `i64::MAX`, never `<= off` for an offset): a branch-free
/// binary search, each step a constant stride, so the loop unrolls.
///
/// Not vectorized: an AVX2 count (8 compares, a popcount) was measured at
/// +109 instructions and +12 % time per churn step against this search inline
/// (the call, and the packs on the critical path, cost more than the five
/// dependent loads they replace).
///
/// # Safety
/// `keys` must be valid for reads of `K` words; `K` is 8, 16 or 32.
#[inline(always)]
pub unsafe fn count_le<const K: usize>(keys: *const i64, off: i64) -> usize {
    // SAFETY: every index read is below K (the caller's contract).
    let key = |i: usize| unsafe { keys.add(i).read() };
    let mut base = 0;
    let mut step = K / 2;
    while step > 0 {
        let k = base + step;
        base = select_unpredictable(key(k) <= off, k, base);
        step /= 2;
    }
    if key(0) <= off { base + 1 } else { 0 }
}

/// Set by [`set_portable_only`].
static PORTABLE_ONLY: AtomicBool = AtomicBool::new(false);

/// Makes every later scan in this process take the portable form even on a CPU
/// with AVX2 (`false`: use AVX2 again where the CPU has it). For the tests of the
/// portable form and for measuring the two forms side by side; the results are
/// identical by construction, so the switch never changes a placement.
pub fn set_portable_only(on: bool) {
    PORTABLE_ONLY.store(on, Ordering::Relaxed);
    USE_AVX2.store(UNKNOWN, Ordering::Relaxed);
}

/// [`USE_AVX2`]: not yet known.
const UNKNOWN: u8 = 0;
/// [`USE_AVX2`]: the scans use AVX2.
const YES: u8 = 1;
/// [`USE_AVX2`]: the scans are portable.
const NO: u8 = 2;

/// Whether the scans use AVX2, cached: the scans test it with one load and
/// one compare inline, and leave everything else (the first test, the portable
/// form) to an out-of-line call.
static USE_AVX2: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Whether the scans use AVX2: the CPU has it and [`set_portable_only`] did not
/// turn it off.
pub fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !PORTABLE_ONLY.load(Ordering::Relaxed) && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// [`avx2_available`], cached in [`USE_AVX2`] on first use.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn use_avx2() -> bool {
    match USE_AVX2.load(Ordering::Relaxed) {
        YES => true,
        NO => false,
        _ => {
            let yes = avx2_available();
            USE_AVX2.store(if yes { YES } else { NO }, Ordering::Relaxed);
            yes
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `f` over many blocks of 32 lengths (zeros past a random `n`).
    fn blocks(mut f: impl FnMut(&[i64; 32], usize)) {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..20_000 {
            let n = (next() % 33) as usize;
            let mut lens = [0i64; 32];
            for l in lens.iter_mut().take(n) {
                // Small values collide often (ties), large ones reach i64::MAX.
                *l = if round % 2 == 0 {
                    (next() % 64) as i64 * 8
                } else {
                    (next() >> 1) as i64
                };
            }
            f(&lens, n);
        }
    }

    fn expected_fit(lens: &[i64; 32], n: usize, b: i64) -> usize {
        (0..n).find(|&i| lens[i] >= b).unwrap_or(n)
    }

    fn check<S: Scan>() {
        blocks(|lens, n| {
            let p = lens.as_ptr();
            for b in [1, 8, 16, 100, 256, 511, i64::MAX / 2, i64::MAX] {
                let want = expected_fit(lens, n, b);
                // SAFETY: 32 slots; K >= n for each call made.
                unsafe {
                    if n <= 8 {
                        assert_eq!(S::fit_index::<8>(p, n, b), want, "{lens:?} n={n} b={b}");
                    }
                    if n <= 16 {
                        assert_eq!(S::fit_index::<16>(p, n, b), want, "{lens:?} n={n} b={b}");
                    }
                    assert_eq!(S::fit_index::<32>(p, n, b), want, "{lens:?} n={n} b={b}");
                }
            }
            // Keys: the lengths made strictly increasing, +inf past n.
            let mut keys = [i64::MAX; 32];
            let mut k = 0i64;
            for (i, key) in keys.iter_mut().enumerate().take(n) {
                k += 8 + (lens[i] & 0xff8);
                *key = k;
            }
            for off in [-1, 0, 7, 8, 100, 4096, k - 1, k, k + 1, i64::MAX - 1] {
                let want = keys.iter().filter(|&&x| x <= off).count();
                let kp = keys.as_ptr();
                // SAFETY: 32 slots.
                unsafe {
                    if n <= 8 {
                        assert_eq!(count_le::<8>(kp, off), want, "{keys:?} off={off}");
                    }
                    if n <= 16 {
                        assert_eq!(count_le::<16>(kp, off), want, "{keys:?} off={off}");
                    }
                    assert_eq!(count_le::<32>(kp, off), want, "{keys:?} off={off}");
                }
            }
            let want = lens.iter().copied().max().unwrap();
            // SAFETY: 32 slots.
            unsafe {
                if n <= 8 {
                    assert_eq!(S::max::<8>(p), want);
                }
                if n <= 16 {
                    assert_eq!(S::max::<16>(p), want);
                }
                assert_eq!(S::max::<32>(p), want);
            }
        });
    }

    #[test]
    fn portable_scans_match_the_definition() {
        check::<Portable>();
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_scans_match_the_definition() {
        #[target_feature(enable = "avx2")]
        fn run() {
            check::<Avx2>();
        }
        if avx2_available() {
            // SAFETY: the CPU has AVX2.
            unsafe { run() }
        }
    }
}

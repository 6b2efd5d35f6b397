//! Node scans and entry shifts: the loops that dominate the tree's time, over
//! the 32 slots of one node array (32-bit words), in a portable form and an
//! AVX2 form (8 lanes per instruction: a whole array in four).
//!
//! * [`Simd::first_gt`] — the first slot whose word exceeds a value: the first
//!   fit by length (`lens[i] > b - 1`) and the count of keys `<= off` (keys
//!   increase, empty slots hold `EMPTY_KEY`);
//! * [`Simd::max`] — the largest length in a node: the summary its parent keeps;
//! * [`Simd::shift_right`], [`Simd::shift_left`] — open or close slot `i` of an
//!   array (an entry's insertion or removal), reading one word past the array's
//!   ends (the layout's sentinels make the vacated last slot empty).
//!
//! Each reads the whole block of 32 slots rather than a node's `n` entries, so it
//! is straight-line code with no branch on the count. In a checked tree the
//! program may have written anything into the slots: every answer is still a slot
//! index in `0..=32` and every access stays inside the node.
//!
//! Dispatch is per tree *operation*, not per scan (`super::tree::entry`): an
//! operation is compiled once for each backend and the entry point picks one by
//! [`use_avx2`], a cached byte, so the scans inline into the AVX2 copy.

use std::sync::atomic::{AtomicU8, Ordering};

use super::layout::{FANOUT, Word};

/// A way to scan and edit a node's 32-slot arrays.
pub trait Simd: Copy + Default + 'static {
    /// The first `i < 32` with `a[i] > t`, or 32.
    ///
    /// # Safety
    /// `a` must be valid for reads of 32 words.
    unsafe fn first_gt(a: *const Word, t: Word) -> usize;

    /// The largest of `a[0..32]`.
    ///
    /// # Safety
    /// As for [`Simd::first_gt`].
    unsafe fn max(a: *const Word) -> Word;

    /// The largest of `a[0..i]` and 0 (`i <= 32`; words read as they are,
    /// so a negative word counts as 0).
    ///
    /// # Safety
    /// As for [`Simd::first_gt`].
    unsafe fn max_before(a: *const Word, i: usize) -> Word;

    /// [`Simd::first_gt`] and [`Simd::max_before`] of its answer in one
    /// pass: the first `i` with `a[i] > t` (or 32), and the largest of
    /// `a[0..i]` and 0.
    ///
    /// # Safety
    /// As for [`Simd::first_gt`].
    unsafe fn first_gt_and_max_before(a: *const Word, t: Word) -> (usize, Word);

    /// A bit for each `j < 8` with `a[j] < v`.
    ///
    /// # Safety
    /// `a` must be valid for reads of 8 words.
    unsafe fn below8(a: *const Word, v: Word) -> u32;

    /// `a[j] = a[j - 1]` for `j` in `i + 1..32` (slot `i` keeps its word, which
    /// the caller overwrites). `i < 32`.
    ///
    /// # Safety
    /// `a - 1 .. a + 32` must be valid for reads and `a .. a + 32` for writes.
    unsafe fn shift_right(a: *mut Word, i: usize);

    /// `a[j] = a[j + 1]` for `j` in `i..32` (slot 31 takes the word after the
    /// array). `i < 32`.
    ///
    /// # Safety
    /// `a .. a + 33` must be valid for reads and `a .. a + 32` for writes.
    unsafe fn shift_left(a: *mut Word, i: usize);
}

/// Scalar code (any CPU; what a CPU without AVX2 runs).
#[derive(Clone, Copy, Debug, Default)]
pub struct Portable;

impl Simd for Portable {
    #[inline(always)]
    unsafe fn first_gt(a: *const Word, t: Word) -> usize {
        let mut mask: u64 = 1 << FANOUT;
        for i in 0..FANOUT {
            // SAFETY: i < 32 (the caller's contract).
            mask |= ((unsafe { a.add(i).read() } > t) as u64) << i;
        }
        mask.trailing_zeros() as usize
    }

    #[inline(always)]
    unsafe fn max(a: *const Word) -> Word {
        // Reduced pairwise: a running max is a dependency chain that the
        // compiler turns back into branches.
        let mut v = [0 as Word; FANOUT];
        for (i, w) in v.iter_mut().enumerate() {
            // SAFETY: i < 32.
            *w = unsafe { a.add(i).read() };
        }
        let mut w = FANOUT / 2;
        while w > 0 {
            for i in 0..w {
                v[i] = v[i].max(v[i + w]);
            }
            w /= 2;
        }
        v[0]
    }

    #[inline(always)]
    unsafe fn max_before(a: *const Word, i: usize) -> Word {
        let mut m = 0;
        for j in 0..i.min(FANOUT) {
            // SAFETY: j < 32.
            m = m.max(unsafe { a.add(j).read() });
        }
        m
    }

    #[inline(always)]
    unsafe fn first_gt_and_max_before(a: *const Word, t: Word) -> (usize, Word) {
        // SAFETY: the caller's contract.
        unsafe {
            let i = Self::first_gt(a, t);
            (i, Self::max_before(a, i))
        }
    }

    #[inline(always)]
    unsafe fn below8(a: *const Word, v: Word) -> u32 {
        let mut m = 0;
        for j in 0..8 {
            // SAFETY: j < 8 (the caller's contract).
            m |= ((unsafe { a.add(j).read() } < v) as u32) << j;
        }
        m
    }

    #[inline(always)]
    unsafe fn shift_right(a: *mut Word, i: usize) {
        let mut j = FANOUT - 1;
        while j > i {
            // SAFETY: i < j < 32.
            unsafe { a.add(j).write(a.add(j - 1).read()) };
            j -= 1;
        }
    }

    #[inline(always)]
    unsafe fn shift_left(a: *mut Word, i: usize) {
        for j in i..FANOUT {
            // SAFETY: j + 1 <= 32 (the caller's contract).
            unsafe { a.add(j).write(a.add(j + 1).read()) };
        }
    }
}

/// AVX2 code: eight 32-bit lanes per instruction (only inside functions
/// compiled for AVX2: the operations' AVX2 copies).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug, Default)]
pub struct Avx2;

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::Word;

    /// The four vectors of an array.
    #[inline(always)]
    pub(super) unsafe fn load4(a: *const Word) -> [__m256i; 4] {
        // SAFETY: the caller's contract: 32 readable words.
        unsafe {
            [
                _mm256_loadu_si256(a.cast()),
                _mm256_loadu_si256(a.add(8).cast()),
                _mm256_loadu_si256(a.add(16).cast()),
                _mm256_loadu_si256(a.add(24).cast()),
            ]
        }
    }

    /// One bit per lane of four compare results, in slot order.
    #[inline(always)]
    pub(super) unsafe fn mask32(c: [__m256i; 4]) -> u32 {
        // SAFETY: register-only intrinsics; the caller runs with AVX2.
        unsafe {
            // Saturating packs work per 128-bit half: the 4-lane groups come out
            // as c0.lo c1.lo c2.lo c3.lo | c0.hi c1.hi c2.hi c3.hi; the permute
            // puts them back in slot order.
            let p01 = _mm256_packs_epi32(c[0], c[1]);
            let p23 = _mm256_packs_epi32(c[2], c[3]);
            let q = _mm256_packs_epi16(p01, p23);
            let q = _mm256_permutevar8x32_epi32(q, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
            _mm256_movemask_epi8(q) as u32
        }
    }

    /// Lanes `j` of vector `v` (slots `8v + j`) where `8v + j > i`, as masks.
    #[inline(always)]
    pub(super) unsafe fn after(i: i32) -> [__m256i; 4] {
        // SAFETY: register-only intrinsics; the caller runs with AVX2.
        unsafe {
            let i = _mm256_set1_epi32(i);
            let at = |v: i32| {
                _mm256_cmpgt_epi32(
                    _mm256_setr_epi32(
                        8 * v,
                        8 * v + 1,
                        8 * v + 2,
                        8 * v + 3,
                        8 * v + 4,
                        8 * v + 5,
                        8 * v + 6,
                        8 * v + 7,
                    ),
                    i,
                )
            };
            [at(0), at(1), at(2), at(3)]
        }
    }

    /// Writes `blend(cur, moved, mask)` to the four vectors at `a` (moved
    /// lanes where the mask is set).
    #[inline(always)]
    pub(super) unsafe fn blend_store(
        a: *mut Word,
        cur: [__m256i; 4],
        moved: [__m256i; 4],
        m: [__m256i; 4],
    ) {
        // SAFETY: the caller's contract: 32 writable words, and AVX2.
        unsafe {
            for v in 0..4 {
                _mm256_storeu_si256(
                    a.add(8 * v).cast(),
                    _mm256_blendv_epi8(cur[v], moved[v], m[v]),
                );
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl Simd for Avx2 {
    #[inline(always)]
    unsafe fn first_gt(a: *const Word, t: Word) -> usize {
        use std::arch::x86_64::*;
        // SAFETY: only inlined into functions compiled for AVX2; 32 words.
        unsafe {
            let t = _mm256_set1_epi32(t);
            // The first eight slots alone first: the answer is there in a
            // node of a few entries, and one compare's mask is a shorter
            // chain than the four packed into one (a miss costs the mask's
            // test: this compare is reused below).
            let first = _mm256_cmpgt_epi32(_mm256_loadu_si256(a.cast()), t);
            let m = _mm256_movemask_ps(_mm256_castsi256_ps(first)) as u32;
            if m != 0 {
                return m.trailing_zeros() as usize;
            }
            let v = avx2::load4(a);
            let c = [
                _mm256_cmpgt_epi32(v[0], t),
                _mm256_cmpgt_epi32(v[1], t),
                _mm256_cmpgt_epi32(v[2], t),
                _mm256_cmpgt_epi32(v[3], t),
            ];
            avx2::mask32(c).trailing_zeros() as usize
        }
    }

    #[inline(always)]
    unsafe fn max(a: *const Word) -> Word {
        use std::arch::x86_64::*;
        // SAFETY: as in `first_gt`.
        unsafe {
            let v = avx2::load4(a);
            let m = _mm256_max_epi32(_mm256_max_epi32(v[0], v[1]), _mm256_max_epi32(v[2], v[3]));
            let m = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
            let m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0b01_00_11_10));
            let m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0b10_11_00_01));
            _mm_cvtsi128_si32(m)
        }
    }

    #[inline(always)]
    unsafe fn max_before(a: *const Word, i: usize) -> Word {
        use std::arch::x86_64::*;
        // SAFETY: as in `first_gt`.
        unsafe {
            let v = avx2::load4(a);
            // Lanes at or past `i` are masked off (they read as 0).
            let keep = avx2::after(i as i32 - 1);
            let z = |k: usize| _mm256_andnot_si256(keep[k], v[k]);
            let m = _mm256_max_epi32(_mm256_max_epi32(z(0), z(1)), _mm256_max_epi32(z(2), z(3)));
            let m = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
            let m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0b01_00_11_10));
            let m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0b10_11_00_01));
            _mm_cvtsi128_si32(m).max(0)
        }
    }

    #[inline(always)]
    unsafe fn first_gt_and_max_before(a: *const Word, t: Word) -> (usize, Word) {
        use std::arch::x86_64::*;
        // SAFETY: as in `first_gt`.
        unsafe {
            let tv = _mm256_set1_epi32(t);
            let v = avx2::load4(a);
            let c = [
                _mm256_cmpgt_epi32(v[0], tv),
                _mm256_cmpgt_epi32(v[1], tv),
                _mm256_cmpgt_epi32(v[2], tv),
                _mm256_cmpgt_epi32(v[3], tv),
            ];
            let i = avx2::mask32(c).trailing_zeros() as usize;
            // Lanes at or past `i` are masked off (they read as 0).
            let keep = avx2::after(i as i32 - 1);
            let z = |k: usize| _mm256_andnot_si256(keep[k], v[k]);
            let m = _mm256_max_epi32(_mm256_max_epi32(z(0), z(1)), _mm256_max_epi32(z(2), z(3)));
            let m = _mm_max_epi32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
            let m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0b01_00_11_10));
            let m = _mm_max_epi32(m, _mm_shuffle_epi32(m, 0b10_11_00_01));
            (i, _mm_cvtsi128_si32(m).max(0))
        }
    }

    #[inline(always)]
    unsafe fn below8(a: *const Word, v: Word) -> u32 {
        use std::arch::x86_64::*;
        // SAFETY: as in `first_gt`; 8 words.
        unsafe {
            let c = _mm256_cmpgt_epi32(_mm256_set1_epi32(v), _mm256_loadu_si256(a.cast()));
            _mm256_movemask_ps(_mm256_castsi256_ps(c)) as u32
        }
    }

    #[inline(always)]
    unsafe fn shift_right(a: *mut Word, i: usize) {
        // SAFETY: as in `first_gt`; the caller's contract covers `a - 1`.
        unsafe {
            let cur = avx2::load4(a);
            let moved = avx2::load4(a.sub(1));
            avx2::blend_store(a, cur, moved, avx2::after(i as i32));
        }
    }

    #[inline(always)]
    unsafe fn shift_left(a: *mut Word, i: usize) {
        // SAFETY: as in `first_gt`; the caller's contract covers `a + 32`.
        unsafe {
            let cur = avx2::load4(a);
            let moved = avx2::load4(a.add(1));
            avx2::blend_store(a, cur, moved, avx2::after(i as i32 - 1));
        }
    }
}

/// [`use_avx2`]'s cache: 0 = not yet tested, 1 = portable, 2 = AVX2.
static BACKEND: AtomicU8 = AtomicU8::new(0);

/// Whether the operations run their AVX2 copies: the CPU has AVX2 (with BMI1
/// and POPCNT, which every AVX2 CPU has) and [`set_portable_only`] is off.
#[inline(always)]
pub fn use_avx2() -> bool {
    // The AVX2 answer first: one compare on the path every operation takes.
    let b = BACKEND.load(Ordering::Relaxed);
    b == 2 || (b == 0 && detect())
}

/// Whether the AVX2 copies are known to be the ones to run: [`use_avx2`]
/// without the first call's detection (false until it has run).
#[inline(always)]
pub fn avx2_selected() -> bool {
    BACKEND.load(Ordering::Relaxed) == 2
}

#[cold]
#[inline(never)]
fn detect() -> bool {
    #[cfg(target_arch = "x86_64")]
    let yes = std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("popcnt");
    #[cfg(not(target_arch = "x86_64"))]
    let yes = false;
    BACKEND.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
    super::append_window::note_backend(yes);
    yes
}

/// Forces the portable copies (`true`) or restores the CPU's choice: for tests
/// and for measuring what a CPU without AVX2 runs.
pub fn set_portable_only(on: bool) {
    // Not selected either way until the next detection.
    super::append_window::note_backend(false);
    if on {
        BACKEND.store(1, Ordering::Relaxed);
    } else {
        BACKEND.store(0, Ordering::Relaxed);
    }
}

/// Whether this CPU has what the AVX2 copies need (whatever
/// [`set_portable_only`] says).
pub fn avx2_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Defines `fn NAME(ARGS) -> R` that runs `IMPL::<B, G...>(ARGS)` for the CPU's
/// backend `B`: an AVX2 copy (compiled for AVX2, so the scans inline into it)
/// and a portable copy, each out of line, chosen by [`use_avx2`]. The unit of
/// dispatch is a whole operation with its glue, taking a pointer or two, so the
/// choice costs a load and a branch and the copies keep their arguments in
/// registers. (A closure handed to a `#[target_feature]` function is compiled
/// without the feature: the scans became calls.) With `unsafe fn`, the
/// definition is `unsafe` and so is the implementation it calls.
#[macro_export]
#[doc(hidden)]
macro_rules! simd_dispatch {
    ($(#[$m:meta])* $vis:vis fn $name:ident $(<$($g:ident: $bound:path),*>)? ($($a:ident: $t:ty),*) -> $r:ty => $($imp:ident)::+;) => {
        $(#[$m])*
        #[inline(always)]
        $vis fn $name $(<$($g: $bound),*>)? ($($a: $t),*) -> $r {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,bmi1,popcnt")]
                #[inline(never)]
                fn avx2 $(<$($g: $bound),*>)? ($($a: $t),*) -> $r {
                    $($imp)::+::<$crate::span_tree::scan::Avx2 $($(, $g)*)?>($($a),*)
                }
                if $crate::span_tree::scan::use_avx2() {
                    // SAFETY: `use_avx2` found the features.
                    return unsafe { avx2($($a),*) };
                }
            }
            #[inline(never)]
            fn portable $(<$($g: $bound),*>)? ($($a: $t),*) -> $r {
                $($imp)::+::<$crate::span_tree::scan::Portable $($(, $g)*)?>($($a),*)
            }
            portable($($a),*)
        }
    };
    // An entry point's body, its copies of the C ABI `$abi`: with `"C"`
    // (they cannot unwind) the dispatching caller, an `extern "C"` entry
    // point itself, jumps to its copy instead of calling it under an abort
    // guard, and has no frame of its own; with `"C-unwind"` a caller that
    // catches panics calls it with nothing to keep across the call.
    ($(#[$m:meta])* $vis:vis unsafe extern $abi:literal fn $name:ident ($($a:ident: $t:ty),*) -> $r:ty => $($imp:ident)::+;) => {
        $(#[$m])*
        #[inline(always)]
        $vis unsafe fn $name($($a: $t),*) -> $r {
            #[cfg(target_arch = "x86_64")]
            if $crate::span_tree::scan::avx2_selected() {
                // SAFETY: `avx2_selected` says the features were found; the
                // caller's contract.
                return unsafe { $name::avx2($($a),*) };
            }
            // SAFETY: the caller's contract.
            unsafe { $name::other($($a),*) }
        }
        #[doc = concat!("The copies of [`", stringify!($name), "`], one per backend, \
            and its dispatch off the AVX2 path: a caller that has made \
            the test itself (`avx2_selected`) may call `avx2` directly.")]
        $vis mod $name {
            #[allow(unused_imports)]
            use super::*;
            /// The body on the AVX2 backend.
            ///
            /// # Safety
            /// The caller's contract, and the CPU has AVX2, BMI1 and POPCNT.
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,bmi1,popcnt")]
            #[inline(never)]
            pub unsafe extern $abi fn avx2($($a: $t),*) -> $r {
                // SAFETY: the caller's contract.
                unsafe { $($imp)::+::<$crate::span_tree::scan::Avx2>($($a),*) }
            }
            /// Everything but the AVX2 path (the first call, a CPU without
            /// AVX2, the portable copies forced), out of line, so the entry
            /// point saves no register for it.
            ///
            /// # Safety
            /// The caller's contract.
            #[cold]
            #[inline(never)]
            pub unsafe extern $abi fn other($($a: $t),*) -> $r {
                #[cfg(target_arch = "x86_64")]
                if $crate::span_tree::scan::use_avx2() {
                    // SAFETY: `use_avx2` found the features; the caller's contract.
                    return unsafe { avx2($($a),*) };
                }
                // SAFETY: the caller's contract.
                unsafe { portable($($a),*) }
            }
            /// The body on the portable backend.
            ///
            /// # Safety
            /// The caller's contract.
            #[inline(never)]
            pub unsafe extern $abi fn portable($($a: $t),*) -> $r {
                // SAFETY: the caller's contract.
                unsafe { $($imp)::+::<$crate::span_tree::scan::Portable>($($a),*) }
            }
        }
    };
    ($(#[$m:meta])* $vis:vis unsafe fn $name:ident $(<$($g:ident: $bound:path),*>)? ($($a:ident: $t:ty),*) -> $r:ty => $($imp:ident)::+;) => {
        $(#[$m])*
        #[inline(always)]
        $vis unsafe fn $name $(<$($g: $bound),*>)? ($($a: $t),*) -> $r {
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2,bmi1,popcnt")]
                #[inline(never)]
                unsafe fn avx2 $(<$($g: $bound),*>)? ($($a: $t),*) -> $r {
                    // SAFETY: the caller's contract.
                    unsafe { $($imp)::+::<$crate::span_tree::scan::Avx2 $($(, $g)*)?>($($a),*) }
                }
                if $crate::span_tree::scan::use_avx2() {
                    // SAFETY: `use_avx2` found the features; the caller's contract.
                    return unsafe { avx2($($a),*) };
                }
            }
            #[inline(never)]
            unsafe fn portable $(<$($g: $bound),*>)? ($($a: $t),*) -> $r {
                // SAFETY: the caller's contract.
                unsafe { $($imp)::+::<$crate::span_tree::scan::Portable $($(, $g)*)?>($($a),*) }
            }
            // SAFETY: the caller's contract.
            unsafe { portable($($a),*) }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of 32 words with a sentinel on either side, in the shapes the
    /// tree produces and a few it never does (as a scribbled checked tree may).
    fn blocks() -> Vec<[Word; 34]> {
        let mut out = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for shape in 0..300 {
            let mut b = [0 as Word; 34];
            for w in b.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *w = match shape % 4 {
                    0 => (x % 64) as Word,
                    1 => x as Word,
                    2 => ((x % 3) as Word).wrapping_mul(Word::MAX / 2),
                    _ => -((x % 100) as Word),
                };
            }
            out.push(b);
        }
        out
    }

    fn check<S: Simd>() {
        for b in blocks() {
            let a = &b[1..33];
            for t in [-5, 0, 1, 7, 31, 63, Word::MAX - 1, Word::MAX, Word::MIN] {
                let want = a.iter().position(|&w| w > t).unwrap_or(32);
                // SAFETY: 32 words.
                assert_eq!(unsafe { S::first_gt(a.as_ptr(), t) }, want, "{a:?} > {t}");
            }
            // SAFETY: 32 words.
            assert_eq!(unsafe { S::max(a.as_ptr()) }, *a.iter().max().unwrap());
            for i in 0..=32 {
                let want = a[..i].iter().fold(0, |m, &w| m.max(w));
                // SAFETY: 32 words.
                assert_eq!(unsafe { S::max_before(a.as_ptr(), i) }, want, "max of {i}");
            }
            for t in [-5, 0, 1, 7, 31, 63, Word::MAX - 1, Word::MAX, Word::MIN] {
                let i = a.iter().position(|&w| w > t).unwrap_or(32);
                let m = a[..i].iter().fold(0, |m, &w| m.max(w));
                // SAFETY: 32 words.
                let got = unsafe { S::first_gt_and_max_before(a.as_ptr(), t) };
                assert_eq!(got, (i, m), "{a:?} > {t}");
                let below = (0..8).fold(0, |m, j| m | (((a[j] < t) as u32) << j));
                // SAFETY: 8 words.
                assert_eq!(unsafe { S::below8(a.as_ptr(), t) }, below, "below {t}");
            }
            for i in 0..32 {
                let mut r = b;
                // SAFETY: r[0..34]: one word before and after the array.
                unsafe { S::shift_right(r.as_mut_ptr().add(1), i) };
                let mut want = b;
                want[i + 2..33].copy_from_slice(&b[i + 1..32]);
                assert_eq!(r, want, "shift_right at {i}");
                let mut l = b;
                // SAFETY: as above.
                unsafe { S::shift_left(l.as_mut_ptr().add(1), i) };
                let mut want = b;
                want[i + 1..33].copy_from_slice(&b[i + 2..34]);
                assert_eq!(l, want, "shift_left at {i}");
            }
        }
    }

    #[test]
    fn portable_matches_the_definitions() {
        check::<Portable>();
    }

    #[test]
    fn avx2_matches_the_definitions() {
        #[cfg(target_arch = "x86_64")]
        {
            #[target_feature(enable = "avx2,bmi1,popcnt")]
            unsafe fn run() {
                check::<Avx2>();
            }
            if avx2_available() {
                // SAFETY: the CPU has the features.
                unsafe { run() };
                return;
            }
        }
        // Straight to stderr: a passing test's captured output is never
        // shown, and a CPU cannot be installed the way a tool can.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            b"SKIPPED: this CPU lacks AVX2, BMI1 or POPCNT: the AVX2 scans were not checked\n",
        );
    }
}

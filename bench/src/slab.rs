//! The slab pool: bump allocation in fixed-size slabs, no per-item free (the
//! design libgit2 moved its pool to). Memory comes back only all at once
//! ([`SlabPool::reset`] keeps the slabs for reuse; drop releases them). The
//! baseline for allocation-only work.

use std::alloc::{Layout, alloc, dealloc};

/// Bump allocator over a list of slabs.
pub struct SlabPool {
    slab_bytes: usize,
    /// Slabs in allocation order; `slabs[current]` is being bumped.
    slabs: Vec<*mut u8>,
    /// Items larger than a quarter slab get their own block: `(ptr, bytes)`.
    large: Vec<(*mut u8, usize)>,
    current: usize,
    cursor: usize,
    end: usize,
}

// SAFETY: the slab pool exclusively owns its slabs.
unsafe impl Send for SlabPool {}

impl SlabPool {
    /// A pool of `slab_bytes`-sized slabs (rounded up to 64; at least 4 KiB).
    pub fn new(slab_bytes: usize) -> Self {
        let slab_bytes = slab_bytes.max(4096).next_multiple_of(64);
        SlabPool {
            slab_bytes,
            slabs: Vec::new(),
            large: Vec::new(),
            current: 0,
            cursor: 0,
            end: 0,
        }
    }

    /// Bump-allocates `bytes` (rounded up to 8), 8-byte aligned. Null if the
    /// system allocator fails or `bytes` is absurd.
    #[inline]
    pub fn alloc(&mut self, bytes: usize) -> *mut u8 {
        let b = (bytes.max(1) + 7) & !7;
        if b <= self.end - self.cursor {
            let p = self.cursor;
            self.cursor += b;
            return p as *mut u8;
        }
        self.alloc_slow(b)
    }

    #[cold]
    fn alloc_slow(&mut self, b: usize) -> *mut u8 {
        if b > self.slab_bytes / 4 {
            let Ok(layout) = Layout::from_size_align(b, 8) else {
                return std::ptr::null_mut();
            };
            // SAFETY: non-zero size.
            let p = unsafe { alloc(layout) };
            if !p.is_null() {
                self.large.push((p, b));
            }
            return p;
        }
        if self.end != 0 {
            self.current += 1;
        }
        if self.current >= self.slabs.len() {
            let layout = Layout::from_size_align(self.slab_bytes, 64).expect("slab layout");
            // SAFETY: non-zero size.
            let p = unsafe { alloc(layout) };
            if p.is_null() {
                return p;
            }
            self.slabs.push(p);
            self.current = self.slabs.len() - 1;
        }
        self.cursor = self.slabs[self.current] as usize;
        self.end = self.cursor + self.slab_bytes;
        let p = self.cursor;
        self.cursor += b;
        p as *mut u8
    }

    /// Forgets every item: slabs are kept for reuse, large blocks are released.
    pub fn reset(&mut self) {
        self.release_large();
        self.current = 0;
        self.cursor = 0;
        self.end = 0;
    }

    fn release_large(&mut self) {
        for (p, b) in self.large.drain(..) {
            // SAFETY: allocated in `alloc_slow` with this layout.
            unsafe { dealloc(p, Layout::from_size_align_unchecked(b, 8)) };
        }
    }

    /// Bytes obtained from the system (slabs and large blocks).
    pub fn committed_bytes(&self) -> usize {
        self.slabs.len() * self.slab_bytes + self.large.iter().map(|l| l.1).sum::<usize>()
    }
}

impl Drop for SlabPool {
    fn drop(&mut self) {
        self.release_large();
        let layout = Layout::from_size_align(self.slab_bytes, 64).expect("slab layout");
        for &p in &self.slabs {
            // SAFETY: allocated in `alloc_slow` with this layout.
            unsafe { dealloc(p, layout) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_bumps_and_resets() {
        let mut s = SlabPool::new(4096);
        let a = s.alloc(10) as usize;
        let b = s.alloc(8) as usize;
        assert_eq!(b - a, 16);
        for _ in 0..600 {
            s.alloc(8);
        }
        assert_eq!(s.committed_bytes(), 2 * 4096);
        let big = s.alloc(4000); // does not fit in the rest of the slab: its own block
        assert!(!big.is_null());
        assert_eq!(s.committed_bytes(), 2 * 4096 + 4000);
        s.reset();
        assert_eq!(s.alloc(8) as usize, a);
        assert_eq!(s.committed_bytes(), 2 * 4096);
    }
}

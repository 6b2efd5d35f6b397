//! Host memory as the program sees it: loads, stores and copies at real
//! addresses, and the simulated Tern stack the frames live in.
//!
//! Every access goes through the C library's `memmove`, never through a Rust
//! reference or `ptr::read`: an address is whatever the program computed
//! (`unsafe::slice` can make any), so an invalid one must fault exactly as
//! the compiled code's load would (the runtime's fault handler then reports
//! `stack overflow or invalid memory access`), not trip a Rust precondition
//! check that aborts with another message.

use std::alloc::{Layout as AllocLayout, alloc_zeroed, dealloc};

use tern_compiler::tir::{Program, Type};

use crate::ops;

/// An address in this process, as the program holds it (an `i64`).
pub type Addr = i64;

/// `memmove(dst, src, n)`; `n == 0` touches nothing.
///
/// # Safety
///
/// `[src, src + n)` must be readable and `[dst, dst + n)` writable memory
/// that no Rust reference covers: the program's own (a frame slot, a
/// temporary, a literal, a pool or array span), found by the same checks
/// compiled code makes. Only `unsafe::` code can hand over an address that is
/// not; it then faults as compiled code would (module docs).
pub unsafe fn copy(dst: Addr, src: Addr, n: u64) {
    if n == 0 {
        return;
    }
    // SAFETY: the caller's contract.
    unsafe {
        libc::memmove(
            dst as *mut libc::c_void,
            src as *const libc::c_void,
            n as usize,
        )
    };
}

/// Reads the canonical value of scalar type `ty` stored at `addr` (1, 4 or 8
/// bytes, native byte order, no alignment required).
///
/// # Safety
///
/// As [`copy`]'s source, for the scalar's width.
pub unsafe fn load_scalar(ty: &Type, addr: Addr) -> i64 {
    let mut buf = [0u8; 8];
    let width = scalar_width(ty);
    // SAFETY: `buf` holds 8 bytes; `addr` is the caller's contract.
    unsafe { copy(buf.as_mut_ptr() as Addr, addr, width) };
    match width {
        1 => i64::from(buf[0]),
        4 => i64::from(i32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]])),
        _ => i64::from_ne_bytes(buf),
    }
}

/// Stores scalar `v` of type `ty` at `addr` (its low 1, 4 or 8 bytes).
///
/// # Safety
///
/// As [`copy`]'s destination, for the scalar's width.
pub unsafe fn store_scalar(ty: &Type, v: i64, addr: Addr) {
    let width = scalar_width(ty);
    let bytes = match width {
        1 => [v as u8, 0, 0, 0, 0, 0, 0, 0],
        4 => {
            let b = (v as i32).to_ne_bytes();
            [b[0], b[1], b[2], b[3], 0, 0, 0, 0]
        }
        _ => v.to_ne_bytes(),
    };
    // SAFETY: `bytes` holds 8 bytes; `addr` is the caller's contract.
    unsafe { copy(addr, bytes.as_ptr() as Addr, width) };
}

/// Reads the two words `(ptr, len)` of a slice at `addr`.
///
/// # Safety
///
/// As [`copy`]'s source, for 16 bytes.
pub unsafe fn load_pair(addr: Addr) -> (i64, i64) {
    // SAFETY: the caller's contract covers both words.
    unsafe {
        (
            load_scalar(&Type::I64, addr),
            load_scalar(&Type::I64, addr.wrapping_add(8)),
        )
    }
}

/// Stores the two words `(ptr, len)` of a slice at `addr`.
///
/// # Safety
///
/// As [`copy`]'s destination, for 16 bytes.
pub unsafe fn store_pair(p: i64, l: i64, addr: Addr) {
    // SAFETY: the caller's contract covers both words.
    unsafe {
        store_scalar(&Type::I64, p, addr);
        store_scalar(&Type::I64, l, addr.wrapping_add(8));
    }
}

fn scalar_width(ty: &Type) -> u64 {
    u64::from(ops::bits(ty) / 8)
}

/// Byte size of a value of type `ty` (the one layout, `Program::layout`).
pub fn size_of(program: &Program, ty: &Type) -> u64 {
    program.layout(ty).size
}

/// Frames are placed at 16-byte boundaries, as the C ABI aligns stack frames.
pub const FRAME_ALIGN: u64 = 16;

/// Memory reserved for frames, as a multiple of the simulated stack's size.
/// Every local lives in memory here, while compiled code keeps scalars in
/// registers, so the bytes a frame occupies can exceed what it is charged
/// (see `code.rs`); running out of this memory is a stack overflow too.
const MEMORY_PER_LIMIT: u64 = 8;

/// The simulated Tern stack. Each call is *charged* what its compiled frame
/// would take (see `FrameLayout::charge`) against `limit`, the compiled
/// program's stack size; its locals and temporaries *occupy* a zeroed block of
/// one region, taken and returned in LIFO order. A call that does not fit is a
/// stack overflow.
pub struct Stack {
    base: *mut u8,
    capacity: u64,
    used: u64,
    limit: u64,
    charged: u64,
}

/// The state to return to when a frame is left (see [`Stack::pop`]).
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    used: u64,
    charged: u64,
}

impl Stack {
    /// A stack of `limit` bytes. Reserves the region (zeroed, committed
    /// lazily by the allocator's `mmap` for large sizes); `None` if that fails.
    pub fn new(limit: u64) -> Option<Stack> {
        let capacity = limit.checked_mul(MEMORY_PER_LIMIT)?;
        let layout = region_layout(capacity)?;
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc_zeroed(layout) };
        (!base.is_null()).then_some(Stack {
            base,
            capacity,
            used: 0,
            limit,
            charged: 0,
        })
    }

    /// Enters a frame that occupies `frame_bytes` and is charged `charge`;
    /// its bytes are zeroed. Returns its address and the mark to [`Stack::pop`]
    /// back to, or `None` when it does not fit: a stack overflow.
    pub fn push(&mut self, frame_bytes: u64, charge: u64) -> Option<(Addr, Mark)> {
        let bytes = frame_bytes.checked_next_multiple_of(FRAME_ALIGN)?;
        if charge > self.limit - self.charged || bytes > self.capacity - self.used {
            return None;
        }
        let mark = Mark {
            used: self.used,
            charged: self.charged,
        };
        // SAFETY: `used + bytes <= capacity`: the frame lies inside the region.
        let at = unsafe { self.base.add(self.used as usize) };
        // SAFETY: as above; the region is ours and writable.
        unsafe { std::ptr::write_bytes(at, 0, frame_bytes as usize) };
        self.used += bytes;
        self.charged += charge;
        Some((at as Addr, mark))
    }

    /// Leaves every frame entered since `mark` was taken.
    pub fn pop(&mut self, mark: Mark) {
        self.used = mark.used.min(self.used);
        self.charged = mark.charged.min(self.charged);
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        if let Some(layout) = region_layout(self.capacity) {
            // SAFETY: allocated in `new` with this very layout.
            unsafe { dealloc(self.base, layout) };
        }
    }
}

fn region_layout(capacity: u64) -> Option<AllocLayout> {
    let size = usize::try_from(capacity).ok()?.max(1);
    AllocLayout::from_size_align(size, FRAME_ALIGN as usize).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalars_round_trip_in_their_width() {
        let mut cell = [0xAAu8; 16];
        let at = cell.as_mut_ptr() as Addr;
        // SAFETY: every access is inside `cell`'s 16 bytes.
        unsafe {
            store_scalar(&Type::I32, -2, at);
            assert_eq!(load_scalar(&Type::I32, at), -2);
            assert_eq!(cell[4], 0xAA, "an i32 store writes 4 bytes");
            store_scalar(&Type::U8, 255, at.wrapping_add(8));
            assert_eq!(load_scalar(&Type::U8, at.wrapping_add(8)), 255);
            assert_eq!(cell[9], 0xAA, "a u8 store writes 1 byte");
            store_pair(7, -9, at);
            assert_eq!(load_pair(at), (7, -9));
        }
    }

    #[test]
    fn frames_are_zeroed_aligned_and_overflow_is_detected() {
        let mut stack = Stack::new(1024).expect("region");
        let (a, mark) = stack.push(24, 32).expect("fits");
        assert_eq!(a % 16, 0);
        // SAFETY: the frame's first word.
        unsafe { store_scalar(&Type::I64, -1, a) };
        stack.pop(mark);
        let (b, _) = stack.push(24, 32).expect("fits again");
        assert_eq!(b, a);
        // SAFETY: as above.
        let first = unsafe { load_scalar(&Type::I64, b) };
        assert_eq!(first, 0, "a reused frame is zeroed");
        assert!(
            stack.push(16, 2048).is_none(),
            "charged more than the stack"
        );
        assert!(
            stack.push(1 << 20, 16).is_none(),
            "more memory than reserved"
        );
        assert!(
            stack.push(u64::MAX, 16).is_none(),
            "no wrap-around in the size"
        );
        // The charges add up to the limit exactly.
        let mut stack = Stack::new(64).expect("region");
        assert!(stack.push(0, 32).is_some());
        assert!(stack.push(0, 32).is_some());
        assert!(stack.push(0, 16).is_none());
    }
}

//! The Tern frames of the calling thread's native stack.
//!
//! The failure path is Rust code called from Tern code, and Rust code keeps
//! no frame pointers, so the walk has two parts: the system unwinder
//! (`_Unwind_Backtrace`, driven by the runtime's DWARF CFI) steps over the
//! runtime's frames up to the first return address in Tern code, and hands
//! over the frame pointer that frame had; from there every Tern function
//! keeps one (Cranelift's `preserve_frame_pointers`), so the chain `[fp]` =
//! caller's fp, `[fp + 8]` = return address is followed until a return
//! address is outside Tern code (the entry wrapper's caller: C `main` or the
//! JIT's host).

use std::ffi::{c_int, c_void};

use super::Frame;
use super::table;

/// At most this many frames are walked (a guard against a corrupt chain;
/// deeper stacks end with a `...` line).
const MAX_FRAMES: usize = 1 << 22;

/// DWARF register number of the frame pointer.
#[cfg(target_arch = "x86_64")]
const FP_REGISTER: c_int = 6;
#[cfg(target_arch = "aarch64")]
const FP_REGISTER: c_int = 29;

type TraceFn = extern "C" fn(ctx: *mut c_void, arg: *mut c_void) -> c_int;

unsafe extern "C" {
    fn _Unwind_Backtrace(trace: TraceFn, arg: *mut c_void) -> c_int;
    fn _Unwind_GetIP(ctx: *mut c_void) -> usize;
    fn _Unwind_GetGR(ctx: *mut c_void, index: c_int) -> usize;
}

/// What the unwinder callback finds: the first Tern frame's return address
/// and frame pointer.
#[derive(Default)]
struct Start {
    ret: usize,
    fp: usize,
    steps: usize,
}

extern "C" fn on_frame(ctx: *mut c_void, arg: *mut c_void) -> c_int {
    // SAFETY: `arg` is the `Start` passed by `capture`; `ctx` is the
    // unwinder's context for this callback.
    let start = unsafe { &mut *(arg as *mut Start) };
    // SAFETY: `ctx` is the unwinder's context for this callback.
    let ip = unsafe { _Unwind_GetIP(ctx) };
    start.steps += 1;
    if ip != 0 && table::is_tern_code(ip - 1) {
        start.ret = ip;
        // SAFETY: as above; the frame pointer is a general register.
        start.fp = unsafe { _Unwind_GetGR(ctx, FP_REGISTER) };
        return 1; // stop
    }
    // The runtime's failure path is a few frames deep; a long search means
    // there is no Tern code on this stack.
    if start.steps > 64 { 1 } else { 0 }
}

/// The Tern frames of this thread, innermost first (empty when the failure
/// did not come from compiled Tern code).
pub fn capture() -> Vec<Frame> {
    let mut start = Start::default();
    // SAFETY: `on_frame` matches the callback type and only reads the context.
    unsafe { _Unwind_Backtrace(on_frame, &mut start as *mut Start as *mut c_void) };
    // SAFETY: the unwinder found `fp` as the frame pointer of the Tern frame
    // that made the call returning to `ret`, live on this stack.
    unsafe { frames_from(start.ret, start.fp) }
}

/// The Tern frames from the return address `ret` into a Tern function whose
/// frame pointer is `fp` on outwards, following the frame-pointer chain
/// (innermost first; empty when `ret` is not in Tern code).
///
/// # Safety
/// When `ret` is in Tern code, `fp` must be the frame pointer of the live
/// frame `ret` returns into (or 0).
pub unsafe fn frames_from(mut ret: usize, mut fp: usize) -> Vec<Frame> {
    let mut frames = Vec::new();
    let word = size_of::<usize>();
    while ret != 0 {
        let Some(at) = table::frames_at(ret) else {
            break;
        };
        frames.extend(at);
        if frames.len() >= MAX_FRAMES || fp == 0 || !fp.is_multiple_of(word) {
            break;
        }
        // SAFETY: `fp` is the frame pointer of a Tern frame that is live on
        // this stack (it made the call returning to `ret`), so its two words
        // are readable: the caller's frame pointer and return address.
        let (caller_fp, caller_ret) =
            unsafe { (*(fp as *const usize), *((fp + word) as *const usize)) };
        // Frames are older at higher addresses: anything else is not a chain.
        if caller_fp <= fp {
            break;
        }
        (ret, fp) = (caller_ret, caller_fp);
    }
    frames
}

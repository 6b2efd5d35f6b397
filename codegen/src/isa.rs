//! The host target ISA with Tern's Cranelift flags.

use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};

use crate::{CodegenError, OptLevel, Options};

/// Builds the host ISA. `pic` is set for objects (AOT executables are
/// position independent); the JIT uses absolute addressing and non-colocated
/// calls so runtime functions anywhere in the address space are reachable.
pub fn host_isa(opts: &Options, pic: bool) -> Result<OwnedTargetIsa, CodegenError> {
    host_isa_with(opts, pic, false)
}

/// [`host_isa`], with regalloc2's single-pass allocator when `single_pass`
/// (for functions too large for the backtracking one, `crate::budget`).
pub fn host_isa_with(
    opts: &Options,
    pic: bool,
    single_pass: bool,
) -> Result<OwnedTargetIsa, CodegenError> {
    let mut flags = settings::builder();
    let set = |flags: &mut settings::Builder, name: &str, value: &str| {
        flags
            .set(name, value)
            .map_err(|e| CodegenError::cranelift(format!("flag {name}={value}"), e))
    };
    let level = match opts.opt_level {
        OptLevel::O0 => "none",
        OptLevel::O1 | OptLevel::O2 => "speed",
    };
    set(&mut flags, "opt_level", level)?;
    if single_pass {
        set(&mut flags, "regalloc_algorithm", "single_pass")?;
    }
    set(
        &mut flags,
        "enable_verifier",
        if opts.verify { "true" } else { "false" },
    )?;
    set(&mut flags, "is_pic", if pic { "true" } else { "false" })?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    // Large arrays live in stack frames: probe the stack so an oversized
    // frame hits the guard page instead of silently skipping over it.
    set(&mut flags, "enable_probestack", "true")?;
    set(&mut flags, "probestack_strategy", "inline")?;
    // Every function keeps a frame pointer, so a runtime error can walk the
    // Tern call stack (`tern_runtime::backtrace`).
    set(&mut flags, "preserve_frame_pointers", "true")?;
    let isa = cranelift_native::builder()
        .map_err(|e| CodegenError::Unsupported(format!("host machine: {e}")))?;
    isa.finish(settings::Flags::new(flags))
        .map_err(|e| CodegenError::cranelift("target ISA", e))
}

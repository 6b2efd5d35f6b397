//! Tern's backend: `tern_compiler::tir::Program` to Cranelift IR, then either
//! machine code in this process ([`jit`]) or a relocatable object that
//! [`link`] turns into an executable with the system C compiler ([`object`]).
//!
//! One translator ([`lower`]), generic over `cranelift_module::Module`, feeds
//! both backends, and one table of runtime functions ([`runtime_fns`]) drives
//! both the JIT's symbol registration and the object's imports. This crate
//! does not depend on the runtime: the driver passes the runtime's symbol
//! addresses (JIT) or its static library (AOT) in.

mod address;
pub mod asm;
pub mod budget;
pub mod call_arg_copies;
mod clif_walk;
pub mod combined_loads;
pub mod dead_loads;
pub mod dead_slot_stores;
pub mod debug;
pub mod decided_branches;
pub mod error;
pub mod if_conversion;
pub mod inline;
pub mod isa;
pub mod jit;
pub mod jump_threading;
pub mod link;
pub mod loop_invariant_params;
pub mod loop_markers;
pub mod lower;
pub mod merged_index_checks;
pub mod multiply_by_lea;
pub mod object;
pub mod partial_inline;
pub mod runtime_fns;
pub mod stack_addr_copies;
pub mod store_forwarding;
pub mod tail_duplication;
#[cfg(test)]
mod test_ir;

pub use error::CodegenError;
pub use inline::Inlining;
pub use jit::{JitProgram, compile_jit};
pub use link::{link_executable, runtime_link_libs};
pub use object::{ObjectOutput, compile_object};

/// Optimization level of `tern run` / `tern build`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OptLevel {
    /// No Cranelift optimization.
    O0,
    /// Cranelift `opt_level=speed`.
    O1,
    /// `speed` plus Tern's own IR work: bounds-check elimination in counted
    /// `for` loops (see `docs/backend.md`).
    O2,
}

impl OptLevel {
    /// Parses `0`, `1` or `2`.
    pub fn parse(s: &str) -> Option<OptLevel> {
        match s {
            "0" => Some(OptLevel::O0),
            "1" => Some(OptLevel::O1),
            "2" => Some(OptLevel::O2),
            _ => None,
        }
    }
}

/// What the backend should produce besides code.
#[derive(Clone, Debug)]
pub struct Options {
    pub opt_level: OptLevel,
    /// Run Cranelift's IR verifier on every function. On by default in debug
    /// builds of the compiler (so the whole test suite verifies every
    /// function); the driver also sets it when `TERN_VERIFY=1` is set.
    pub verify: bool,
    /// Collect the CLIF text of every function (before Cranelift's own
    /// optimization), headed by its Tern name.
    pub emit_clif: bool,
    /// Objects only: print the object as assembly source that `cc -c`
    /// assembles ([`asm`]), annotated with Tern lines.
    pub emit_asm: bool,
    /// Which calls of Tern functions are inlined (JIT and AOT alike).
    pub inlining: Inlining,
    /// Display names of functions never inlined, whatever `inlining` says
    /// (`tern bench --calls boundary` keeps its exercise functions out of line).
    pub keep_calls: Vec<String>,
    /// `--sanitize`: check every element access and subslice through a tagged
    /// pool pointer, tag the builtin pool's allocations, record call sites
    /// (see `docs/backend.md`, "Sanitize"). Off: none of it is emitted.
    pub sanitize: bool,
    /// The address of a byte that, once nonzero, stops the program at its
    /// next function entry or loop iteration (`tern_rt_interrupted`): the
    /// REPL's Ctrl-C. JIT only (the address is embedded as a constant);
    /// `None`, as for `tern run` and AOT, emits no poll at all.
    pub interrupt_flag: Option<usize>,
    /// The address of a word holding the lowest stack address the generated
    /// code may run at: every function entry compares the stack pointer with
    /// it and calls `tern_stack_fail` below it (`error: LOC: stack overflow`),
    /// so the runtime functions the code calls always have the stack between
    /// that limit and the guard page (the REPL's: a fault inside a runtime
    /// call could leave a pool half updated). This check is then also the
    /// entries' interrupt poll: to stop the code, the host sets the interrupt
    /// flag and raises the limit out of reach (`tern_stack_fail` reports
    /// `interrupted` when the flag is set); loop headers still poll the flag.
    /// JIT only; `None` emits nothing.
    pub stack_limit: Option<usize>,
    /// The directory relative source names are resolved against in an
    /// object's debug information (DWARF's `comp_dir`); the driver sets the
    /// current directory.
    pub comp_dir: String,
}

impl Options {
    /// Options for `level` with the verifier policy described on `verify`,
    /// no listings, and inlining of small calls at -O2 only.
    pub fn new(opt_level: OptLevel) -> Options {
        Options {
            opt_level,
            verify: cfg!(debug_assertions),
            emit_clif: false,
            emit_asm: false,
            inlining: if opt_level == OptLevel::O2 {
                Inlining::Natural
            } else {
                Inlining::Off
            },
            keep_calls: Vec::new(),
            sanitize: false,
            interrupt_flag: None,
            stack_limit: None,
            comp_dir: ".".into(),
        }
    }
}

/// Text listings collected during compilation (see [`Options`]).
#[derive(Clone, Debug, Default)]
pub struct Listing {
    /// CLIF of every function, in definition order.
    pub clif: String,
    /// The object as assembly source (`Options::emit_asm`).
    pub asm: String,
    /// `note: ...` lines for the user, always collected: a compile-time
    /// budget that kept calls from being inlined (`crate::budget`). The
    /// driver prints them on stderr (`tern run` only with `--time`, so that
    /// they never mix into a program's own stderr).
    pub notes: Vec<String>,
    /// `note: ...` lines about the command line itself: a `--keep-call`
    /// that names no function of the program (most likely misspelt, it
    /// keeps nothing). The driver prints them on every compile.
    pub usage_notes: Vec<String>,
}

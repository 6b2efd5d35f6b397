//! In-process compilation (`tern run`).

use cranelift_jit::{ArenaMemoryProvider, JITBuilder, JITModule};
use cranelift_module::default_libcall_names;
use tern_compiler::tir::Program;

use crate::isa::host_isa;
use crate::lower::{callee_legend, translate};
use crate::{CodegenError, Listing, Options};

/// Address space reserved for one program's code and data (see
/// `compile_jit`).
const JIT_ARENA_BYTES: usize = 1 << 30;

/// A program compiled into executable memory of this process. The code stays
/// valid as long as this value lives.
pub struct JitProgram {
    // Owns the executable memory; never freed before the process ends
    // unless this value is dropped.
    _module: JITModule,
    entry: *const u8,
    /// The backtrace table, for `tern_runtime::backtrace::table::register`.
    pub debug_table: *const u8,
    /// Every Tern function's symbol name, address and code length (what a
    /// profiler's perf map lists).
    pub functions: Vec<(String, *const u8, usize)>,
    /// Listings the options asked for.
    pub listing: Listing,
}

impl JitProgram {
    /// The compiled entry: runs Tern `main` and returns its status (0 for
    /// `fn main()`). Pass it to the runtime's `tern_rt_main`, which sets up
    /// the builtin pool and flushes output around it.
    pub fn entry(&self) -> extern "C" fn() -> i64 {
        // SAFETY: `entry` is the finalized address of the wrapper defined by
        // `translate` with exactly this signature (no params, one i64).
        unsafe { std::mem::transmute::<*const u8, extern "C" fn() -> i64>(self.entry) }
    }
}

impl JitProgram {
    /// Releases the executable memory. Dropping a `JitProgram` keeps it
    /// mapped (Cranelift's JIT never unmaps on drop), which a long-lived host
    /// that compiles many programs (the REPL: one per input) cannot afford.
    ///
    /// # Safety
    /// No code of this program is running or will be called again, and no
    /// pointer into its code or data is used afterwards.
    pub unsafe fn free(self) {
        // SAFETY: the caller's contract is exactly `free_memory`'s.
        unsafe { self._module.free_memory() }
    }
}

/// Compiles `program` into this process. `runtime_symbols` is the runtime's
/// list of `tern_*` externs with their addresses (`tern_runtime::abi::symbols()`);
/// every one is registered (so `extern fn` declarations of runtime functions
/// resolve too), and each runtime function the generated code uses must be
/// among them.
pub fn compile_jit(
    program: &Program,
    opts: &Options,
    runtime_symbols: &[(&str, *const u8)],
) -> Result<JitProgram, CodegenError> {
    let isa = host_isa(opts, false)?;
    let mut builder = JITBuilder::with_isa(isa, default_libcall_names());
    for (name, addr) in runtime_symbols {
        builder.symbol(*name, *addr);
    }
    // All code and data of the program in one reserved region, so the
    // PC-relative calls and addresses between its functions and data are
    // always in range (separate mappings can land gigabytes apart, for
    // instance around a large thread stack). Address space only: pages are
    // committed as code is written.
    let arena = ArenaMemoryProvider::new_with_size(JIT_ARENA_BYTES)
        .map_err(|e| CodegenError::Unsupported(format!("cannot reserve JIT memory: {e}")))?;
    builder.memory_provider(Box::new(arena));
    let mut module = JITModule::new(builder);
    let mut tr = translate(&mut module, program, opts)?;
    if opts.emit_clif {
        tr.listing.clif.insert_str(0, &callee_legend(&module));
    }
    for name in tr.runtime_used() {
        if !runtime_symbols.iter().any(|(n, _)| *n == name) {
            return Err(CodegenError::MissingRuntimeSymbol(name.to_string()));
        }
    }
    // Cranelift's JIT panics on a symbol it cannot resolve; find out first
    // and say which `extern fn` is missing.
    for x in &program.externs {
        if !runtime_symbols.iter().any(|(n, _)| *n == x.name) && !process_has_symbol(&x.name) {
            return Err(CodegenError::Link(format!(
                "undefined symbol `{}` (declared by `extern fn`)",
                x.name
            )));
        }
    }
    module
        .finalize_definitions()
        .map_err(|e| CodegenError::cranelift("JIT finalization", e))?;
    let entry = module.get_finalized_function(tr.entry);
    let debug_table = module
        .get_finalized_data(tr.debug_table.expect("translate defines the table"))
        .0;
    let functions = tr
        .debug
        .named(program)
        .map(|(name, f)| {
            let addr = module.get_finalized_function(f.id);
            (name.to_string(), addr, f.size as usize)
        })
        .collect();
    Ok(JitProgram {
        _module: module,
        entry,
        debug_table,
        functions,
        listing: tr.listing,
    })
}

/// Whether the dynamic linker can find `name` in this process (what the JIT
/// falls back to for symbols outside the runtime's table, e.g. libc).
fn process_has_symbol(name: &str) -> bool {
    let Ok(c_name) = std::ffi::CString::new(name) else {
        return false;
    };
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only reads.
    !unsafe { libc::dlsym(libc::RTLD_DEFAULT, c_name.as_ptr()) }.is_null()
}

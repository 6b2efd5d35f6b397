//! The backend walks a `tir::Program` recursively, once per level of its
//! trees, and chains (`a + b + ...`, `else if`) make trees as deep as they
//! are long: it runs on the compiler's thread with a large stack
//! (`tern_compiler::with_stack`; the front end runs there by itself).

use tern_codegen::{CodegenError, JitProgram, ObjectOutput, Options, compile_jit, compile_object};
use tern_compiler::tir::Program;

/// The runtime's symbol table on its way to the compiler thread (raw
/// addresses are not `Send`).
struct Symbols<'a>(&'a [(&'a str, *const u8)]);

// SAFETY: the addresses are of the runtime's functions, process-wide and
// immutable; the table is only read, by the one thread it is lent to while
// this one waits.
unsafe impl Send for Symbols<'_> {}

impl<'a> Symbols<'a> {
    /// The table (a method, so that a closure captures the whole wrapper
    /// rather than its non-`Send` field).
    fn get(self) -> &'a [(&'a str, *const u8)] {
        self.0
    }
}

/// A finished JIT module on its way back from the compiler thread (it holds
/// raw code addresses, which are not `Send`).
struct Compiled(Result<JitProgram, CodegenError>);

// SAFETY: the module's code and data are process-wide mappings, not tied to
// the thread that made them; it moves once, to the waiting thread, and is
// never shared.
unsafe impl Send for Compiled {}

/// `compile_jit` on the compiler thread.
pub fn jit(
    program: &Program,
    opts: &Options,
    symbols: &[(&str, *const u8)],
) -> Result<JitProgram, CodegenError> {
    let symbols = Symbols(symbols);
    tern_compiler::with_stack(move || Compiled(compile_jit(program, opts, symbols.get()))).0
}

/// `compile_object` on the compiler thread.
pub fn object(program: &Program, opts: &Options) -> Result<ObjectOutput, CodegenError> {
    tern_compiler::with_stack(move || compile_object(program, opts))
}

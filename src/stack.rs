//! The backend walks a `tir::Program` recursively, once per level of its
//! trees, and chains (`a + b + ...`, `else if`) make trees as deep as they
//! are long: it runs on the compiler's thread with a large stack
//! (`tern_compiler::with_stack`; the front end runs there by itself).

use tern_codegen::{CodegenError, JitProgram, ObjectOutput, Options, compile_jit, compile_object};
use tern_compiler::tir::Program;

/// Carries a value that is not `Send` (raw code and symbol addresses) to and
/// from the compiler thread.
struct Sendable<T>(T);

// SAFETY: used only to move a JIT module and the runtime's symbol table
// across one thread boundary while the other thread waits: the addresses
// are process-wide and nothing in them is tied to the thread that made them.
unsafe impl<T> Send for Sendable<T> {}

impl<T> Sendable<T> {
    fn into_inner(self) -> T {
        self.0
    }
}

/// `compile_jit` on the compiler thread.
pub fn jit(
    program: &Program,
    opts: &Options,
    symbols: &[(&str, *const u8)],
) -> Result<JitProgram, CodegenError> {
    let symbols = Sendable(symbols);
    tern_compiler::with_stack(move || {
        let symbols = symbols.into_inner();
        Sendable(compile_jit(program, opts, symbols))
    })
    .into_inner()
}

/// `compile_object` on the compiler thread.
pub fn object(program: &Program, opts: &Options) -> Result<ObjectOutput, CodegenError> {
    tern_compiler::with_stack(move || Sendable(compile_object(program, opts))).into_inner()
}

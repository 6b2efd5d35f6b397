//! The JIT's check of the runtime symbols a program uses, for the one data
//! symbol among them: a host whose symbol list lacks the builtin pool's
//! fast-path record gets an error, not a panic inside Cranelift's JIT.

use tern_codegen::{OptLevel, Options, compile_jit};
use tern_compiler::{Loaded, Loader};

struct NoModules;

impl Loader for NoModules {
    fn load(&self, _: &str, _: &str) -> Loaded {
        Loaded::NotFound
    }
}

#[test]
fn a_byte_append_needs_the_fast_path_record() {
    let src = "fn main() {\n    var a: reusable[]u8 = reusable::alloc::<u8>(1);\n    a = reusable::append(a, 2);\n    print(len(a));\n}\n";
    let program = tern_compiler::compile("t.tern", src, &NoModules).expect("compiles");
    // Every runtime function, at an address never called: the check comes
    // before anything is linked.
    let functions: Vec<(&str, *const u8)> = tern_abi::RUNTIME_FNS
        .iter()
        .map(|f| (f.name, std::ptr::dangling::<u8>()))
        .collect();
    let err = compile_jit(&program, &Options::new(OptLevel::O2), &functions)
        .err()
        .expect("must fail");
    assert_eq!(
        err.to_string(),
        "runtime data symbol `tern_reusable_fast` is not available in this build of the runtime"
    );
}

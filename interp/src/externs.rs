//! `extern fn` calls.
//!
//! Every symbol is resolved as the JIT resolves it: the runtime's own (the
//! ABI's one table, `tern_runtime::abi::symbols()`: the same functions the
//! JIT registers and AOT links), then the process (`dlsym(RTLD_DEFAULT,
//! name)`); an unknown one is the JIT's load-time error. A found function is
//! called through its address when its arguments are at most six
//! integer-class words, which every Tern extern signature is (scalars and
//! `ref` pointers) and every runtime function is (a test of the table): an
//! **interpreter extension** that relies on the C calling convention of
//! x86-64 (System V) and AArch64, where the first six integer arguments
//! travel in registers and a callee ignores registers it does not declare;
//! the result register is read at the declared type's width by the caller.
//! Anything else is reported at the call: `extern fn `NAME` is not available
//! in the interpreter`. Two runtime functions mean something else here and
//! are the interpreter's own ([`interpreted`]).

use std::ffi::CString;

use tern_compiler::tir::{ExternFn, Type};
use tern_runtime::abi::{fail, process};

/// A runtime function adapted to the interpreter: arguments as the words the
/// generated code would pass (missing ones read as 0), the raw result word
/// (0 for functions without one).
pub type RuntimeCall = fn(&[i64]) -> i64;

/// How an `extern fn` is called.
#[derive(Clone, Copy, Debug)]
pub enum Extern {
    /// A runtime function the interpreter does itself ([`interpreted`]).
    Runtime(RuntimeCall),
    /// A C function at this address (one of the runtime's, or any other the
    /// process has), called with up to six integer words.
    Native(usize),
    /// Found, but not callable by the interpreter (more than six words, or a
    /// host whose calling convention the interpreter does not model).
    Unavailable,
}

/// Most argument words a native call passes (all in registers).
pub const MAX_NATIVE_WORDS: usize = 6;

/// Whether this host's C calling convention is one the native calls rely on.
const NATIVE_CALLS: bool = cfg!(all(
    unix,
    any(target_arch = "x86_64", target_arch = "aarch64")
));

/// Resolves `x` as the JIT does: the runtime's table first, then the process.
/// `Err` carries the message of the JIT's load-time error for an unknown
/// symbol.
pub fn resolve(x: &ExternFn) -> Result<Extern, String> {
    if let Some(call) = interpreted(&x.name) {
        return Ok(Extern::Runtime(call));
    }
    let Some(addr) = runtime_symbol(&x.name).or_else(|| process_symbol(&x.name)) else {
        return Err(format!(
            "linking failed: undefined symbol `{}` (declared by `extern fn`)",
            x.name
        ));
    };
    let words: usize = x
        .params
        .iter()
        .map(|(ty, by_ref)| words_of(ty, *by_ref))
        .sum();
    Ok(if words <= MAX_NATIVE_WORDS && NATIVE_CALLS {
        Extern::Native(addr)
    } else {
        Extern::Unavailable
    })
}

/// Machine words one parameter takes in the C call (the backend's
/// `extern_signature`): a `ref` is one pointer, a slice two words, unit none.
fn words_of(ty: &Type, by_ref: bool) -> usize {
    match ty {
        _ if by_ref => 1,
        Type::Unit => 0,
        Type::Str | Type::Slice(_) | Type::Reusable(_) => 2,
        _ => 1,
    }
}

/// The address of runtime function `name` (the ABI's table).
fn runtime_symbol(name: &str) -> Option<usize> {
    tern_runtime::abi::symbols()
        .into_iter()
        .find(|(n, _)| *n == name)
        .map(|(_, addr)| addr as usize)
}

/// The address of `name` in this process, if the dynamic linker has it.
fn process_symbol(name: &str) -> Option<usize> {
    let c_name = CString::new(name).ok()?;
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only reads.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c_name.as_ptr()) };
    (!p.is_null()).then_some(p as usize)
}

/// Calls the C function at `addr` with `words` (at most six; the rest of the
/// six registers hold 0) and returns the result register.
///
/// # Safety
///
/// `addr` is a C function taking at most six integer-class arguments, whose
/// pointer arguments among `words` are valid for what it does with them (see
/// the module docs for why passing six registers is sound on the supported
/// targets).
pub unsafe fn call_native(addr: usize, words: &[i64]) -> i64 {
    type Six = unsafe extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64;
    // SAFETY: `addr` is a function (the caller's contract).
    let f = unsafe { std::mem::transmute::<usize, Six>(addr) };
    let w = |i: usize| word(words, i);
    // SAFETY: the caller's contract.
    unsafe { f(w(0), w(1), w(2), w(3), w(4), w(5)) }
}

fn word(words: &[i64], i: usize) -> i64 {
    words.get(i).copied().unwrap_or(0)
}

/// The runtime functions whose meaning differs in the interpreter, or `None`
/// for a name that is called as compiled code calls it.
pub fn interpreted(name: &str) -> Option<RuntimeCall> {
    let f: RuntimeCall = match name {
        "tern_rt_main" => |a| {
            // `Option<extern fn>` has the null niche: 0 is `None`.
            // SAFETY: a program's entry, or 0 (the transmute maps 0 to None).
            let main = unsafe {
                std::mem::transmute::<usize, Option<extern "C" fn() -> i64>>(word(a, 0) as usize)
            };
            match main {
                // SAFETY: the program's entry, with the signature
                // `tern_rt_main` expects.
                Some(main) => i64::from(unsafe { process::tern_rt_main(main) }),
                // Compiled code would jump to address 0 inside `tern_rt_main`
                // and fault; the fault handler prints this very line.
                None => fail::report_fault(),
            }
        },
        // The interpreter's frames come from its own call stack; a table
        // handed over by a program describes no code it runs.
        "tern_rt_debug_table" => |_| 0,
        _ => return None,
    };
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_symbol_resolves_to_its_own_address() {
        for (name, addr) in tern_runtime::abi::symbols() {
            match resolve(&ext(name, vec![])).unwrap() {
                Extern::Native(a) => assert_eq!(a, addr as usize, "{name}"),
                Extern::Runtime(_) => assert!(interpreted(name).is_some(), "{name}"),
                Extern::Unavailable => panic!("{name} unavailable"),
            }
        }
        assert!(interpreted("labs").is_none());
    }

    #[test]
    fn runtime_calls_without_side_effects_answer_like_the_runtime() {
        let call = |name: &str, words: &[i64]| match resolve(&ext(name, vec![])).unwrap() {
            // SAFETY: runtime functions of at most two integer arguments,
            // given no pointer they dereference.
            Extern::Native(addr) => unsafe { call_native(addr, words) },
            other => panic!("{other:?}"),
        };
        assert_eq!(
            call("tern_span_header_words", &[]),
            tern_runtime::abi::span::tern_span_header_words()
        );
        assert_eq!(call("tern_reusable_offset", &[0, 0]), -1);
    }

    fn ext(name: &str, params: Vec<(Type, bool)>) -> ExternFn {
        ExternFn {
            name: name.into(),
            params,
            ret: Type::I64,
        }
    }

    #[test]
    fn unknown_symbols_are_the_jit_error_and_libc_is_callable() {
        let e = resolve(&ext("no_such_function_anywhere", vec![])).unwrap_err();
        assert_eq!(
            e,
            "linking failed: undefined symbol `no_such_function_anywhere` (declared by `extern fn`)"
        );
        let labs = resolve(&ext("labs", vec![(Type::I64, false)])).unwrap();
        let Extern::Native(addr) = labs else {
            panic!("labs should be a native call, got {labs:?}");
        };
        // SAFETY: `labs(long)`, one integer.
        assert_eq!(unsafe { call_native(addr, &[-42]) }, 42);
        let seven = vec![(Type::I64, false); 7];
        assert!(matches!(
            resolve(&ext("labs", seven)).unwrap(),
            Extern::Unavailable
        ));
    }
}

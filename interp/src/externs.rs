//! `extern fn` calls.
//!
//! * The runtime's own symbols (every name of `tern_runtime::abi::symbols()`)
//!   are called as typed Rust calls, from a table by name: the same functions
//!   the JIT registers and AOT links.
//! * Any other symbol is looked up as the JIT does (`dlsym(RTLD_DEFAULT, name)`);
//!   an unknown one is the JIT's load-time error. A found one is called
//!   through its address when its arguments are at most six integer-class
//!   words, which every Tern extern signature is (scalars and `ref`
//!   pointers): an **interpreter extension** that relies on the C calling
//!   convention of x86-64 (System V) and AArch64, where the first six integer
//!   arguments travel in registers and a callee ignores registers it does
//!   not declare. Anything else is reported at the call: `extern fn `NAME`
//!   is not available in the interpreter`.

use std::ffi::{CString, c_char};

use tern_compiler::tir::{ExternFn, Type};
use tern_runtime::abi::{fail, interrupt, mem, output, process, reusable, sanitize, span, stats};

/// A runtime function adapted to the interpreter: arguments as the words the
/// generated code would pass (missing ones read as 0), the raw result word
/// (0 for functions without one).
pub type RuntimeCall = fn(&[i64]) -> i64;

/// How an `extern fn` is called.
#[derive(Clone, Copy, Debug)]
pub enum Extern {
    /// A runtime function, through the typed table.
    Runtime(RuntimeCall),
    /// A C function at this address, called with up to six integer words.
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
    if let Some(call) = runtime_call(&x.name) {
        return Ok(Extern::Runtime(call));
    }
    let Some(addr) = process_symbol(&x.name) else {
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

/// The address of `name` in this process, if the dynamic linker has it.
fn process_symbol(name: &str) -> Option<usize> {
    let c_name = CString::new(name).ok()?;
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name only reads.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c_name.as_ptr()) };
    (!p.is_null()).then_some(p as usize)
}

/// Calls the C function at `addr` with `words` (at most six; the rest of the
/// six registers hold 0) and returns the result register.
pub fn call_native(addr: usize, words: &[i64]) -> i64 {
    type Six = unsafe extern "C" fn(i64, i64, i64, i64, i64, i64) -> i64;
    // SAFETY: `addr` is a function the dynamic linker found under the name
    // the program declared; see the module docs for why passing six integer
    // registers to it is sound on the supported targets.
    let f = unsafe { std::mem::transmute::<usize, Six>(addr) };
    let w = |i: usize| word(words, i);
    // SAFETY: as above; the program declared the signature.
    unsafe { f(w(0), w(1), w(2), w(3), w(4), w(5)) }
}

fn word(words: &[i64], i: usize) -> i64 {
    words.get(i).copied().unwrap_or(0)
}

fn ptr<T>(words: &[i64], i: usize) -> *mut T {
    word(words, i) as usize as *mut T
}

/// The typed call of runtime function `name`, or `None` if the runtime has
/// no such symbol. Covers every name of `tern_runtime::abi::symbols()` (a test
/// checks it). Arguments are narrowed to the Rust parameter types exactly as
/// the C callee would read its registers.
pub fn runtime_call(name: &str) -> Option<RuntimeCall> {
    // SAFETY (every `unsafe` below): the arguments are what the program passes
    // to the same function in compiled code; the runtime validates what it
    // can, and what it cannot (raw addresses) faults the same way.
    let f: RuntimeCall = match name {
        "tern_rt_main" => |a| {
            // `Option<extern fn>` has the null niche: 0 is `None`.
            let main = unsafe {
                std::mem::transmute::<usize, Option<extern "C" fn() -> i64>>(word(a, 0) as usize)
            };
            match main {
                Some(main) => i64::from(unsafe { process::tern_rt_main(main) }),
                // Compiled code would jump to address 0 inside `tern_rt_main`
                // and fault; the fault handler prints this very line.
                None => fail::report_stack_overflow(),
            }
        },
        "tern_rt_flush" => |_| {
            process::tern_rt_flush();
            0
        },
        // The interpreter's frames come from its own call stack; a table
        // handed over by a program describes no code it runs.
        "tern_rt_debug_table" => |_| 0,
        "tern_write_i64" => |a| {
            output::tern_write_i64(word(a, 0));
            0
        },
        "tern_write_u64" => |a| {
            output::tern_write_u64(word(a, 0) as u64);
            0
        },
        "tern_write_bool" => |a| {
            output::tern_write_bool(word(a, 0) as u8);
            0
        },
        "tern_write_str" => |a| {
            unsafe { output::tern_write_str(ptr(a, 0), word(a, 1)) };
            0
        },
        "tern_print_u64" => |a| {
            output::tern_print_u64(word(a, 0) as u64);
            0
        },
        "tern_print_i64" => |a| {
            output::tern_print_i64(word(a, 0));
            0
        },
        "tern_print_bool" => |a| {
            output::tern_print_bool(word(a, 0) as u8);
            0
        },
        "tern_print_str" => |a| {
            unsafe { output::tern_print_str(ptr(a, 0), word(a, 1)) };
            0
        },
        "tern_panic" => |a| unsafe {
            output::tern_panic(
                ptr(a, 0),
                word(a, 1),
                ptr(a, 2),
                word(a, 3),
                ptr::<c_char>(a, 4),
            )
        },
        "tern_assert_fail" => {
            |a| unsafe { output::tern_assert_fail(ptr(a, 0), word(a, 1), ptr(a, 2)) }
        }
        "tern_bounds_fail" => {
            |a| unsafe { output::tern_bounds_fail(word(a, 0), word(a, 1), ptr(a, 2)) }
        }
        "tern_slice_fail" => {
            |a| unsafe { output::tern_slice_fail(word(a, 0), word(a, 1), word(a, 2), ptr(a, 3)) }
        }
        "tern_div_zero" => |a| unsafe { output::tern_div_zero(ptr(a, 0)) },
        "tern_stack_fail" => |a| unsafe { output::tern_stack_fail(ptr(a, 0)) },
        "tern_rt_interrupted" => |a| unsafe { interrupt::tern_rt_interrupted(ptr(a, 0)) },
        "tern_length_fail" => {
            |a| unsafe { output::tern_length_fail(ptr(a, 0), word(a, 1), word(a, 2), ptr(a, 3)) }
        }
        "tern_reusable_alloc" => {
            |a| unsafe { reusable::tern_reusable_alloc(word(a, 0), ptr(a, 1)) as i64 }
        }
        "tern_reusable_resize" => |a| unsafe {
            reusable::tern_reusable_resize(ptr(a, 0), word(a, 1), word(a, 2), ptr(a, 3)) as i64
        },
        "tern_reusable_free" => |a| {
            unsafe { reusable::tern_reusable_free(ptr(a, 0), word(a, 1), ptr(a, 2)) };
            0
        },
        "tern_reusable_offset" => {
            |a| unsafe { reusable::tern_reusable_offset(ptr(a, 0), ptr(a, 1)) }
        }
        "tern_mem_reserve" => |a| mem::tern_mem_reserve(word(a, 0)),
        "tern_mem_release" => |a| unsafe { mem::tern_mem_release(word(a, 0), word(a, 1)) },
        "tern_span_alloc" => |a| unsafe { span::tern_span_alloc(ptr(a, 0), ptr(a, 1), word(a, 2)) },
        "tern_span_free" => {
            |a| unsafe { span::tern_span_free(ptr(a, 0), ptr(a, 1), word(a, 2), word(a, 3)) }
        }
        "tern_span_resize" => |a| unsafe {
            span::tern_span_resize(ptr(a, 0), ptr(a, 1), word(a, 2), word(a, 3), word(a, 4))
        },
        "tern_span_header_words" => |_| span::tern_span_header_words(),
        "tern_span_node_words" => |a| span::tern_span_node_words(word(a, 0)),
        "tern_span_init" => |a| unsafe {
            span::tern_span_init(ptr(a, 0), ptr(a, 1), word(a, 2), ptr(a, 3), word(a, 4))
        },
        "tern_span_new" => |a| unsafe { span::tern_span_new(ptr(a, 0), word(a, 1), ptr(a, 2)) },
        "tern_span_finish" => |a| unsafe { span::tern_span_finish(ptr(a, 0), ptr(a, 1)) },
        "tern_span_reset" => |a| unsafe { span::tern_span_reset(ptr(a, 0), ptr(a, 1)) },
        "tern_stats_note_high_water" => |a| {
            stats::tern_stats_note_high_water(word(a, 0));
            0
        },
        "tern_span_error_message" => {
            |a| unsafe { span::tern_span_error_message(word(a, 0), ptr(a, 1), word(a, 2)) }
        }
        "tern_sanitize_enable" => |_| {
            sanitize::tern_sanitize_enable();
            0
        },
        "tern_sanitize_site" => |a| {
            unsafe { sanitize::tern_sanitize_site(ptr(a, 0)) };
            0
        },
        "tern_sanitize_check" => {
            |a| unsafe { sanitize::tern_sanitize_check(word(a, 0), word(a, 1), ptr(a, 2)) }
        }
        "tern_sanitize_tag" => |a| sanitize::tern_sanitize_tag(word(a, 0), word(a, 1), word(a, 2)),
        "tern_sanitize_release" => |a| {
            unsafe {
                sanitize::tern_sanitize_release(word(a, 0), word(a, 1), word(a, 2), ptr(a, 3))
            };
            0
        },
        "tern_sanitize_retag" => |a| unsafe {
            sanitize::tern_sanitize_retag(
                word(a, 0),
                word(a, 1),
                word(a, 2),
                word(a, 3),
                word(a, 4),
                ptr(a, 5),
            )
        },
        "tern_sanitize_region" => |a| sanitize::tern_sanitize_region(word(a, 0), word(a, 1)),
        "tern_sanitize_region_reset" => |a| {
            unsafe { sanitize::tern_sanitize_region_reset(word(a, 0), word(a, 1), ptr(a, 2)) };
            0
        },
        "tern_sanitize_region_end" => |a| {
            unsafe { sanitize::tern_sanitize_region_end(word(a, 0), ptr(a, 1)) };
            0
        },
        "tern_span_live_bytes" => {
            |a| unsafe { span::tern_span_live_bytes(ptr(a, 0), ptr(a, 1), word(a, 2)) }
        }
        "tern_span_stale_message" => |a| unsafe {
            span::tern_span_stale_message(
                word(a, 0),
                word(a, 1),
                word(a, 2),
                word(a, 3),
                ptr(a, 4),
                word(a, 5),
            )
        },
        _ => return None,
    };
    Some(f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_runtime_symbol_has_a_typed_call() {
        for (name, _) in tern_runtime::abi::symbols() {
            assert!(runtime_call(name).is_some(), "no typed call for `{name}`");
        }
        assert!(runtime_call("labs").is_none());
    }

    #[test]
    fn runtime_calls_without_side_effects_answer_like_the_runtime() {
        let header = runtime_call("tern_span_header_words").unwrap();
        assert_eq!(header(&[]), span::tern_span_header_words());
        let offset = runtime_call("tern_reusable_offset").unwrap();
        assert_eq!(offset(&[0, 0]), -1);
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
        assert_eq!(call_native(addr, &[-42]), 42);
        let seven = vec![(Type::I64, false); 7];
        assert!(matches!(
            resolve(&ext("labs", seven)).unwrap(),
            Extern::Unavailable
        ));
    }
}

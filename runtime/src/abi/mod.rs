//! The extern "C" ABI the generated code and the stdlib call (`tern_*`).
//! `docs/runtime-abi.md` is the map; the doc comments here are the reference.

pub mod fail;
pub mod output;
pub mod process;

/// Every `tern_*` extern of the runtime with its address, for the JIT: the
/// driver hands this list to `tern-codegen`, which registers each symbol so
/// generated code resolves runtime calls in-process (no `dlsym`, and no
/// dependence on the executable exporting its symbols). AOT links the same
/// functions from `libtern_runtime.a` by name.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    vec![
        ("tern_rt_main", process::tern_rt_main as *const u8),
        ("tern_rt_flush", process::tern_rt_flush as *const u8),
        ("tern_print_i64", output::tern_print_i64 as *const u8),
        ("tern_print_bool", output::tern_print_bool as *const u8),
        ("tern_print_str", output::tern_print_str as *const u8),
        ("tern_panic", output::tern_panic as *const u8),
        ("tern_assert_fail", output::tern_assert_fail as *const u8),
        ("tern_bounds_fail", output::tern_bounds_fail as *const u8),
        ("tern_slice_fail", output::tern_slice_fail as *const u8),
        ("tern_div_zero", output::tern_div_zero as *const u8),
    ]
}

//! The extern C ABI (`tern_*` symbols). Map: `docs/runtime-abi.md`.
//!
//! * [`span`] — the checked span tree for the library (`tern_span_*`);
//! * [`reusable`] — the builtin pool (`tern_reusable_*`);
//! * [`mem`] — memory reservation (`tern_mem_*`);
//! * [`io`] — files, standard streams, arguments and environment for the
//!   stdlib's `io` (`tern_io_*`, and `tern_rt_args`);
//! * [`sanitize`] — the sanitizer behind `--sanitize` (`tern_sanitize_*`);
//! * [`output`] — buffered program output and the failure entry points
//!   generated code calls (`tern_print_*`, `tern_panic`, `tern_*_fail`, ...);
//! * [`process`] — program entry and exit (`tern_rt_main`, `tern_rt_flush`,
//!   `tern_rt_debug_table`);
//! * [`stats`] — what a Tern pool reports for measurements
//!   (`tern_stats_note_high_water`);
//! * [`interrupt`] — stopping a running program from outside (the REPL's
//!   Ctrl-C: `tern_rt_interrupted`);
//! * [`fail`] — the single failure path.

pub mod fail;
pub mod interrupt;
pub mod io;
pub mod mem;
pub mod output;
pub mod process;
pub mod reusable;
pub mod sanitize;
pub mod span;
pub mod stats;

/// Every `tern_*` extern of the runtime with its address (the functions,
/// and the builtin pool's fast-path record, `builtin::tern_reusable_fast`),
/// for the JIT: the driver hands this list to `tern-codegen`, which registers each symbol so
/// generated code (and `extern fn` declarations in Tern sources, such as the
/// stdlib's) resolves runtime functions in-process, without `dlsym` and
/// without the executable exporting its symbols. AOT links the same
/// functions from `libtern_runtime.a` by name. Made from the one table of
/// the ABI (`tern_abi::runtime_abi!`): an entry that names no function of
/// these modules does not compile, and a test checks that every
/// `#[no_mangle]` function of this module is an entry.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    macro_rules! symbol_list {
        ($($id:ident = $module:ident :: $name:ident ($($p:ident),*) $(-> $r:ident)?;)*) => {
            vec![$((stringify!($name), $module::$name as *const u8)),*]
        };
    }
    let mut list = tern_abi::runtime_abi!(symbol_list);
    // The one data symbol: the builtin pool's fast-path record.
    list.push((
        tern_abi::reusable_fast::SYMBOL,
        std::ptr::addr_of!(crate::builtin::tern_reusable_fast).cast(),
    ));
    list
}

#[cfg(test)]
mod tests {
    /// Every `#[no_mangle]` function in `abi/` (and the builtin pool's
    /// record) is listed by `symbols()`, so the JIT can resolve everything
    /// AOT can link.
    #[test]
    fn symbols_list_every_extern() {
        let sources = [
            include_str!("fail.rs"),
            include_str!("interrupt.rs"),
            include_str!("io.rs"),
            include_str!("mem.rs"),
            include_str!("output.rs"),
            include_str!("process.rs"),
            include_str!("reusable.rs"),
            // The builtin pool's fast-path record, a data symbol.
            include_str!("../builtin.rs"),
            include_str!("sanitize.rs"),
            include_str!("span.rs"),
            include_str!("stats.rs"),
        ];
        let mut declared = Vec::new();
        for src in sources {
            let mut after_no_mangle = false;
            for line in src.lines() {
                if line.contains("#[unsafe(no_mangle)]") {
                    after_no_mangle = true;
                } else if after_no_mangle && line.contains("fn ") {
                    let name = line.split("fn ").nth(1).unwrap().split('(').next().unwrap();
                    declared.push(name.trim().to_string());
                    after_no_mangle = false;
                } else if after_no_mangle && line.contains("static ") {
                    let name = line
                        .split("static ")
                        .nth(1)
                        .unwrap()
                        .split(':')
                        .next()
                        .unwrap();
                    declared.push(name.trim().to_string());
                    after_no_mangle = false;
                }
            }
        }
        let mut listed: Vec<String> = super::symbols()
            .iter()
            .map(|(n, _)| n.to_string())
            .collect();
        declared.sort();
        listed.sort();
        assert_eq!(declared, listed);
    }
}

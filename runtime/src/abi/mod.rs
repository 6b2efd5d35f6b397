//! The extern C ABI (`tern_*` symbols). Map: `docs/runtime-abi.md`.
//!
//! * [`span`] — the checked span tree for the library (`tern_span_*`);
//! * [`reusable`] — the builtin pool (`tern_reusable_*`);
//! * [`mem`] — memory reservation (`tern_mem_*`);
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
pub mod mem;
pub mod output;
pub mod process;
pub mod reusable;
pub mod sanitize;
pub mod span;
pub mod stats;

/// Every `tern_*` extern of the runtime with its address, for the JIT: the
/// driver hands this list to `tern-codegen`, which registers each symbol so
/// generated code (and `extern fn` declarations in Tern sources, such as the
/// stdlib's) resolves runtime functions in-process, without `dlsym` and
/// without the executable exporting its symbols. AOT links the same
/// functions from `libtern_runtime.a` by name. Keep it complete: a test
/// checks it against the `#[no_mangle]` functions of this module.
pub fn symbols() -> Vec<(&'static str, *const u8)> {
    vec![
        ("tern_rt_main", process::tern_rt_main as *const u8),
        ("tern_rt_flush", process::tern_rt_flush as *const u8),
        (
            "tern_rt_debug_table",
            process::tern_rt_debug_table as *const u8,
        ),
        (
            "tern_rt_interrupted",
            interrupt::tern_rt_interrupted as *const u8,
        ),
        ("tern_print_i64", output::tern_print_i64 as *const u8),
        ("tern_print_u64", output::tern_print_u64 as *const u8),
        ("tern_write_i64", output::tern_write_i64 as *const u8),
        ("tern_write_u64", output::tern_write_u64 as *const u8),
        ("tern_write_bool", output::tern_write_bool as *const u8),
        ("tern_write_str", output::tern_write_str as *const u8),
        ("tern_print_bool", output::tern_print_bool as *const u8),
        ("tern_print_str", output::tern_print_str as *const u8),
        ("tern_panic", output::tern_panic as *const u8),
        ("tern_assert_fail", output::tern_assert_fail as *const u8),
        ("tern_bounds_fail", output::tern_bounds_fail as *const u8),
        ("tern_slice_fail", output::tern_slice_fail as *const u8),
        ("tern_div_zero", output::tern_div_zero as *const u8),
        ("tern_stack_fail", output::tern_stack_fail as *const u8),
        ("tern_length_fail", output::tern_length_fail as *const u8),
        (
            "tern_reusable_alloc",
            reusable::tern_reusable_alloc as *const u8,
        ),
        (
            "tern_reusable_resize",
            reusable::tern_reusable_resize as *const u8,
        ),
        (
            "tern_reusable_free",
            reusable::tern_reusable_free as *const u8,
        ),
        (
            "tern_reusable_offset",
            reusable::tern_reusable_offset as *const u8,
        ),
        ("tern_mem_reserve", mem::tern_mem_reserve as *const u8),
        (
            "tern_stats_note_high_water",
            stats::tern_stats_note_high_water as *const u8,
        ),
        ("tern_mem_release", mem::tern_mem_release as *const u8),
        ("tern_span_alloc", span::tern_span_alloc as *const u8),
        ("tern_span_free", span::tern_span_free as *const u8),
        ("tern_span_resize", span::tern_span_resize as *const u8),
        (
            "tern_span_header_words",
            span::tern_span_header_words as *const u8,
        ),
        (
            "tern_span_node_words",
            span::tern_span_node_words as *const u8,
        ),
        ("tern_span_init", span::tern_span_init as *const u8),
        ("tern_span_new", span::tern_span_new as *const u8),
        ("tern_span_finish", span::tern_span_finish as *const u8),
        ("tern_span_reset", span::tern_span_reset as *const u8),
        (
            "tern_span_error_message",
            span::tern_span_error_message as *const u8,
        ),
        (
            "tern_span_live_bytes",
            span::tern_span_live_bytes as *const u8,
        ),
        (
            "tern_span_stale_message",
            span::tern_span_stale_message as *const u8,
        ),
        (
            "tern_sanitize_enable",
            sanitize::tern_sanitize_enable as *const u8,
        ),
        (
            "tern_sanitize_site",
            sanitize::tern_sanitize_site as *const u8,
        ),
        (
            "tern_sanitize_check",
            sanitize::tern_sanitize_check as *const u8,
        ),
        (
            "tern_sanitize_tag",
            sanitize::tern_sanitize_tag as *const u8,
        ),
        (
            "tern_sanitize_release",
            sanitize::tern_sanitize_release as *const u8,
        ),
        (
            "tern_sanitize_retag",
            sanitize::tern_sanitize_retag as *const u8,
        ),
        (
            "tern_sanitize_region",
            sanitize::tern_sanitize_region as *const u8,
        ),
        (
            "tern_sanitize_region_reset",
            sanitize::tern_sanitize_region_reset as *const u8,
        ),
        (
            "tern_sanitize_region_end",
            sanitize::tern_sanitize_region_end as *const u8,
        ),
    ]
}

#[cfg(test)]
mod tests {
    /// Every `#[no_mangle]` function in `abi/` is listed by `symbols()`, so
    /// the JIT can resolve everything AOT can link.
    #[test]
    fn symbols_list_every_extern() {
        let sources = [
            include_str!("fail.rs"),
            include_str!("interrupt.rs"),
            include_str!("mem.rs"),
            include_str!("output.rs"),
            include_str!("process.rs"),
            include_str!("reusable.rs"),
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

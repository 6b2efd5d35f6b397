//! The programs suite (`tern bench --suite programs`): well-known compute
//! programs (bench/programs/*.tern) and their C twins
//! (bench/programs/c/*.c), each repeating its benchmark body `REPS` times
//! and printing a verified result that does not depend on `REPS`.
//!
//! A program is runnable as it is; the harness only rewrites its repetition
//! count: the Tern file's `const REPS: i64 = N;` line, and the C file's
//! `REPS` macro through `-DREPS=N`. `--quick` divides `N` by 20. Both sides
//! must print exactly the file's `// out:` lines.

use super::config::Workload;

/// The Tern source and the C source of a program, as committed.
fn sources(w: Workload) -> (&'static str, &'static str) {
    macro_rules! program {
        ($stem:literal) => {
            (
                include_str!(concat!("../programs/", $stem, ".tern")),
                include_str!(concat!("../programs/c/", $stem, ".c")),
            )
        };
    }
    match w {
        Workload::Fannkuch => program!("fannkuch"),
        Workload::Queens => program!("queens"),
        Workload::Sieve => program!("sieve"),
        Workload::Permute => program!("permute"),
        Workload::Towers => program!("towers"),
        Workload::List => program!("list"),
        Workload::Storage => program!("storage"),
        Workload::Bounce => program!("bounce"),
        Workload::Richards => program!("richards"),
        Workload::Json => program!("json"),
        Workload::BinaryTrees => program!("binarytrees"),
        Workload::Collatz => program!("collatz"),
        Workload::Matmul => program!("matmul"),
        _ => panic!("`{w:?}` is not a program of the suite"),
    }
}

/// The committed Tern text of a program.
pub fn tern_text(w: Workload) -> &'static str {
    sources(w).0
}

/// The C twin of a program.
pub fn c_source(w: Workload) -> &'static str {
    sources(w).1
}

/// The line of a Tern program that sets its repetition count.
fn reps_line(text: &str) -> Option<(&str, i64)> {
    text.lines().find_map(|l| {
        let n = l.strip_prefix("const REPS: i64 = ")?.strip_suffix(';')?;
        Some((l, n.trim().parse().ok()?))
    })
}

/// How many times a program repeats its body: the file's count, divided by
/// 20 for `quick` (at least 1).
pub fn reps(w: Workload, quick: bool) -> i64 {
    let (_, n) = reps_line(tern_text(w))
        .unwrap_or_else(|| panic!("bench/programs: `{w:?}` has no `const REPS: i64 = N;` line"));
    if quick { (n / 20).max(1) } else { n }
}

/// The Tern source the harness builds: the program with its `REPS` set.
pub fn tern_source(w: Workload, quick: bool) -> String {
    let text = tern_text(w);
    let (line, _) = reps_line(text).expect("checked by `reps`");
    text.replacen(line, &format!("const REPS: i64 = {};", reps(w, quick)), 1)
}

/// The `cc` arguments (besides source and output) of a program's C twin.
pub fn c_flags(w: Workload, quick: bool) -> Vec<String> {
    vec!["-O2".into(), format!("-DREPS={}", reps(w, quick))]
}

/// What both sides must print: the Tern file's `// out:` lines.
pub fn expected_output(w: Workload) -> String {
    tern_text(w)
        .lines()
        .filter_map(|l| l.strip_prefix("// out:"))
        .map(|v| format!("{}\n", v.strip_prefix(' ').unwrap_or(v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_program_has_a_repetition_count_an_expected_output_and_a_twin() {
        for w in Workload::programs() {
            assert!(reps(w, false) >= 1, "{w:?}");
            assert!(reps(w, true) >= 1 && reps(w, true) <= reps(w, false));
            let src = tern_source(w, true);
            assert!(src.contains(&format!("const REPS: i64 = {};", reps(w, true))));
            assert!(
                !expected_output(w).is_empty(),
                "{w:?} has no `// out:` line"
            );
            assert!(
                c_source(w).contains("#ifndef REPS"),
                "{w:?}: the C twin takes REPS from -DREPS"
            );
        }
    }
}

//! The correctness gate of every sample: all sides of a case must print the
//! same checksums. Tern programs print two lines, a contents checksum and a
//! placement checksum (offsets, which the placement contract makes equal
//! across builtin, library and pure); the C baseline cannot see offsets and
//! prints the contents line only, so C is held to the first line.

use std::collections::BTreeMap;

use super::config::{Side, Workload};

/// Reference outputs per case, taken from the first sample that ran.
#[derive(Default, Debug)]
pub struct Checksums {
    /// The whole stdout of the first Tern sample of each case.
    full: BTreeMap<(Workload, u32), (String, String)>,
    /// The first line of the first sample of each case (any side).
    contents: BTreeMap<(Workload, u32), (String, String)>,
}

impl Checksums {
    /// Checks `stdout` of a sample labelled `label` (e.g. `library -O2 aot`)
    /// against the case's reference, recording it as the reference if it is
    /// the first. `Err` says exactly what differs.
    pub fn check(
        &mut self,
        case: (Workload, u32),
        side: Side,
        label: &str,
        stdout: &str,
    ) -> Result<(), String> {
        if case.0.program().is_some() {
            return self.check_program(case, label, stdout);
        }
        let lines = stdout.lines().count();
        let expected_lines = if side.is_c() { 1 } else { 2 };
        if lines != expected_lines {
            return Err(format!(
                "{label}: expected {expected_lines} checksum line(s) on stdout, got {lines}: {:?}",
                stdout
            ));
        }
        let first = stdout.lines().next().unwrap_or("").to_string();
        let (ref_label, ref_first) = self
            .contents
            .entry(case)
            .or_insert_with(|| (label.to_string(), first.clone()))
            .clone();
        if first != ref_first {
            return Err(format!(
                "{label}: contents checksum {first} differs from {ref_first} printed by {ref_label}"
            ));
        }
        if !side.is_c() {
            let (ref_label, ref_out) = self
                .full
                .entry(case)
                .or_insert_with(|| (label.to_string(), stdout.to_string()))
                .clone();
            if stdout != ref_out {
                let got = stdout.lines().nth(1).unwrap_or("");
                let want = ref_out.lines().nth(1).unwrap_or("");
                return Err(format!(
                    "{label}: placement checksum {got} differs from {want} printed by {ref_label}"
                ));
            }
        }
        Ok(())
    }

    /// A program of the programs suite (Tern or C) must print exactly its
    /// verified result (`crate::programs::expected_output`).
    fn check_program(
        &mut self,
        case: (Workload, u32),
        label: &str,
        stdout: &str,
    ) -> Result<(), String> {
        let want = super::programs::expected_output(case.0);
        if stdout != want {
            return Err(format!(
                "{label}: printed {stdout:?}, not the program's verified result {want:?}"
            ));
        }
        let first = stdout.lines().next().unwrap_or("").to_string();
        self.contents
            .entry(case)
            .or_insert_with(|| (label.to_string(), first));
        Ok(())
    }

    /// Every reference, as `workload/size: line...` text for `checksums.txt`.
    pub fn listing(&self) -> String {
        let mut out = String::new();
        for ((w, size), (label, first)) in &self.contents {
            // A replay's dry runs are checked against each other as size 0.
            let name = match size {
                0 if w.trace().is_some() => format!("{} dry", super::config::case_name(*w, 1)),
                _ => super::config::case_name(*w, *size),
            };
            out.push_str(&format!("{name} contents {first} (first seen: {label})\n"));
            if let Some((label, full)) = self.full.get(&(*w, *size)) {
                let place = full.lines().nth(1).unwrap_or("");
                out.push_str(&format!("{name} placement {place} (first seen: {label})\n"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CASE: (Workload, u32) = (Workload::Append, 8);

    #[test]
    fn equal_outputs_pass_and_c_is_held_to_the_contents_line() {
        let mut c = Checksums::default();
        assert_eq!(
            c.check(CASE, Side::Builtin, "builtin -O2 aot", "42\n7\n"),
            Ok(())
        );
        assert_eq!(
            c.check(CASE, Side::Library, "library -O2 aot", "42\n7\n"),
            Ok(())
        );
        assert_eq!(c.check(CASE, Side::C, "c aot", "42\n"), Ok(()));
        assert_eq!(
            c.listing(),
            "append/8 contents 42 (first seen: builtin -O2 aot)\n\
                                 append/8 placement 7 (first seen: builtin -O2 aot)\n"
        );
    }

    #[test]
    fn a_contents_mismatch_is_caught() {
        let mut c = Checksums::default();
        c.check(CASE, Side::Builtin, "builtin -O2 aot", "42\n7\n")
            .unwrap();
        assert_eq!(
            c.check(CASE, Side::C, "c aot", "41\n"),
            Err("c aot: contents checksum 41 differs from 42 printed by builtin -O2 aot".into())
        );
        assert_eq!(
            c.check(CASE, Side::Pure, "pure -O0 jit", "43\n7\n"),
            Err(
                "pure -O0 jit: contents checksum 43 differs from 42 printed by builtin -O2 aot"
                    .into()
            )
        );
    }

    #[test]
    fn a_placement_mismatch_is_caught() {
        let mut c = Checksums::default();
        c.check(CASE, Side::Builtin, "builtin -O2 aot", "42\n7\n")
            .unwrap();
        assert_eq!(
            c.check(CASE, Side::Library, "library -O2 jit", "42\n8\n"),
            Err(
                "library -O2 jit: placement checksum 8 differs from 7 printed by builtin -O2 aot"
                    .into()
            )
        );
    }

    #[test]
    fn wrong_line_counts_are_caught_and_cases_are_separate() {
        let mut c = Checksums::default();
        assert_eq!(
            c.check(CASE, Side::Builtin, "builtin -O2 aot", ""),
            Err("builtin -O2 aot: expected 2 checksum line(s) on stdout, got 0: \"\"".into())
        );
        c.check(CASE, Side::Builtin, "builtin -O2 aot", "1\n2\n")
            .unwrap();
        assert_eq!(
            c.check(
                (Workload::Resize, 8),
                Side::Builtin,
                "builtin -O2 aot",
                "5\n6\n"
            ),
            Ok(())
        );
        assert!(c.check(CASE, Side::C, "c aot", "1\n2\n").is_err());
    }
}

//! Runs every `tests/programs/*.tern` and `examples/*.tern` through
//! `tern run` (JIT) and `tern build` + the executable (AOT) at -O0, -O1 and
//! -O2, and again with each flag set of `FLAG_SETS` (`--sanitize`) at -O0
//! and -O2, and compares stdout, stderr and exit status with the
//! expectations the file carries in comments (`// out:`, `// err:`,
//! `// exit:`, and `// [--sanitize] ...` for a flag set whose runs differ;
//! the syntax and the parser are in `tests/program_support/mod.rs`, shared
//! with `tests/interp.rs`).
//!
//! The debug `tern` binary runs Cranelift's verifier on every function it
//! compiles (`TERN_VERIFY=1` is set as well, for release-mode test runs).
//! All mismatches are collected and reported together.
//!
//! `TERN_BLESS=1 cargo test --test programs` rewrites the expectations of
//! each mismatching file to what its runs did (`program_support::bless`),
//! when every run of a flag set agrees (JIT, AOT, every level), and reports
//! the files it rewrote; files it cannot bless still fail.

mod program_support;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use program_support::{
    Expect, FLAG_SETS, ROOT, bless, bless_mode, exe_with, expectations_of, mismatch, observed,
    parse_all, parse_expectations, program_files, tern_with,
};

/// What checking one file came to.
#[derive(Default)]
struct Checked {
    /// Mismatching runs (and, blessing, why the file was not rewritten).
    failures: Vec<String>,
    /// Blessing: whether the file was rewritten.
    blessed: bool,
}

/// Every (file, flags, mode, level) run of one file: the mismatches, or,
/// with `bless`, the file rewritten to what the runs did.
fn check_file(rel: &str, scratch: &Path, bless: bool) -> Checked {
    let all = expectations_of(rel);
    let mut failures = Vec::new();
    // What each flag set's runs did ("": none), and whether they all agree
    // and can be written down; `None` once they cannot.
    let mut seen: BTreeMap<String, Option<Expect>> = BTreeMap::new();
    let stem = rel.replace(['/', '.'], "_");
    let runs = std::iter::once(("", &["-O0", "-O1", "-O2"][..]))
        .chain(FLAG_SETS.iter().map(|f| (*f, &["-O0", "-O2"][..])));
    for (flags, levels) in runs {
        let expect = all.for_flags(flags);
        let extra: Vec<&str> = flags.split_whitespace().collect();
        let label = |mode: &str, level: &str| {
            let sep = if flags.is_empty() { "" } else { " " };
            format!("{rel} [{mode} {level}{sep}{flags}]")
        };
        for &level in levels {
            let run_id = format!("{stem}{level}{}", flags.replace(' ', ""));
            let prog_args = all.args_with(&scratch.join(format!("{run_id}-jit")));
            let mut args = vec!["run", level];
            args.extend(&extra);
            args.push(rel);
            args.push("--");
            args.extend(prog_args.iter().map(String::as_str));
            let out = tern_with(&args, &all.stdin);
            note(&mut seen, flags, &out);
            if let Some(m) = mismatch(expect, &out) {
                failures.push(format!("{}\n  {m}", label("JIT", level)));
            }
            let exe = scratch.join(&run_id);
            let exe_s = exe.to_str().expect("utf-8 temp path");
            let mut args = vec!["build", level];
            args.extend(&extra);
            args.extend([rel, "-o", exe_s]);
            let built = tern_with(&args, b"");
            if !built.status.success() {
                seen.insert(flags.to_string(), None);
                failures.push(format!(
                    "{}\n  build failed ({}): {}",
                    label("AOT", level),
                    built.status,
                    String::from_utf8_lossy(&built.stderr).trim_end()
                ));
                continue;
            }
            let prog_args = all.args_with(&scratch.join(format!("{run_id}-aot")));
            let ran = exe_with(&exe, &prog_args, &all.stdin);
            note(&mut seen, flags, &ran);
            if let Some(m) = mismatch(expect, &ran) {
                failures.push(format!("{}\n  {m}", label("AOT", level)));
            }
            let _ = std::fs::remove_file(&exe);
        }
    }
    if failures.is_empty() || !bless {
        return Checked {
            failures,
            blessed: false,
        };
    }
    match bless_file(rel, seen) {
        Ok(()) => Checked {
            failures: Vec::new(),
            blessed: true,
        },
        Err(why) => {
            failures.push(format!("{rel}: not blessed: {why}"));
            Checked {
                failures,
                blessed: false,
            }
        }
    }
}

/// Records what one run with `flags` did: `seen[flags]` stays the outcome
/// while every run agrees, `None` after.
fn note(seen: &mut BTreeMap<String, Option<Expect>>, flags: &str, out: &std::process::Output) {
    let got = observed(out);
    let slot = seen.entry(flags.to_string()).or_insert_with(|| got.clone());
    if *slot != got {
        *slot = None;
    }
}

/// Rewrites the expectations of `rel` to `seen` (see `check_file`).
fn bless_file(rel: &str, seen: BTreeMap<String, Option<Expect>>) -> Result<(), String> {
    let mut observed = BTreeMap::new();
    for (flags, e) in seen {
        let e = e.ok_or_else(|| {
            format!(
                "the runs {} do not all agree (JIT, AOT, levels), failed to build, \
                 or ended by a signal",
                if flags.is_empty() {
                    "without flags".to_string()
                } else {
                    format!("with {flags}")
                }
            )
        })?;
        observed.insert(flags, e);
    }
    let path = Path::new(ROOT).join(rel);
    let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    let new = bless(&text, &observed)?.ok_or("the runs match (a bug of the harness)")?;
    std::fs::write(&path, new).map_err(|e| e.to_string())
}

fn scratch_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-programs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

#[test]
fn programs_run_identically_in_jit_and_aot_at_every_level() {
    let files = program_files();
    assert!(
        files.len() >= 40,
        "expected 40+ test programs, found {}",
        files.len()
    );
    let bless = bless_mode();
    let scratch = scratch_dir();
    let queue = Mutex::new(files.clone());
    let failures = Mutex::new(Vec::new());
    let blessed = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        // Linking waits on the file system more than on the CPU: two
        // workers per core keep the cores busy.
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get() * 2);
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let Some(file) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let c = check_file(&file, &scratch, bless);
                    failures.lock().unwrap().extend(c.failures);
                    if c.blessed {
                        blessed.lock().unwrap().push(file);
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let mut blessed = blessed.into_inner().unwrap();
    blessed.sort();
    for file in &blessed {
        // Straight to stderr: `eprintln!` is captured.
        let _ = writeln!(std::io::stderr(), "blessed: {file}");
    }
    let mut failures = failures.into_inner().unwrap();
    failures.sort();
    assert!(
        failures.is_empty(),
        "{} mismatching runs of {} files (`TERN_BLESS=1` rewrites the expectations \
         to what the runs do: docs/testing.md):\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}

#[test]
fn expectations_per_flag_set_parse() {
    let all =
        parse_all("// out: 1\n// [--sanitize] err: error: f:1:2: m\n// [--sanitize] exit: 101\n");
    assert_eq!(all.for_flags("").out, vec!["1".to_string()]);
    let s = all.for_flags("--sanitize");
    assert_eq!(
        s,
        &Expect {
            out: vec![],
            err: vec!["error: f:1:2: m".into()],
            exit: 101,
        }
    );
    // Without qualified lines, every flag set expects the plain lines.
    let plain = parse_all("// out: 2\n");
    assert_eq!(plain.for_flags("--sanitize"), &plain.plain);
    assert!(std::panic::catch_unwind(|| parse_all("// [--nope] out: 3\n")).is_err());
}

#[test]
fn expectation_comments_parse() {
    let e = parse_expectations(
        "// out: a b\n// out:\nx // out: no\n// exit: 101\n// err: error: f:1:2: m\n",
    );
    assert_eq!(
        e,
        Expect {
            out: vec!["a b".into(), "".into()],
            err: vec!["error: f:1:2: m".into()],
            exit: 101,
        }
    );
}

/// Observed outcomes for `bless`: the same for every flag set unless given.
fn observed_all(plain: Expect, sanitize: Option<Expect>) -> BTreeMap<String, Expect> {
    let mut m = BTreeMap::new();
    for f in FLAG_SETS {
        m.insert(
            f.to_string(),
            sanitize.clone().unwrap_or_else(|| plain.clone()),
        );
    }
    m.insert(String::new(), plain);
    m
}

fn expect(out: &[&str], err: &[&str], exit: i32) -> Expect {
    Expect {
        out: out.iter().map(|s| s.to_string()).collect(),
        err: err.iter().map(|s| s.to_string()).collect(),
        exit,
    }
}

#[test]
fn bless_rewrites_the_plain_section_in_place_and_keeps_the_rest() {
    let text = "// A comment.\nfn main() {}\n// stdin: x\n// out: 1\n// out:\n// exit: 3\n// args: a b\n// err: old\n// trailing\n";
    let got = observed_all(expect(&["2", "", " sp"], &[], 0), None);
    let new = program_support::bless(text, &got).unwrap().unwrap();
    assert_eq!(
        new,
        "// A comment.\nfn main() {}\n// stdin: x\n// out: 2\n// out:\n// out:  sp\n// args: a b\n// trailing\n"
    );
    // Blessed, it matches: nothing more to do.
    assert_eq!(program_support::bless(&new, &got), Ok(None));
}

#[test]
fn bless_writes_a_missing_plain_section_before_the_flag_sections_or_at_the_end() {
    let got = observed_all(expect(&["1"], &["e"], 101), None);
    assert_eq!(
        program_support::bless("fn main() {}", &got)
            .unwrap()
            .unwrap(),
        "fn main() {}\n// out: 1\n// exit: 101\n// err: e\n"
    );
    let got = observed_all(expect(&["1"], &[], 0), Some(expect(&[], &["s"], 101)));
    assert_eq!(
        program_support::bless(
            "fn main() {}\n// [--sanitize] exit: 101\n// [--sanitize] err: s\n",
            &got
        )
        .unwrap()
        .unwrap(),
        "fn main() {}\n// out: 1\n// [--sanitize] exit: 101\n// [--sanitize] err: s\n"
    );
}

#[test]
fn bless_rewrites_only_the_flag_section_that_mismatches() {
    let text = "fn main() {}\n// out: 0\n// exit: 101\n// err: plain\n// Under sanitize:\n// [--sanitize] out: 0\n// [--sanitize] exit: 101\n// [--sanitize] err: old\n";
    let got = observed_all(
        expect(&["0"], &["plain"], 101),
        Some(expect(&["0"], &["new", "  in main"], 101)),
    );
    assert_eq!(
        program_support::bless(text, &got).unwrap().unwrap(),
        "fn main() {}\n// out: 0\n// exit: 101\n// err: plain\n// Under sanitize:\n// [--sanitize] out: 0\n// [--sanitize] exit: 101\n// [--sanitize] err: new\n// [--sanitize] err:   in main\n"
    );
}

#[test]
fn bless_refuses_a_new_difference_under_a_flag_set() {
    let got = observed_all(expect(&["1"], &[], 0), Some(expect(&["2"], &[], 0)));
    let why = program_support::bless("fn main() {}\n// out: 1\n", &got).unwrap_err();
    assert!(why.contains("[--sanitize]"), "{why}");
}

//! Shared by the tests that run `tests/programs/*.tern` and `examples/*.tern`
//! against the expectations each file carries in comments
//! (`tests/programs.rs`: JIT and AOT; `tests/interp.rs`: the interpreter):
//!
//! * `// out: TEXT`: one expected stdout line (`// out:` alone: empty line);
//! * `// exit: N`: expected exit status (default 0);
//! * `// err: TEXT`: expected stderr lines, exact and in order; without any,
//!   stderr must be empty;
//! * `// stdin: TEXT`: a line of the program's standard input (the lines in
//!   order, each ending in a newline; without any, stdin is empty);
//! * `// args: A B ...`: the program's arguments (`tern run FILE -- A B`,
//!   `./exe A B`), split on white space; `{tmp}` in one stands for a fresh
//!   directory of that run's own.
//!
//! Every file also runs under each flag set of [`FLAG_SETS`] (today
//! `--sanitize`). A line may be qualified by a flag set in brackets, written
//! exactly as in [`FLAG_SETS`]: `// [--sanitize] out: TEXT`,
//! `// [--sanitize] err: TEXT`, `// [--sanitize] exit: N`. If a file has any
//! line for a flag set, the runs with those flags are held to that flag set's
//! lines alone (all three fields: a field it does not mention means no stdout,
//! no stderr, status 0); if it has none, they are held to the unqualified
//! lines, i.e. the output must be the same with and without the flags. An
//! unknown flag set in brackets is an error of the file.

#![allow(dead_code)]

#[path = "../child_support/mod.rs"]
pub mod child;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

/// The flag sets, besides none, every program runs under.
pub const FLAG_SETS: &[&str] = &["--sanitize"];

/// The `tern` driver under test.
pub const TERN: &str = env!("CARGO_BIN_EXE_tern");
/// The workspace root (programs are run from here, so locations read
/// `tests/programs/NAME.tern:L:C`).
pub const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// What a program file expects of a run.
#[derive(Debug, PartialEq, Eq)]
pub struct Expect {
    pub out: Vec<String>,
    pub err: Vec<String>,
    pub exit: i32,
}

/// A file's expectations: unqualified, and per flag set that has lines;
/// and what every run gets: its standard input and arguments.
#[derive(Debug, PartialEq, Eq)]
pub struct Expectations {
    pub plain: Expect,
    pub by_flags: BTreeMap<String, Expect>,
    pub stdin: Vec<u8>,
    pub args: Vec<String>,
}

impl Expectations {
    /// The arguments with `{tmp}` replaced by `tmp` (created when used).
    pub fn args_with(&self, tmp: &Path) -> Vec<String> {
        if self.args.iter().any(|a| a.contains("{tmp}")) {
            std::fs::create_dir_all(tmp).expect("create the run's directory");
        }
        let dir = tmp.to_str().expect("utf-8 temp path");
        self.args.iter().map(|a| a.replace("{tmp}", dir)).collect()
    }
}

impl Expectations {
    /// What the runs with `flags` (one of [`FLAG_SETS`], or "" for none) must show.
    pub fn for_flags(&self, flags: &str) -> &Expect {
        self.by_flags.get(flags).unwrap_or(&self.plain)
    }
}

fn empty() -> Expect {
    Expect {
        out: Vec::new(),
        err: Vec::new(),
        exit: 0,
    }
}

/// The unqualified expectations in the comments of `text`.
pub fn parse_expectations(text: &str) -> Expect {
    parse_all(text).plain
}

/// Every expectation in the comments of `text` (see the module docs). Panics
/// on a malformed line (a bad `exit:` number, an unknown flag set).
pub fn parse_all(text: &str) -> Expectations {
    let mut all = Expectations {
        plain: empty(),
        by_flags: BTreeMap::new(),
        stdin: Vec::new(),
        args: Vec::new(),
    };
    for line in text.lines() {
        let line = line.trim_start();
        let Some(rest) = line.strip_prefix("//") else {
            continue;
        };
        let mut rest = rest.trim_start();
        let mut flags = None;
        if let Some(q) = rest.strip_prefix('[') {
            let Some((set, after)) = q.split_once(']') else {
                continue;
            };
            let set = set.trim();
            assert!(
                FLAG_SETS.contains(&set),
                "unknown flag set `[{set}]` in an expectation (known: {FLAG_SETS:?})"
            );
            flags = Some(set.to_string());
            rest = after.trim_start();
        }
        let field = |key: &str| {
            rest.strip_prefix(key)
                .map(|v| v.strip_prefix(' ').unwrap_or(v).to_string())
        };
        if flags.is_none() {
            if let Some(v) = field("stdin:") {
                all.stdin.extend_from_slice(v.as_bytes());
                all.stdin.push(b'\n');
                continue;
            }
            if let Some(v) = field("args:") {
                all.args.extend(v.split_whitespace().map(str::to_string));
                continue;
            }
        }
        let e = match &flags {
            None => &mut all.plain,
            Some(f) => all.by_flags.entry(f.clone()).or_insert_with(empty),
        };
        if let Some(v) = field("out:") {
            e.out.push(v);
        } else if let Some(v) = field("err:") {
            e.err.push(v);
        } else if let Some(v) = field("exit:") {
            e.exit = v.trim().parse().expect("`// exit:` takes a number");
        }
    }
    all
}

/// The expectations of the program at `rel` (relative to [`ROOT`]).
pub fn expectations_of(rel: &str) -> Expectations {
    let text = std::fs::read_to_string(Path::new(ROOT).join(rel)).expect("read test program");
    parse_all(&text)
}

/// Output split into lines (lossy UTF-8).
pub fn lines(bytes: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(bytes)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Compares one run with the expectations; `None` when it matches.
pub fn mismatch(expect: &Expect, out: &Output) -> Option<String> {
    let got_out = lines(&out.stdout);
    let got_err = lines(&out.stderr);
    let got_exit = out.status.code().unwrap_or(-1);
    let mut problems = Vec::new();
    if got_out != expect.out {
        problems.push(format!(
            "stdout:\n    expected {:?}\n    got      {:?}",
            expect.out, got_out
        ));
    }
    if got_err != expect.err {
        problems.push(format!(
            "stderr:\n    expected {:?}\n    got      {:?}",
            expect.err, got_err
        ));
    }
    if got_exit != expect.exit {
        problems.push(format!(
            "exit status: expected {}, got {got_exit} ({})",
            expect.exit, out.status
        ));
    }
    (!problems.is_empty()).then(|| problems.join("\n  "))
}

/// Runs `tern ARGS`, from [`ROOT`], with the verifier on (`TERN_VERIFY=1`,
/// for release-mode test runs) and the given standard input, killed after
/// [`child::PATIENCE`].
pub fn tern_with(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(TERN);
    cmd.args(args).current_dir(ROOT).env("TERN_VERIFY", "1");
    child::run(cmd, Some(stdin), child::PATIENCE)
}

/// Runs the executable `exe` with `args` and `stdin` from [`ROOT`].
pub fn exe_with(exe: &Path, args: &[String], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(exe);
    cmd.args(args).current_dir(ROOT);
    child::run(cmd, Some(stdin), child::PATIENCE)
}

/// Every `tests/programs/*.tern` and `examples/*.tern`, relative to [`ROOT`],
/// sorted.
pub fn program_files() -> Vec<String> {
    let mut files = Vec::new();
    for dir in ["tests/programs", "examples"] {
        let Ok(read) = std::fs::read_dir(Path::new(ROOT).join(dir)) else {
            continue;
        };
        for entry in read.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.ends_with(".tern") {
                files.push(format!("{dir}/{name}"));
            }
        }
    }
    files.sort();
    files
}

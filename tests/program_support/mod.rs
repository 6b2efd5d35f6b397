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
//!
//! With `TERN_BLESS=1` (see [`bless_mode`]), `tests/programs.rs` rewrites
//! the expectations of a file whose runs mismatch to what they did
//! ([`bless`]) instead of failing.

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
#[derive(Clone, Debug, PartialEq, Eq)]
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

/// The field of an expectation line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    Out,
    Err,
    Exit,
    Stdin,
    Args,
}

/// One line of a file read as an expectation: its flag set (`None`:
/// unqualified), field and value; `None` for any other line. Panics on an
/// unknown flag set.
fn expectation_line(line: &str) -> Option<(Option<String>, Field, String)> {
    let rest = line.trim_start().strip_prefix("//")?;
    let mut rest = rest.trim_start();
    let mut flags = None;
    if let Some(q) = rest.strip_prefix('[') {
        let (set, after) = q.split_once(']')?;
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
    let mut fields = vec![
        ("out:", Field::Out),
        ("err:", Field::Err),
        ("exit:", Field::Exit),
    ];
    if flags.is_none() {
        fields.splice(0..0, [("stdin:", Field::Stdin), ("args:", Field::Args)]);
    }
    fields
        .into_iter()
        .find_map(|(key, f)| field(key).map(|v| (flags.clone(), f, v)))
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
        let Some((flags, field, v)) = expectation_line(line) else {
            continue;
        };
        let e = match &flags {
            None => &mut all.plain,
            Some(f) => all.by_flags.entry(f.clone()).or_insert_with(empty),
        };
        match field {
            Field::Stdin => {
                all.stdin.extend_from_slice(v.as_bytes());
                all.stdin.push(b'\n');
            }
            Field::Args => all.args.extend(v.split_whitespace().map(str::to_string)),
            Field::Out => e.out.push(v),
            Field::Err => e.err.push(v),
            Field::Exit => e.exit = v.trim().parse().expect("`// exit:` takes a number"),
        }
    }
    all
}

/// Whether `TERN_BLESS` asks the harness to rewrite expectations instead of
/// failing (set, and neither empty nor `0`). Panics when `CI` is set too:
/// CI checks the expectations, it never writes them.
pub fn bless_mode() -> bool {
    let on = std::env::var_os("TERN_BLESS").is_some_and(|v| !v.is_empty() && v != "0");
    assert!(
        !(on && std::env::var_os("CI").is_some()),
        "TERN_BLESS and CI are both set: CI checks expectations, it never rewrites them"
    );
    on
}

/// What one run did, as an [`Expect`]; `None` when a signal ended it (no
/// `// exit:` can say that).
pub fn observed(out: &Output) -> Option<Expect> {
    Some(Expect {
        out: lines(&out.stdout),
        err: lines(&out.stderr),
        exit: out.status.code()?,
    })
}

/// `text` with its expectations rewritten to `observed` (what the runs
/// with each flag set did: `""` for none, and every one of [`FLAG_SETS`]);
/// `Ok(None)` when they already match. Only the sections that mismatch are
/// rewritten, each in the place of its first line (the unqualified one, if
/// it has no line, before the first qualified line or at the end); the
/// program, other comments, `stdin:`/`args:` lines and matching sections are
/// kept as they are. Refused (`Err`, nothing written) when a flag set
/// without a section of its own now differs from the runs without flags:
/// whether that is intended, only a person can say.
pub fn bless(text: &str, observed: &BTreeMap<String, Expect>) -> Result<Option<String>, String> {
    let all = parse_all(text);
    let plain = observed.get("").ok_or("no runs without flags")?;
    let mut rewrite: BTreeMap<Option<String>, &Expect> = BTreeMap::new();
    if *plain != all.plain {
        rewrite.insert(None, plain);
    }
    for &f in FLAG_SETS {
        let got = observed.get(f).ok_or_else(|| format!("no runs with {f}"))?;
        match all.by_flags.get(f) {
            Some(want) if want != got => {
                rewrite.insert(Some(f.to_string()), got);
            }
            Some(_) => {}
            None if got != plain => {
                return Err(format!(
                    "the runs with {f} now differ from the runs without it \
                     ({got:?} vs {plain:?}); bless does not add a `// [{f}]` section: \
                     write one by hand if the difference is intended (bless keeps it up to date after that)"
                ));
            }
            None => {}
        }
    }
    if rewrite.is_empty() {
        return Ok(None);
    }
    let block = |flags: &Option<String>, e: &Expect| {
        let prefix = match flags {
            None => "// ".to_string(),
            Some(f) => format!("// [{f}] "),
        };
        let line = |key: &str, v: &str| {
            let sep = if v.is_empty() { "" } else { " " };
            format!("{prefix}{key}:{sep}{v}\n")
        };
        let mut b: String = e.out.iter().map(|o| line("out", o)).collect();
        if e.exit != 0 {
            b.push_str(&line("exit", &e.exit.to_string()));
        }
        b.extend(e.err.iter().map(|l| line("err", l)));
        b
    };
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let section = |line: &str| {
        expectation_line(line)
            .filter(|(_, f, _)| matches!(f, Field::Out | Field::Err | Field::Exit))
            .map(|(flags, _, _)| flags)
    };
    // Where the unqualified block goes when it has no line yet.
    let plain_at = (rewrite.contains_key(&None) && !lines.iter().any(|l| section(l) == Some(None)))
        .then(|| {
            lines
                .iter()
                .position(|l| matches!(section(l), Some(Some(_))))
                .unwrap_or(lines.len())
        });
    let mut new = String::new();
    let mut written = std::collections::BTreeSet::new();
    for (i, line) in lines.iter().enumerate() {
        if plain_at == Some(i) {
            new.push_str(&block(&None, rewrite[&None]));
        }
        match section(line) {
            Some(flags) if rewrite.contains_key(&flags) => {
                if written.insert(flags.clone()) {
                    new.push_str(&block(&flags, rewrite[&flags]));
                }
            }
            _ => new.push_str(line),
        }
    }
    if plain_at == Some(lines.len()) {
        if !new.is_empty() && !new.ends_with('\n') {
            new.push('\n');
        }
        new.push_str(&block(&None, rewrite[&None]));
    }
    // The rewritten file must say exactly what was observed.
    let back = parse_all(&new);
    let same = observed.iter().all(|(f, e)| back.for_flags(f) == e)
        && (back.stdin, &back.args) == (all.stdin, &all.args);
    if !same {
        return Err(
            "the rewritten expectations do not parse back to the runs (a bug of bless)".into(),
        );
    }
    Ok(Some(new))
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

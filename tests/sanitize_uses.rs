//! Generated stale uses under `--sanitize`: seeded random sequences of
//! allocations, appends, resizes and frees on a few slots of one pool side
//! (builtin `reusable[]`, `slice_pool`, `slice_pool_pure`), a copy of one slot
//! kept at a random point, and, right after the first operation that
//! invalidates the copy (a free, a moving resize or append, a shrink below the
//! element the use touches), a store through the copy. The runtime's reference
//! model (`span_tree::model::Model`) decides which operations move a slice, so
//! the test knows the line that freed the copy's memory. Every program must
//! end, in JIT (-O2), AOT (-O0) and the interpreter, with exactly
//! `error: FILE:LINE:5: use of a freed slice (freed at FILE:L:C)`; without
//! `--sanitize` the same program runs to the end unnoticed (status 0).
//!
//! `TERN_STALE_PROGRAMS=N` programs per side (default 5), `TERN_STALE_SEED=S`.

mod pool_support;

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use pool_support::{
    Mode, Rng, error_and_backtrace, program_command, run_with_timeout, scratch, tern,
};
use tern_runtime::span_tree::model::Model;

/// Arena of every pool (`TERN_POOL_BYTES` for the builtin one).
const CAP: i64 = 1 << 16;
/// Slots per program.
const SLOTS: usize = 4;

#[derive(Clone, Copy, Debug)]
enum Side {
    Builtin,
    Library,
    Pure,
}

impl Side {
    fn module(self) -> Option<&'static str> {
        match self {
            Side::Builtin => None,
            Side::Library => Some("slice_pool"),
            Side::Pure => Some("slice_pool_pure"),
        }
    }
    fn alloc(self, n: i64) -> String {
        match self.module() {
            None => format!("reusable::alloc::<i64>({n})"),
            Some(m) => format!("{m}::alloc_slice::<i64>(ref p, {n})"),
        }
    }
    fn resize(self, s: &str, n: i64) -> String {
        match self.module() {
            None => format!("reusable::resize({s}, {n})"),
            Some(m) => format!("{m}::realloc_slice(ref p, {s}, {n})"),
        }
    }
    fn append(self, s: &str, v: i64) -> String {
        match self.module() {
            None => format!("reusable::append({s}, {v})"),
            Some(m) => format!("{m}::append(ref p, {s}, {v})"),
        }
    }
    fn free(self, s: &str) -> String {
        match self.module() {
            None => format!("reusable::free({s})"),
            Some(m) => format!("{m}::free_slice(ref p, {s})"),
        }
    }
}

/// A generated program and the one line it must end with under `--sanitize`.
struct Generated {
    source: String,
    /// `(use line, line and column of the operation that freed the memory)`.
    expect: (usize, usize, usize),
}

/// Builds the program text line by line, knowing each line's number.
struct Text {
    lines: Vec<String>,
}

impl Text {
    /// Adds `code` as an indented statement; returns its line (1-based) and the
    /// column where `code` starts.
    fn stmt(&mut self, code: String) -> (usize, usize) {
        self.lines.push(format!("    {code}"));
        (self.lines.len(), 5)
    }
    /// `sK = CALL;`: the line and the column of the call.
    fn assign(&mut self, slot: usize, call: String) -> (usize, usize) {
        let lhs = format!("s{slot} = ");
        let col = 5 + lhs.len();
        self.lines.push(format!("    {lhs}{call};"));
        (self.lines.len(), col)
    }
}

fn generate(side: Side, seed: u64) -> Generated {
    let mut r = Rng(seed);
    let mut t = Text { lines: Vec::new() };
    if let Some(m) = side.module() {
        t.lines.push(format!("use {m};"));
    }
    t.lines.push("fn main() {".into());
    if let Some(m) = side.module() {
        t.stmt(format!("var p = {m}::new({CAP});"));
    }
    for k in 0..SLOTS {
        t.stmt(format!("var s{k} = {};", side.alloc(0)));
    }
    let mut model = Model::new(CAP);
    // Per slot: (offset or -1, length in elements).
    let mut slots = [(-1i64, 0i64); SLOTS];
    // The kept copy: (slot, offset, length).
    let mut keep: Option<(usize, i64, i64)> = None;
    let keep_at = 2 + r.below(12) as usize;
    let mut step = 0;
    loop {
        step += 1;
        if keep.is_none()
            && step >= keep_at
            && let Some(k) = (0..SLOTS).find(|&k| slots[(k + step) % SLOTS].1 > 0)
        {
            let k = (k + step) % SLOTS;
            t.stmt(format!("let keep = s{k};"));
            keep = Some((k, slots[k].0, slots[k].1));
        }
        // Past 40 steps the kept slot is freed for sure.
        let forced = step > 40;
        let k = match keep {
            Some((kk, _, _)) if forced || r.below(3) == 0 => kk,
            _ => r.below(SLOTS as u64) as usize,
        };
        let (off, len) = slots[k];
        let s = format!("s{k}");
        let roll = if forced { 0 } else { r.below(10) };
        let at;
        if len == 0 {
            let n = 1 + r.below(8) as i64;
            at = t.assign(k, side.alloc(n));
            slots[k] = (model.alloc(n * 8).expect("alloc"), n);
        } else if roll < 2 {
            at = t.stmt(format!("{};", side.free(&s)));
            model.free(off, len * 8).expect("free");
            t.assign(k, side.alloc(0));
            slots[k] = (-1, 0);
        } else if roll < 6 {
            let n = r.below(11) as i64;
            at = t.assign(k, side.resize(&s, n));
            let to = model.resize(off, len * 8, n * 8).expect("resize");
            slots[k] = (to, n);
        } else {
            at = t.assign(k, side.append(&s, r.below(100) as i64));
            let to = model.resize(off, len * 8, (len + 1) * 8).expect("append");
            slots[k] = (to, len + 1);
        }
        // Did this operation free memory the kept copy views?
        if let Some((kk, koff, klen)) = keep
            && kk == k
        {
            let (noff, nlen) = slots[k];
            let index = if noff != koff {
                Some(0)
            } else if nlen < klen {
                Some(klen - 1)
            } else {
                None
            };
            if let Some(i) = index {
                let (line, _) = t.stmt(format!("keep[{i}] = 1;"));
                t.lines.push("}".into());
                let mut source = String::new();
                for l in &t.lines {
                    writeln!(source, "{l}").unwrap();
                }
                return Generated {
                    source,
                    expect: (line, at.0, at.1),
                };
            }
            // Grown in place: the copy is still good for its elements.
        }
    }
}

fn programs() -> u64 {
    std::env::var("TERN_STALE_PROGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
}

fn seed() -> u64 {
    std::env::var("TERN_STALE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5A17_E5ED)
}

/// The runs of one program and what went wrong in them.
fn check(file: &Path, g: &Generated, dir: &Path) -> Vec<String> {
    let f = file.to_str().unwrap();
    let (use_line, line, col) = g.expect;
    let want = format!("error: {f}:{use_line}:5: use of a freed slice (freed at {f}:{line}:{col})");
    let pool = CAP.to_string();
    let mut failures = Vec::new();
    let mut runs: Vec<(String, std::process::Command)> = Vec::new();
    let mut jit = tern();
    jit.args(["run", "-O2", "--sanitize", f]);
    runs.push(("JIT -O2 --sanitize".into(), jit));
    let mut interp = tern();
    interp.args(["run", "--interp", "--sanitize", f]);
    runs.push(("interp --sanitize".into(), interp));
    let mut build = tern();
    let exe = dir.join(format!(
        "{}-aot",
        file.file_stem().unwrap().to_string_lossy()
    ));
    build.args(["build", "-O0", "--sanitize", f, "-o", exe.to_str().unwrap()]);
    let built = run_with_timeout(build, Duration::from_secs(600));
    if built.code != Some(0) {
        failures.push(format!(
            "{f} [AOT -O0 --sanitize]: build failed: {}",
            built.stderr
        ));
    } else {
        let mut c = std::process::Command::new(&exe);
        c.current_dir(pool_support::ROOT);
        runs.push(("AOT -O0 --sanitize".into(), c));
    }
    for (what, mut c) in runs {
        c.env("TERN_POOL_BYTES", &pool);
        let o = run_with_timeout(c, Duration::from_secs(120));
        let reported = error_and_backtrace(&o.stderr).is_some_and(|(line, _)| line == want);
        if o.code != Some(101) || !reported {
            failures.push(format!(
                "{f} [{what}]: status {:?}, stderr {:?}, want {want:?}",
                o.code, o.stderr
            ));
        }
    }
    // Without the sanitizer the stale store goes unnoticed.
    let mut plain = program_command(file, Mode::Jit, "-O2", dir).unwrap();
    plain.env("TERN_POOL_BYTES", &pool);
    let o = run_with_timeout(plain, Duration::from_secs(120));
    if o.code != Some(0) || !o.stderr.is_empty() {
        failures.push(format!(
            "{f} [JIT -O2]: status {:?}, stderr {:?} (want a clean run)",
            o.code, o.stderr
        ));
    }
    failures
}

#[test]
fn stale_uses_are_caught_under_sanitize_on_every_side() {
    let dir = scratch("stale-uses");
    let mut failures = Vec::new();
    for (i, side) in [Side::Builtin, Side::Library, Side::Pure]
        .into_iter()
        .enumerate()
    {
        for n in 0..programs() {
            let s = seed() ^ ((i as u64) << 32 | n).wrapping_mul(0xA24B_AED4_963E_E407);
            let g = generate(side, s);
            let file = dir.join(format!("stale_{side:?}_{n}.tern").to_lowercase());
            std::fs::write(&file, &g.source).unwrap();
            failures.extend(check(&file, &g, &dir));
        }
    }
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        failures.is_empty(),
        "{} failing runs (programs kept in {}):\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n")
    );
}

#[test]
fn generated_programs_cover_every_way_to_go_stale() {
    // Over the default programs: stale by a free, by a move and by a shrink.
    let mut kinds = std::collections::BTreeSet::new();
    for (i, side) in [Side::Builtin, Side::Library, Side::Pure]
        .into_iter()
        .enumerate()
    {
        for n in 0..programs().max(5) {
            let s = seed() ^ ((i as u64) << 32 | n).wrapping_mul(0xA24B_AED4_963E_E407);
            let g = generate(side, s);
            let lines: Vec<&str> = g.source.lines().collect();
            let op = lines[g.expect.1 - 1];
            let used = lines[g.expect.0 - 1];
            kinds.insert(if op.contains("free") {
                "free"
            } else if used.contains("keep[0]") {
                "move"
            } else {
                "shrink"
            });
        }
    }
    assert_eq!(kinds.len(), 3, "only {kinds:?}");
}

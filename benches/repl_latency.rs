//! Compile latency per REPL input line, measured through the real `tern repl`
//! (release build of the bench profile) on a pipe: a session with a few
//! items and bindings, `:time` on, then one input line per iteration. Each
//! iteration's figure is what the REPL itself reports for that line: front
//! end (both passes) plus Cranelift, excluding running the code and the pipe
//! round trip. Criterion sees those durations through `iter_custom`; at the
//! end the median over every line sent is printed as well.
//!
//! `cargo bench --bench repl_latency`; figures are in docs/repl.md.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

/// A running `tern repl` with `:time` on.
struct Repl {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: BufReader<ChildStderr>,
    /// Every compile latency measured, for the final median.
    seen: Vec<Duration>,
    /// stderr lines that were not timing lines (reported at the end).
    unexpected: Vec<String>,
}

impl Repl {
    fn start() -> Repl {
        let mut child = Command::new(env!("CARGO_BIN_EXE_tern"))
            .arg("repl")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tern repl starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let mut repl = Repl {
            child,
            stdin,
            stdout,
            stderr,
            seen: Vec::new(),
            unexpected: Vec::new(),
        };
        for setup in [
            "struct Pair { a: i64, b: i64 }",
            "fn sum(xs: []i64) -> i64 { var t = 0; for i in 0..len(xs) { t += xs[i]; } return t; }",
            "fn twice(p: Pair) -> Pair { return Pair { a: p.a * 2, b: p.b * 2 }; }",
            "let xs = [1, 2, 3, 4];",
            "var p = Pair { a: 1, b: 2 };",
            "var n = 0;",
        ] {
            writeln!(repl.stdin, "{setup}").unwrap();
        }
        writeln!(repl.stdin, ":time").unwrap();
        repl.expect_stdout("timing on");
        repl
    }

    fn expect_stdout(&mut self, want: &str) {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        assert_eq!(line.trim_end(), want, "unexpected REPL output");
    }

    /// Sends `input` (which prints one line) and returns its compile latency.
    fn line(&mut self, input: &str) -> Duration {
        writeln!(self.stdin, "{input}").unwrap();
        // stderr first: an error (no value on stdout) then fails loudly
        // instead of blocking on stdout.
        let d = loop {
            let mut line = String::new();
            if self.stderr.read_line(&mut line).unwrap() == 0 {
                panic!("tern repl ended; unexpected stderr: {:?}", self.unexpected);
            }
            match compile_time(&line) {
                Some(d) => break d,
                None => self.unexpected.push(line),
            }
        };
        let mut out = String::new();
        self.stdout.read_line(&mut out).unwrap();
        self.seen.push(d);
        d
    }
}

/// Front end + Cranelift from `time: front end A ms, cranelift B ms, run C ms`.
fn compile_time(line: &str) -> Option<Duration> {
    let num = |key: &str| -> Option<f64> {
        let at = line.find(key)? + key.len();
        line[at..].split_whitespace().next()?.parse().ok()
    };
    let ms = num("front end ")? + num("cranelift ")?;
    Some(Duration::from_secs_f64(ms / 1e3))
}

/// The median of `samples` and how many there were.
fn median(samples: &[Duration]) -> (Duration, usize) {
    let mut sorted = samples.to_vec();
    sorted.sort();
    (
        sorted.get(sorted.len() / 2).copied().unwrap_or_default(),
        sorted.len(),
    )
}

fn bench(c: &mut Criterion) {
    let mut repl = Repl::start();
    let mut group = c.benchmark_group("repl_line");
    let inputs = [
        ("expression", "n + sum(xs[0..4])"),
        ("statement", "n += 1; print(n);"),
        ("struct_value", "twice(p).a"),
    ];
    let mut medians = Vec::new();
    for (name, input) in inputs {
        let before = repl.seen.len();
        group.bench_function(name, |b| {
            b.iter_custom(|iters| (0..iters).map(|_| repl.line(input)).sum())
        });
        medians.push((name, median(&repl.seen[before..])));
    }
    group.finish();
    medians.push(("all lines", median(&repl.seen)));
    for (name, (m, n)) in medians {
        println!(
            "repl compile latency per input line, {name}: median {:.3} ms over {n} lines",
            m.as_secs_f64() * 1e3
        );
    }
    if !repl.unexpected.is_empty() {
        println!("unexpected stderr lines: {:?}", repl.unexpected);
    }
    writeln!(repl.stdin, ":quit").unwrap();
    let _ = repl.child.wait();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(5));
    targets = bench
}
criterion_main!(benches);

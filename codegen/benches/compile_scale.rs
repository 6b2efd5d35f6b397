//! Compile time against program size, for the shapes that once grew faster
//! than the program (docs/backend.md, "Compile-time budgets"): N sequential
//! `for` loops in one function, an N-arm `else if` chain, N calls of a
//! small function in one block, an N-arm chain whose arms call and
//! continue, and N call results added up, at N = 1k, 10k and 100k, each
//! through the front end and Cranelift to an object at -O0 and -O2
//! (inlining on).
//!
//! `cargo bench -p tern-codegen --bench compile_scale`. Under `cargo test`
//! (criterion's test mode) only the 1k programs run, once each.

use criterion::{BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use tern_codegen::{OptLevel, Options, compile_object};
use tern_compiler::{Loaded, Loader};

struct NoModules;

impl Loader for NoModules {
    fn load(&self, _: &str, _: &str) -> Loaded {
        Loaded::NotFound
    }
}

/// `main` with `n` sequential counted loops.
fn loops(n: usize) -> String {
    let mut s = String::from("fn main() {\n    var s = 0;\n");
    for k in 0..n {
        s.push_str(&format!(
            "    for i in 0..{} {{ s += i * {k}; }}\n",
            k % 7 + 1
        ));
    }
    s + "    print(s);\n}\n"
}

/// A function of an `n`-arm `else if` chain.
fn arms(n: usize) -> String {
    let mut s = String::from("fn pick(x: i64) -> i64 {\n    if x == 0 { return 1; }\n");
    for k in 1..n {
        s.push_str(&format!("    else if x == {k} {{ return {}; }}\n", k * 3));
    }
    s + "    return -1;\n}\nfn main() {\n    print(pick(77));\n}\n"
}

/// `main` with `n` calls of a small function in one block.
fn calls(n: usize) -> String {
    let mut s = String::from(
        "fn small(a: i64, b: i64) -> i64 { return a * 3 + b; }\nfn main() {\n    var s = 0;\n",
    );
    for k in 0..n {
        s.push_str(&format!("    s = small(s, {k});\n"));
    }
    s + "    print(s);\n}\n"
}

/// `main` with an `n`-arm `else if` chain whose arms each make a call and
/// continue after it (the arms join in a tree: `if_arms`).
fn call_arms(n: usize) -> String {
    let mut s = String::from("fn main() {\n    let x = 77;\n    if x == 0 { print(0); }\n");
    for k in 1..n {
        s.push_str(&format!("    else if x == {k} {{ print({k}); }}\n"));
    }
    s + "    print(x);\n}\n"
}

/// `main` adding up `n` calls' results, `x = x + g(k)`: the e-graph pass
/// places the additions after the last call, so every result is live
/// across every later call (the register allocator's pressure budget). The
/// recursion keeps the calls at -O2 (only its first test is inlined).
fn sums(n: usize) -> String {
    let mut s = String::from(
        "fn g(k: i64) -> i64 {\n    if k > 1000000 { return g(k - 1); }\n    return k % 3;\n}\nfn main() {\n    var x = 0;\n",
    );
    for k in 0..n {
        s.push_str(&format!("    x = x + g({k});\n"));
    }
    s + "    print(x);\n}\n"
}

/// A program of one shape at a size.
type Shape = fn(usize) -> String;

fn compile(text: &str, level: OptLevel) {
    let program = tern_compiler::compile("scale.tern", text, &NoModules).expect("compiles");
    let opts = Options::new(level);
    // The backend recurses per level of the program's nesting: on the
    // compiler's big stack, as the driver runs it.
    let done = tern_compiler::with_stack(|| {
        compile_object(&program, &opts)
            .map(|_| ())
            .map_err(|e| e.to_string())
    });
    done.expect("translates");
}

fn scale(c: &mut Criterion) {
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let sizes: &[usize] = if benchmarking {
        &[1_000, 10_000, 100_000]
    } else {
        &[1_000]
    };
    let shapes: [(&str, Shape); 5] = [
        ("loops", loops),
        ("arms", arms),
        ("calls", calls),
        ("call_arms", call_arms),
        ("sums", sums),
    ];
    for (shape, make) in shapes {
        for level in [OptLevel::O0, OptLevel::O2] {
            let mut group = c.benchmark_group(format!("compile_scale/{shape}/{level:?}"));
            group.sample_size(10).sampling_mode(SamplingMode::Flat);
            for &n in sizes {
                let text = make(n);
                group.bench_with_input(BenchmarkId::from_parameter(n), &text, |b, text| {
                    b.iter(|| compile(text, level))
                });
            }
            group.finish();
        }
    }
}

criterion_group!(benches, scale);
criterion_main!(benches);

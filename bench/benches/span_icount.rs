//! One workload on one allocator, for instruction counts under callgrind (these
//! repeat exactly run to run, unlike wall-clock time on a shared VM):
//!
//! ```text
//! cargo bench --bench span_icount --no-run
//! valgrind --tool=callgrind --branch-sim=yes target/release/deps/span_icount-<hash> churn rlsf
//! ```
//!
//! Workloads: `hot_fifo` (200 rounds of 1024 allocs of 64 B then 1024 frees in
//! allocation order), `hot_lifo` (the same, frees in reverse order),
//! `hot16_fifo`, `hot16_lifo` (the same at 16 B), `new` (the
//! allocator's creation only, to subtract from the hot paths), `churn`
//! (200 000 steps after a 200 000-step warm-up), `none` (the churn's setup only,
//! to subtract); the scale workloads `scale_1k`, `scale_10k`, `scale_100k`,
//! `scale_1m` (the churn over that many live spans: 200 000 steps after
//! `scale_warmup(live)` steps) and `scale_1k_none` ... `scale_1m_none` (their
//! setup only); `trace:FILE` (a replay of a `TERNTRC1` trace, gzip-compressed or not,
//! bench/traces/README.md, every block touched at both ends) and
//! `trace_none:FILE` (the same replay allocating nothing, to subtract).
//!
//! Allocators: `span`, `span_portable` (`span` with the portable node scans
//! forced: what a CPU without AVX2 runs), `span_checked`, `mimalloc`, `glibc`,
//! `rlsf`. Without arguments (as `cargo bench` runs it) it does nothing.

mod common;

use std::hint::black_box;

use common::*;

const ARENA: i64 = 64 << 20;

/// Runs `workload` on `a`. Never inlined, so each allocator's loop is compiled
/// the same way whichever arms `main` has (inlining decisions moved the hot
/// path's count by up to 10 instructions between builds of this harness).
#[inline(never)]
fn run<A: Alloc>(job: Job<'_>, mut a: A) {
    if let Some(trace) = job.trace {
        let dry = job.workload.starts_with("trace_none");
        println!("checksum {}", trace.replay(&mut a, dry));
        return;
    }
    let workload = job.workload;
    match workload {
        "hot_fifo" | "hot_lifo" | "hot16_fifo" | "hot16_lifo" => {
            let size = if workload.starts_with("hot16") {
                16
            } else {
                64
            };
            let mut ptrs = [0usize; 1024];
            for _ in 0..200 {
                for p in ptrs.iter_mut() {
                    *p = a.alloc(black_box(size));
                }
                if workload.ends_with("fifo") {
                    for &p in ptrs.iter() {
                        a.free(p, size);
                    }
                } else {
                    for &p in ptrs.iter().rev() {
                        a.free(p, size);
                    }
                }
            }
            black_box(&ptrs);
        }
        // The allocator's creation alone: what the hot paths subtract.
        "new" => {}
        "churn" | "none" => {
            let mut c = Churn::new(&mut a, 200_000);
            if workload == "churn" {
                c.steps(&mut a, 200_000);
            }
            black_box(&c.live);
        }
        w => {
            let Some((live, measure)) = scale_workload(w) else {
                eprintln!("span_icount: unknown workload `{w}` (see the doc comment)");
                std::process::exit(2);
            };
            let mut c = Churn::with_live(&mut a, live, scale_warmup(live));
            if measure {
                c.steps(&mut a, 200_000);
            }
            black_box(&c.live);
        }
    }
}

/// `scale_NAME` (measured) or `scale_NAME_none` (setup only): the live-span
/// count and whether the 200 000 steps run.
fn scale_workload(w: &str) -> Option<(usize, bool)> {
    let rest = w.strip_prefix("scale_")?;
    let (name, measure) = match rest.strip_suffix("_none") {
        Some(name) => (name, false),
        None => (rest, true),
    };
    SCALE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, live)| (live, measure))
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let (Some(w), Some(al)) = (args.first(), args.get(1)) else {
        return;
    };
    // A trace is loaded before the allocator is made: its arena is sized
    // from the trace's peak (reserved lazily) as `tern bench` sizes one.
    let trace = w.starts_with("trace").then(|| {
        let path = w.split_once(':').map_or("", |(_, p)| p);
        common::trace::Trace::load(path).unwrap_or_else(|e| {
            eprintln!("span_icount: {e}");
            std::process::exit(2);
        })
    });
    let arena = match (scale_workload(w), &trace) {
        (Some((live, _)), _) => scale_arena(live),
        (None, Some(t)) => t.arena,
        (None, None) => ARENA,
    };
    let job = Job {
        workload: w,
        trace: trace.as_ref(),
    };
    match al.as_str() {
        "span" => run(job, SpanUnchecked::new(arena)),
        "span_portable" => {
            tern_runtime::span_tree::scan::set_portable_only(true);
            run(job, SpanUnchecked::new(arena))
        }
        // The library's pool (`slice_pool`'s path); the name is the one
        // scripts have always passed.
        "span_checked" => run(job, SpanLibrary::new(arena)),
        "mimalloc" => run(job, Mi),
        "glibc" => run(job, Glibc),
        "rlsf" => run(job, Rlsf::new(arena as usize)),
        _ => {
            eprintln!("span_icount: unknown allocator `{al}` (see the doc comment)");
            std::process::exit(2);
        }
    }
}

/// What [`run`] runs: the workload's name, and its trace when it replays one.
#[derive(Clone, Copy)]
struct Job<'a> {
    workload: &'a str,
    trace: Option<&'a common::trace::Trace>,
}

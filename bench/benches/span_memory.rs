//! Memory overhead of the span pool, the slab, mimalloc and glibc: peak resident
//! bytes against live bytes, for the churn workload and an allocation-only one.
//!
//! Each (workload, allocator) runs in a fresh child process (this binary re-run
//! with `--child`), so one allocator's retained memory cannot hide another's. The
//! figure is the child's peak resident set (`VmHWM`) minus its resident set just
//! before the workload starts; every block is written in full, as a program would.
//! For the span pool the exact accounting (arena high-water, node bytes) is
//! printed too.
//!
//! Run: `cargo bench --bench span_memory`

mod common;

use std::process::Command;

use common::*;
use tern_bench::slab::SlabPool;

const ALLOC_ONLY_BLOCKS: usize = 200_000;
const CHURN_STEPS: usize = 1_000_000;
const SLAB_CHURN_STEPS: usize = 100_000;

fn status_kib(field: &str) -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Writes every byte of a block, as a program filling its allocation would.
fn touch(h: usize, n: usize, base: usize) {
    // black_box: otherwise the compiler may drop a malloc whose block is never read.
    let p = std::hint::black_box((base + h) as *mut u8);
    // SAFETY: `base + h` is a live block of `n` bytes (offsets are relative to `base`).
    unsafe { std::ptr::write_bytes(p, 0x5a, n) };
}

/// Runs `workload` on `a`, keeping the churn's live blocks in `live`
/// (`CHURN_LIVE` entries, written before the measured window opens: the
/// harness's own table is not the allocator's overhead); returns live bytes
/// at the end.
fn run<A: Alloc>(workload: &str, a: &mut A, base: usize, live: &mut [(usize, usize)]) -> usize {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    match workload {
        "alloc_only" => {
            let mut live = 0;
            for _ in 0..ALLOC_ONLY_BLOCKS {
                let n = 16 + (rng.next() % 31) as usize * 8;
                let h = a.alloc(n);
                touch(h, n, base);
                live += n;
            }
            live
        }
        "churn" | "churn_short" => {
            let steps = if workload == "churn" {
                CHURN_STEPS
            } else {
                SLAB_CHURN_STEPS
            };
            for slot in live.iter_mut() {
                let n = 16 + (rng.next() % 127) as usize * 8;
                let h = a.alloc(n);
                touch(h, n, base);
                *slot = (h, n);
            }
            for _ in 0..steps {
                let i = (rng.next() >> 32) as usize % CHURN_LIVE;
                let (h, n) = live[i];
                a.free(h, n);
                let n = 16 + (rng.next() % 127) as usize * 8;
                let h = a.alloc(n);
                touch(h, n, base);
                live[i] = (h, n);
            }
            live.iter().map(|l| l.1).sum()
        }
        _ => 0,
    }
}

fn child(workload: &str, alloc: &str) {
    // Written in full here, so its pages are resident before `before`.
    let mut table = std::hint::black_box(vec![(usize::MAX, usize::MAX); CHURN_LIVE]);
    let live = &mut table[..];
    let before = status_kib("VmRSS:");
    let mut peak = 0;
    let (live, extra) = match alloc {
        "span" => {
            let mut s = SpanUnchecked::new(4 << 30);
            let base = s.0.base() as usize;
            let live = run(workload, &mut s, base, live);
            // Read the peak before the accounting below allocates its own buffers.
            peak = status_kib("VmHWM:");
            let spans = s.0.check_invariants().map(|v| v.len()).unwrap_or(0);
            let (arena_res, node_res) = s.0.resident_bytes();
            (
                live,
                format!(
                    "arena resident {} KiB, nodes resident {} KiB, {spans} free spans",
                    arena_res / 1024,
                    node_res / 1024
                ),
            )
        }
        "slab" => {
            let mut s = Slab(SlabPool::new(64 << 10));
            let live = run(workload, &mut s, 0, live);
            (
                live,
                format!("slab committed {} KiB", s.0.committed_bytes() / 1024),
            )
        }
        "mimalloc" => (run(workload, &mut Mi, 0, live), String::new()),
        "glibc" => (run(workload, &mut Glibc, 0, live), String::new()),
        _ => (0, String::new()),
    };
    if peak == 0 {
        peak = status_kib("VmHWM:");
    }
    println!("{} {} {}", live, peak.saturating_sub(before) * 1024, extra);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        child(&args[i + 1], &args[i + 2]);
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --all-targets` does not, and
    // should not spend time and memory on the measurement.
    if !args.iter().any(|a| a == "--bench") {
        println!("span_memory: run with `cargo bench --bench span_memory`");
        return;
    }
    let exe = std::env::current_exe().expect("current exe");
    println!(
        "| workload | allocator | live bytes | peak resident delta | overhead (peak/live) | notes |"
    );
    println!("|---|---|---|---|---|---|");
    for (workload, allocs) in [
        ("alloc_only", &["span", "slab", "mimalloc", "glibc"][..]),
        ("churn", &["span", "mimalloc", "glibc"][..]),
        ("churn_short", &["slab"][..]),
    ] {
        for alloc in allocs {
            let out = Command::new(&exe)
                .args(["--child", workload, alloc])
                .output()
                .expect("child");
            let text = String::from_utf8_lossy(&out.stdout);
            let mut it = text.trim().splitn(3, ' ');
            let live: f64 = it.next().and_then(|v| v.parse().ok()).unwrap_or(0.0);
            let peak: f64 = it.next().and_then(|v| v.parse().ok()).unwrap_or(0.0);
            let notes = it.next().unwrap_or("");
            println!(
                "| {workload} | {alloc} | {:.0} KiB | {:.0} KiB | {:.2}x | {notes} |",
                live / 1024.0,
                peak / 1024.0,
                if live > 0.0 { peak / live } else { 0.0 }
            );
        }
    }
}

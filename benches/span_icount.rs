//! One workload on one allocator, for instruction counts under callgrind (these
//! repeat exactly run to run, unlike wall-clock time on a shared VM):
//!
//! ```text
//! cargo bench --bench span_icount --no-run
//! valgrind --tool=callgrind --branch-sim=yes target/release/deps/span_icount-<hash> churn rlsf
//! ```
//!
//! Workloads: `hot_fifo` (200 rounds of 1024 allocs of 64 B then 1024 frees in
//! allocation order), `churn` (200 000 steps after a 200 000-step warm-up), `none`
//! (setup only, to subtract). Allocators: `span`, `span_checked`, `mimalloc`,
//! `glibc`, `rlsf`. Without arguments (as `cargo bench` runs it) it does nothing.

mod common;

use std::hint::black_box;

use common::*;

const ARENA: i64 = 64 << 20;

fn run<A: Alloc>(workload: &str, mut a: A) {
    match workload {
        "hot_fifo" => {
            let mut ptrs = [0usize; 1024];
            for _ in 0..200 {
                for p in ptrs.iter_mut() {
                    *p = a.alloc(black_box(64));
                }
                for &p in ptrs.iter() {
                    a.free(p, 64);
                }
            }
            black_box(&ptrs);
        }
        "churn" | "none" => {
            let mut c = Churn::new(&mut a, 200_000);
            if workload == "churn" {
                c.steps(&mut a, 200_000);
            }
            black_box(&c.live);
        }
        _ => {}
    }
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let (Some(w), Some(al)) = (args.first(), args.get(1)) else {
        return;
    };
    match al.as_str() {
        "span" => run(w, SpanUnchecked::new(ARENA)),
        "span_checked" => run(w, SpanChecked::new(ARENA)),
        "mimalloc" => run(w, Mi),
        "glibc" => run(w, Glibc),
        "rlsf" => run(w, Rlsf::new(ARENA as usize)),
        _ => eprintln!("unknown allocator {al}"),
    }
}

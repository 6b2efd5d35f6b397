//! Criterion benches of the span pool against mimalloc, glibc, rlsf (TLSF) and the
//! slab: the hot path (1024 allocs then 1024 frees), churn (1000 live random
//! spans, free one + alloc one; also with the portable node scans forced),
//! checked vs unchecked, and
//! churn at 10^3 .. 10^6 live spans (`scale_*` groups).
//!
//! Run: `GLIBC_TUNABLES=glibc.malloc.trim_threshold=1073741824 cargo bench --bench span_pool`
//! (see docs/benchmarks.md for why the tunable).

mod common;

use std::hint::black_box;
use std::time::Duration;

use common::*;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use tern_bench::slab::SlabPool;
use tern_runtime::span_tree::scan;

const N: usize = 1024;
const ARENA: i64 = 64 << 20;

/// One hot-path iteration: N allocs of `size` into a stack array, then N frees in
/// allocation order (`reverse == false`) or in reverse.
#[inline(always)]
fn hot_round<A: Alloc>(a: &mut A, size: usize, reverse: bool, ptrs: &mut [usize; N]) {
    for p in ptrs.iter_mut() {
        *p = a.alloc(black_box(size));
    }
    if reverse {
        for &p in ptrs.iter().rev() {
            a.free(p, size);
        }
    } else {
        for &p in ptrs.iter() {
            a.free(p, size);
        }
    }
    a.end_round();
    black_box(&ptrs);
}

fn bench_hot_one<A: Alloc>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    size: usize,
    reverse: bool,
    mut a: A,
) {
    let mut ptrs = [0usize; N];
    // Pre-warm: the allocator has seen this round before measurement.
    hot_round(&mut a, size, reverse, &mut ptrs);
    g.bench_with_input(BenchmarkId::new(name, size), &size, |b, &size| {
        b.iter(|| hot_round(&mut a, size, reverse, &mut ptrs))
    });
}

fn hot(c: &mut Criterion) {
    for (label, reverse) in [("hot_fifo", false), ("hot_lifo", true)] {
        let mut g = c.benchmark_group(label);
        g.throughput(Throughput::Elements(N as u64));
        for size in [16usize, 64, 256, 1024] {
            bench_hot_one(
                &mut g,
                "span_unchecked",
                size,
                reverse,
                SpanUnchecked::new(ARENA),
            );
            bench_hot_one(
                &mut g,
                "span_checked",
                size,
                reverse,
                SpanLibrary::new(ARENA),
            );
            bench_hot_one(&mut g, "mimalloc", size, reverse, Mi);
            bench_hot_one(&mut g, "glibc", size, reverse, Glibc);
            bench_hot_one(&mut g, "rlsf", size, reverse, Rlsf::new(ARENA as usize));
            bench_hot_one(&mut g, "slab", size, reverse, Slab(SlabPool::new(64 << 10)));
        }
        g.finish();
    }
}

const CHURN_STEPS: usize = 1024;

/// The churn workload over `live` spans (after `warm` steps) on `a`; the mimalloc
/// and glibc blocks are given back afterwards, before the next allocator runs (the
/// span pool and rlsf own their memory and release it on drop).
fn bench_churn_one<A: Alloc>(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    (live, warm): (usize, usize),
    mut a: A,
) {
    let mut c = Churn::with_live(&mut a, live, warm);
    g.bench_function(name, |b| b.iter(|| c.steps(&mut a, CHURN_STEPS)));
    for &(h, n) in &c.live {
        a.free(h, n);
    }
}

/// The default churn: `CHURN_LIVE` spans after 200 000 steps.
const CHURN: (usize, usize) = (CHURN_LIVE, 200_000);

fn churn(c: &mut Criterion) {
    let mut g = c.benchmark_group("churn");
    g.throughput(Throughput::Elements(CHURN_STEPS as u64));
    bench_churn_one(&mut g, "span_unchecked", CHURN, SpanUnchecked::new(ARENA));
    // The same tree with the portable node scans (what a CPU without AVX2 runs).
    scan::set_portable_only(true);
    bench_churn_one(&mut g, "span_portable", CHURN, SpanUnchecked::new(ARENA));
    scan::set_portable_only(false);
    bench_churn_one(&mut g, "span_checked", CHURN, SpanLibrary::new(ARENA));
    bench_churn_one(&mut g, "mimalloc", CHURN, Mi);
    bench_churn_one(&mut g, "glibc", CHURN, Glibc);
    bench_churn_one(&mut g, "rlsf", CHURN, Rlsf::new(ARENA as usize));
    g.finish();
}

fn config() -> Criterion {
    Criterion::default()
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_millis(500))
        .sample_size(30)
}

/// Churn at 10^3 .. 10^6 live spans (ns per step against the live count).
fn scale(c: &mut Criterion) {
    for (name, live) in SCALE {
        let mut g = c.benchmark_group(format!("scale_{name}"));
        g.throughput(Throughput::Elements(CHURN_STEPS as u64));
        let arena = scale_arena(live);
        let size = (live, scale_warmup(live));
        bench_churn_one(&mut g, "span_unchecked", size, SpanUnchecked::new(arena));
        bench_churn_one(&mut g, "mimalloc", size, Mi);
        bench_churn_one(&mut g, "glibc", size, Glibc);
        bench_churn_one(&mut g, "rlsf", size, Rlsf::new(arena as usize));
        g.finish();
    }
}

criterion_group! { name = benches; config = config(); targets = hot, churn, scale }
criterion_main!(benches);

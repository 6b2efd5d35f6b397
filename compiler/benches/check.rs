//! Front-end time on a generated 10,000-line program (parse, resolve, check,
//! monomorphize): `cargo bench -p tern-compiler --bench check`.

use criterion::{Criterion, criterion_group, criterion_main};
use std::fmt::Write;
use tern_compiler::{Loaded, Loader, compile};

struct NoModules;
impl Loader for NoModules {
    fn load(&self, _: &str, _: &str) -> Loaded {
        Loaded::NotFound
    }
}

/// A program of about `lines` lines: structs, constants, generic and plain
/// functions with loops, branches, arrays, slices, `ref` calls and reusable
/// slices, all reachable from `main`.
pub fn generate(lines: usize) -> String {
    let mut s = String::new();
    s.push_str(
        "const SCALE: i64 = 3;\nfn pick<T>(xs: []T, i: i64) -> T { return xs[i % len(xs)]; }\n",
    );
    let per_unit = 28; // 27 lines of items plus one line in `main`
    let units = lines / per_unit;
    for u in 0..units {
        let _ = write!(
            s,
            "struct S{u} {{ a: i64, b: i32, c: [4]u8, d: []i64 }}
const K{u}: i64 = {u} * SCALE + size_of::<S{u}>();
fn step{u}(ref s: S{u}, n: i64) -> i64 {{
    var total = 0;
    for i in 0..n {{
        if i % 3 == 0 && s.a > 0 {{
            total += i * K{u};
        }} else if i % 3 == 1 {{
            total -= (s.b as i64) << 1;
        }} else {{
            s.c[i % 4] = (i & 255) as u8;
        }}
    }}
    var w = 0;
    while w < 4 {{ total ^= s.c[w] as i64; w += 1; }}
    s.a = total;
    return total + pick(s.d, n) + pick::<u8>(s.c[..], {u}) as i64;
}}
fn run{u}(n: i64) -> i64 {{
    var arr = [{u}, 2, 3, 4];
    var s = S{u} {{ a: 1, b: -2, c: [0; 4], d: arr[..] }};
    var r: reusable[]i64 = reusable::alloc(0);
    r = reusable::append(r, step{u}(ref s, n));
    let v = r[0];
    reusable::free(r);
    return v;
}}
"
        );
    }
    s.push_str("fn main() -> i64 {\n    var t = 0;\n");
    for u in 0..units {
        let _ = writeln!(s, "    t += run{u}({});", u % 7 + 1);
    }
    s.push_str("    return t & 127;\n}\n");
    s
}

fn bench(c: &mut Criterion) {
    let src = generate(10_000);
    let lines = src.lines().count();
    let program =
        compile("gen.tern", &src, &NoModules).unwrap_or_else(|d| panic!("{}", d.render()));
    eprintln!(
        "generated program: {lines} lines, {} bytes, {} function instances",
        src.len(),
        program.functions.len()
    );
    let mut group = c.benchmark_group("front_end");
    group.sample_size(20);
    group.bench_function(format!("check_{lines}_lines"), |b| {
        b.iter(|| compile("gen.tern", &src, &NoModules).map(|p| p.functions.len()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

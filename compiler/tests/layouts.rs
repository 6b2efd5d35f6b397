//! Struct layouts and constants that refer to each other: every legal order
//! of definitions compiles to the layouts C rules give, and every cycle is
//! a located error (never a wrong layout, never a panic downstream).
//!
//! The generated programs mix constants (`size_of::<S>() + k`, `C + k`),
//! structs with fields held by value (`S`, `[2]S`, `[C]u8`) and through a
//! slice (`[]S`, `[][2]S`, which need no layout), declared in a random order
//! unrelated to the order their definitions depend on each other.

mod common;

use common::TestLoader;
use tern_compiler::compile;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[derive(Clone, Copy)]
enum Item {
    Const(usize),
    Struct(usize),
}

/// A random program of `n` structs and `n` constants whose definitions form
/// a DAG, and the size each struct must have.
fn generate(seed: u64, n: usize) -> (String, Vec<u64>) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    // Dependency order: a random interleaving of the items.
    let mut order: Vec<Item> = (0..n)
        .map(Item::Const)
        .chain((0..n).map(Item::Struct))
        .collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    let mut const_val = vec![0u64; n];
    let mut size = vec![0u64; n];
    let mut align = vec![1u64; n];
    let mut texts: Vec<String> = Vec::new();
    let mut seen_consts: Vec<usize> = Vec::new();
    let mut seen_structs: Vec<usize> = Vec::new();
    for item in order {
        match item {
            Item::Const(c) => {
                let k = rng.below(3) as u64;
                let (text, v) = match rng.below(3) {
                    0 if !seen_structs.is_empty() => {
                        let s = seen_structs[rng.below(seen_structs.len())];
                        (format!("size_of::<S{s}>() + {k}"), size[s] + k)
                    }
                    1 if !seen_consts.is_empty() => {
                        let d = seen_consts[rng.below(seen_consts.len())];
                        (format!("C{d} + {k}"), const_val[d] + k)
                    }
                    _ => (format!("{}", k + 1), k + 1),
                };
                const_val[c] = v;
                texts.push(format!("const C{c}: i64 = {text};"));
                seen_consts.push(c);
            }
            Item::Struct(s) => {
                let mut fields = vec!["f0: u8".to_string()];
                let (mut off, mut al) = (1u64, 1u64);
                let mut add = |name: String, sz: u64, a: u64, fields: &mut Vec<String>| {
                    off = off.div_ceil(a) * a + sz;
                    al = al.max(a);
                    fields.push(name);
                };
                for f in 1..1 + rng.below(4) {
                    match rng.below(7) {
                        0 if !seen_consts.is_empty() => {
                            let c = seen_consts[rng.below(seen_consts.len())];
                            add(format!("f{f}: [C{c}]u8"), const_val[c], 1, &mut fields);
                        }
                        1 if !seen_structs.is_empty() => {
                            let t = seen_structs[rng.below(seen_structs.len())];
                            add(format!("f{f}: S{t}"), size[t], align[t], &mut fields);
                        }
                        2 if !seen_structs.is_empty() => {
                            let t = seen_structs[rng.below(seen_structs.len())];
                            add(format!("f{f}: [2]S{t}"), 2 * size[t], align[t], &mut fields);
                        }
                        // Through a slice: any struct, even a later one or
                        // this one.
                        3 => {
                            let t = rng.below(n);
                            add(format!("f{f}: []S{t}"), 16, 8, &mut fields);
                        }
                        4 => {
                            let t = rng.below(n);
                            add(format!("f{f}: [][2]S{t}"), 16, 8, &mut fields);
                        }
                        5 => add(format!("f{f}: i32"), 4, 4, &mut fields),
                        _ => add(format!("f{f}: i64"), 8, 8, &mut fields),
                    }
                }
                size[s] = off.div_ceil(al) * al;
                align[s] = al;
                texts.push(format!("struct S{s} {{ {} }}", fields.join(", ")));
                seen_structs.push(s);
            }
        }
    }
    // Declaration order: another random permutation.
    for i in (1..texts.len()).rev() {
        texts.swap(i, rng.below(i + 1));
    }
    let mut src = texts.join("\n");
    src.push_str("\nfn main() {\n");
    for s in 0..n {
        src.push_str(&format!("    print(size_of::<S{s}>());\n"));
    }
    src.push_str("}\n");
    (src, size)
}

#[test]
fn every_legal_order_of_constants_and_layouts_compiles_to_c_layouts() {
    for seed in 0..400 {
        let (src, sizes) = generate(seed, 5);
        let program = match compile("gen.tern", &src, &TestLoader::default()) {
            Ok(p) => p,
            Err(d) => panic!("seed {seed}:\n{src}\n{}", d.render()),
        };
        for (s, want) in sizes.iter().enumerate() {
            let def = program
                .structs
                .iter()
                .find(|d| d.name == format!("S{s}"))
                .unwrap();
            assert_eq!(def.layout.size, *want, "seed {seed}: S{s}\n{src}");
        }
    }
}

/// The shape of the program that was once reported as recursive: a constant
/// sized by the last struct, and structs whose array lengths use the
/// constants, in an order the definitions do not follow.
#[test]
fn a_chain_of_constants_and_layouts_in_any_declaration_order() {
    let src = "\
const C0: i64 = size_of::<S4>() + 1;
const C1: i64 = size_of::<S0>() + 1;
const C2: i64 = size_of::<S1>() + 1;
const C3: i64 = size_of::<S2>() + 1;
struct S0 { a: [C0]u8, b: [][2]S3, c: S4 }
struct S1 { a: [C1]u8, b: [2]S0, c: []S1 }
struct S2 { a: [C2]u8, b: S1, c: [][4]S2 }
struct S3 { a: [C3]u8, b: [1]S2 }
struct S4 { a: [3]u8, b: [][1]S0 }
fn main() {
    print(size_of::<S0>());
    print(size_of::<S1>());
    print(size_of::<S2>());
    print(size_of::<S3>());
}
";
    let program = compile("chain.tern", src, &TestLoader::default())
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let size = |n: &str| {
        program
            .structs
            .iter()
            .find(|d| d.name == n)
            .unwrap()
            .layout
            .size
    };
    // S4 = 24 (3 bytes, pad, slice); C0 = 25; S0 = 25 + pad + 16 + 24 = 72.
    assert_eq!(size("S4"), 24);
    assert_eq!(size("S0"), 72);
    // C1 = 73; S1 = 73 + pad(80) + 144 + 16 = 240.
    assert_eq!(size("S1"), 240);
    // C2 = 241; S2 = 241 + pad(248) + 240 + 16 = 504.
    assert_eq!(size("S2"), 504);
    // C3 = 505; S3 = 505 + pad(512) + 504 = 1016.
    assert_eq!(size("S3"), 1016);
}

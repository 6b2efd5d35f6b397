//! The frame plan (`tir::frame`): where each local and temporary of a
//! function lives, which the backend, the interpreter and the frame bound
//! all read. Each case compiles a small function and checks its plan.

mod common;

use common::TestLoader;
use tern_compiler::compile;
use tern_compiler::tir::frame::{self, FramePlan, Home};
use tern_compiler::tir::{Function, LocalId, Program};

const SOURCE: &str = r#"
struct P { a: i64, b: i64 }
fn make(a: i64) -> P { return P { a: a, b: a + 1 }; }
fn bump(ref x: i64) { x += 1; }
fn total(p: P, ref q: P, n: i64) -> i64 {
    let fresh = P { a: n, b: n };
    let called = make(n);
    let copy = p;
    var counter = n;
    bump(ref counter);
    let plain = n * 2;
    return fresh.a + called.b + copy.a + q.b + counter + plain + total_of(copy);
}
fn total_of(p: P) -> i64 { return p.a + p.b; }
fn main() {
    var q = make(1);
    print(total(make(2), ref q, 3));
}
"#;

fn function<'p>(program: &'p Program, name: &str) -> &'p Function {
    program
        .functions
        .iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"))
}

fn local(f: &Function, name: &str) -> LocalId {
    let i = f
        .locals
        .iter()
        .position(|l| l.name == name)
        .unwrap_or_else(|| panic!("no local {name}"));
    LocalId(i as u32)
}

fn home(f: &Function, plan: &FramePlan, name: &str) -> Home {
    plan.homes[local(f, name).0 as usize]
}

#[test]
fn locals_live_where_the_plan_says() {
    let program = compile("frame.tern", SOURCE, &TestLoader::default()).expect("compiles");
    let f = function(&program, "total");
    let plan = frame::plan(&program, f);
    assert_eq!(plan.homes.len(), f.locals.len());
    // An aggregate value parameter and a `ref` parameter: the caller's.
    assert_eq!(home(f, &plan, "p"), Home::Passed);
    assert_eq!(home(f, &plan, "q"), Home::Passed);
    // A scalar parameter gets a slot of the laid-out frame (a register in
    // compiled code).
    assert!(matches!(home(f, &plan, "n"), Home::Slot(_)));
    // A literal's and a call's temporaries are adopted by their `let`s.
    assert!(matches!(home(f, &plan, "fresh"), Home::Adopted(_)));
    assert!(matches!(home(f, &plan, "called"), Home::Adopted(_)));
    // A copy of a place owns a slot; so does an addressed scalar.
    assert!(matches!(home(f, &plan, "copy"), Home::Slot(_)));
    assert!(matches!(home(f, &plan, "counter"), Home::Slot(_)));
    assert_eq!(
        plan.addressed.iter().copied().collect::<Vec<_>>(),
        [local(f, "counter")]
    );
    // Temporaries: the literal, `make`'s result, and the copy of `copy`
    // passed by value to `total_of`: three of 16 bytes.
    assert_eq!(plan.temps.len(), 3);
    // The bound: those three and `copy`'s own slot, at their sizes.
    assert_eq!(plan.bound, 4 * 16);
    // The compiled frame's slots add the addressed `counter` (8 bytes).
    assert_eq!(plan.slot_bytes, 4 * 16 + 8);
    // Registers: the two passed addresses, `n` and `plain`.
    assert_eq!(plan.register_words, 4);
    // Every home and temporary lies inside the laid-out frame, apart.
    let mut spans: Vec<(u64, u64)> = plan.temps.values().map(|&o| (o, 16)).collect();
    for (l, h) in f.locals.iter().zip(&plan.homes) {
        if let Home::Slot(o) = h {
            spans.push((*o, program.layout(&l.ty).size));
        }
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "{spans:?}");
    }
    let (last, size) = *spans.last().unwrap();
    assert!(last + size <= plan.size);
}

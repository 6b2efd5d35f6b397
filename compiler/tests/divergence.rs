//! Which functions never return (`tir::divergence`): the backend lays their
//! calls out as it lays out a `panic`. Each function below is named for
//! what the rule must find.

mod common;

use common::TestLoader;
use tern_compiler::compile;
use tern_compiler::tir::FuncId;
use tern_compiler::tir::divergence::Divergence;

const SOURCE: &str = r#"
fn panics(code: i64) {
    var buf = [0 as u8; 8];
    buf[0] = code as u8;
    panic("failed: ", buf[0..1]);
}
fn calls_one_that_panics(code: i64) -> i64 {
    let x = code + 1;
    panics(x);
    return x;
}
fn through_a_let(code: i64) -> i64 {
    let y = calls_one_that_panics(code);
    return y;
}
fn chain(code: i64) -> i64 {
    return calls_one_that_panics(code);
}
fn returns_first(code: i64) {
    if code > 0 {
        return;
    }
    panic("negative");
}
fn panics_in_a_branch(code: i64) {
    if code > 0 {
        panic("positive");
    }
}
fn panics_in_both_arms(code: i64) {
    if code > 0 {
        panic("positive");
    } else {
        panic("not positive");
    }
}
fn panics_in_a_loop(code: i64) {
    for i in 0..code {
        panics(i);
    }
}
fn recurses(code: i64) -> i64 {
    return recurses(code);
}
fn main() {
    print(calls_one_that_panics(1) + through_a_let(2) + chain(3) + recurses(4));
    returns_first(1);
    panics_in_a_branch(0);
    panics_in_both_arms(1);
    panics_in_a_loop(0);
}
"#;

fn id(program: &tern_compiler::tir::Program, name: &str) -> FuncId {
    let i = program
        .functions
        .iter()
        .position(|f| f.name == name)
        .unwrap_or_else(|| panic!("no function {name}"));
    FuncId(i as u32)
}

#[test]
fn a_function_diverges_when_its_top_level_panics_before_any_return() {
    let program = compile("divergence.tern", SOURCE, &TestLoader::default()).expect("compiles");
    let d = Divergence::of(&program);
    let never = |name: &str| d.never_returns(id(&program, name));
    // A `panic` statement at the top level, after other statements.
    assert!(never("panics"));
    // A call of a diverging function, then a `return` it never reaches.
    assert!(never("calls_one_that_panics"));
    // As a `let`'s initialiser.
    assert!(never("through_a_let"));
    // `return f()` holds a `return`: taken for returning, by the simple rule.
    assert!(!never("chain"));
    // A `return` before the panic, a panic on one branch only, a panic in
    // a loop, recursion: each may return as far as the rule can tell (both
    // arms of an `if` panicking is left out, on purpose).
    assert!(!never("returns_first"));
    assert!(!never("panics_in_a_branch"));
    assert!(!never("panics_in_both_arms"));
    assert!(!never("panics_in_a_loop"));
    assert!(!never("recurses"));
    assert!(!never("main"));
}

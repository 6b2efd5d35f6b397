//! Limits count what they say: nesting counts nesting (not the length of a
//! chain like `1 + 1 + ... + 1` or `if ... else if ...`), a chain is bounded
//! by `MAX_CHAIN_LINKS` with one located error, and generic instances count
//! generic instances (not plain functions).

mod common;

use common::TestLoader;
use tern_compiler::syntax::parser::MAX_CHAIN_LINKS;
use tern_compiler::{Loaded, Loader, compile};

fn sum(terms: usize) -> String {
    let terms = vec!["1"; terms].join(" + ");
    format!("fn main() -> i64 {{\n    let x = {terms};\n    print(x);\n    return 0;\n}}\n")
}

fn else_if(arms: usize) -> String {
    let chain: Vec<String> = (0..arms)
        .map(|i| format!("if x == {i} {{\n        return {i};\n    }}"))
        .collect();
    format!(
        "fn pick(x: i64) -> i64 {{\n    {} else {{\n        return -1;\n    }}\n}}\nfn main() {{\n    print(pick(3));\n}}\n",
        chain.join(" else ")
    )
}

fn errors(src: &str) -> Vec<String> {
    match compile("t.tern", src, &TestLoader::default()) {
        Ok(_) => Vec::new(),
        Err(d) => d
            .summaries()
            .into_iter()
            .map(|(_, l, c, m)| format!("{l}:{c}: {m}"))
            .collect(),
    }
}

#[test]
fn long_chains_are_not_nesting() {
    let p = compile("t.tern", &sum(10_000), &TestLoader::default()).unwrap();
    drop(p);
    compile("t.tern", &else_if(2_000), &TestLoader::default()).unwrap();
    // Casts, fields and indexes chain too.
    let casts = format!(
        "fn main() {{\n    print(1{});\n}}\n",
        " as i64".repeat(5_000)
    );
    compile("t.tern", &casts, &TestLoader::default()).unwrap();
}

/// Field, index and subslice chains compile in time and memory linear in
/// their length: each link's place is the one before it one step further
/// (copied paths once took 1.7 GB for 20 000 links, and would have taken
/// more than the machine has well inside the limit).
#[test]
fn long_place_chains_compile() {
    let fields = format!(
        "struct S {{ s: []S, v: i64 }}\nfn main() {{\n    var e = reusable::alloc::<S>(1);\n    \
         var s: []S = e;\n    print(s[0]{}.v);\n    reusable::free(e);\n}}\n",
        ".s[0]".repeat(30_000)
    );
    compile("t.tern", &fields, &TestLoader::default()).unwrap();
    let slices = format!(
        "fn main() {{\n    var a = [1];\n    print(len(a[0..1]{}));\n}}\n",
        "[0..1]".repeat(60_000)
    );
    compile("t.tern", &slices, &TestLoader::default()).unwrap();
}

#[test]
fn a_function_of_100_000_statements_compiles() {
    let body: String = (0..100_000)
        .map(|i| format!("    t += {};\n", i % 7))
        .collect();
    let src = format!("fn main() {{\n    var t = 0;\n{body}    print(t);\n}}\n");
    compile("t.tern", &src, &TestLoader::default()).unwrap();
}

#[test]
fn a_chain_past_the_limit_is_one_located_error() {
    let n = MAX_CHAIN_LINKS as usize;
    let e = errors(&sum(n + 2));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with("2:"), "{e:?}");
    assert!(e[0].contains("chain too long"), "{e:?}");
    // The arms past the limit are skipped; nothing else is reported (the
    // function is not said to miss a return).
    let e = errors(&else_if(n + 1));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(e[0].starts_with(&format!("{}:", 2 * n + 2)), "{e:?}");
}

#[test]
fn parenthesized_chains_still_count_as_nesting() {
    let src = format!(
        "fn main() {{\n    print({}1{});\n}}\n",
        "(1 + ".repeat(200),
        ")".repeat(200)
    );
    let e = errors(&src);
    assert_eq!(e, ["2:326: expression nesting too deep"]);
}

#[test]
fn plain_functions_are_not_generic_instances() {
    let mut src = String::new();
    for i in 0..20_000 {
        src.push_str(&format!("fn f{i}() -> i64 {{ return {i}; }}\n"));
    }
    src.push_str("fn main() {\n");
    for i in 0..20_000 {
        src.push_str(&format!("    print(f{i}());\n"));
    }
    src.push_str("}\n");
    let p = compile("t.tern", &src, &TestLoader::default()).unwrap();
    assert_eq!(p.functions.len(), 20_001);
}

/// A long generic body instantiated at ever larger types stops at the
/// bound on instantiated code, long before the count of instances (it once
/// checked for 23 s and 5.9 GB first); a short one many times is fine.
#[test]
fn instances_are_bounded_by_their_code_too() {
    let body: String = (0..2_500)
        .map(|k| format!("    var v{k} = n + {k};\n"))
        .collect();
    let src = format!(
        "struct B<T> {{ a: T, b: T }}\n\
         fn g<T>(x: T, n: i64) -> i64 {{\n{body}    if n == 0 {{ return size_of::<T>(); }}\n\
         \x20   return g(B {{ a: x, b: x }}, n - 1) + g([x, x], n - 1);\n}}\n\
         fn main() {{ print(g(1 as u8, 3)); }}\n"
    );
    let e = errors(&src);
    assert_eq!(
        e,
        [
            "2504:12: too much code in generic instantiations: instances of `g` and the others add up to more than 8 MiB of function bodies"
        ]
    );
    // 500 instances of a short generic body: well inside both bounds.
    let mut small = String::from("fn id<T>(x: T) -> T { return x; }\nfn main() {\n");
    for n in 1..=500 {
        small.push_str(&format!("    print(len(id([0; {n}])));\n"));
    }
    small.push_str("}\n");
    let p = compile("t.tern", &small, &TestLoader::default()).unwrap();
    assert_eq!(p.functions.len(), 501);
}

/// A loader whose module `bad` exists but is not UTF-8.
struct NotUtf8;
impl Loader for NotUtf8 {
    fn load(&self, name: &str, _: &str) -> Loaded {
        Loaded::from_bytes(format!("dir/{name}.tern"), Ok(vec![b'f', 0xff, b'\n']))
    }
}

#[test]
fn a_module_that_is_not_utf8_is_reported_as_such_at_the_use() {
    let d = compile("t.tern", "use bad;\nfn main() {}\n", &NotUtf8).unwrap_err();
    let s: Vec<String> = d
        .summaries()
        .into_iter()
        .map(|(_, l, c, m)| format!("{l}:{c}: {m}"))
        .collect();
    assert_eq!(s, ["1:5: module `bad` (dir/bad.tern) is not valid UTF-8"]);
}

/// `let x_k = P { a: x_{k-1}, b: x_{k-1} }` doubles the type's tree: the
/// largest tree within the bound (4 095 types, eleven `let`s) compiles, and
/// one more `let` is one located error, not a front end that runs out of
/// memory (thirty of them once did).
#[test]
fn a_type_of_more_than_4096_types_is_refused() {
    let doubling = |lets: usize| {
        let mut src =
            String::from("struct P<A, B> { a: A, b: B }\nfn main() {\n    let x0 = 1 as u8;\n");
        for k in 1..=lets {
            src.push_str(&format!(
                "    let x{k} = P {{ a: x{}, b: x{} }};\n",
                k - 1,
                k - 1
            ));
        }
        src.push_str(&format!(
            "    print(size_of::<u8>() + 0 * x{lets}.a.a.a.a.a.a.a.a.a.a.a as i64);\n}}\n"
        ));
        src
    };
    assert_eq!(errors(&doubling(11)), Vec::<String>::new());
    assert_eq!(
        errors(&doubling(12)),
        ["15:15: generic instantiation of `P` nests too deep"]
    );
}

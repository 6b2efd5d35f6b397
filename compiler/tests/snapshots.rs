//! Snapshot tests: the parser's tree (as an S-expression, to show
//! precedence and associativity), the checker's typed program (`dump`), and
//! rendered diagnostics. Review changes with `cargo insta review`, or run
//! with `INSTA_UPDATE=always` and read the diff before committing.

mod common;

use common::TestLoader;
use tern_compiler::syntax::ast::*;
use tern_compiler::syntax::parse_text;
use tern_compiler::{compile, dump::dump};

fn sexpr(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int(v) => v.map_or("<big>".into(), |v| v.to_string()),
        ExprKind::Byte(b) => format!("b{b}"),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Path(p, t) => {
            if t.is_empty() {
                p.text()
            } else {
                format!("{}::<{}>", p.text(), t.len())
            }
        }
        ExprKind::Call { callee, args, .. } => {
            let a: Vec<String> = args
                .iter()
                .map(|a| format!("{}{}", if a.by_ref { "ref " } else { "" }, sexpr(&a.expr)))
                .collect();
            format!("(call {} {})", callee.text(), a.join(" "))
        }
        ExprKind::Field(b, f) => format!("(. {} {})", sexpr(b), f.name),
        ExprKind::Index(b, i) => format!("(index {} {})", sexpr(b), sexpr(i)),
        ExprKind::SliceRange { base, lo, hi } => format!(
            "(slice {} {} {})",
            sexpr(base),
            lo.as_ref().map_or("_".into(), |x| sexpr(x)),
            hi.as_ref().map_or("_".into(), |x| sexpr(x))
        ),
        ExprKind::Unary(op, x) => {
            format!(
                "({} {})",
                if *op == UnOp::Neg { "-" } else { "!" },
                sexpr(x)
            )
        }
        ExprKind::Binary(op, a, b) => format!("({} {} {})", op.text(), sexpr(a), sexpr(b)),
        ExprKind::Cast(x, _) => format!("(as {})", sexpr(x)),
        ExprKind::StructLit { name, fields, .. } => {
            let f: Vec<String> = fields
                .iter()
                .map(|(n, e)| format!("{}: {}", n.name, sexpr(e)))
                .collect();
            format!("({} {{{}}})", name.text(), f.join(", "))
        }
        ExprKind::ArrayRepeat(v, n) => format!("[{}; {}]", sexpr(v), sexpr(n)),
        ExprKind::ArrayLit(es) => {
            format!("[{}]", es.iter().map(sexpr).collect::<Vec<_>>().join(" "))
        }
        ExprKind::Paren(x) => sexpr(x),
        ExprKind::Error => "<error>".into(),
    }
}

/// Each `let` initialiser of `main`, as an S-expression.
fn parse_lets(body: &str) -> String {
    let src = format!("fn main() {{\n{body}\n}}\n");
    let m = parse_text("t.tern", &src).unwrap_or_else(|d| panic!("{}", d.render()));
    let Item::Fn(f) = &m.items[0] else { panic!() };
    f.body
        .stmts
        .iter()
        .map(|s| match &s.kind {
            StmtKind::Let { name, init, .. } => format!("{} = {}", name.name, sexpr(init)),
            other => format!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn parser_precedence_and_associativity() {
    insta::assert_snapshot!(parse_lets(
        "let a = 1 + 2 * 3 - 4 / 5 % 6;
         let b = x << 1 + 2 & y | z ^ w;
         let c = a == b && c != d || !e;
         let d = -x as i32 as u8 * 2;
         let e = p.q[1].r[2..len(s)][..];
         let f = 1 - 2 - 3;
         let g = s[..n] ;
         let h = Pair { a: 1, b: m::f::<i64>(ref x, y) };
         let i = [0; N] ;
         let j = [1, 2, 3,];
         let k = (a < b) == (c > d);"
    ));
}

#[test]
fn parser_statement_forms() {
    let src = "use m;\nconst N: i64 = 1_000 + 0xff;\nstruct S { a: [N]u8, b: []i64, c: reusable[]S2 }\n\
               extern fn ext(ref h: S, n: i64) -> i64;\n\
               fn g<T, U>(ref x: T, y: []U) -> i64 { return 0; }\n\
               fn main() { var x: i64 = 1; x += 2; x <<= 1; if x > 1 { } else if x < 0 { } else { }\n\
               while x < 10 { x = x + 1; break; continue; } for i in 0..n { } return; }\n";
    let m = parse_text("t.tern", src).unwrap_or_else(|d| panic!("{}", d.render()));
    // Spans are left out: the structure is what this snapshot pins.
    let mut out = String::new();
    for item in &m.items {
        let line = match item {
            Item::Use(n) => format!("use {}", n.name),
            Item::Const(c) => format!("const {} = {}", c.name.name, sexpr(&c.value)),
            Item::Struct(s) => format!(
                "struct {} [{}]",
                s.name.name,
                s.fields
                    .iter()
                    .map(|f| f.name.name.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            ),
            Item::Extern(e) => format!(
                "extern {} ref={:?} ret={}",
                e.name.name,
                e.params.iter().map(|p| p.by_ref).collect::<Vec<_>>(),
                e.ret.is_some()
            ),
            Item::Fn(f) => format!(
                "fn {} generics={} params={} stmts={:?}",
                f.name.name,
                f.generics.len(),
                f.params.len(),
                f.body
                    .stmts
                    .iter()
                    .map(|s| stmt_name(&s.kind))
                    .collect::<Vec<_>>()
            ),
        };
        out.push_str(&line);
        out.push('\n');
    }
    insta::assert_snapshot!(out);
}

fn stmt_name(s: &StmtKind) -> String {
    match s {
        StmtKind::Let { mutable, .. } => if *mutable { "var" } else { "let" }.into(),
        StmtKind::Assign { .. } => "assign".into(),
        StmtKind::CompoundAssign { op, .. } => format!("{}=", op.text()),
        StmtKind::Expr(_) => "expr".into(),
        StmtKind::If { else_, .. } => format!(
            "if(else:{})",
            else_.as_ref().map_or("none".to_string(), |b| b
                .stmts
                .iter()
                .map(|s| stmt_name(&s.kind))
                .collect::<Vec<_>>()
                .join(","))
        ),
        StmtKind::While { body, .. } => format!(
            "while[{}]",
            body.stmts
                .iter()
                .map(|s| stmt_name(&s.kind))
                .collect::<Vec<_>>()
                .join(",")
        ),
        StmtKind::For { .. } => "for".into(),
        StmtKind::ForEach { index, .. } => format!("for-each(index:{})", index.is_some()),
        StmtKind::Break => "break".into(),
        StmtKind::Continue => "continue".into(),
        StmtKind::Return(v) => format!("return({})", v.is_some()),
    }
}

fn check(src: &str) -> String {
    check_with(src, &TestLoader::default())
}

fn check_with(src: &str, loader: &TestLoader) -> String {
    match compile("t.tern", src, loader) {
        Ok(p) => dump(&p),
        Err(d) => panic!("{}", d.render()),
    }
}

#[test]
fn checker_design_example() {
    insta::assert_snapshot!(check(
        r#"const N: i64 = 1_000;
struct Pair { a: i64, b: i64 }
fn bump(ref p: Pair) { p.a += 1; }
fn main() -> i64 {
    let a = 40;
    var xs: reusable[]i64 = reusable::alloc::<i64>(0);
    for i in 0..10 { xs = reusable::append(xs, i * a); }
    xs = reusable::resize(xs, 4);
    print(xs[3]);
    print(reusable::offset(xs));
    reusable::free(xs);
    var q = Pair { a: 1, b: 2 };
    bump(ref q);
    if q.a == 2 && N > 0 { print(true); } else { panic("unreachable"); }
    return 0;
}
"#
    ));
}

#[test]
fn checker_generics_are_instantiated_once_per_type_list() {
    insta::assert_snapshot!(check(
        r#"fn sum<T>(xs: []T) -> i64 { return len(xs) * size_of::<T>(); }
fn first<T>(xs: []T) -> T { return xs[0]; }
fn pair<T, U>(t: T, u: U) -> i64 { return size_of::<T>() + size_of::<U>(); }
fn unused<T>(x: T) -> T { return x; }
fn main() {
    var a = [1, 2, 3];
    var b: [2]u8 = [7, 8];
    print(sum(a[..]));
    print(sum(a[1..]));
    print(sum::<u8>(b[..]));
    print(first(b[..2]));
    print(pair(1, true));
    print(pair::<bool, i64>(true, 1));
}
"#
    ));
}

#[test]
fn checker_literals_layout_and_folding() {
    insta::assert_snapshot!(check(
        r#"const K: i32 = -(1 << 4) + 3;
const B: bool = K < 0 && true;
const BYTES: i64 = size_of::<Mixed>() * 2;
struct Mixed { flag: bool, n: i64, small: u8, arr: [3]i32, s: []u8 }
fn main() {
    let x: u8 = 250;
    let y = x + 5;
    let z: i32 = 1 + K;
    var m = Mixed { s: unsafe::slice::<u8>(0, 0), arr: [1, 2, 3], small: 255, n: -9223372036854775808, flag: B };
    m.arr[1] *= 2;
    print(y);
    print(z as i64 + BYTES);
    print(true as u8);
    print(-x);
    print(!z);
}
"#
    ));
}

#[test]
fn checker_modules_and_externs() {
    let loader = TestLoader::with(&[(
        "lib",
        "struct Header { root: i64, count: i64 }\n\
         extern fn tern_span_alloc(ref tree: Header, nodes: i64, bytes: i64) -> i64;\n\
         const WORDS: i64 = 4;\n\
         fn make() -> Header { return Header { root: 0, count: WORDS }; }\n\
         fn alloc<T>(ref h: Header, n: i64) -> []T {\n\
             let off = tern_span_alloc(ref h, 0, n * size_of::<T>());\n\
             return unsafe::slice::<T>(off, n);\n\
         }\n",
    )]);
    insta::assert_snapshot!(check_with(
        "use lib;\nfn main() {\n    var h = lib::make();\n    let s: []i64 = lib::alloc(ref h, lib::WORDS);\n    let t = lib::alloc::<u8>(ref h, 3);\n    print(len(s) + len(t));\n}\n",
        &loader
    ));
}

#[test]
fn rendered_diagnostics_of_a_file_with_several_errors() {
    let src = "struct P { x: i64 }\nfn f(ref p: P) {}\nfn main() {\n    let p = P { x: 1 };\n    f(ref p);\n    let n: u8 = 256;\n    if n == 1 { return 5; }\n}\n";
    let d = compile("t.tern", src, &TestLoader::default()).unwrap_err();
    insta::assert_snapshot!(d.render());
}

//! Backend tests on hand-built typed programs (independent of the front
//! end): JIT execution with test doubles for the runtime's print functions,
//! object emission, listings, and the verifier at every level.

use std::sync::Mutex;

use tern_codegen::{OptLevel, Options, compile_jit, compile_object};
use tern_compiler::tir::*;

static OUT: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// The tests share the print double: run them one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

extern "C" fn print_i64(v: i64) {
    OUT.lock().unwrap().push(v.to_string());
}
extern "C" fn print_bool(v: u8) {
    OUT.lock().unwrap().push((v != 0).to_string());
}

/// Stands in for every failure entry: these programs never fail.
extern "C" fn unexpected_failure() {
    std::process::abort();
}

fn symbols() -> Vec<(&'static str, *const u8)> {
    let fail = unexpected_failure as *const u8;
    vec![
        ("tern_div_zero", fail),
        ("tern_bounds_fail", fail),
        ("tern_slice_fail", fail),
        ("tern_rt_interrupted", fail),
        ("tern_stack_fail", fail),
        ("tern_print_i64", print_i64 as *const u8),
        ("tern_print_bool", print_bool as *const u8),
    ]
}

const L: Loc = Loc {
    file: 0,
    line: 1,
    col: 1,
};

fn e(kind: ExprKind, ty: Type) -> Expr {
    Expr {
        kind,
        ty,
        loc: L,
        span: Default::default(),
    }
}
fn int(v: i64) -> Expr {
    e(ExprKind::Int(v), Type::I64)
}
fn typed_int(v: i64, ty: Type) -> Expr {
    e(ExprKind::Int(v), ty)
}
fn local(id: u32, ty: Type) -> Expr {
    e(ExprKind::Local(LocalId(id)), ty)
}
fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    let ty = if op.is_comparison() {
        Type::Bool
    } else {
        l.ty.clone()
    };
    e(ExprKind::Binary(op, Box::new(l), Box::new(r)), ty)
}
fn print(x: Expr) -> Stmt {
    Stmt::Expr(e(ExprKind::Builtin(Builtin::Print, vec![x]), Type::Unit))
}
fn var(name: &str, ty: Type) -> Local {
    Local {
        name: name.into(),
        ty,
        mutable: true,
    }
}
fn func(
    name: &str,
    params: Vec<Param>,
    ret: Type,
    locals: Vec<Local>,
    stmts: Vec<Stmt>,
) -> Function {
    Function {
        name: name.into(),
        params,
        ret,
        locals,
        body: Block { stmts },
        loc: L,
    }
}
fn program(functions: Vec<Function>, structs: Vec<StructDef>) -> Program {
    Program {
        files: vec!["t.tern".into()],
        library: Vec::new(),
        structs,
        functions,
        externs: vec![],
        main: FuncId(0),
    }
}

/// Runs `p` at every level through the JIT (verifier on) and returns the
/// printed lines and the status of each run, asserting they agree.
fn run(p: &Program) -> (Vec<String>, i64) {
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut results = Vec::new();
    for level in [OptLevel::O0, OptLevel::O1, OptLevel::O2] {
        let mut opts = Options::new(level);
        opts.verify = true;
        let jit = compile_jit(p, &opts, &symbols()).expect("compiles");
        OUT.lock().unwrap().clear();
        let status = (jit.entry())();
        let out = std::mem::take(&mut *OUT.lock().unwrap());
        results.push((out, status));
    }
    assert_eq!(results[0], results[1], "O0 vs O1");
    assert_eq!(results[0], results[2], "O0 vs O2");
    results.remove(0)
}

#[test]
fn loop_sum_and_status() {
    // var s = 0; for i in 0..10 { s += i; } print(s); return s % 7;
    let main = func(
        "main",
        vec![],
        Type::I64,
        vec![var("s", Type::I64), var("i", Type::I64)],
        vec![
            Stmt::Let {
                local: LocalId(0),
                init: int(0),
            },
            Stmt::For {
                var: LocalId(1),
                start: int(0),
                end: int(10),
                body: Block {
                    stmts: vec![Stmt::CompoundAssign {
                        place: local(0, Type::I64),
                        op: BinOp::Add,
                        value: local(1, Type::I64),
                    }],
                },
            },
            print(local(0, Type::I64)),
            Stmt::Return(Some(bin(BinOp::Rem, local(0, Type::I64), int(7)))),
        ],
    );
    assert_eq!(run(&program(vec![main], vec![])), (vec!["45".into()], 3));
}

#[test]
fn division_edge_cases_wrap() {
    let min = int(i64::MIN);
    let main = func(
        "main",
        vec![],
        Type::Unit,
        vec![],
        vec![
            print(bin(BinOp::Div, min.clone(), int(-1))),
            print(bin(BinOp::Rem, min, int(-1))),
            print(bin(BinOp::Div, int(-7), int(2))),
            print(bin(BinOp::Rem, int(-7), int(2))),
            // u8: 200 / 3 = 66 (unsigned), 200 >> 1 = 100 (logical)
            print(bin(
                BinOp::Div,
                typed_int(200, Type::U8),
                typed_int(3, Type::U8),
            )),
            print(bin(
                BinOp::Shr,
                typed_int(200, Type::U8),
                typed_int(1, Type::U8),
            )),
            // i32: -8 >> 1 = -4 (arithmetic); shift amount masked: 1 << 65 = 2
            print(bin(
                BinOp::Shr,
                typed_int(-8, Type::I32),
                typed_int(1, Type::I32),
            )),
            print(bin(BinOp::Shl, int(1), int(65))),
            print(bin(
                BinOp::Lt,
                typed_int(200, Type::U8),
                typed_int(3, Type::U8),
            )),
        ],
    );
    let (out, status) = run(&program(vec![main], vec![]));
    assert_eq!(
        out,
        [
            &i64::MIN.to_string(),
            "0",
            "-3",
            "-1",
            "66",
            "100",
            "-4",
            "2",
            "false"
        ]
    );
    assert_eq!(status, 0);
}

#[test]
fn casts_truncate_and_extend() {
    let cast = |x: Expr, ty: Type| e(ExprKind::Cast(Box::new(x)), ty);
    let main = func(
        "main",
        vec![],
        Type::Unit,
        vec![],
        vec![
            print(cast(int(300), Type::U8)),
            print(cast(int(-1), Type::U8)),
            print(cast(cast(int(-1), Type::U8), Type::I64)),
            print(cast(int(0x1_8000_0000), Type::I32)),
            print(cast(typed_int(-5, Type::I32), Type::I64)),
            print(cast(e(ExprKind::Bool(true), Type::Bool), Type::I64)),
        ],
    );
    let (out, _) = run(&program(vec![main], vec![]));
    assert_eq!(out, ["44", "255", "255", "-2147483648", "-5", "1"]);
}

#[test]
fn structs_by_value_and_by_ref() {
    // struct Pair { a: i64, b: i64 }
    let pair = StructDef {
        name: "Pair".into(),
        module_file: None,
        fields: vec![
            Field {
                name: "a".into(),
                ty: Type::I64,
                offset: 0,
                private: false,
            },
            Field {
                name: "b".into(),
                ty: Type::I64,
                offset: 8,
                private: false,
            },
        ],
        layout: Layout { size: 16, align: 8 },
    };
    let pt = Type::Struct(StructId(0));
    let field = |base: Expr, i: u32| e(ExprKind::Field(Box::new(base), i), Type::I64);
    // fn swap(p: Pair) -> Pair { return Pair { a: p.b, b: p.a }; }
    let swap = func(
        "swap",
        vec![Param {
            local: LocalId(0),
            by_ref: false,
        }],
        pt.clone(),
        vec![Local {
            name: "p".into(),
            ty: pt.clone(),
            mutable: false,
        }],
        vec![Stmt::Return(Some(e(
            ExprKind::StructLit {
                id: StructId(0),
                fields: vec![
                    field(local(0, pt.clone()), 1),
                    field(local(0, pt.clone()), 0),
                ],
            },
            pt.clone(),
        )))],
    );
    // fn bump(ref p: Pair) { p.a += 1; }
    let bump = func(
        "bump",
        vec![Param {
            local: LocalId(0),
            by_ref: true,
        }],
        Type::Unit,
        vec![var("p", pt.clone())],
        vec![Stmt::CompoundAssign {
            place: field(local(0, pt.clone()), 0),
            op: BinOp::Add,
            value: int(1),
        }],
    );
    // var q = Pair{a:1,b:2}; var r = swap(q); bump(ref q); print(q.a); print(r.a); print(r.b);
    let main = func(
        "main",
        vec![],
        Type::Unit,
        vec![var("q", pt.clone()), var("r", pt.clone())],
        vec![
            Stmt::Let {
                local: LocalId(0),
                init: e(
                    ExprKind::StructLit {
                        id: StructId(0),
                        fields: vec![int(1), int(2)],
                    },
                    pt.clone(),
                ),
            },
            Stmt::Let {
                local: LocalId(1),
                init: e(
                    ExprKind::Call {
                        func: FuncId(1),
                        args: vec![Arg::Value(local(0, pt.clone()))],
                    },
                    pt.clone(),
                ),
            },
            Stmt::Expr(e(
                ExprKind::Call {
                    func: FuncId(2),
                    args: vec![Arg::Ref(local(0, pt.clone()))],
                },
                Type::Unit,
            )),
            print(field(local(0, pt.clone()), 0)),
            print(field(local(1, pt.clone()), 0)),
            print(field(local(1, pt.clone()), 1)),
        ],
    );
    let (out, _) = run(&program(vec![main, swap, bump], vec![pair]));
    assert_eq!(out, ["2", "2", "1"]);
}

#[test]
fn arrays_slices_and_short_circuit() {
    let at = Type::Array(Box::new(Type::I64), 4);
    let st = Type::Slice(Box::new(Type::I64));
    let index = |base: Expr, i: Expr| e(ExprKind::Index(Box::new(base), Box::new(i)), Type::I64);
    // var a = [3; 4]; a[2] = 9; let s = a[1..4]; print(len(s)); print(s[1]);
    // for i in 0..len(s) { total += s[i] }  print(total); print(false && (1/0 == 0))
    let main = func(
        "main",
        vec![],
        Type::Unit,
        vec![
            var("a", at.clone()),
            Local {
                name: "s".into(),
                ty: st.clone(),
                mutable: false,
            },
            var("total", Type::I64),
            var("i", Type::I64),
        ],
        vec![
            Stmt::Let {
                local: LocalId(0),
                init: e(
                    ExprKind::ArrayRepeat {
                        value: Box::new(int(3)),
                        count: 4,
                    },
                    at.clone(),
                ),
            },
            Stmt::Assign {
                place: index(local(0, at.clone()), int(2)),
                value: int(9),
            },
            Stmt::Let {
                local: LocalId(1),
                init: e(
                    ExprKind::SliceRange {
                        base: Box::new(local(0, at.clone())),
                        lo: Some(Box::new(int(1))),
                        hi: None,
                    },
                    st.clone(),
                ),
            },
            print(e(ExprKind::Len(Box::new(local(1, st.clone()))), Type::I64)),
            print(index(local(1, st.clone()), int(1))),
            Stmt::Let {
                local: LocalId(2),
                init: int(0),
            },
            Stmt::For {
                var: LocalId(3),
                start: int(0),
                end: e(ExprKind::Len(Box::new(local(1, st.clone()))), Type::I64),
                body: Block {
                    stmts: vec![Stmt::CompoundAssign {
                        place: local(2, Type::I64),
                        op: BinOp::Add,
                        value: index(local(1, st.clone()), local(3, Type::I64)),
                    }],
                },
            },
            print(local(2, Type::I64)),
            print(bin(
                BinOp::And,
                e(ExprKind::Bool(false), Type::Bool),
                bin(BinOp::Eq, bin(BinOp::Div, int(1), int(0)), int(0)),
            )),
        ],
    );
    let (out, _) = run(&program(vec![main], vec![]));
    assert_eq!(out, ["3", "9", "15", "false"]);
}

#[test]
fn object_and_listings() {
    let main = func(
        "main",
        vec![],
        Type::I64,
        vec![],
        vec![print(int(5)), Stmt::Return(Some(int(1)))],
    );
    let mut opts = Options::new(OptLevel::O2);
    opts.emit_clif = true;
    opts.emit_asm = true;
    let out = compile_object(&program(vec![main], vec![]), &opts).expect("object");
    assert_eq!(&out.bytes[..4], b"\x7fELF");
    assert!(
        out.listing.clif.contains("; fn main\n"),
        "{}",
        out.listing.clif
    );
    assert!(out.listing.clif.contains("; fn <C main>\n"));
    // The Tern function's symbol, labelled, in Intel syntax.
    assert!(
        out.listing.asm.contains("\ntern.main:\n"),
        "{}",
        out.listing.asm
    );
    assert!(out.listing.asm.contains("\t.intel_syntax noprefix\n"));
}

#[test]
fn missing_runtime_symbol_is_an_error() {
    let main = func("main", vec![], Type::Unit, vec![], vec![print(int(5))]);
    let err = compile_jit(
        &program(vec![main], vec![]),
        &Options::new(OptLevel::O0),
        &[],
    )
    .err()
    .expect("must fail");
    assert_eq!(
        err.to_string(),
        "runtime function `tern_print_i64` is not available in this build of the runtime"
    );
}

/// `fn sum(xs: []i64) -> i64 { var t = 0; for i in 0..len(xs) { t += xs[i + off]; } return t; }`
fn sum_program(off: i64) -> Program {
    let st = Type::Slice(Box::new(Type::I64));
    let idx = if off == 0 {
        local(2, Type::I64)
    } else {
        bin(BinOp::Add, local(2, Type::I64), int(off))
    };
    let sum = func(
        "sum",
        vec![Param {
            local: LocalId(0),
            by_ref: false,
        }],
        Type::I64,
        vec![
            Local {
                name: "xs".into(),
                ty: st.clone(),
                mutable: false,
            },
            var("t", Type::I64),
            Local {
                name: "i".into(),
                ty: Type::I64,
                mutable: false,
            },
        ],
        vec![
            Stmt::Let {
                local: LocalId(1),
                init: int(0),
            },
            Stmt::For {
                var: LocalId(2),
                start: int(0),
                end: e(ExprKind::Len(Box::new(local(0, st.clone()))), Type::I64),
                body: Block {
                    stmts: vec![Stmt::CompoundAssign {
                        place: local(1, Type::I64),
                        op: BinOp::Add,
                        value: e(
                            ExprKind::Index(Box::new(local(0, st.clone())), Box::new(idx)),
                            Type::I64,
                        ),
                    }],
                },
            },
            Stmt::Return(Some(local(1, Type::I64))),
        ],
    );
    let main = func("main", vec![], Type::Unit, vec![], vec![]);
    program(vec![main, sum], vec![])
}

/// Cold (failure) blocks in the CLIF of `fn sum` at `level`.
fn cold_blocks_in_sum(p: &Program, level: OptLevel) -> usize {
    let mut opts = Options::new(level);
    opts.emit_clif = true;
    let jit = compile_jit(p, &opts, &symbols()).expect("compiles");
    let clif = &jit.listing.clif;
    let start = clif.find("; fn sum\n").expect("sum listed");
    let end = clif[start..].find("\n}\n").expect("function end") + start;
    clif[start..end].matches(" cold:").count()
}

#[test]
fn o2_drops_the_bounds_check_of_a_counted_loop_only() {
    let plain = sum_program(0);
    assert_eq!(cold_blocks_in_sum(&plain, OptLevel::O1), 1);
    assert_eq!(cold_blocks_in_sum(&plain, OptLevel::O2), 0);
    // `xs[i + 1]` is not covered by the loop bound: the check stays.
    let shifted = sum_program(1);
    assert_eq!(cold_blocks_in_sum(&shifted, OptLevel::O2), 1);
}

#[test]
fn clif_listing_names_functions() {
    let mut opts = Options::new(OptLevel::O0);
    opts.emit_clif = true;
    let jit = compile_jit(&sum_program(0), &opts, &symbols()).expect("compiles");
    let clif = &jit.listing.clif;
    assert!(
        clif.starts_with("; functions referenced as u0:N\n; u0:0 = tern.main\n; u0:1 = tern.sum\n"),
        "{clif}"
    );
    assert!(
        clif.contains("; fn sum\nfunction %tern.sum(i64, i64) -> i64"),
        "{clif}"
    );
}

/// The CLIF of `sum_program(0)` at -O2 without inlining, with `configure`
/// applied to the options.
fn sum_clif(configure: impl FnOnce(&mut Options)) -> String {
    let mut opts = Options::new(OptLevel::O2);
    opts.emit_clif = true;
    opts.inlining = tern_codegen::Inlining::Off;
    configure(&mut opts);
    let jit = compile_jit(&sum_program(0), &opts, &symbols()).expect("compiles");
    let clif = jit.listing.clif.clone();
    // SAFETY: compiled, never run.
    unsafe { jit.free() };
    clif
}

#[test]
fn interrupt_polls_and_stack_checks_only_with_the_options() {
    // Addresses only embedded, never read: the code is not run.
    let (flag_cell, limit_cell) = (
        std::sync::atomic::AtomicU8::new(0),
        std::sync::atomic::AtomicUsize::new(0),
    );
    let flag = flag_cell.as_ptr() as usize;
    let limit = limit_cell.as_ptr() as usize;
    let polls = |clif: &str| clif.matches("atomic_load").count();
    let checks = |clif: &str| clif.matches("get_stack_pointer").count();
    let plain = sum_clif(|_| {});
    assert_eq!((polls(&plain), checks(&plain)), (0, 0));
    // Polls: `sum`'s entry and loop header, `main`'s entry.
    let polled = sum_clif(|o| o.interrupt_flag = Some(flag));
    assert_eq!((polls(&polled), checks(&polled)), (3, 0));
    // Stack checks: one per function entry, `sum` and `main`.
    let checked = sum_clif(|o| o.stack_limit = Some(limit));
    assert_eq!((polls(&checked), checks(&checked)), (0, 2));
    // Both (the REPL): an entry's stack check stands in for its poll, so
    // only the loop header polls.
    let both = sum_clif(|o| {
        o.interrupt_flag = Some(flag);
        o.stack_limit = Some(limit);
    });
    assert_eq!((polls(&both), checks(&both)), (1, 2));
}

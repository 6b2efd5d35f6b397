//! The stack frame bound: a function whose locals and temporaries could not
//! fit in a machine stack frame is a compile error here, at its name, rather
//! than a code-generation failure without a place.
//!
//! The bound over-approximates what the backend allocates (see
//! `codegen/src/lower/`): a slot per local of aggregate type (parameters
//! live in the caller's memory, and a `let` of a fresh aggregate adopts its
//! temporary), a temporary per fresh aggregate (a struct or array literal, a
//! call's aggregate result) and a copy per aggregate value argument that is a
//! place. Scalars, slices and spills are small and covered by the margin
//! between [`MAX_FRAME_BYTES`] and Cranelift's 1 GiB frame limit.

use crate::tir::{Arg, Block, Expr, ExprKind, Function, Program, Stmt, Type};

/// Largest frame bound a function may have, in bytes (512 MiB; a frame this
/// large overflows any usual thread stack at run time anyway, which is
/// reported as a stack overflow).
pub(crate) const MAX_FRAME_BYTES: u64 = 1 << 29;

/// The frame bound of `f`, in bytes (saturating).
pub(crate) fn bound(program: &Program, f: &Function) -> u64 {
    let mut walk = Walk {
        program,
        total: 0,
        adopted: vec![false; f.locals.len()],
    };
    for p in &f.params {
        walk.adopted[p.local.0 as usize] = true;
    }
    walk.block(&f.body);
    for (l, adopted) in f.locals.iter().zip(&walk.adopted) {
        if !adopted {
            walk.total = walk.total.saturating_add(aggregate_size(program, &l.ty));
        }
    }
    walk.total
}

/// An expression the backend evaluates into a temporary of its own.
fn fresh(e: &Expr) -> bool {
    matches!(
        e.kind,
        ExprKind::Call { .. }
            | ExprKind::StructLit { .. }
            | ExprKind::ArrayRepeat { .. }
            | ExprKind::ArrayLit(_)
            | ExprKind::Bytes(_)
    )
}

fn aggregate_size(program: &Program, ty: &Type) -> u64 {
    match ty {
        Type::Array(..) | Type::Struct(_) => program.layout(ty).size,
        _ => 0,
    }
}

struct Walk<'a> {
    program: &'a Program,
    total: u64,
    /// Locals that own no slot: parameters, and `let`s of a fresh aggregate.
    adopted: Vec<bool>,
}

impl Walk<'_> {
    fn add(&mut self, ty: &Type) {
        let size = aggregate_size(self.program, ty);
        self.total = self.total.saturating_add(size);
    }

    fn block(&mut self, b: &Block) {
        for s in &b.stmts {
            match s {
                Stmt::Let { local, init } => {
                    if fresh(init) {
                        self.adopted[local.0 as usize] = true;
                    }
                    self.expr(init);
                }
                Stmt::Expr(e) | Stmt::Return(Some(e)) => self.expr(e),
                Stmt::Assign { place, value } | Stmt::CompoundAssign { place, value, .. } => {
                    self.expr(place);
                    self.expr(value);
                }
                Stmt::If { .. } => {
                    let chain = s.if_arms().expect("an if");
                    for (cond, then) in chain.arms {
                        self.expr(cond);
                        self.block(then);
                    }
                    if let Some(e) = chain.last {
                        self.block(e);
                    }
                }
                Stmt::While { cond, body } => {
                    self.expr(cond);
                    self.block(body);
                }
                Stmt::For {
                    start, end, body, ..
                } => {
                    self.expr(start);
                    self.expr(end);
                    self.block(body);
                }
                Stmt::Break | Stmt::Continue | Stmt::Return(None) => {}
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        if fresh(e) {
            self.add(&e.ty);
        }
        match &e.kind {
            ExprKind::Int(_)
            | ExprKind::Bool(_)
            | ExprKind::Str(_)
            | ExprKind::Bytes(_)
            | ExprKind::Local(_) => {}
            ExprKind::Field(x, _)
            | ExprKind::Unary(_, x)
            | ExprKind::Cast(x)
            | ExprKind::Len(x) => self.expr(x),
            ExprKind::ArrayRepeat { value: x, .. } => self.expr(x),
            ExprKind::Index(a, b) | ExprKind::Binary(_, a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::SliceRange { base, lo, hi } => {
                self.expr(base);
                for x in [lo, hi].into_iter().flatten() {
                    self.expr(x);
                }
            }
            ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } => {
                for a in args {
                    match a {
                        Arg::Value(x) => {
                            // The caller's copy of an aggregate place.
                            if !fresh(x) {
                                self.add(&x.ty);
                            }
                            self.expr(x);
                        }
                        Arg::Ref(x) => self.expr(x),
                    }
                }
            }
            ExprKind::StructLit { fields: xs, .. }
            | ExprKind::ArrayLit(xs)
            | ExprKind::Builtin(_, xs) => xs.iter().for_each(|x| self.expr(x)),
        }
    }
}

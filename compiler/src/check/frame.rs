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

use crate::tir::{Arg, Block, Expr, ExprKind, Function, Program, Stmt, Type, visit};

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
            if let Stmt::Let { local, init } = s
                && fresh(init)
            {
                self.adopted[local.0 as usize] = true;
            }
            visit::stmt_parts(s, &mut |p| match p {
                visit::Part::Expr(e) => self.expr(e),
                visit::Part::Block(b) => self.block(b),
            });
        }
    }

    fn expr(&mut self, e: &Expr) {
        if fresh(e) {
            self.add(&e.ty);
        }
        if let ExprKind::Call { args, .. } | ExprKind::CallExtern { args, .. } = &e.kind {
            // The caller's copy of an aggregate place passed by value.
            for a in args {
                if let Arg::Value(x) = a
                    && !fresh(x)
                {
                    self.add(&x.ty);
                }
            }
        }
        visit::expr_children(e, &mut |x| self.expr(x));
    }
}

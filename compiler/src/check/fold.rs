//! Constant folding of checked expressions: `const` items, array lengths and
//! `[e; N]` counts. Arithmetic wraps exactly as it does at run time.

use crate::tir::{BinOp, Expr, ExprKind, Type, UnOp};

/// Why an expression has no constant value.
#[derive(Debug, PartialEq, Eq)]
pub enum FoldError {
    NotConst,
    DivZero,
}

/// Wrap `v` into the range of `ty` (bools become 0 or 1).
pub fn normalize(v: i64, ty: &Type) -> i64 {
    match ty {
        Type::I32 => v as i32 as i64,
        Type::U8 => v as u8 as i64,
        Type::Bool => (v != 0) as i64,
        _ => v,
    }
}

fn bits(ty: &Type) -> u32 {
    match ty {
        Type::I32 => 32,
        Type::U8 => 8,
        _ => 64,
    }
}

/// The value of `e` (bools as 0/1), or why it has none.
pub fn fold(e: &Expr) -> Result<i64, FoldError> {
    match &e.kind {
        ExprKind::Int(v) => Ok(*v),
        ExprKind::Bool(b) => Ok(*b as i64),
        ExprKind::Unary(op, x) => {
            let v = fold(x)?;
            Ok(match (op, &e.ty) {
                (UnOp::Neg, ty) => normalize(v.wrapping_neg(), ty),
                (UnOp::Not, Type::Bool) => (v == 0) as i64,
                (UnOp::Not, ty) => normalize(!v, ty),
            })
        }
        ExprKind::Cast(x) => Ok(normalize(fold(x)?, &e.ty)),
        ExprKind::Binary(op, a, b) => {
            let x = fold(a)?;
            // `&&` and `||` short-circuit in constants too.
            match (op, x) {
                (BinOp::And, 0) => return Ok(0),
                (BinOp::Or, 1) => return Ok(1),
                _ => {}
            }
            let y = fold(b)?;
            let ty = &a.ty;
            let v = match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Div | BinOp::Rem => {
                    if y == 0 {
                        return Err(FoldError::DivZero);
                    }
                    if *op == BinOp::Div {
                        x.wrapping_div(y)
                    } else {
                        x.wrapping_rem(y)
                    }
                }
                BinOp::BitAnd => x & y,
                BinOp::BitOr => x | y,
                BinOp::BitXor => x ^ y,
                BinOp::Shl => x.wrapping_shl((y as u32) % bits(ty)),
                BinOp::Shr => {
                    let s = (y as u32) % bits(ty);
                    // u8 values are kept non-negative, so this is logical for u8.
                    x >> s
                }
                BinOp::Eq => (x == y) as i64,
                BinOp::Ne => (x != y) as i64,
                BinOp::Lt => (x < y) as i64,
                BinOp::Le => (x <= y) as i64,
                BinOp::Gt => (x > y) as i64,
                BinOp::Ge => (x >= y) as i64,
                BinOp::And | BinOp::Or => y,
            };
            Ok(normalize(v, &e.ty))
        }
        _ => Err(FoldError::NotConst),
    }
}

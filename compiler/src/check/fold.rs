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

/// `u64` operations differ from `i64` ones in division, `>>` and ordering.
fn unsigned_op(op: BinOp, x: i64, y: i64) -> Option<i64> {
    let (a, b) = (x as u64, y as u64);
    Some(match op {
        BinOp::Div => (a / b) as i64,
        BinOp::Rem => (a % b) as i64,
        BinOp::Shr => (a >> (y as u32 % 64)) as i64,
        BinOp::Lt => (a < b) as i64,
        BinOp::Le => (a <= b) as i64,
        BinOp::Gt => (a > b) as i64,
        BinOp::Ge => (a >= b) as i64,
        _ => return None,
    })
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
            if matches!(op, BinOp::Div | BinOp::Rem) && y == 0 {
                return Err(FoldError::DivZero);
            }
            if *ty == Type::U64
                && let Some(v) = unsigned_op(*op, x, y)
            {
                return Ok(normalize(v, &e.ty));
            }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tir::Loc;

    fn int(v: i64, ty: Type) -> Expr {
        Expr {
            kind: ExprKind::Int(v),
            ty,
            loc: Loc::default(),
            span: Default::default(),
        }
    }
    fn bin(op: BinOp, a: Expr, b: Expr, ty: Type) -> Expr {
        Expr {
            kind: ExprKind::Binary(op, Box::new(a), Box::new(b)),
            ty,
            loc: Loc::default(),
            span: Default::default(),
        }
    }

    #[test]
    fn arithmetic_wraps_in_the_operand_type() {
        let e = bin(BinOp::Add, int(250, Type::U8), int(10, Type::U8), Type::U8);
        assert_eq!(fold(&e), Ok(4));
        let e = bin(
            BinOp::Mul,
            int(i32::MAX as i64, Type::I32),
            int(2, Type::I32),
            Type::I32,
        );
        assert_eq!(fold(&e), Ok(-2));
        let e = bin(
            BinOp::Div,
            int(i64::MIN, Type::I64),
            int(-1, Type::I64),
            Type::I64,
        );
        assert_eq!(fold(&e), Ok(i64::MIN));
        let e = bin(BinOp::Rem, int(1, Type::I64), int(0, Type::I64), Type::I64);
        assert_eq!(fold(&e), Err(FoldError::DivZero));
    }

    #[test]
    fn shifts_take_the_amount_modulo_the_width() {
        let e = bin(BinOp::Shl, int(1, Type::I32), int(33, Type::I32), Type::I32);
        assert_eq!(fold(&e), Ok(2));
        let e = bin(BinOp::Shr, int(200, Type::U8), int(1, Type::U8), Type::U8);
        assert_eq!(fold(&e), Ok(100), "u8 shifts are logical");
        let e = bin(BinOp::Shr, int(-8, Type::I64), int(1, Type::I64), Type::I64);
        assert_eq!(fold(&e), Ok(-4), "i64 shifts are arithmetic");
    }

    #[test]
    fn comparisons_and_logic_give_bools() {
        let lt = bin(BinOp::Lt, int(-1, Type::I64), int(0, Type::I64), Type::Bool);
        assert_eq!(fold(&lt), Ok(1));
        let not_const = Expr {
            kind: ExprKind::Len(Box::new(int(0, Type::I64))),
            ty: Type::I64,
            loc: Loc::default(),
            span: Default::default(),
        };
        // `||` short-circuits: the right side is never folded.
        let or = bin(BinOp::Or, lt, not_const.clone(), Type::Bool);
        assert_eq!(fold(&or), Ok(1));
        assert_eq!(fold(&not_const), Err(FoldError::NotConst));
    }
}

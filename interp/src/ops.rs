//! Scalar semantics: integer and bool operations exactly as
//! `codegen/src/lower/` lowers them (its `binop`, the `Unary` and `Cast`
//! arms, literals), as pure functions.
//!
//! Every scalar is held as an `i64` in **canonical form**: an `i64` as is,
//! an `i32` sign-extended from its 32 bits, a `u8` or `bool` zero-extended
//! from its byte (`bool` is 0 or 1 unless an `extern fn` returned another
//! byte). The backend's values are 64-, 32- and 8-bit Cranelift values; the
//! canonical form holds the same bits widened the way the backend widens them
//! (`print`, casts, the exit status), so each operation computes on `i64` and
//! [`canonical`] truncates the result to the type's width.

use tern_compiler::tir::{BinOp, Type, UnOp};

/// `v` (any `i64`) truncated to the width of `ty` and widened back by its
/// signedness: what a Cranelift value of that type holds.
pub fn canonical(ty: &Type, v: i64) -> i64 {
    match ty {
        Type::I32 => i64::from(v as i32),
        Type::U8 | Type::Bool => i64::from(v as u8),
        _ => v,
    }
}

/// The bit width of a scalar type, as the backend's `bits`: `u8` and `bool`
/// are 8.
pub fn bits(ty: &Type) -> u32 {
    match ty {
        Type::I64 | Type::U64 => 64,
        Type::I32 => 32,
        _ => 8,
    }
}

/// Signed types: `i64`, `i32` (`sdiv`, `sshr`, signed compares); `u8`,
/// `u64` and `bool` are unsigned.
pub fn is_signed(ty: &Type) -> bool {
    matches!(ty, Type::I64 | Type::I32)
}

/// The one operation that can fail: `/` or `%` by zero (the caller reports
/// it through `tern_div_zero`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DivByZero;

/// `l op r` on two canonical operands of type `ty` (for comparisons, the
/// operands' type; the result is then a bool 0 or 1). `And`/`Or` here are
/// the backend's non-short-circuit `band`/`bor` of two bools; the evaluator
/// short-circuits before it gets here.
pub fn binary(op: BinOp, ty: &Type, l: i64, r: i64) -> Result<i64, DivByZero> {
    let signed = is_signed(ty);
    let v = match op {
        // The low N bits of a sum, difference or product depend only on the
        // low N bits of the operands, so computing on i64 and truncating is
        // the N-bit wrapping operation.
        BinOp::Add => l.wrapping_add(r),
        BinOp::Sub => l.wrapping_sub(r),
        BinOp::Mul => l.wrapping_mul(r),
        BinOp::Div | BinOp::Rem => {
            if r == 0 {
                return Err(DivByZero);
            }
            if signed {
                // The backend divides by 1 instead of -1 (sdiv traps on
                // MIN / -1) and patches the quotient to `-l`, which wraps to
                // MIN; `x % -1` becomes `x % 1 == 0`.
                match (op, r) {
                    (BinOp::Div, -1) => l.wrapping_neg(),
                    (BinOp::Rem, -1) => 0,
                    // Canonical i32 operands are exact in i64, and with
                    // r != -1 neither operation overflows.
                    (BinOp::Div, _) => l / r,
                    _ => l % r,
                }
            } else {
                let (l, r) = (l as u64, r as u64);
                (if op == BinOp::Div { l / r } else { l % r }) as i64
            }
        }
        BinOp::BitAnd | BinOp::And => l & r,
        BinOp::BitOr | BinOp::Or => l | r,
        BinOp::BitXor => l ^ r,
        BinOp::Shl | BinOp::Shr => {
            // The amount is masked to the bit width (`band_imm(r, bits-1)`),
            // so no shift is ever out of range; a negative amount masks too.
            let amount = (r & i64::from(bits(ty) - 1)) as u32;
            match (op, signed) {
                (BinOp::Shl, _) => l << amount,
                // Arithmetic: the canonical form is sign-extended, so the
                // i64 shift brings in the type's sign bit.
                (_, true) => l >> amount,
                // Logical: the canonical u8 is zero-extended.
                (_, false) => ((l as u64) >> amount) as i64,
            }
        }
        BinOp::Eq => i64::from(l == r),
        BinOp::Ne => i64::from(l != r),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ord = if signed {
                l.cmp(&r)
            } else {
                (l as u64).cmp(&(r as u64))
            };
            i64::from(match op {
                BinOp::Lt => ord.is_lt(),
                BinOp::Le => ord.is_le(),
                BinOp::Gt => ord.is_gt(),
                _ => ord.is_ge(),
            })
        }
    };
    Ok(if op.is_comparison() {
        v
    } else {
        canonical(ty, v)
    })
}

/// `op v` for a canonical operand of type `ty`: `-` wraps (also for `u8`),
/// `!` is `xor 1` on bool and bitwise not on integers.
pub fn unary(op: UnOp, ty: &Type, v: i64) -> i64 {
    match (op, ty) {
        (UnOp::Neg, _) => canonical(ty, v.wrapping_neg()),
        (UnOp::Not, Type::Bool) => v ^ 1,
        (UnOp::Not, _) => canonical(ty, !v),
    }
}

/// `v as to` for a canonical `v` of type `from`, as the backend's `Cast`:
/// same width, nothing (this includes `bool as u8`); narrower, truncate;
/// wider, sign-extend from `i64`/`i32` or zero-extend from `u8`/`bool`.
pub fn cast(from: &Type, to: &Type, v: i64) -> i64 {
    let (from_bits, to_bits) = (bits(from), bits(to));
    if from_bits == to_bits {
        v
    } else if to_bits < from_bits {
        canonical(to, v)
    } else if is_signed(from) {
        // The canonical form of a signed value is already sign-extended.
        i64::from(v as i32)
    } else {
        // ... and that of an unsigned byte zero-extended.
        i64::from(v as u8)
    }
}

/// The value of an integer literal of type `ty` (the backend masks it to the
/// width of its Cranelift type).
pub fn literal(ty: &Type, v: i64) -> i64 {
    canonical(ty, v)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: i64 = i64::MIN;
    const MIN32: i64 = i32::MIN as i64;

    fn bin(op: BinOp, ty: Type, l: i64, r: i64) -> i64 {
        binary(op, &ty, l, r).expect("no division by zero here")
    }

    #[test]
    fn min_divided_by_minus_one_wraps_and_remainder_is_zero() {
        assert_eq!(bin(BinOp::Div, Type::I64, MIN, -1), MIN);
        assert_eq!(bin(BinOp::Rem, Type::I64, MIN, -1), 0);
        assert_eq!(bin(BinOp::Div, Type::I32, MIN32, -1), MIN32);
        assert_eq!(bin(BinOp::Rem, Type::I32, MIN32, -1), 0);
        assert_eq!(bin(BinOp::Div, Type::I64, 17, -1), -17);
        assert_eq!(bin(BinOp::Rem, Type::I64, 17, -1), 0);
        assert_eq!(bin(BinOp::Div, Type::I64, MIN, 2), MIN / 2);
        // Truncating division and a remainder with the dividend's sign.
        assert_eq!(bin(BinOp::Div, Type::I64, -7, 2), -3);
        assert_eq!(bin(BinOp::Rem, Type::I64, -7, 2), -1);
        assert_eq!(bin(BinOp::Rem, Type::I32, 7, -2), 1);
    }

    #[test]
    fn division_by_zero_is_reported_for_every_type() {
        for ty in [Type::I64, Type::I32, Type::U8] {
            assert_eq!(binary(BinOp::Div, &ty, 1, 0), Err(DivByZero));
            assert_eq!(binary(BinOp::Rem, &ty, 1, 0), Err(DivByZero));
        }
    }

    #[test]
    fn u8_divides_unsigned_and_minus_one_is_255() {
        assert_eq!(bin(BinOp::Div, Type::U8, 255, 2), 127);
        assert_eq!(bin(BinOp::Div, Type::U8, 200, 255), 0);
        assert_eq!(bin(BinOp::Rem, Type::U8, 200, 255), 200);
    }

    #[test]
    fn shifts_mask_the_amount_to_the_width() {
        // By 64, -1, 200 on i64: & 63 gives 0, 63, 8.
        assert_eq!(bin(BinOp::Shl, Type::I64, 1, 64), 1);
        assert_eq!(bin(BinOp::Shl, Type::I64, 1, -1), MIN);
        assert_eq!(bin(BinOp::Shl, Type::I64, 1, 200), 256);
        assert_eq!(bin(BinOp::Shr, Type::I64, MIN, 64), MIN);
        assert_eq!(bin(BinOp::Shr, Type::I64, MIN, -1), -1);
        assert_eq!(bin(BinOp::Shr, Type::I64, -256, 200), -1);
        // i32: & 31.
        assert_eq!(bin(BinOp::Shl, Type::I32, 1, 32), 1);
        assert_eq!(bin(BinOp::Shl, Type::I32, 1, -1), MIN32);
        assert_eq!(bin(BinOp::Shl, Type::I32, 1, 200), 256);
        assert_eq!(bin(BinOp::Shr, Type::I32, MIN32, 31), -1);
        assert_eq!(bin(BinOp::Shl, Type::I32, 3, 31), MIN32);
        // u8: & 7, and `>>` is logical.
        assert_eq!(bin(BinOp::Shl, Type::U8, 1, 8), 1);
        assert_eq!(bin(BinOp::Shl, Type::U8, 1, 255), 128);
        assert_eq!(bin(BinOp::Shl, Type::U8, 1, 200), 1);
        assert_eq!(bin(BinOp::Shl, Type::U8, 255, 4), 240);
        assert_eq!(bin(BinOp::Shr, Type::U8, 128, 7), 1);
        assert_eq!(bin(BinOp::Shr, Type::U8, 255, 15), 1);
    }

    #[test]
    fn arithmetic_wraps_in_the_type() {
        assert_eq!(bin(BinOp::Add, Type::I64, i64::MAX, 1), MIN);
        assert_eq!(bin(BinOp::Mul, Type::I64, 1 << 62, 4), 0);
        assert_eq!(bin(BinOp::Add, Type::I32, i64::from(i32::MAX), 1), MIN32);
        assert_eq!(bin(BinOp::Sub, Type::I32, MIN32, 1), i64::from(i32::MAX));
        assert_eq!(bin(BinOp::Mul, Type::I32, 65536, 65536), 0);
        assert_eq!(bin(BinOp::Add, Type::U8, 250, 10), 4);
        assert_eq!(bin(BinOp::Sub, Type::U8, 3, 5), 254);
        assert_eq!(bin(BinOp::Mul, Type::U8, 16, 16), 0);
        assert_eq!(bin(BinOp::BitXor, Type::I32, -1, 1), -2);
        assert_eq!(unary(UnOp::Neg, &Type::U8, 1), 255);
        assert_eq!(unary(UnOp::Neg, &Type::U8, 0), 0);
        assert_eq!(unary(UnOp::Neg, &Type::I64, MIN), MIN);
        assert_eq!(unary(UnOp::Neg, &Type::I32, MIN32), MIN32);
        assert_eq!(unary(UnOp::Not, &Type::U8, 0), 255);
        assert_eq!(unary(UnOp::Not, &Type::I32, 0), -1);
        assert_eq!(unary(UnOp::Not, &Type::Bool, 1), 0);
        assert_eq!(unary(UnOp::Not, &Type::Bool, 0), 1);
    }

    #[test]
    fn u8_compares_unsigned_and_signed_types_signed() {
        assert_eq!(bin(BinOp::Lt, Type::U8, 1, 255), 1);
        // u64: the i64 bits, compared, divided and shifted as unsigned.
        assert_eq!(bin(BinOp::Lt, Type::U64, 1, -1), 1);
        assert_eq!(bin(BinOp::Div, Type::U64, -1, 2), i64::MAX);
        assert_eq!(bin(BinOp::Rem, Type::U64, -1, 10), 5);
        assert_eq!(bin(BinOp::Shr, Type::U64, i64::MIN, 63), 1);
        assert_eq!(cast(&Type::U64, &Type::U8, -1), 255);
        assert_eq!(cast(&Type::I32, &Type::U64, -2), -2);
        assert_eq!(bin(BinOp::Gt, Type::U8, 200, 100), 1);
        assert_eq!(bin(BinOp::Lt, Type::I32, -1, 1), 1);
        assert_eq!(bin(BinOp::Ge, Type::I64, MIN, 0), 0);
        assert_eq!(bin(BinOp::Le, Type::I64, 5, 5), 1);
        assert_eq!(bin(BinOp::Ne, Type::Bool, 1, 0), 1);
    }

    #[test]
    fn casts_truncate_or_extend_by_the_source_signedness() {
        // Truncation.
        assert_eq!(cast(&Type::I64, &Type::I32, 0x1_8000_0000), MIN32);
        assert_eq!(cast(&Type::I64, &Type::U8, -1), 255);
        assert_eq!(cast(&Type::I64, &Type::U8, 256 + 7), 7);
        assert_eq!(cast(&Type::I32, &Type::U8, -2), 254);
        // Sign extension from i32, zero extension from u8 and bool.
        assert_eq!(cast(&Type::I32, &Type::I64, -5), -5);
        assert_eq!(cast(&Type::U8, &Type::I64, 255), 255);
        assert_eq!(cast(&Type::U8, &Type::I32, 200), 200);
        assert_eq!(cast(&Type::Bool, &Type::I64, 1), 1);
        assert_eq!(cast(&Type::Bool, &Type::I32, 0), 0);
        // Same width: nothing.
        assert_eq!(cast(&Type::Bool, &Type::U8, 1), 1);
        assert_eq!(cast(&Type::I64, &Type::I64, MIN), MIN);
        assert_eq!(cast(&Type::I32, &Type::I32, MIN32), MIN32);
    }

    #[test]
    fn literals_are_masked_to_the_width() {
        assert_eq!(literal(&Type::U8, 255), 255);
        assert_eq!(literal(&Type::U8, -1), 255);
        assert_eq!(literal(&Type::I32, -2147483648), MIN32);
        assert_eq!(literal(&Type::I32, 0xFFFF_FFFF), -1);
        assert_eq!(literal(&Type::I64, MIN), MIN);
    }
}

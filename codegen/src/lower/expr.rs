//! Expressions: literals, operators, casts, aggregates, calls of Tern and
//! extern functions.

use super::*;

impl<M: Module> FnLower<'_, '_, M> {
    // ----- expressions --------------------------------------------------

    pub(super) fn expr(&mut self, e: &Expr) -> R<Val> {
        self.at(e.loc, |s| s.expr_here(e))
    }

    fn expr_here(&mut self, e: &Expr) -> R<Val> {
        Ok(match &e.kind {
            ExprKind::Int(v) => {
                let t = match repr(&e.ty) {
                    Repr::Scalar(t) => t,
                    _ => types::I64,
                };
                let masked = match t.bits() {
                    64 => *v,
                    n => *v & ((1i64 << n) - 1),
                };
                Val::Scalar(self.b.ins().iconst(t, masked))
            }
            ExprKind::Bool(v) => Val::Scalar(self.b.ins().iconst(types::I8, i64::from(*v))),
            ExprKind::Str(s) => self.str_val(s)?,
            ExprKind::Local(id) => self.read_local(*id)?,
            ExprKind::Field(..) | ExprKind::Index(..) => {
                let addr = self.place_addr(e)?;
                self.load(&e.ty, addr)
            }
            ExprKind::SliceRange { base, lo, hi } => {
                // `--sanitize`: a view of an array inside a pool element
                // (`r[0][..]`, `s[1].a[..]`) carries that element's
                // allocation's tag, as a view of the slice itself would.
                let in_pool = self.opts.sanitize && base.is_array_in_pool_element();
                self.pool_tag = None;
                let (ptr, len) = self.sequence(base)?;
                let tag = self.pool_tag.take().filter(|_| in_pool);
                let lo = match lo {
                    Some(x) => self.expr(x)?.scalar(),
                    None => self.b.ins().iconst(types::I64, 0),
                };
                let hi = match hi {
                    Some(x) => self.expr(x)?.scalar(),
                    None => len,
                };
                let hi_ok = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, hi, len);
                let lo_ok = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, lo, hi);
                let ok = self.b.ins().band(hi_ok, lo_ok);
                self.check(ok, Rt::SliceFail, |s| {
                    Ok(vec![lo, hi, len, s.loc_ptr(e.loc)?])
                })?;
                let size = self.elem_size(&base.ty);
                let off = self.scaled(lo, size);
                let mut p = self.b.ins().iadd(ptr, off);
                let n = self.b.ins().isub(hi, lo);
                if let Some(t) = tag {
                    p = self.b.ins().bor(p, t);
                }
                // A view of an array behind a `ref` parameter takes the tag
                // of the allocation its bytes lie in, found by address (the
                // caller may have passed `ref r[0]`): the view may outlive
                // the call. The lookup finds the bytes live, as a check would.
                if self.opts.sanitize && base.is_array_behind_ref(self.f) {
                    let bytes = self.scaled(n, size);
                    p = self
                        .call_rt(Rt::SanitizeTagAt, &[p, bytes])?
                        .expect("address");
                } else if self.opts.sanitize
                    && (tag.is_some() || matches!(base.ty, Type::Slice(_) | Type::Reusable(_)))
                {
                    // The view keeps its tag; the span it names is checked now.
                    let bytes = self.scaled(n, size);
                    self.sanitize_check(p, bytes, e.loc)?;
                }
                Val::Pair(p, n)
            }
            ExprKind::Unary(op, x) => {
                let v = self.expr(x)?.scalar();
                Val::Scalar(match (op, &x.ty) {
                    (UnOp::Neg, _) => self.b.ins().ineg(v),
                    // `v == 0`, not `v ^ 1` (the same on a bool's 0 and 1):
                    // a branch on a comparison is one `test; jcc`, where a
                    // branch on an `xor` kept it (`xor $1; test; je`).
                    (UnOp::Not, Type::Bool) => self.b.ins().icmp_imm_u(IntCC::Equal, v, 0),
                    (UnOp::Not, _) => self.b.ins().bnot(v),
                })
            }
            ExprKind::Binary(BinOp::And | BinOp::Or, l, r) => {
                let is_and = matches!(e.kind, ExprKind::Binary(BinOp::And, ..));
                let lv = self.expr(l)?.scalar();
                let rhs_b = self.b.create_block();
                let merge = self.b.create_block();
                let res = self.b.append_block_param(merge, types::I8);
                if is_and {
                    self.b
                        .ins()
                        .brif(lv, rhs_b, &[], merge, &[BlockArg::Value(lv)]);
                } else {
                    self.b
                        .ins()
                        .brif(lv, merge, &[BlockArg::Value(lv)], rhs_b, &[]);
                }
                self.b.switch_to_block(rhs_b);
                let rv = self.expr(r)?.scalar();
                self.b.ins().jump(merge, &[BlockArg::Value(rv)]);
                self.b.switch_to_block(merge);
                Val::Scalar(res)
            }
            ExprKind::Binary(op @ (BinOp::Eq | BinOp::Ne), l, r)
                if let Some((x, c)) = power_of_two_remainder(l, r) =>
            {
                // `x % 2^k == 0` is `x & (2^k - 1) == 0` for signed `x` too
                // (2^k divides x exactly when its low k bits are zero), and
                // the divisor is neither 0 nor -1: no checks, no division.
                let xv = self.expr(x)?.scalar();
                let low = self.b.ins().band_imm_s(xv, c - 1);
                let cc = if *op == BinOp::Eq {
                    IntCC::Equal
                } else {
                    IntCC::NotEqual
                };
                Val::Scalar(self.b.ins().icmp_imm_s(cc, low, 0))
            }
            ExprKind::Binary(BinOp::Sub, l, r) if let ExprKind::Int(c) = r.kind => {
                // `x - c` as `x + (-c)` (both wrap): an index `k - 1` then
                // folds into the address (`-1(base, k)`), its check is one
                // `lea`, and Cranelift does not recompute it per block.
                let lv = self.expr(l)?.scalar();
                let bits = bits(&l.ty);
                let mask = if bits >= 64 { -1 } else { (1i64 << bits) - 1 };
                Val::Scalar(self.b.ins().iadd_imm_u(lv, c.wrapping_neg() & mask))
            }
            ExprKind::Binary(op, l, r) => {
                let lv = self.expr(l)?.scalar();
                let rv = self.expr(r)?.scalar();
                Val::Scalar(self.binop(*op, &l.ty, lv, rv, e.loc)?)
            }
            ExprKind::Cast(x) => {
                let v = self.expr(x)?.scalar();
                let (from, to) = (bits(&x.ty), bits(&e.ty));
                let t = match repr(&e.ty) {
                    Repr::Scalar(t) => t,
                    _ => types::I64,
                };
                Val::Scalar(if from == to {
                    v
                } else if to < from {
                    self.b.ins().ireduce(t, v)
                } else if is_signed(&x.ty) {
                    self.b.ins().sextend(t, v)
                } else {
                    self.b.ins().uextend(t, v)
                })
            }
            ExprKind::Call { func, args } => self.call(*func, args, &e.ty, e.loc)?,
            ExprKind::CallExtern { func, args } => self.call_extern(*func, args, &e.ty)?,
            ExprKind::StructLit { id, fields } => {
                let addr = self.temp(&e.ty)?;
                let def = self.program.struct_def(*id).clone();
                for (field, value) in def.fields.iter().zip(fields) {
                    let v = self.expr(value)?;
                    let at = self.b.ins().iadd_imm_s(addr, field.offset as i64);
                    self.store(&field.ty, v, at);
                }
                Val::Mem(addr)
            }
            ExprKind::ArrayRepeat { value, count } => {
                let v = self.expr(value)?;
                let addr = self.temp(&e.ty)?;
                let zero = matches!(value.kind, ExprKind::Int(0) | ExprKind::Bool(false));
                self.fill(addr, &value.ty, v, *count, zero);
                Val::Mem(addr)
            }
            ExprKind::ArrayLit(items) => {
                let addr = self.temp(&e.ty)?;
                let elem = e.ty.element().cloned().unwrap_or(Type::Unit);
                let size = self.program.layout(&elem).size;
                for (i, item) in items.iter().enumerate() {
                    let v = self.expr(item)?;
                    let at = self.b.ins().iadd_imm_s(addr, (i as u64 * size) as i64);
                    self.store(&elem, v, at);
                }
                Val::Mem(addr)
            }
            ExprKind::Text { local, bytes } => {
                // A fresh copy in the literal's own frame array, viewed.
                let addr = match self.local_storage(*local)? {
                    Storage::Slot(s) => self.b.ins().stack_addr(PTR, s, 0),
                    Storage::Addr(a) => a,
                    _ => return Err(CodegenError::Unsupported("text in a variable".into())),
                };
                if !bytes.is_empty() {
                    let id = self.tr.string(self.module, bytes)?;
                    let src = self.data_addr(id);
                    let ty = &self.f.locals[local.0 as usize].ty;
                    self.copy(addr, src, ty);
                }
                let n = self.b.ins().iconst(types::I64, bytes.len() as i64);
                Val::Pair(addr, n)
            }
            ExprKind::Bytes(bytes) => {
                // Copied from the read-only bytes into a fresh temporary: the
                // value is an array the program may change.
                let addr = self.temp(&e.ty)?;
                if !bytes.is_empty() {
                    let id = self.tr.string(self.module, bytes)?;
                    let src = self.data_addr(id);
                    self.copy(addr, src, &e.ty);
                }
                Val::Mem(addr)
            }
            ExprKind::Len(x) => match &x.ty {
                Type::Array(_, n) => Val::Scalar(self.b.ins().iconst(types::I64, *n as i64)),
                _ => Val::Scalar(self.expr(x)?.pair().1),
            },
            ExprKind::Builtin(builtin, args) => self.builtin(builtin, args, e)?,
        })
    }

    /// Lowers a condition straight into a branch to `then_b` or `else_b`:
    /// `!`, `&&` and `||` become control flow, not booleans materialised
    /// and tested again, so a comparison feeds its branch directly.
    /// Evaluation order and short-circuiting are those of [`Self::expr`].
    pub(super) fn branch(&mut self, cond: &Expr, then_b: ir::Block, else_b: ir::Block) -> R<()> {
        match &cond.kind {
            ExprKind::Bool(b) => {
                self.b.ins().jump(if *b { then_b } else { else_b }, &[]);
            }
            ExprKind::Unary(UnOp::Not, x) if x.ty == Type::Bool => {
                self.branch(x, else_b, then_b)?
            }
            ExprKind::Binary(op @ (BinOp::And | BinOp::Or), l, r) => {
                let rhs = self.b.create_block();
                if *op == BinOp::And {
                    self.branch(l, rhs, else_b)?;
                } else {
                    self.branch(l, then_b, rhs)?;
                }
                self.b.switch_to_block(rhs);
                self.branch(r, then_b, else_b)?;
            }
            _ => {
                let c = self.expr(cond)?.scalar();
                self.b.ins().brif(c, then_b, &[], else_b, &[]);
            }
        }
        Ok(())
    }

    /// Stores `v` into `count` consecutive elements at `addr` (`zero`: `v`
    /// is the literal zero of a scalar type).
    pub(super) fn fill(&mut self, addr: Value, elem: &Type, v: Val, count: u64, zero: bool) {
        let size = self.program.layout(elem).size;
        // An element of no bytes stores nothing, however many there are
        // (`[E {}; 2^63 - 1]`: one store each was a compiler that never
        // finished).
        if size == 0 {
            return;
        }
        if count <= 8 {
            for i in 0..count {
                let at = self.b.ins().iadd_imm_s(addr, (i * size) as i64);
                self.store(elem, v, at);
            }
            return;
        }
        // Bytes, and zeros of any scalar, as one `memset` (libc's, which
        // stores whole vectors), not a loop of element stores.
        if let (Val::Scalar(x), true) = (v, size == 1 || zero) {
            let byte = if zero {
                self.b.ins().iconst(types::I8, 0)
            } else {
                x
            };
            let bytes = self.b.ins().iconst(PTR, (count * size) as i64);
            self.b.call_memset(self.tr.config, addr, byte, bytes);
            return;
        }
        let end = self.b.ins().iadd_imm_s(addr, (count * size) as i64);
        let header = self.b.create_block();
        let p = self.b.append_block_param(header, PTR);
        let body = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[BlockArg::Value(addr)]);
        self.b.switch_to_block(header);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, p, end);
        self.b.ins().brif(more, body, &[], exit, &[]);
        self.b.switch_to_block(body);
        self.store(elem, v, p);
        let next = self.b.ins().iadd_imm_s(p, size as i64);
        self.b.ins().jump(header, &[BlockArg::Value(next)]);
        self.b.switch_to_block(exit);
    }

    pub(super) fn binop(&mut self, op: BinOp, ty: &Type, l: Value, r: Value, loc: Loc) -> R<Value> {
        let signed = is_signed(ty);
        Ok(match op {
            BinOp::Add => self.b.ins().iadd(l, r),
            BinOp::Sub => self.b.ins().isub(l, r),
            BinOp::Mul => self.b.ins().imul(l, r),
            BinOp::Div | BinOp::Rem
                if signed && self.positive_constant(r) && self.non_negative(l) =>
            {
                // `x >= 0` and a constant `c > 0`: the signed quotient and
                // remainder are the unsigned ones, and neither check can
                // fail. Cranelift turns an unsigned division by a constant
                // into a shift, a mask or a multiply, with none of the sign
                // fix-ups a signed one needs (`r % 32` of a masked random
                // number: `and $31` instead of five instructions).
                if op == BinOp::Div {
                    self.b.ins().udiv(l, r)
                } else {
                    self.b.ins().urem(l, r)
                }
            }
            BinOp::Div | BinOp::Rem => {
                let nonzero = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
                self.check(nonzero, Rt::DivZero, |s| Ok(vec![s.loc_ptr(loc)?]))?;
                if signed {
                    // `sdiv` traps on MIN / -1: divide by 1 instead and
                    // patch the quotient to the wrapped result (-MIN = MIN);
                    // any x % -1 is 0, which x % 1 also gives.
                    let t = self.b.func.dfg.value_type(r);
                    let minus_one = self.b.ins().icmp_imm_s(IntCC::Equal, r, -1);
                    let one = self.b.ins().iconst(t, 1);
                    let safe = self.b.ins().select(minus_one, one, r);
                    if op == BinOp::Div {
                        let q = self.b.ins().sdiv(l, safe);
                        let neg = self.b.ins().ineg(l);
                        self.b.ins().select(minus_one, neg, q)
                    } else {
                        self.b.ins().srem(l, safe)
                    }
                } else if op == BinOp::Div {
                    self.b.ins().udiv(l, r)
                } else {
                    self.b.ins().urem(l, r)
                }
            }
            BinOp::BitAnd => self.b.ins().band(l, r),
            BinOp::BitOr => self.b.ins().bor(l, r),
            BinOp::BitXor => self.b.ins().bxor(l, r),
            BinOp::Shl | BinOp::Shr => {
                let amount = self.b.ins().band_imm_s(r, i64::from(bits(ty) - 1));
                match (op, signed) {
                    (BinOp::Shl, _) => self.b.ins().ishl(l, amount),
                    (_, true) => self.b.ins().sshr(l, amount),
                    (_, false) => self.b.ins().ushr(l, amount),
                }
            }
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
                let cc = match (op, signed) {
                    (BinOp::Eq, _) => IntCC::Equal,
                    (BinOp::Ne, _) => IntCC::NotEqual,
                    (BinOp::Lt, true) => IntCC::SignedLessThan,
                    (BinOp::Le, true) => IntCC::SignedLessThanOrEqual,
                    (BinOp::Gt, true) => IntCC::SignedGreaterThan,
                    (BinOp::Ge, true) => IntCC::SignedGreaterThanOrEqual,
                    (BinOp::Lt, false) => IntCC::UnsignedLessThan,
                    (BinOp::Le, false) => IntCC::UnsignedLessThanOrEqual,
                    (BinOp::Gt, false) => IntCC::UnsignedGreaterThan,
                    (BinOp::Ge, false) => IntCC::UnsignedGreaterThanOrEqual,
                    _ => unreachable!("comparison operators only"),
                };
                self.b.ins().icmp(cc, l, r)
            }
            BinOp::And => self.b.ins().band(l, r),
            BinOp::Or => self.b.ins().bor(l, r),
        })
    }

    /// Lowers one argument into `out`: value arguments by representation
    /// (aggregates as the address of a fresh copy, unless `shared`: then the
    /// place's own address), `ref` as an address.
    pub(super) fn push_arg(&mut self, arg: &Arg, shared: bool, out: &mut Vec<Value>) -> R<()> {
        match arg {
            Arg::Ref(place) => {
                // `ref` of a slice-typed place passes the address of the
                // place (the `(ptr, len)` pair itself), like any other type.
                let addr = self.place_addr(place)?;
                out.push(addr);
            }
            Arg::Value(e) => match self.expr(e)? {
                Val::Unit => {}
                Val::Scalar(v) => out.push(v),
                Val::Pair(p, l) => {
                    out.push(p);
                    out.push(l);
                }
                Val::Mem(a) => {
                    // Rvalues are already fresh temporaries; places are
                    // copied so the callee sees the value at the call even
                    // if it also mutates the original through a `ref`.
                    if !e.is_fresh_aggregate() && !shared {
                        let t = self.temp(&e.ty)?;
                        self.copy(t, a, &e.ty);
                        out.push(t);
                    } else {
                        out.push(a);
                    }
                }
            },
        }
        Ok(())
    }

    pub(super) fn call(&mut self, func: tir::FuncId, args: &[Arg], ret: &Type, loc: Loc) -> R<Val> {
        let mut vals = Vec::new();
        let sret = if repr(ret) == Repr::Mem {
            let t = self.temp(ret)?;
            vals.push(t);
            Some(t)
        } else {
            None
        };
        // An argument's checks make their own location the current one
        // (`loc_ptr`); the call is made from the call's.
        let outer = self.here;
        let blockers = Blockers::of(args);
        for (i, arg) in args.iter().enumerate() {
            let shared = self
                .tr
                .sharing
                .shares_arg(self.program, (func, args, blockers), i);
            self.push_arg(arg, shared, &mut vals)?;
        }
        self.here = outer;
        // `--sanitize`: a call into another source file (a library) records
        // its location, which errors found inside the library name.
        if self.opts.sanitize && self.program.call_records_site(self.f, func) {
            let at = self.loc_ptr(loc)?;
            self.call_rt(Rt::SanitizeSite, &[at])?;
        }
        let id = self.tr.funcs[func.0 as usize];
        let f = self.func_ref(id);
        let call = self.b.ins().call(f, &vals);
        self.tag_call(call);
        if self.tr.divergence.never_returns(func) {
            // A call that never returns ends its block as a `panic` does:
            // the block is cold (laid out after the hot path, which then
            // joins nothing), and nothing follows the call.
            self.cold_unless_entry();
            self.b.ins().trap(TrapCode::unwrap_user(2));
            self.after_terminator();
            // The value dead code sees: the call's own return slot, if it
            // has one, rather than another slot in the frame.
            return match sret {
                Some(t) => Ok(Val::Mem(t)),
                None => self.dummy(ret),
            };
        }
        let results = self.b.inst_results(call).to_vec();
        if self.opts.inlining != Inlining::Off {
            // End the block here: Cranelift's inliner splits the block after
            // a call it inlines, moving the rest of it, which would cost the
            // square of the block's length in a block of many calls
            // (docs/backend.md, "Compile-time budgets"). The jump to the
            // next block costs nothing in the machine code.
            let next = self.b.create_block();
            self.b.ins().jump(next, &[]);
            self.b.switch_to_block(next);
        }
        Ok(match (repr(ret), sret) {
            (_, Some(t)) => Val::Mem(t),
            (Repr::Scalar(_), _) => Val::Scalar(results[0]),
            (Repr::Pair, _) => Val::Pair(results[0], results[1]),
            _ => Val::Unit,
        })
    }

    pub(super) fn call_extern(&mut self, func: tir::ExternId, args: &[Arg], ret: &Type) -> R<Val> {
        let mut vals = Vec::new();
        for arg in args {
            // A slice crosses as (pointer, length); under `--sanitize` its
            // span is checked and the C side gets the real address.
            if let Arg::Value(e) = arg
                && self.opts.sanitize
                && matches!(e.ty, Type::Slice(_))
            {
                let (p, l) = self.expr(e)?.pair();
                // The check reports at the argument; the call stays the call's.
                let outer = self.here;
                let p = self.sanitize_slice(&e.ty, p, l, e.loc)?;
                self.here = outer;
                vals.extend([p, l]);
                continue;
            }
            self.push_arg(arg, false, &mut vals)?;
        }
        let id = self.tr.externs[func.0 as usize];
        let f = self.func_ref(id);
        let call = self.b.ins().call(f, &vals);
        self.tag_call(call);
        Ok(match self.b.inst_results(call).first() {
            Some(&v) if repr(ret) != Repr::Unit => Val::Scalar(v),
            _ => Val::Unit,
        })
    }
}

impl<M: Module> FnLower<'_, '_, M> {
    /// The constant `v` is, sign-extended from its type's width: an `iconst`,
    /// or a sum, difference or product of constants (`2 * MAXLEN`, which the
    /// e-graph pass folds only later), wrapping as the program's would.
    fn constant_of(&self, v: Value) -> Option<i64> {
        let func = &*self.b.func;
        let v = func.dfg.resolve_aliases(v);
        if let Some(k) = crate::decided_branches::constant(func, v) {
            return Some(k);
        }
        let ir::InstructionData::Binary { opcode, args } =
            func.dfg.insts[func.dfg.value_def(v).inst()?]
        else {
            return None;
        };
        let (x, y) = (self.constant_of(args[0])?, self.constant_of(args[1])?);
        let k = match opcode {
            ir::Opcode::Iadd => x.wrapping_add(y),
            ir::Opcode::Isub => x.wrapping_sub(y),
            ir::Opcode::Imul => x.wrapping_mul(y),
            _ => return None,
        };
        let shift = 64 - func.dfg.value_type(v).bits().min(64);
        Some((k << shift) >> shift)
    }

    /// Whether `v` is a constant above zero.
    fn positive_constant(&self, v: Value) -> bool {
        self.constant_of(v).is_some_and(|c| c > 0)
    }

    /// Whether the signed integer `v` is known not to be negative: a
    /// constant that is not, `x & c` with such a constant `c` (its sign bit
    /// is clear, so the result's is), or an arithmetic shift right of such
    /// a value.
    fn non_negative(&self, v: Value) -> bool {
        let dfg = &self.b.func.dfg;
        let v = dfg.resolve_aliases(v);
        if self.constant_of(v).is_some_and(|c| c >= 0) {
            return true;
        }
        let Some(inst) = dfg.value_def(v).inst() else {
            return false;
        };
        match dfg.insts[inst] {
            ir::InstructionData::Binary {
                opcode: ir::Opcode::Band,
                args,
            } => args
                .iter()
                .any(|&a| self.constant_of(a).is_some_and(|c| c >= 0)),
            ir::InstructionData::Binary {
                opcode: ir::Opcode::Sshr,
                args,
            } => self.non_negative(args[0]),
            _ => false,
        }
    }
}

/// `(x, c)` when one side of a comparison is `x % c` with `c` a constant
/// power of two and the other the literal 0.
fn power_of_two_remainder<'e>(l: &'e Expr, r: &'e Expr) -> Option<(&'e Expr, i64)> {
    let (rem, zero) = match (&l.kind, &r.kind) {
        (ExprKind::Binary(BinOp::Rem, ..), _) => (l, r),
        _ => (r, l),
    };
    match (&rem.kind, &zero.kind) {
        (ExprKind::Binary(BinOp::Rem, x, c), ExprKind::Int(0)) => match c.kind {
            ExprKind::Int(c) if c > 0 && c.count_ones() == 1 => Some((x, c)),
            _ => None,
        },
        _ => None,
    }
}

//! The builtins (`print`, `len`, `append`, `reusable::*`, `unsafe::*`, ...):
//! one arm each, in the order of `tir::Builtin`.

use super::*;

impl<M: Module> FnLower<'_, '_, M> {
    /// One value of the print family: on stdout or (`err`) stderr, with a
    /// newline after it when `newline`.
    fn print_value(&mut self, arg: &Expr, v: Val, err: bool, newline: bool, loc: Loc) -> R<()> {
        // The runtime function for each kind of value and stream, with and
        // without the newline.
        let pick = |[print, write, eprint, ewrite]: [Rt; 4]| match (err, newline) {
            (false, true) => print,
            (false, false) => write,
            (true, true) => eprint,
            (true, false) => ewrite,
        };
        let text = pick([Rt::PrintStr, Rt::WriteStr, Rt::EprintStr, Rt::EwriteStr]);
        match (&arg.ty, v) {
            (Type::Str | Type::Slice(_) | Type::Reusable(_), Val::Pair(p, l)) => {
                let p = self.sanitize_slice(&arg.ty, p, l, loc)?;
                self.call_rt(text, &[p, l])?;
            }
            (Type::Array(_, n), Val::Mem(p)) => {
                let l = self.b.ins().iconst(types::I64, *n as i64);
                self.call_rt(text, &[p, l])?;
            }
            (Type::Bool, Val::Scalar(x)) => {
                let rt = pick([Rt::PrintBool, Rt::WriteBool, Rt::EprintBool, Rt::EwriteBool]);
                self.call_rt(rt, &[x])?;
            }
            (Type::U64, Val::Scalar(x)) => {
                let rt = pick([Rt::PrintU64, Rt::WriteU64, Rt::EprintU64, Rt::EwriteU64]);
                self.call_rt(rt, &[x])?;
            }
            (ty, Val::Scalar(x)) => {
                let wide = match ty {
                    Type::I32 => self.b.ins().sextend(types::I64, x),
                    Type::U8 => self.b.ins().uextend(types::I64, x),
                    _ => x,
                };
                let rt = pick([Rt::PrintI64, Rt::WriteI64, Rt::EprintI64, Rt::EwriteI64]);
                self.call_rt(rt, &[wide])?;
            }
            (ty, _) => {
                return Err(CodegenError::Unsupported(format!("print of {ty}")));
            }
        }
        Ok(())
    }

    pub(super) fn builtin(&mut self, builtin: &Builtin, args: &[Expr], e: &Expr) -> R<Val> {
        let loc = e.loc;
        match builtin {
            Builtin::Print | Builtin::Write | Builtin::Eprint | Builtin::Ewrite => {
                // `print(a, b, c)`: the values first, left to right; then
                // `write(a); write(" "); write(b); write(" "); print(c)`, and
                // the same on stderr.
                let err = matches!(builtin, Builtin::Eprint | Builtin::Ewrite);
                let line = matches!(builtin, Builtin::Print | Builtin::Eprint);
                let values = args.iter().map(|a| self.expr(a)).collect::<R<Vec<_>>>()?;
                for (i, (arg, v)) in args.iter().zip(values).enumerate() {
                    let last = i + 1 == args.len();
                    self.print_value(arg, v, err, line && last, loc)?;
                    if line && !last {
                        let (p, l) = self.str_val(" ")?.pair();
                        let rt = if err { Rt::EwriteStr } else { Rt::WriteStr };
                        self.call_rt(rt, &[p, l])?;
                    }
                }
                Ok(Val::Unit)
            }
            Builtin::Panic => {
                let (p, l) = self.expr(&args[0])?.pair();
                let (dp, dl) = match args.get(1) {
                    Some(detail) => {
                        let (dp, dl) = self.expr(detail)?.pair();
                        (self.sanitize_slice(&detail.ty, dp, dl, loc)?, dl)
                    }
                    None => {
                        let zero = self.b.ins().iconst(PTR, 0);
                        (zero, zero)
                    }
                };
                let at = self.loc_ptr(loc)?;
                self.cold_unless_entry();
                self.call_rt(Rt::Panic, &[p, l, dp, dl, at])?;
                self.b.ins().trap(TrapCode::unwrap_user(2));
                self.after_terminator();
                self.dummy(&e.ty)
            }
            Builtin::Assert => {
                let c = self.expr(&args[0])?.scalar();
                let msg = &args[1];
                self.check(c, Rt::AssertFail, |s| {
                    let (p, l) = s.expr(msg)?.pair();
                    Ok(vec![p, l, s.loc_ptr(loc)?])
                })?;
                Ok(Val::Unit)
            }
            // An empty slice owns no span (the runtime answers null): a
            // literal length 0 needs no call.
            Builtin::ReusableAlloc if matches!(args[0].kind, ExprKind::Int(0)) => {
                let null = self.b.ins().iconst(PTR, 0);
                Ok(Val::Pair(null, null))
            }
            Builtin::ReusableAlloc => {
                let n = self.expr(&args[0])?.scalar();
                let size = self.elem_size(&e.ty);
                let bytes = self.checked_bytes(n, size, "reusable::alloc", loc)?;
                let at = self.loc_ptr(loc)?;
                let mut p = self.call_rt(Rt::ReusableAlloc, &[bytes, at])?.expect("ptr");
                if self.opts.sanitize {
                    let region = self.b.ins().iconst(types::I64, SANITIZE_BUILTIN_REGION);
                    p = self
                        .call_rt(Rt::SanitizeTag, &[region, p, bytes])?
                        .expect("ptr");
                }
                Ok(Val::Pair(p, n))
            }
            Builtin::ReusableAppend => {
                let (p, len) = self.expr(&args[0])?.pair();
                let elem = args[1].ty.clone();
                let v = match self.expr(&args[1])? {
                    // An element read from a place (`r[0]`, a `ref`
                    // parameter) may lie in the span the resize moves and
                    // frees: copied to the frame first.
                    Val::Mem(a) if !args[1].is_fresh_aggregate() => {
                        let t = self.temp(&elem)?;
                        self.copy(t, a, &elem);
                        Val::Mem(t)
                    }
                    v => v,
                };
                let size = self.elem_size(&e.ty);
                // `len * size` fits: the slice's span holds it. `len + 1`
                // elements may not (and `len + 1` itself may wrap).
                let old = self.scaled(len, size);
                let new_len = self.b.ins().iadd_imm_s(len, 1);
                let new = self.checked_bytes(new_len, size, "reusable::append", loc)?;
                let (np, tagged) = self.reusable_resize(p, (old, new), size, true, loc)?;
                let slot = self.b.ins().iadd(np, old);
                self.store(&elem, v, slot);
                Ok(Val::Pair(tagged, new_len))
            }
            Builtin::ReusableResize => {
                let (p, len) = self.expr(&args[0])?.pair();
                let n = self.expr(&args[1])?.scalar();
                let size = self.elem_size(&e.ty);
                let old = self.scaled(len, size);
                let new = self.checked_bytes(n, size, "reusable::resize", loc)?;
                let (_, tagged) = self.reusable_resize(p, (old, new), size, false, loc)?;
                Ok(Val::Pair(tagged, n))
            }
            Builtin::ReusableFree => {
                let (p, len) = self.expr(&args[0])?.pair();
                let size = self.elem_size(&args[0].ty);
                let bytes = self.scaled(len, size);
                let at = self.loc_ptr(loc)?;
                if self.opts.sanitize {
                    let a = self
                        .call_rt(Rt::SanitizeCheck, &[p, bytes, at])?
                        .expect("address");
                    self.call_rt(Rt::ReusableFree, &[a, bytes, at])?;
                    let region = self.b.ins().iconst(types::I64, SANITIZE_BUILTIN_REGION);
                    let freed_at = self.freed_at(loc, at);
                    self.call_rt(Rt::SanitizeRelease, &[region, a, bytes, freed_at])?;
                } else {
                    self.call_rt(Rt::ReusableFree, &[p, bytes, at])?;
                }
                Ok(Val::Unit)
            }
            Builtin::ReusableOffset => {
                let (mut p, _) = self.expr(&args[0])?.pair();
                if self.opts.sanitize {
                    p = self.b.ins().band_imm_s(p, SANITIZE_ADDR_MASK);
                }
                let at = self.loc_ptr(loc)?;
                let off = self.call_rt(Rt::ReusableOffset, &[p, at])?.expect("offset");
                Ok(Val::Scalar(off))
            }
            Builtin::UnsafeSlice => {
                let p = self.expr(&args[0])?.scalar();
                let l = self.expr(&args[1])?.scalar();
                Ok(Val::Pair(p, l))
            }
            Builtin::UnsafeAddr => {
                let x = &args[0];
                Ok(Val::Scalar(match x.ty {
                    Type::Slice(_) | Type::Reusable(_) => self.expr(x)?.pair().0,
                    _ => self.place_addr(x)?,
                }))
            }
            Builtin::UnsafeCopy => {
                let mut dst = self.expr(&args[0])?.scalar();
                let mut src = self.expr(&args[1])?.scalar();
                let n = self.expr(&args[2])?.scalar();
                if self.opts.sanitize {
                    // Addresses of pool slices may carry a tag: copy from and
                    // to the memory itself (unchecked, like everything unsafe).
                    dst = self.b.ins().band_imm_s(dst, SANITIZE_ADDR_MASK);
                    src = self.b.ins().band_imm_s(src, SANITIZE_ADDR_MASK);
                }
                self.b.call_memmove(self.tr.config, dst, src, n);
                Ok(Val::Unit)
            }
        }
    }
}

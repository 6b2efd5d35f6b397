//! Places and memory arithmetic: the address of a local, field or element,
//! checked byte counts and index addresses, the builtin pool's resize, the
//! sanitizer's checks.

use super::memory::Region;
use super::*;

impl<M: Module> FnLower<'_, '_, M> {
    // ----- places -------------------------------------------------------

    /// The address of a place (or of a materialized rvalue).
    pub(super) fn place_addr(&mut self, e: &Expr) -> R<Value> {
        match &e.kind {
            ExprKind::Local(id) => match self.storage(*id)? {
                Storage::Slot(s) => Ok(self.b.ins().stack_addr(PTR, s, 0)),
                Storage::Addr(a) => Ok(a),
                // Not address-taken by the analysis (cannot happen for a
                // well-typed program): give a snapshot's address.
                Storage::Value(_) | Storage::Var(_) | Storage::VarPair(..) => {
                    let v = self.read_local(*id)?;
                    self.materialize(&e.ty, v)
                }
            },
            ExprKind::Field(base, index) => {
                let base_addr = self.place_addr(base)?;
                let Type::Struct(sid) = &base.ty else {
                    return Err(CodegenError::Unsupported("field of a non-struct".into()));
                };
                let offset = self.program.struct_def(*sid).fields[*index as usize].offset;
                Ok(self.b.ins().iadd_imm_s(base_addr, offset as i64))
            }
            ExprKind::Index(base, idx) => self.index_addr(base, idx, e.loc),
            _ => {
                let v = self.expr(e)?;
                self.materialize(&e.ty, v)
            }
        }
    }

    pub(super) fn materialize(&mut self, ty: &Type, v: Val) -> R<Value> {
        if let Val::Mem(a) = v {
            return Ok(a);
        }
        let t = self.temp(ty)?;
        self.store(ty, v, t);
        Ok(t)
    }

    /// `(ptr, len)` of a slice, reusable slice or array operand.
    pub(super) fn sequence(&mut self, base: &Expr) -> R<(Value, Value)> {
        match &base.ty {
            Type::Array(_, n) => {
                let ptr = self.place_addr(base)?;
                let len = self.b.ins().iconst(types::I64, *n as i64);
                Ok((ptr, len))
            }
            _ => Ok(self.expr(base)?.pair()),
        }
    }

    pub(super) fn elem_size(&self, seq: &Type) -> u64 {
        seq.element().map_or(0, |t| self.program.layout(t).size)
    }

    pub(super) fn scaled(&mut self, index: Value, size: u64) -> Value {
        if size == 1 {
            index
        } else {
            self.b.ins().imul_imm_s(index, size as i64)
        }
    }

    /// `n * size` as a byte count, after checking that it exists: `n` is
    /// non-negative and the product fits in 63 bits (one unsigned compare:
    /// a negative `n` is a huge unsigned value). Otherwise `tern_length_fail`
    /// names `op`. The product can then never wrap into a small size.
    pub(super) fn checked_bytes(&mut self, n: Value, size: u64, op: &str, loc: Loc) -> R<Value> {
        let limit = i64::MAX as u64 / size.max(1);
        let ok = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, n, limit as i64);
        self.check(ok, Rt::LengthFail, |s| {
            let op = s.c_str(op)?;
            let size = s.b.ins().iconst(types::I64, size as i64);
            Ok(vec![op, n, size, s.loc_ptr(loc)?])
        })?;
        Ok(self.scaled(n, size))
    }

    /// `tern_reusable_resize(p, old, new, loc)` (`_packed` when the element
    /// size `size` is not a multiple of 8: only then can a growth stay inside
    /// the span's last granule; `tern_reusable_append` for an `append`,
    /// which leaves the append window open); under `--sanitize` the slice is
    /// checked (and untagged) first and the result tagged after. Returns the
    /// untagged new address (where `append` stores) and the slice's pointer.
    pub(super) fn reusable_resize(
        &mut self,
        p: Value,
        (old, new): (Value, Value),
        size: u64,
        append: bool,
        loc: Loc,
    ) -> R<(Value, Value)> {
        let packed = !size.is_multiple_of(8);
        let resize = if packed {
            Rt::ReusableResizePacked
        } else {
            Rt::ReusableResize
        };
        if !self.opts.sanitize {
            let np = if append || packed {
                self.resize_inline(p, (old, new), size, append, loc)?
            } else {
                let at = self.loc_ptr(loc)?;
                self.call_rt(resize, &[p, old, new, at])?.expect("ptr")
            };
            return Ok((np, np));
        }
        let at = self.loc_ptr(loc)?;
        let a = self
            .call_rt(Rt::SanitizeCheck, &[p, old, at])?
            .expect("address");
        let np = self.call_rt(resize, &[a, old, new, at])?.expect("ptr");
        let region = self.b.ins().iconst(types::I64, SANITIZE_BUILTIN_REGION);
        let freed_at = self.freed_at(loc, at);
        let tagged = self
            .call_rt(Rt::SanitizeRetag, &[region, a, old, np, new, freed_at])?
            .expect("ptr");
        Ok((np, tagged))
    }

    /// A resize of a `reusable[]` slice with its common cases answered by
    /// generated code through the runtime's fast-path record
    /// (`tern_abi::reusable_fast`), and the call for the rest (no pool
    /// yet included: its record is empty):
    /// * for an `append` (`new = old + size`): the slice the append window
    ///   follows grows into the window's free span by moving the window's
    ///   end (`p == WIN_BASE`, `p + round8(old) == WIN_END`, `p +
    ///   round8(new) <= WIN_LIMIT`), with no zero fill: the element store
    ///   that follows writes every new byte, and the bytes of the last
    ///   granule past the new length are zeroed by whichever growth reaches
    ///   them later (as in the runtime);
    /// * for a slice whose element size is not a multiple of 8: a growth
    ///   inside the span's last 8-byte granule (a byte append, seven times
    ///   in eight) of a span the boundary record holds as one live
    ///   allocation is the record's check and the zero fill of the granule
    ///   past `old`, as the runtime does it (`SpanPool::grow_in_granule`).
    ///   Never for the window's slice, whose record is behind while the
    ///   window is open: that resize calls, and the call settles the
    ///   window first. The granule's word holds element bytes only: an
    ///   element whose size is not a multiple of 8 holds no slice header.
    fn resize_inline(
        &mut self,
        p: Value,
        (old, new): (Value, Value),
        size: u64,
        append: bool,
        loc: Loc,
    ) -> R<Value> {
        use tern_abi::reusable_fast as fast;
        let trusted = MemFlagsData::trusted();
        let packed = !size.is_multiple_of(8);
        let call = self.b.create_block();
        let cont = self.b.create_block();
        let out = self.b.append_block_param(cont, PTR);
        let rec = self.reusable_fast_addr()?;
        // The window's slice, tested first: one compare for every other
        // slice, whose appends go on to the granule test or the call.
        let win_base = self.b.ins().load(PTR, trusted, rec, fast::WIN_BASE);
        let mine = self.b.ins().icmp(IntCC::Equal, p, win_base);
        let (window, other) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(mine, window, &[], other, &[]);
        self.b.switch_to_block(window);
        if append {
            let (r_old, r_new) = if packed {
                (self.round8(old), self.round8(new))
            } else {
                (old, new)
            };
            let end = self.b.ins().load(PTR, trusted, rec, fast::WIN_END);
            let limit = self.b.ins().load(PTR, trusted, rec, fast::WIN_LIMIT);
            let old_end = self.b.ins().iadd(p, r_old);
            let new_end = self.b.ins().iadd(p, r_new);
            let ends = self.b.ins().icmp(IntCC::Equal, old_end, end);
            let fits = self
                .b
                .ins()
                .icmp(IntCC::UnsignedLessThanOrEqual, new_end, limit);
            let hit = self.b.ins().band(ends, fits);
            let grow = self.b.create_block();
            self.b.ins().brif(hit, grow, &[], call, &[]);
            self.b.switch_to_block(grow);
            self.b.ins().store(trusted, new_end, rec, fast::WIN_END);
            self.b.ins().jump(cont, &[BlockArg::Value(p)]);
        } else {
            self.b.ins().jump(call, &[]);
        }
        self.b.switch_to_block(other);
        if packed {
            self.granule_growth(p, (old, new), rec, (call, cont))?;
        } else {
            self.b.ins().jump(call, &[]);
        }
        self.b.switch_to_block(call);
        let at = self.loc_ptr(loc)?;
        let rt = if append {
            Rt::ReusableAppend
        } else {
            Rt::ReusableResizePacked
        };
        let np = self.call_rt(rt, &[p, old, new, at])?.expect("ptr");
        self.b.ins().jump(cont, &[BlockArg::Value(np)]);
        self.b.switch_to_block(cont);
        Ok(out)
    }

    /// `(n + 7) & !7`.
    fn round8(&mut self, n: Value) -> Value {
        let n7 = self.b.ins().iadd_imm_s(n, 7);
        self.b.ins().band_imm_s(n7, !7)
    }

    /// [`Self::resize_inline`]'s second case, from the current block (`p`
    /// is not the append window's slice): the growth inside the last
    /// granule answered (jumping to `cont` with `p`) or the resize sent to
    /// `call`.
    fn granule_growth(
        &mut self,
        p: Value,
        (old, new): (Value, Value),
        rec: Value,
        (call, cont): (ir::Block, ir::Block),
    ) -> R<()> {
        use tern_abi::reusable_fast as fast;
        let trusted = MemFlagsData::trusted();
        // `(old - 1) / 8 == (new - 1) / 8` with `new > old` (so `old >= 1`).
        let o1 = self.b.ins().iadd_imm_s(old, -1);
        let n1 = self.b.ins().iadd_imm_s(new, -1);
        let x = self.b.ins().bxor(o1, n1);
        let same = self
            .b
            .ins()
            .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, x, 7);
        let grows = self.b.ins().icmp(IntCC::SignedGreaterThan, new, old);
        let in_granule = self.b.ins().band(same, grows);
        let arena = self.b.create_block();
        self.b.ins().brif(in_granule, arena, &[], call, &[]);
        // The span starts at a granule of the arena.
        self.b.switch_to_block(arena);
        let base = self.b.ins().load(PTR, trusted, rec, fast::BASE);
        let bytes = self
            .b
            .ins()
            .load(types::I64, trusted, rec, fast::ARENA_BYTES);
        let off = self.b.ins().isub(p, base);
        let inside = self.b.ins().icmp(IntCC::UnsignedLessThan, off, bytes);
        let low = self.b.ins().band_imm_s(off, 7);
        let aligned = self.b.ins().icmp_imm_s(IntCC::Equal, low, 0);
        let ok = self.b.ins().band(inside, aligned);
        let record = self.b.create_block();
        self.b.ins().brif(ok, record, &[], call, &[]);
        // The record holds `[off, off + 8 g)` as one live allocation.
        self.b.switch_to_block(record);
        let s = self.b.ins().ushr_imm_u(off, 3);
        let old7 = self.b.ins().iadd_imm_s(old, 7);
        let g = self.b.ins().ushr_imm_u(old7, 3);
        let short =
            self.b
                .ins()
                .icmp_imm_u(IntCC::UnsignedLessThanOrEqual, g, fast::SMALL_GRANULES);
        let (small, large, hit) = (
            self.b.create_block(),
            self.b.create_block(),
            self.b.create_block(),
        );
        self.b.ins().brif(short, small, &[], large, &[]);
        self.b.switch_to_block(small);
        let sizes = self.b.ins().load(PTR, trusted, rec, fast::SIZES);
        let at = self.b.ins().iadd(sizes, s);
        let n = self.b.ins().uload8(types::I64, trusted, at, 0);
        let live = self.b.ins().icmp(IntCC::Equal, n, g);
        self.b.ins().brif(live, hit, &[], call, &[]);
        self.b.switch_to_block(large);
        let table = self.b.ins().load(PTR, trusted, rec, fast::LARGE);
        let shift = i64::from(fast::SMALL_GRANULES.trailing_zeros());
        let block = self.b.ins().ushr_imm_u(s, shift);
        let word = self.b.ins().ishl_imm_u(block, 3);
        let at = self.b.ins().iadd(table, word);
        let w = self.b.ins().load(types::I64, trusted, at, 0);
        let gs = self.b.ins().ishl_imm_u(g, shift);
        let sb = self.b.ins().band_imm_s(s, fast::SMALL_GRANULES - 1);
        let want = self.b.ins().bor(gs, sb);
        let live = self.b.ins().icmp(IntCC::Equal, w, want);
        self.b.ins().brif(live, hit, &[], call, &[]);
        // Zero the granule's bytes past `old` (`old % 8` is 1..=7 here);
        // the store of the appended element follows.
        self.b.switch_to_block(hit);
        let k = self.b.ins().band_imm_s(old, 7);
        let shift = self.b.ins().ishl_imm_u(k, 3);
        let one = self.b.ins().iconst(types::I64, 1);
        let bit = self.b.ins().ishl(one, shift);
        let keep = self.b.ins().iadd_imm_s(bit, -1);
        let span = self.b.ins().ishl_imm_u(g, 3);
        let end = self.b.ins().iadd(p, span);
        let flags = self.mem_flags(Region::Data);
        let word = self.b.ins().load(types::I64, flags, end, -8);
        let kept = self.b.ins().band(word, keep);
        self.b.ins().store(flags, kept, end, -8);
        self.b.ins().jump(cont, &[BlockArg::Value(p)]);
        Ok(())
    }

    pub(super) fn index_addr(&mut self, base: &Expr, idx: &Expr, loc: Loc) -> R<Value> {
        let (ptr, len) = self.sequence(base)?;
        // An array's element lies where the array does, whatever the index
        // expression addressed on the way (`pool_tag`).
        let outer_tag = self.pool_tag;
        let i = self.expr(idx)?.scalar();
        self.pool_tag = outer_tag;
        let length = match base.ty {
            Type::Array(_, n) => Length::Const(n),
            _ => Length::Value(len),
        };
        let constant_in_array = matches!(
            (&idx.kind, length),
            (ExprKind::Int(c), Length::Const(n)) if *c >= 0 && (*c as u64) < n
        );
        let repeated =
            self.b.current_block() == self.checked_in && self.checked.contains(&(i, length));
        if !(constant_in_array || repeated || self.index_proven(base, idx)) {
            if self.b.current_block() != self.checked_in {
                self.checked.clear();
                self.checked_in = self.b.current_block();
            }
            let ok = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
            self.check(ok, Rt::BoundsFail, |s| Ok(vec![i, len, s.loc_ptr(loc)?]))?;
            self.checked.push((i, length));
        }
        let size = self.elem_size(&base.ty);
        let off = self.scaled(i, size);
        let addr = self.b.ins().iadd(ptr, off);
        if self.opts.sanitize && matches!(base.ty, Type::Slice(_) | Type::Reusable(_)) {
            self.pool_tag = Some(self.b.ins().band_imm_s(ptr, !SANITIZE_ADDR_MASK));
            // A zero-size element reads nothing: 0 bytes are not checked
            // (one byte would lie past an array at an allocation's end).
            let bytes = self.b.ins().iconst(types::I64, size as i64);
            return self.sanitize_check(addr, bytes, loc);
        }
        Ok(addr)
    }

    /// `--sanitize`: a pointer with a tag (bits 48..62) is checked by the
    /// runtime for `bytes` and comes back untagged; an untagged one passes
    /// as is (one shift and branch).
    pub(super) fn sanitize_check(&mut self, addr: Value, bytes: Value, loc: Loc) -> R<Value> {
        let tag = self.b.ins().ushr_imm_u(addr, i64::from(SANITIZE_TAG_SHIFT));
        let tagged = self.b.ins().icmp_imm_u(IntCC::NotEqual, tag, 0);
        let check = self.b.create_block();
        let cont = self.b.create_block();
        let out = self.b.append_block_param(cont, PTR);
        self.b
            .ins()
            .brif(tagged, check, &[], cont, &[BlockArg::Value(addr)]);
        self.b.switch_to_block(check);
        let at = self.loc_ptr(loc)?;
        let untagged = self
            .call_rt(Rt::SanitizeCheck, &[addr, bytes, at])?
            .expect("address");
        self.b.ins().jump(cont, &[BlockArg::Value(untagged)]);
        self.b.switch_to_block(cont);
        Ok(out)
    }

    /// `--sanitize`: `(ptr, len)` of a slice handed to the runtime (`print`,
    /// `panic`'s detail): checked and untagged.
    pub(super) fn sanitize_slice(&mut self, ty: &Type, p: Value, l: Value, loc: Loc) -> R<Value> {
        if !self.opts.sanitize || !matches!(ty, Type::Slice(_) | Type::Reusable(_)) {
            return Ok(p);
        }
        let size = self.elem_size(ty);
        let bytes = self.scaled(l, size);
        self.sanitize_check(p, bytes, loc)
    }
}

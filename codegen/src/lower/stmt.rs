//! Statements: blocks, `let`, assignment, `if`, loops (with the O2 facts
//! that drop bounds checks inside counted loops), `return`.

use super::*;

/// Longest `else if` chain lowered as nested `if`s, and most arms of a
/// longer one joined by one merge block ([`FnLower::if_arms`]).
const IF_FAN_IN: usize = 16;

impl<M: Module> FnLower<'_, '_, M> {
    // ----- statements ---------------------------------------------------

    pub(super) fn block(&mut self, block: &tir::Block) -> R<()> {
        for stmt in &block.stmts {
            self.stmt(stmt)?;
        }
        for stmt in &block.stmts {
            if let Stmt::Let { local, .. } = stmt {
                self.end_scope(*local);
            }
        }
        Ok(())
    }

    /// The arms of an `else if` chain longer than [`IF_FAN_IN`]: each taken
    /// arm ends by jumping to `merge`, and the builder is left in the block
    /// reached when no condition held (the final `else`).
    ///
    /// Arms join in a tree of fan-in `IF_FAN_IN`, not one join per arm nor
    /// one for all. Nested joins (each `else if` an `if` of its own, as
    /// short chains are lowered) are a chain of blocks that only jump to the
    /// next, which Cranelift's code buffer resolves label by label, and one
    /// join of N predecessors deep in the dominator tree costs regalloc2's
    /// dominator computation the sum of their depths: either grows with the
    /// square of the arms (docs/backend.md, "Compile-time budgets"). Up to
    /// `IF_FAN_IN` arms share one merge block; a longer chain is split into
    /// `IF_FAN_IN` parts, each lowered the same way into a block that only
    /// jumps on.
    fn if_arms(&mut self, arms: &[(&Expr, &tir::Block)], merge: ir::Block) -> R<()> {
        if arms.len() <= IF_FAN_IN {
            for (cond, then) in arms {
                self.if_arm(cond, then, merge)?;
            }
            return Ok(());
        }
        for part in arms.chunks(arms.len().div_ceil(IF_FAN_IN)) {
            let part_merge = self.b.create_block();
            self.if_arms(part, part_merge)?;
            // The part's final `else` (still empty) goes on with the next
            // part's first test.
            let rest = self.b.current_block().expect("inside a function");
            self.b.switch_to_block(part_merge);
            self.b.ins().jump(merge, &[]);
            self.b.switch_to_block(rest);
        }
        Ok(())
    }

    /// One arm: `then` when `cond` holds, then on to `merge`; the builder
    /// is left in the (empty) block reached when it does not.
    fn if_arm(&mut self, cond: &Expr, then: &tir::Block, merge: ir::Block) -> R<()> {
        let then_b = self.b.create_block();
        let else_b = self.b.create_block();
        self.branch(cond, then_b, else_b)?;
        self.b.switch_to_block(then_b);
        self.block(then)?;
        self.b.ins().jump(merge, &[]);
        self.b.switch_to_block(else_b);
        Ok(())
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt) -> R<()> {
        match stmt {
            Stmt::Let { local, init } => {
                let v = self.expr(init)?;
                // A fresh aggregate (call result, literal) already sits in a
                // temporary of its own: the local adopts it instead of
                // copying, as the frame plan says. The temporary belongs to
                // this `let` alone; when the `let` runs again (a loop) the
                // previous binding is dead.
                if let Val::Mem(addr) = v
                    && self.locals[local.0 as usize].is_none()
                    && matches!(self.frame.homes[local.0 as usize], Home::Adopted(_))
                {
                    self.locals[local.0 as usize] = Some(Storage::Addr(addr));
                } else {
                    self.init_local(*local, v)?;
                }
            }
            Stmt::Assign { place, value } => {
                let v = self.expr(value)?;
                self.assign(place, v)?;
            }
            Stmt::CompoundAssign { place, op, value } => {
                let rhs = self.expr(value)?.scalar();
                if let ExprKind::Local(id) = place.kind
                    && let Storage::Var(var) = self.storage(id)?
                {
                    let old = self.b.use_var(var);
                    let new = self.binop(*op, &place.ty, old, rhs, place.loc)?;
                    self.b.def_var(var, new);
                } else {
                    let addr = self.place_addr(place)?;
                    let old = self.load(&place.ty, addr).scalar();
                    let new = self.binop(*op, &place.ty, old, rhs, place.loc)?;
                    self.store(&place.ty, Val::Scalar(new), addr);
                }
            }
            Stmt::Expr(e) => {
                self.expr(e)?;
            }
            Stmt::If { cond, then, else_ } => {
                let Some(chain) = stmt.if_arms() else {
                    unreachable!("an `If` has arms")
                };
                let merge = self.b.create_block();
                if chain.arms.len() <= IF_FAN_IN {
                    // Short chains nest, one join per `if` (the `else if`
                    // is a statement of the `else` block): the code every
                    // measured program was compiled to.
                    self.if_arm(cond, then, merge)?;
                    if let Some(e) = else_ {
                        self.block(e)?;
                    }
                } else {
                    self.if_arms(&chain.arms, merge)?;
                    if let Some(e) = chain.last {
                        self.block(e)?;
                    }
                }
                self.b.ins().jump(merge, &[]);
                self.b.switch_to_block(merge);
            }
            Stmt::While { cond, body } => {
                // Rotated: the test once as a guard, then at the bottom of
                // the body (the latch, where `continue` goes), so an
                // iteration takes one branch instead of a test and a jump.
                let body_b = self.b.create_block();
                let latch = self.b.create_block();
                let exit = self.b.create_block();
                self.branch(cond, body_b, exit)?;
                self.b.switch_to_block(body_b);
                self.loops.push(LoopTarget {
                    continue_to: latch,
                    break_to: exit,
                });
                self.block(body)?;
                self.loops.pop();
                self.b.ins().jump(latch, &[]);
                self.b.switch_to_block(latch);
                self.poll_interrupt(cond.loc)?;
                self.branch(cond, body_b, exit)?;
                self.b.switch_to_block(exit);
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => self.for_loop(*var, start, end, body)?,
            Stmt::ForEach {
                index,
                var,
                seq,
                body,
            } => self.for_each(*index, *var, seq, body)?,
            Stmt::Block(b) => self.block(b)?,
            Stmt::Break | Stmt::Continue => {
                let target = self.loops.last().ok_or_else(|| {
                    CodegenError::Unsupported("`break`/`continue` outside a loop".into())
                })?;
                let to = if matches!(stmt, Stmt::Break) {
                    target.break_to
                } else {
                    target.continue_to
                };
                self.b.ins().jump(to, &[]);
                self.after_terminator();
            }
            Stmt::Return(value) => {
                let v = match value {
                    Some(e) => self.expr(e)?,
                    None => Val::Unit,
                };
                match v {
                    Val::Unit => {
                        self.b.ins().return_(&[]);
                    }
                    Val::Scalar(x) => {
                        self.b.ins().return_(&[x]);
                    }
                    Val::Pair(p, l) => {
                        self.b.ins().return_(&[p, l]);
                    }
                    Val::Mem(src) => {
                        let dst = self.sret.ok_or_else(|| {
                            CodegenError::Unsupported("aggregate return without a slot".into())
                        })?;
                        self.copy(dst, src, &self.f.ret);
                        self.b.ins().return_(&[]);
                    }
                }
                self.after_terminator();
            }
        }
        Ok(())
    }

    pub(super) fn for_loop(
        &mut self,
        var: LocalId,
        start: &Expr,
        end: &Expr,
        body: &tir::Block,
    ) -> R<()> {
        let s = self.expr(start)?.scalar();
        let e = self.expr(end)?.scalar();
        if let Some(idiom) = self.loop_idiom(var, start, body) {
            return self.idiom_loop(var, (start, end), (s, e), body, idiom);
        }
        self.counted_loop(var, (start, end), (s, e), body)
    }

    /// The loop of `for var in start..end`, `s` and `e` the bounds'
    /// values (evaluated once, before it).
    fn counted_loop(
        &mut self,
        var: LocalId,
        (start, end): (&Expr, &Expr),
        (s, e): (Value, Value),
        body: &tir::Block,
    ) -> R<()> {
        let ty = start.ty.clone();
        let cc = if is_signed(&ty) {
            IntCC::SignedLessThan
        } else {
            IntCC::UnsignedLessThan
        };
        // The loop variable is rebound every iteration: variables, not a value.
        let storage = self.local_storage(var)?;
        self.write_storage(storage, &ty, Val::Scalar(s));
        // Rotated as `while` is: a guard, then the test after the step.
        let body_b = self.b.create_block();
        let step = self.b.create_block();
        let exit = self.b.create_block();
        let c = self.b.ins().icmp(cc, s, e);
        self.b.ins().brif(c, body_b, &[], exit, &[]);
        self.b.switch_to_block(body_b);
        self.loops.push(LoopTarget {
            continue_to: step,
            break_to: exit,
        });
        let fact = self.loop_fact(start, end);
        if let Some(bound) = fact {
            self.proven.push((var, bound));
        }
        self.block(body)?;
        if fact.is_some() {
            self.proven.pop();
        }
        self.loops.pop();
        self.b.ins().jump(step, &[]);
        self.b.switch_to_block(step);
        let i = self.read_local(var)?.scalar();
        let next = self.b.ins().iadd_imm_s(i, 1);
        let storage = self.storage(var)?;
        self.write_storage(storage, &ty, Val::Scalar(next));
        self.poll_interrupt(start.loc)?;
        let c = self.b.ins().icmp(cc, next, e);
        self.b.ins().brif(c, body_b, &[], exit, &[]);
        self.b.switch_to_block(exit);
        self.end_scope(var);
        Ok(())
    }

    /// The copy or fill a counted loop is, if its body is one
    /// `x[i] = y[i]` or `x[i] = c` with `x` and `y` locals (read once: the
    /// body changes only their elements; a `ref` parameter's header only
    /// when the elements hold no headers), `i` the loop's `i64` variable and
    /// `c` a literal that is a byte pattern (any literal of a one-byte
    /// element, zero of any scalar); at -O2, without `--sanitize` (whose
    /// checks are per element).
    fn loop_idiom<'b>(
        &self,
        var: LocalId,
        start: &Expr,
        body: &'b tir::Block,
    ) -> Option<LoopIdiom<'b>> {
        if self.opts.opt_level < OptLevel::O2 || self.opts.sanitize || start.ty != Type::I64 {
            return None;
        }
        let [Stmt::Assign { place, value }] = body.stmts.as_slice() else {
            return None;
        };
        let ExprKind::Index(dst, di) = &place.kind else {
            return None;
        };
        let is_var = |e: &Expr| matches!(e.kind, ExprKind::Local(v) if v == var);
        let is_other_local = |e: &Expr| matches!(e.kind, ExprKind::Local(v) if v != var);
        if !is_var(di) || !is_other_local(dst) {
            return None;
        }
        // A `ref` parameter's header lives in the caller's memory, which
        // stores of elements that hold headers may reach (`x: ref []S`
        // stored in one of the `S` the loop writes): read once, the loop
        // would go on with the header the program replaced.
        let is_ref = |e: &Expr| {
            matches!(e.kind, ExprKind::Local(v)
                if self.f.params.iter().any(|p| p.by_ref && p.local == v))
        };
        let writes_headers = match &dst.ty {
            Type::Slice(e) | Type::Reusable(e) | Type::Array(e, _) => {
                tern_compiler::tir::arg_sharing::holds_pointers(self.program, e)
            }
            _ => true,
        };
        let one_byte = self.elem_size(&dst.ty) == 1;
        match &value.kind {
            ExprKind::Index(src, si)
                if is_var(si)
                    && is_other_local(src)
                    && !(writes_headers && (is_ref(dst) || is_ref(src))) =>
            {
                Some(LoopIdiom::Copy { dst, src })
            }
            ExprKind::Int(v) if *v == 0 || one_byte => Some(LoopIdiom::Fill {
                dst,
                byte: *v as u8,
            }),
            ExprKind::Bool(v) if one_byte => Some(LoopIdiom::Fill {
                dst,
                byte: u8::from(*v),
            }),
            _ => None,
        }
    }

    /// A copy or fill loop (`loop_idiom`) as one `memmove` or `memset` of
    /// the elements `s..e` when `0 <= s <= e` and `e` is within the
    /// lengths, and, for a copy, the loop would never read an element it
    /// already wrote (destination at or below the source, or no overlap:
    /// then a forward copy and `memmove` agree); otherwise the loop
    /// itself, so a failing index fails where it would.
    fn idiom_loop(
        &mut self,
        var: LocalId,
        bounds: (&Expr, &Expr),
        (s, e): (Value, Value),
        body: &tir::Block,
        idiom: LoopIdiom<'_>,
    ) -> R<()> {
        let dst = match idiom {
            LoopIdiom::Copy { dst, .. } | LoopIdiom::Fill { dst, .. } => dst,
        };
        let (dp, dl) = self.sequence(dst)?;
        let src = match idiom {
            LoopIdiom::Copy { src, .. } => Some(self.sequence(src)?),
            LoopIdiom::Fill { .. } => None,
        };
        let size = self.elem_size(&dst.ty) as i64;
        let in_bounds_b = self.b.create_block();
        let slow = self.b.create_block();
        let exit = self.b.create_block();
        let from_zero = self
            .b
            .ins()
            .icmp_imm_s(IntCC::SignedGreaterThanOrEqual, s, 0);
        let ordered = self.b.ins().icmp(IntCC::SignedLessThanOrEqual, s, e);
        let mut in_bounds = self.b.ins().band(from_zero, ordered);
        for len in [Some(dl), src.map(|(_, sl)| sl)].into_iter().flatten() {
            let within = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, e, len);
            in_bounds = self.b.ins().band(in_bounds, within);
        }
        self.b.ins().brif(in_bounds, in_bounds_b, &[], slow, &[]);
        self.b.switch_to_block(in_bounds_b);
        // In bounds: the byte counts are below the sequences' sizes.
        let count = self.b.ins().isub(e, s);
        let bytes = self.b.ins().imul_imm_s(count, size);
        let offset = self.b.ins().imul_imm_s(s, size);
        let to = self.b.ins().iadd(dp, offset);
        match idiom {
            LoopIdiom::Copy { .. } => {
                let (sp, _) = src.expect("a copy has a source");
                let from = self.b.ins().iadd(sp, offset);
                let below = self.b.ins().icmp(IntCC::UnsignedLessThanOrEqual, to, from);
                let from_end = self.b.ins().iadd(from, bytes);
                let past = self
                    .b
                    .ins()
                    .icmp(IntCC::UnsignedGreaterThanOrEqual, to, from_end);
                let forward_safe = self.b.ins().bor(below, past);
                let copy = self.b.create_block();
                self.b.ins().brif(forward_safe, copy, &[], slow, &[]);
                self.b.switch_to_block(copy);
                self.b.call_memmove(self.tr.config, to, from, bytes);
            }
            LoopIdiom::Fill { byte, .. } => {
                let byte = self.b.ins().iconst(types::I8, i64::from(byte));
                self.b.call_memset(self.tr.config, to, byte, bytes);
            }
        }
        self.b.ins().jump(exit, &[]);
        self.b.switch_to_block(slow);
        self.counted_loop(var, bounds, (s, e), body)?;
        self.b.ins().jump(exit, &[]);
        self.b.switch_to_block(exit);
        Ok(())
    }

    /// `for [index,] var in seq`: the sequence's pointer and length once,
    /// then one load per element at `ptr + i * size` for `i` below the
    /// length, with no bounds check (`tir::Stmt::ForEach`). Under
    /// `--sanitize` each element read is checked, as an index would be.
    pub(super) fn for_each(
        &mut self,
        index: Option<LocalId>,
        var: LocalId,
        seq: &Expr,
        body: &tir::Block,
    ) -> R<()> {
        // An array inside a pool element is read through its allocation's
        // tag, as a slice is (a body that frees it is caught at the next).
        let in_pool = self.opts.sanitize && seq.is_array_in_pool_element();
        self.pool_tag = None;
        let (mut ptr, len) = self.sequence(seq)?;
        if let Some(t) = self.pool_tag.take().filter(|_| in_pool) {
            ptr = self.b.ins().bor(ptr, t);
        }
        let elem = seq.ty.element().cloned().unwrap_or(Type::Unit);
        let size = self.elem_size(&seq.ty);
        let tagged =
            self.opts.sanitize && (in_pool || matches!(seq.ty, Type::Slice(_) | Type::Reusable(_)));
        let counter = self.new_var(types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(counter, zero);
        let header = self.b.create_block();
        let body_b = self.b.create_block();
        let step = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(header);
        self.poll_interrupt(seq.loc)?;
        let i = self.b.use_var(counter);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, i, len);
        self.b.ins().brif(more, body_b, &[], exit, &[]);
        self.b.switch_to_block(body_b);
        let off = self.scaled(i, size);
        let mut addr = self.b.ins().iadd(ptr, off);
        if tagged {
            // Zero-size elements read nothing (see `index_addr`).
            let bytes = self.b.ins().iconst(types::I64, size as i64);
            addr = self.sanitize_check(addr, bytes, seq.loc)?;
        }
        let value = self.load(&elem, addr);
        let storage = self.local_storage(var)?;
        self.write_storage(storage, &elem, value);
        if let Some(index) = index {
            let storage = self.local_storage(index)?;
            self.write_storage(storage, &Type::I64, Val::Scalar(i));
        }
        self.loops.push(LoopTarget {
            continue_to: step,
            break_to: exit,
        });
        self.block(body)?;
        self.loops.pop();
        self.b.ins().jump(step, &[]);
        self.b.switch_to_block(step);
        let i = self.b.use_var(counter);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.def_var(counter, next);
        self.b.ins().jump(header, &[]);
        self.b.switch_to_block(exit);
        self.end_scope(var);
        if let Some(index) = index {
            self.end_scope(index);
        }
        self.free_var(counter);
        Ok(())
    }

    /// O2: what a counted loop proves about its variable. `start` must be a
    /// non-negative constant; `end` a constant or `len` of an immutable local
    /// (whose `(ptr, len)` therefore cannot change inside the loop).
    pub(super) fn loop_fact(&self, start: &Expr, end: &Expr) -> Option<Bound> {
        if self.opts.opt_level < OptLevel::O2 || start.ty != Type::I64 {
            return None;
        }
        if !matches!(start.kind, ExprKind::Int(s) if s >= 0) {
            return None;
        }
        match &end.kind {
            ExprKind::Int(e) if *e >= 0 => Some(Bound::Const(*e as u64)),
            ExprKind::Len(inner) => match (&inner.kind, &inner.ty) {
                (ExprKind::Local(_), Type::Array(_, n)) => Some(Bound::Const(*n)),
                (ExprKind::Local(s), Type::Slice(_) | Type::Reusable(_))
                    if !self.f.locals[s.0 as usize].mutable =>
                {
                    Some(Bound::LenOf(*s))
                }
                _ => None,
            },
            _ => None,
        }
    }

    /// O2: is `base[idx]` in bounds by a loop fact?
    pub(super) fn index_proven(&self, base: &Expr, idx: &Expr) -> bool {
        let ExprKind::Local(i) = idx.kind else {
            return false;
        };
        let Some(&(_, bound)) = self.proven.iter().rev().find(|(v, _)| *v == i) else {
            return false;
        };
        match (bound, &base.ty, &base.kind) {
            (Bound::Const(e), Type::Array(_, n), _) => e <= *n,
            (Bound::LenOf(s), _, ExprKind::Local(b)) => s == *b,
            _ => false,
        }
    }

    pub(super) fn assign(&mut self, place: &Expr, v: Val) -> R<()> {
        if let ExprKind::Local(id) = place.kind {
            let storage = self.storage(id)?;
            self.write_storage(storage, &place.ty, v);
            return Ok(());
        }
        let addr = self.place_addr(place)?;
        self.store(&place.ty, v, addr);
        Ok(())
    }
}

/// What a counted loop's body does to a whole range of elements
/// (`FnLower::loop_idiom`).
#[derive(Clone, Copy)]
enum LoopIdiom<'b> {
    /// `dst[i] = src[i]`.
    Copy { dst: &'b Expr, src: &'b Expr },
    /// `dst[i] = c`, every byte of `c` being `byte`.
    Fill { dst: &'b Expr, byte: u8 },
}

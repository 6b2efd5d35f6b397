//! Statements, blocks and functions: declarations, assignments, the
//! checksum, prints, `if` chains, bounded loops with `break`/`continue`,
//! calls, early returns; generated functions (value and `ref` parameters,
//! slices, aggregate and slice results) and bounded recursion.

use super::types::{INTS, Ty};
use super::{FnCtx, FnSig, Gen, Out, Param, Role, Var};
use crate::program::{Block, Item, ItemKind, Stmt};

/// Cost budget of a generated function (statements one call runs).
pub(crate) const FN_BUDGET: u64 = 2_000;
/// Cost budget of `main`.
pub(crate) const MAIN_BUDGET: u64 = 40_000;
/// Prints are generated only where a statement runs at most this often.
const PRINT_MULT: u64 = 12;

impl Gen {
    /// Up to `n` random statements appended to `out` in the current scope
    /// (fewer when the function's cost budget runs out).
    pub fn stmts(&mut self, out: &mut Out, n: usize) {
        for _ in 0..n {
            if self.ctx.cost + self.ctx.mult > self.ctx.budget {
                break;
            }
            self.stmt(out);
        }
    }

    /// A nested block of up to `n` statements in a new scope.
    pub fn block(&mut self, n: usize) -> Block {
        self.scopes.push(Vec::new());
        self.ctx.nesting += 1;
        let mut b = Vec::new();
        self.stmts(&mut b, n);
        self.ctx.nesting -= 1;
        self.scopes.pop();
        b
    }

    /// One random statement (or a few that belong together).
    pub fn stmt(&mut self, out: &mut Out) {
        self.ctx.cost += self.ctx.mult;
        let nest_ok = self.ctx.nesting < 3 && self.ctx.mult <= 64;
        let has_calls = self.funcs[..self.ctx.callable]
            .iter()
            .any(|f| self.affordable(f.cost));
        let growable = self.vars().any(|v| matches!(v.role, Role::Growable { .. }));
        let w = [
            6,                                                 // 0 decl
            5,                                                 // 1 assign
            3,                                                 // 2 compound
            if self.ctx.has_h { 3 } else { 0 },                // 3 mix
            if self.ctx.mult <= PRINT_MULT { 4 } else { 0 },   // 4 print
            if nest_ok { 3 } else { 0 },                       // 5 if
            if nest_ok && self.ctx.loops < 3 { 3 } else { 0 }, // 6 for
            if nest_ok && self.ctx.loops < 3 { 1 } else { 0 }, // 7 while
            if has_calls { 3 } else { 0 },                     // 8 call
            if self.ctx.loops > 0 { 2 } else { 0 },            // 9 break/continue
            if !self.ctx.in_main && self.ctx.nesting > 0 {
                1
            } else {
                0
            }, // 10 early return
            if self.templates.is_empty() { 0 } else { 2 },     // 11 generic
            if growable { 3 } else { 0 },                      // 12 growth
            if self.feat.unsafe_copy { 1 } else { 0 },         // 13 unsafe copy
            if self.feat.traps { 2 } else { 0 },               // 14 trap
        ];
        match self.rng.weighted(&w) {
            0 => self.decl(out),
            1 => self.assign(out),
            2 => self.compound(out),
            3 => self.mix_stmt(out),
            4 => self.print_stmt(out),
            5 => self.if_stmt(out),
            6 => self.for_stmt(out),
            7 => self.while_stmt(out),
            8 => self.call_stmt(out),
            9 => self.break_continue(out),
            10 => self.early_return(out),
            11 => self.generic_stmt(out),
            12 => self.growth_stmt(out),
            13 => self.unsafe_copy(out),
            _ => self.trap(out),
        }
    }

    /// A declaration of a new variable (or slice) initialised from scope.
    pub(crate) fn decl(&mut self, out: &mut Out) {
        let name = self.fresh("v");
        if self.rng.chance(1, 7) {
            // A slice of something in scope.
            let elem = self.value_type();
            // A named view must not see a growable slice that may move.
            self.view_growables = false;
            let slice = self.slice_expr(&elem, 0);
            self.view_growables = true;
            if let Some((text, min_len)) = slice {
                let kw = if self.rng.chance(1, 2) { "let" } else { "var" };
                out.push(Stmt::line(format!("{kw} {name} = {text};")));
                self.declare(Var {
                    name,
                    ty: Ty::Slice(Box::new(elem)),
                    mutable: kw == "var",
                    min_len,
                    range: None,
                    role: Role::Plain,
                });
                return;
            }
        }
        let ty = self.value_type();
        let mutable = self.rng.chance(2, 3);
        let e = self.expr(&ty, 3);
        let kw = if mutable { "var" } else { "let" };
        let text = if !e.typed || !ty.is_scalar() || self.rng.chance(1, 3) {
            let src = self.ty_src(&ty);
            format!("{kw} {name}: {src} = {};", e.text)
        } else {
            format!("{kw} {name} = {};", e.text)
        };
        out.push(Stmt::line(text));
        let min_len = match &ty {
            Ty::Array(_, n) => *n,
            _ => 0,
        };
        self.declare(Var {
            name,
            ty,
            mutable,
            min_len,
            range: None,
            role: Role::Plain,
        });
    }

    /// The types of the writable places of some variable in scope.
    pub(crate) fn writable_type(&mut self) -> Option<Ty> {
        let vars: Vec<Var> = self
            .vars()
            .filter(|v| match &v.ty {
                Ty::Slice(_) | Ty::Reusable(_) => v.min_len > 0,
                _ => v.mutable && v.role == Role::Plain,
            })
            .cloned()
            .collect();
        if vars.is_empty() {
            return None;
        }
        let v = self.rng.pick(&vars).clone();
        let mut types = Vec::new();
        components(&v.ty, &self.structs, &mut types, 0);
        types.retain(|t| !matches!(t, Ty::Slice(_) | Ty::Reusable(_)));
        if types.is_empty() {
            return None;
        }
        Some(self.rng.pick(&types).clone())
    }

    fn assign(&mut self, out: &mut Out) {
        let Some(ty) = self.writable_type() else {
            return self.decl(out);
        };
        let Some((_, place)) = self.place(&ty, true, &[]) else {
            return self.decl(out);
        };
        let e = self.expr(&ty, 3);
        out.push(Stmt::line(format!("{place} = {};", e.text)));
    }

    fn compound(&mut self, out: &mut Out) {
        let t = self.rng.pick(&INTS).clone();
        let Some((_, place)) = self.place(&t, true, &[]) else {
            return self.assign(out);
        };
        let op = *self
            .rng
            .pick(&["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"]);
        let rhs = match op {
            "/" | "%" => self.divisor(&t, 2).text,
            _ => self.scalar(&t, 2).text,
        };
        out.push(Stmt::line(format!("{place} {op}= {rhs};")));
    }

    fn mix_stmt(&mut self, out: &mut Out) {
        let t = self.scalar_type();
        let x = self.as_i64(&t, 3);
        let text = match self.rng.weighted(&[4, 1, 1]) {
            0 => format!("h = mix(h, {x});"),
            1 => format!("h += {x};"),
            _ => format!("h ^= {x} * 31;"),
        };
        out.push(Stmt::line(text));
    }

    fn print_stmt(&mut self, out: &mut Out) {
        let text = match self.rng.weighted(&[
            5,
            if self.ctx.has_h { 3 } else { 0 },
            1,
            if self.vars().any(|v| matches!(v.role, Role::Growable { .. })) {
                2
            } else {
                0
            },
        ]) {
            0 => {
                let t = self.scalar_type();
                let e = self.scalar(&t, 3);
                format!("print({});", e.text)
            }
            1 => "print(h);".into(),
            2 => {
                let words = ["tick", "a b", "x=1", "", "done.", "tab\\tsep", "q\\\"uote"];
                format!("print(\"{}\");", self.rng.pick(&words))
            }
            _ => return self.observe_growable(out),
        };
        out.push(Stmt::line(text));
    }

    fn if_stmt(&mut self, out: &mut Out) {
        // Now and then a chain longer than 16 arms, which the backend joins
        // in a tree rather than nesting (codegen `if_arms`).
        let (n_arms, max_size) = match self.rng.weighted(&[10, 6, 2, 1]) {
            3 => (self.rng.range(17, 40) as usize, 1),
            k => (k + 1, 3),
        };
        let mut arms = Vec::new();
        for _ in 0..n_arms {
            let c = self.scalar(&Ty::Bool, 3);
            let size = self.rng.range(1, max_size) as usize;
            let body = self.block(size);
            arms.push((c.text, body));
        }
        let els = if self.rng.chance(1, 2) {
            let size = self.rng.range(1, 3) as usize;
            Some(self.block(size))
        } else {
            None
        };
        out.push(Stmt::If { arms, els });
    }

    fn for_stmt(&mut self, out: &mut Out) {
        let name = self.fresh("i");
        let (t, head, range, trips) = self.for_head(&name);
        let trips = trips.max(1);
        self.scopes.push(vec![Var {
            name,
            ty: t,
            mutable: false,
            min_len: 0,
            range,
            role: Role::Counter,
        }]);
        let saved = self.ctx.mult;
        self.ctx.mult = saved.saturating_mul(trips);
        self.ctx.loops += 1;
        let size = self.rng.range(1, 4) as usize;
        let body = self.block(size);
        self.ctx.loops -= 1;
        self.ctx.mult = saved;
        self.scopes.pop();
        out.push(Stmt::Loop { head, body });
    }

    /// A `for` head over a small range: its index type, the head, the
    /// static range of the index (when known) and the trip count bound.
    fn for_head(&mut self, name: &str) -> (Ty, String, Option<(i64, i64)>, u64) {
        let arrays: Vec<(String, i64)> = self
            .vars()
            .filter_map(|v| match v.ty {
                Ty::Array(_, n) if (1..=8).contains(&n) => Some((v.name.clone(), n)),
                _ => None,
            })
            .collect();
        let small_consts: Vec<(String, i64)> = self
            .consts
            .iter()
            .filter(|c| c.ty == Ty::I64 && (0..=6).contains(&c.value))
            .map(|c| (c.name.clone(), c.value as i64))
            .collect();
        match self.rng.weighted(&[
            5,
            if arrays.is_empty() { 0 } else { 3 },
            if small_consts.is_empty() { 0 } else { 1 },
            2,
            2,
            1,
        ]) {
            0 => {
                let lo = self.rng.range(-2, 3);
                let hi = lo + self.rng.range(-1, 5);
                let range = (lo < hi).then_some((lo, hi));
                (
                    Ty::I64,
                    format!("for {name} in {lo}..{hi} {{"),
                    range,
                    (hi - lo).max(0) as u64,
                )
            }
            1 => {
                let (a, n) = self.rng.pick(&arrays).clone();
                (
                    Ty::I64,
                    format!("for {name} in 0..len({a}) {{"),
                    Some((0, n)),
                    n as u64,
                )
            }
            2 => {
                let (c, v) = self.rng.pick(&small_consts).clone();
                let range = (v > 0).then_some((0, v));
                (Ty::I64, format!("for {name} in 0..{c} {{"), range, v as u64)
            }
            3 => {
                // Typed bounds: the index has the bounds' type.
                let t = self.rng.pick(&[Ty::I32, Ty::U8]).clone();
                let lo = self.rng.range(0, 3);
                let hi = lo + self.rng.range(0, 4);
                let ts = t.src(&self.structs);
                let range = (lo < hi).then_some((lo, hi));
                (
                    t,
                    format!("for {name} in ({lo} as {ts})..{hi} {{"),
                    range,
                    (hi - lo) as u64,
                )
            }
            4 => {
                // A run-time bound, masked small.
                let t = self.rng.pick(&INTS).clone();
                let e = self.scalar_typed(&t, 2);
                let mask = *self.rng.pick(&[1i64, 3, 4]);
                let ts = t.src(&self.structs);
                let hi = if t == Ty::I64 {
                    format!("({} & {mask})", e.text)
                } else {
                    format!("({} & ({mask} as {ts}))", e.text)
                };
                let lo = if t == Ty::I64 {
                    "0".to_string()
                } else {
                    format!("(0 as {ts})")
                };
                (
                    t,
                    format!("for {name} in {lo}..{hi} {{"),
                    Some((0, mask + 1)),
                    mask as u64 + 1,
                )
            }
            _ => {
                // Near the top of the type's range: the bound arithmetic must
                // not wrap. (Not `u64`: its top is past every literal a bound
                // can be written with.)
                let t = self.rng.pick(&[Ty::I64, Ty::I32, Ty::U8]).clone();
                let hi = t.max() as i64;
                let k = self.rng.range(0, 3);
                let lo = hi - k;
                let ts = t.src(&self.structs);
                let head = if t == Ty::I64 {
                    format!("for {name} in {lo}..{hi} {{")
                } else {
                    format!("for {name} in ({lo} as {ts})..{hi} {{")
                };
                (t, head, None, k as u64)
            }
        }
    }

    fn while_stmt(&mut self, out: &mut Out) {
        let w = self.fresh("w");
        let k = self.rng.range(1, 5);
        out.push(Stmt::line(format!("var {w} = 0;")));
        let forever = self.rng.chance(1, 3);
        let head = if forever {
            "while true {".to_string()
        } else if self.rng.chance(1, 2) {
            let saved = self.ctx.callable;
            self.ctx.callable = 0; // no calls in a head that runs every trip
            let c = self.scalar(&Ty::Bool, 2);
            self.ctx.callable = saved;
            format!("while {w} < {k} && {} {{", c.text)
        } else {
            format!("while {w} < {k} {{")
        };
        let mut body = vec![Stmt::pinned(format!("{w} += 1;"))];
        if forever {
            body.push(Stmt::pinned(format!("if {w} > {k} {{ break; }}")));
        }
        self.scopes.push(vec![Var {
            name: w,
            ty: Ty::I64,
            mutable: false,
            min_len: 0,
            range: Some((1, k + 1)),
            role: Role::Counter,
        }]);
        let saved = self.ctx.mult;
        self.ctx.mult = saved.saturating_mul(k as u64 + 1);
        self.ctx.loops += 1;
        let size = self.rng.range(1, 4) as usize;
        body.extend(self.block(size));
        self.ctx.loops -= 1;
        self.ctx.mult = saved;
        self.scopes.pop();
        out.push(Stmt::Loop { head, body });
    }

    fn break_continue(&mut self, out: &mut Out) {
        let c = self.scalar(&Ty::Bool, 2);
        let kw = if self.rng.chance(1, 2) && self.ctx.no_break_at != Some(self.ctx.loops) {
            "break"
        } else {
            "continue"
        };
        out.push(Stmt::If {
            arms: vec![(c.text, vec![Stmt::line(format!("{kw};"))])],
            els: None,
        });
    }

    fn early_return(&mut self, out: &mut Out) {
        let ret = self.return_stmt();
        if self.rng.chance(1, 4) {
            out.push(Stmt::line(ret));
        } else {
            let c = self.scalar(&Ty::Bool, 2);
            out.push(Stmt::If {
                arms: vec![(c.text, vec![Stmt::line(ret)])],
                els: None,
            });
        }
    }

    /// A `return` statement for the current function.
    pub fn return_stmt(&mut self) -> String {
        if let Some((param, have, need)) = self.ctx.ret_slice.clone() {
            let lo = self.rng.range(0, have - need);
            let hi = self.rng.range(lo + need, have);
            return match self.rng.weighted(&[1, 2, 1, 1]) {
                0 if need <= have => format!("return {param}[..];"),
                1 => format!("return {param}[{lo}..{hi}];"),
                2 => format!("return {param}[{lo}..];"),
                _ => format!("return {param}[..{hi}];"),
            };
        }
        match self.ctx.ret.clone() {
            None => "return;".into(),
            Some(t) => {
                let e = self.expr(&t, 3);
                format!("return {};", e.text)
            }
        }
    }

    fn call_stmt(&mut self, out: &mut Out) {
        let cands: Vec<usize> = (0..self.ctx.callable)
            .filter(|&i| self.affordable(self.funcs[i].cost))
            .collect();
        if cands.is_empty() {
            return self.decl(out);
        }
        let f = self.funcs[*self.rng.pick(&cands)].clone();
        self.view_growables = !matches!(f.ret, Some(Ty::Slice(_)));
        let args = self.call_args(&f, false);
        self.view_growables = true;
        let Some(args) = args else {
            return self.decl(out);
        };
        self.after_ref_slices(&f, &args);
        self.ctx.cost += self.ctx.mult * f.cost;
        let call = format!("{}({args})", f.name);
        match &f.ret {
            None => out.push(Stmt::line(format!("{call};"))),
            Some(t) if t.is_scalar() && self.ctx.mult <= PRINT_MULT && self.rng.chance(1, 3) => {
                out.push(Stmt::line(format!("print({call});")));
            }
            Some(t) if self.rng.chance(1, 6) => {
                let _ = t;
                out.push(Stmt::line(format!("{call};")));
            }
            Some(t) => {
                let name = self.fresh("v");
                let mutable = !matches!(t, Ty::Slice(_)) && self.rng.chance(1, 2);
                let kw = if mutable { "var" } else { "let" };
                out.push(Stmt::line(format!("{kw} {name} = {call};")));
                let min_len = match t {
                    Ty::Array(_, n) => *n,
                    Ty::Slice(_) => f.ret_min_len,
                    _ => 0,
                };
                self.declare(Var {
                    name,
                    ty: t.clone(),
                    mutable,
                    min_len,
                    range: None,
                    role: Role::Plain,
                });
            }
        }
    }

    /// After a call passing slices by `ref`: the callee may have shortened
    /// them, so their known length drops to zero.
    fn after_ref_slices(&mut self, f: &FnSig, args: &str) {
        if !f
            .params
            .iter()
            .any(|p| p.by_ref && matches!(p.ty, Ty::Slice(_)))
        {
            return;
        }
        let names: Vec<String> = self
            .vars()
            .filter(|v| matches!(v.ty, Ty::Slice(_)))
            .map(|v| v.name.clone())
            .collect();
        for n in names {
            if args.contains(&format!("ref {n}"))
                && let Some(v) = self.var_mut(&n)
            {
                v.min_len = 0;
            }
        }
    }

    /// `unsafe::copy` of a value into a whole variable of its type, by
    /// address (the only `unsafe` use with deterministic output).
    fn unsafe_copy(&mut self, out: &mut Out) {
        let dsts: Vec<Var> = self
            .vars()
            .filter(|v| {
                v.mutable
                    && v.role == Role::Plain
                    && !v.ty.is_scalar()
                    && !matches!(v.ty, Ty::Slice(_) | Ty::Reusable(_))
                    && v.ty.size(&self.structs) > 0
            })
            .cloned()
            .collect();
        if dsts.is_empty() {
            return self.decl(out);
        }
        let dst = self.rng.pick(&dsts).clone();
        let Some((_, src)) = self.place(&dst.ty, false, std::slice::from_ref(&dst.name)) else {
            return self.decl(out);
        };
        let bytes = if self.rng.chance(1, 2) {
            format!("size_of::<{}>()", self.ty_src(&dst.ty))
        } else {
            dst.ty.size(&self.structs).to_string()
        };
        out.push(Stmt::line(format!(
            "unsafe::copy(unsafe::addr({}), unsafe::addr({src}), {bytes});",
            dst.name
        )));
    }

    /// The end of a function with a result, in one of the forms the
    /// "returns on every path" rule accepts: `return e;`, an `if`/`else`
    /// chain returning in every branch, a `while true` loop without a
    /// `break` of its own that returns from inside, or `panic` after a
    /// return that always happens.
    fn function_end(&mut self, body: &mut Out) {
        match self.rng.weighted(&[6, 2, 2, 1]) {
            0 => {
                let r = self.return_stmt();
                body.push(Stmt::line(r));
            }
            1 => {
                let mut arms = Vec::new();
                for _ in 0..self.rng.range(1, 2) {
                    let c = self.scalar(&Ty::Bool, 2).text;
                    let b = self.block_then_return();
                    arms.push((c, b));
                }
                let els = self.block_then_return();
                body.push(Stmt::If {
                    arms,
                    els: Some(els),
                });
            }
            2 if self.ctx.loops == 0 => {
                let w = self.fresh("w");
                let k = self.rng.range(1, 4);
                body.push(Stmt::line(format!("var {w} = 0;")));
                let ret = self.return_stmt();
                let mut lb = vec![
                    Stmt::pinned(format!("{w} += 1;")),
                    Stmt::pinned(format!("if {w} > {k} {{ {ret} }}")),
                ];
                self.scopes.push(vec![Var {
                    name: w,
                    ty: Ty::I64,
                    mutable: false,
                    min_len: 0,
                    range: Some((1, k + 1)),
                    role: Role::Counter,
                }]);
                let saved = (self.ctx.mult, self.ctx.no_break_at);
                self.ctx.mult = saved.0.saturating_mul(k as u64 + 1);
                self.ctx.loops += 1;
                self.ctx.no_break_at = Some(self.ctx.loops);
                let size = self.rng.range(1, 3) as usize;
                lb.extend(self.block(size));
                self.ctx.loops -= 1;
                (self.ctx.mult, self.ctx.no_break_at) = saved;
                self.scopes.pop();
                body.push(Stmt::Loop {
                    head: "while true {".into(),
                    body: lb,
                });
            }
            _ => {
                let r = self.return_stmt();
                body.push(Stmt::If {
                    arms: vec![("0 == 0".into(), vec![Stmt::line(r)])],
                    els: None,
                });
                body.push(Stmt::line("panic(\"unreachable\");"));
            }
        }
    }

    /// A block of random statements ending in a `return`, generated in the
    /// block's scope (the statements may shadow names the return reads).
    fn block_then_return(&mut self) -> Block {
        let size = self.rng.range(0, 2) as usize;
        self.scopes.push(Vec::new());
        self.ctx.nesting += 1;
        let mut b = Vec::new();
        self.stmts(&mut b, size);
        let r = self.return_stmt();
        b.push(Stmt::line(r));
        self.ctx.nesting -= 1;
        self.scopes.pop();
        b
    }

    /// A function with random parameters, result and body.
    pub fn gen_function(&mut self) {
        let idx = self.funcs.len();
        let name = format!("f{idx}");
        let mut params = Vec::new();
        let mut texts = Vec::new();
        let mut vars = Vec::new();
        let has_h = self.rng.chance(1, 2);
        if has_h {
            params.push(Param {
                ty: Ty::I64,
                by_ref: true,
                min_len: 0,
                depth_bound: None,
            });
            texts.push("ref h: i64".to_string());
            vars.push(Var {
                name: "h".into(),
                ty: Ty::I64,
                mutable: true,
                min_len: 0,
                range: None,
                role: Role::Plain,
            });
        }
        let n = self.rng.range(0, 3);
        let mut value_slices: Vec<(String, Ty, i64)> = Vec::new();
        for k in 0..n {
            let pname = format!("p{k}");
            let (ty, by_ref, min_len) =
                match self
                    .rng
                    .weighted(&[6, 3, 2, if self.feat.reusable { 1 } else { 0 }])
                {
                    0 => (self.value_type(), false, 0),
                    1 => (self.value_type(), true, 0),
                    2 => {
                        let e = self.value_type();
                        if self.rng.chance(1, 5) {
                            (Ty::Slice(Box::new(e)), true, 0)
                        } else {
                            (Ty::Slice(Box::new(e)), false, self.rng.range(0, 3))
                        }
                    }
                    _ => (
                        Ty::Reusable(Box::new(self.scalar_type())),
                        false,
                        self.rng.range(0, 2),
                    ),
                };
            let src = self.ty_src(&ty);
            texts.push(if by_ref {
                format!("ref {pname}: {src}")
            } else {
                format!("{pname}: {src}")
            });
            if let (Ty::Slice(e), false) = (&ty, by_ref) {
                value_slices.push((pname.clone(), (**e).clone(), min_len));
            }
            let len = match &ty {
                Ty::Array(_, n) => *n,
                _ => min_len,
            };
            vars.push(Var {
                name: pname,
                ty: ty.clone(),
                mutable: by_ref,
                min_len: len,
                range: None,
                role: Role::Plain,
            });
            params.push(Param {
                ty,
                by_ref,
                min_len,
                depth_bound: None,
            });
        }
        let (ret, ret_slice) =
            match self
                .rng
                .weighted(&[3, 5, 2, if value_slices.is_empty() { 0 } else { 2 }])
            {
                0 => (None, None),
                1 => (Some(self.scalar_type()), None),
                2 => {
                    let mut t = self.value_type();
                    if t.is_scalar() {
                        t = Ty::Array(Box::new(t), self.rng.range(1, 4));
                    }
                    (Some(t), None)
                }
                _ => {
                    let (p, e, have) = self.rng.pick(&value_slices).clone();
                    let need = self.rng.range(0, have);
                    (Some(Ty::Slice(Box::new(e))), Some((p, have, need)))
                }
            };
        let ret_min_len = ret_slice.as_ref().map_or(0, |r| r.2);
        let mut head = format!("fn {name}({})", texts.join(", "));
        if let Some(t) = &ret {
            head.push_str(&format!(" -> {}", self.ty_src(t)));
        }
        head.push_str(" {");
        self.scopes = vec![vars];
        self.ctx = FnCtx {
            in_main: false,
            ret: ret.clone(),
            ret_slice,
            mult: 1,
            budget: FN_BUDGET,
            has_h,
            callable: idx,
            ..FnCtx::default()
        };
        let mut body = Vec::new();
        let size = self.rng.range(2, 7) as usize;
        self.stmts(&mut body, size);
        if ret.is_some() {
            self.function_end(&mut body);
        }
        let cost = self.ctx.cost + 2;
        self.scopes.clear();
        self.items.push(Item {
            kind: ItemKind::Func { head, body },
            fixed: false,
        });
        self.funcs.push(FnSig {
            name,
            params,
            ret,
            ret_min_len,
            cost,
        });
    }

    /// A recursive function with an explicit depth bound: linear recursion
    /// over an integer or a struct, or two-way recursion over an integer.
    pub fn gen_recursive(&mut self) {
        let idx = self.funcs.len();
        let name = format!("rec{idx}");
        let t = if !self.structs.is_empty() && self.rng.chance(1, 3) {
            Ty::Struct(self.rng.index(self.structs.len()))
        } else {
            self.rng.pick(&INTS).clone()
        };
        let binary = t.is_int() && self.rng.chance(1, 3);
        let bound = if binary {
            self.rng.range(2, 7)
        } else {
            self.rng.range(2, 8)
        };
        let calls: u64 = if binary { 1 << bound } else { bound as u64 + 1 };
        let has_h = self.rng.chance(1, 2);
        let tsrc = self.ty_src(&t);
        let mut params = vec![Param {
            ty: Ty::I64,
            by_ref: false,
            min_len: 0,
            depth_bound: Some(bound),
        }];
        let mut texts = vec!["d: i64".to_string()];
        let mut vars = vec![Var {
            name: "d".into(),
            ty: Ty::I64,
            mutable: false,
            min_len: 0,
            range: None,
            role: Role::Plain,
        }];
        if has_h {
            params.push(Param {
                ty: Ty::I64,
                by_ref: true,
                min_len: 0,
                depth_bound: None,
            });
            texts.push("ref h: i64".into());
            vars.push(Var {
                name: "h".into(),
                ty: Ty::I64,
                mutable: true,
                min_len: 0,
                range: None,
                role: Role::Plain,
            });
        }
        params.push(Param {
            ty: t.clone(),
            by_ref: false,
            min_len: 0,
            depth_bound: None,
        });
        texts.push(format!("x: {tsrc}"));
        vars.push(Var {
            name: "x".into(),
            ty: t.clone(),
            mutable: false,
            min_len: 0,
            range: None,
            role: Role::Plain,
        });
        let head = format!("fn {name}({}) -> {tsrc} {{", texts.join(", "));
        self.scopes = vec![vars];
        self.ctx = FnCtx {
            in_main: false,
            ret: Some(t.clone()),
            mult: 1,
            budget: (FN_BUDGET / calls).max(8),
            has_h,
            callable: idx,
            ..FnCtx::default()
        };
        let base = self.expr(&t, 2);
        let mut body = vec![Stmt::If {
            arms: vec![(
                "d <= 0".into(),
                vec![Stmt::line(format!("return {};", base.text))],
            )],
            els: None,
        }];
        let size = self.rng.range(1, 3) as usize;
        self.stmts(&mut body, size);
        let href = if has_h { "ref h, " } else { "" };
        let last = if binary {
            let a = self.expr(&t, 2);
            let b = self.expr(&t, 2);
            let op = *self.rng.pick(&["+", "^", "-", "|"]);
            format!(
                "return ({name}(d - 1, {href}{}) {op} {name}(d - 2, {href}{}));",
                a.text, b.text
            )
        } else if t.is_int() {
            let a = self.expr(&t, 2);
            let b = self.expr(&t, 2);
            let op = *self.rng.pick(&["+", "^", "-", "*", "&", "|"]);
            format!("return ({name}(d - 1, {href}{}) {op} {});", a.text, b.text)
        } else {
            let a = self.expr(&t, 2);
            format!("return {name}(d - 1, {href}{});", a.text)
        };
        body.push(Stmt::line(last));
        let cost = (self.ctx.cost + 3) * calls;
        self.scopes.clear();
        self.items.push(Item {
            kind: ItemKind::Func { head, body },
            fixed: false,
        });
        self.funcs.push(FnSig {
            name,
            params,
            ret: Some(t),
            ret_min_len: 0,
            cost,
        });
    }
}

/// The types of `t` and of its components (fields, elements), slices'
/// elements included, up to a small depth.
fn components(t: &Ty, structs: &[super::types::StructDef], out: &mut Vec<Ty>, depth: u32) {
    if !out.contains(t) {
        out.push(t.clone());
    }
    if depth > 3 {
        return;
    }
    match t {
        Ty::Struct(k) => {
            for (_, f) in &structs[*k].fields {
                components(f, structs, out, depth + 1);
            }
        }
        Ty::Array(e, n) if *n > 0 => components(e, structs, out, depth + 1),
        Ty::Slice(e) | Ty::Reusable(e) => components(e, structs, out, depth + 1),
        _ => {}
    }
}

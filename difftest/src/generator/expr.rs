//! Expressions and places: every expression is generated for a type, reads
//! only places that exist, indexes only below a known length and divides
//! only by values that cannot be zero.

use super::types::{INTS, Ty};
use super::{Gen, Role, Var, lit_text};

/// A generated expression, with what the checker's literal typing needs to
/// know about it (compiler `check::body`): integer literals take their type
/// from the expected type, or from the other operand of a binary operator.
#[derive(Clone, Debug)]
pub(crate) struct E {
    pub text: String,
    /// It has its intended type even where no type is expected (it has a
    /// typed operand: variable, call, cast, ...). Otherwise it is made of
    /// literals only and takes the expected type, `i64` by default.
    pub typed: bool,
    /// The checker's `literal_like`: literals under `-`, parentheses and
    /// arithmetic only. Such an operand takes the other operand's type.
    pub lit_like: bool,
}

impl E {
    /// An expression typed by itself.
    fn typed(text: impl Into<String>) -> E {
        E {
            text: text.into(),
            typed: true,
            lit_like: false,
        }
    }

    /// An integer literal.
    fn lit(text: impl Into<String>) -> E {
        E {
            text: text.into(),
            typed: false,
            lit_like: true,
        }
    }
}

/// A literal expression of value `v` at type `t`: untyped, except a `u64`
/// value past `i64::MAX`, whose text is typed by its own cast (`lit_text`).
fn lit_expr(t: &Ty, v: i128, rng: &mut crate::rng::Rng) -> E {
    let text = lit_text(t, v, rng);
    if v > i64::MAX.into() {
        E::typed(text)
    } else {
        E::lit(text)
    }
}

/// Shift amounts worth trying for each type: in range, at the width, past
/// it, negative.
fn shift_amounts(t: &Ty) -> &'static [i64] {
    match t {
        Ty::I64 => &[0, 1, 7, 63, 64, 65, 127, 200, -1, -64, -65],
        Ty::I32 => &[0, 1, 7, 31, 32, 33, 64, 200, -1, -32, -33],
        Ty::U64 => &[0, 1, 7, 63, 64, 65, 127, 200],
        _ => &[0, 1, 3, 7, 8, 9, 15, 200, 255],
    }
}

impl Gen {
    /// An expression of type `t`: scalars, arrays and structs.
    pub fn expr(&mut self, t: &Ty, depth: u32) -> E {
        match t {
            Ty::I64 | Ty::I32 | Ty::U8 | Ty::U64 | Ty::Bool => self.scalar(t, depth),
            Ty::Array(e, n) => self.array_expr(e, *n, depth),
            Ty::Struct(k) => self.struct_expr(*k, depth),
            Ty::Slice(e) => {
                let (text, _) = self
                    .slice_expr(e, 0)
                    .expect("slice parameters and locals are generated only where one exists");
                E::typed(text)
            }
            Ty::Reusable(_) => panic!("reusable values are not generated as expressions"),
        }
    }

    /// An expression of scalar type `t`.
    pub fn scalar(&mut self, t: &Ty, depth: u32) -> E {
        if depth == 0 || self.rng.chance(1, 4) {
            return self.leaf(t);
        }
        if *t == Ty::Bool {
            self.bool_expr(depth)
        } else {
            self.int_expr(t, depth)
        }
    }

    /// An expression of scalar type `t` whose value does not depend on
    /// context: an untyped `i32`/`u8` expression is cast.
    pub fn scalar_typed(&mut self, t: &Ty, depth: u32) -> E {
        let e = self.scalar(t, depth);
        if e.typed || *t == Ty::I64 || *t == Ty::Bool {
            e
        } else {
            E::typed(format!("({} as {})", e.text, t.src(&self.structs)))
        }
    }

    /// `e` converted to `i64` (for the checksum and `ix`).
    pub fn as_i64(&mut self, t: &Ty, depth: u32) -> String {
        let e = self.scalar(t, depth);
        if *t == Ty::I64 {
            e.text
        } else {
            format!("({} as i64)", e.text)
        }
    }

    fn int_expr(&mut self, t: &Ty, depth: u32) -> E {
        let d = depth - 1;
        let calls = self.has_call(t);
        let generic = self.has_template("g_pick") || self.has_template("g_twice");
        match self.rng.weighted(&[
            6,
            3,
            3,
            2,
            3,
            if calls { 2 } else { 0 },
            if generic { 1 } else { 0 },
            2,
        ]) {
            0 => {
                let op = *self.rng.pick(&["+", "-", "*", "&", "|", "^"]);
                let a = self.scalar(t, d);
                let b = self.scalar(t, d);
                self.bin(t, a, op, b)
            }
            1 => {
                let op = *self.rng.pick(&["/", "%"]);
                let a = self.scalar(t, d);
                let b = self.divisor(t, d);
                self.bin(t, a, op, b)
            }
            2 => {
                let op = *self.rng.pick(&["<<", ">>"]);
                let a = self.scalar(t, d);
                let b = if self.rng.chance(1, 2) {
                    let v = *self.rng.pick(shift_amounts(t));
                    E::lit(lit_text(t, v.into(), &mut self.rng))
                } else {
                    self.scalar(t, d)
                };
                self.bin(t, a, op, b)
            }
            3 => {
                let a = self.scalar(t, d);
                if self.rng.chance(1, 2) {
                    E {
                        text: format!("(-({}))", a.text),
                        ..a
                    }
                } else {
                    E {
                        text: format!("(!{})", a.text),
                        lit_like: false,
                        ..a
                    }
                }
            }
            4 => {
                // A cast from another integer type or from bool.
                let from = match self.rng.weighted(&[3, 1]) {
                    0 => self.rng.pick(&INTS).clone(),
                    _ => Ty::Bool,
                };
                let a = self.scalar(&from, d);
                E::typed(format!("({} as {})", a.text, t.src(&self.structs)))
            }
            5 => self.call_scalar(t, d).unwrap_or_else(|| self.leaf(t)),
            6 => self.generic_scalar(t, d),
            _ => self.leaf(t),
        }
    }

    /// `(a op b)` for operands of type `t`, typed as the checker types it
    /// anywhere (with or without an expected type): when `a` is untyped but
    /// not literal-like it is checked first and would default to `i64`, so
    /// facing a typed `b` of another type it is cast to `t`.
    pub fn bin(&mut self, t: &Ty, a: E, op: &str, b: E) -> E {
        let a = if !a.typed && !a.lit_like && b.typed && *t != Ty::I64 {
            E::typed(format!("({} as {})", a.text, t.src(&self.structs)))
        } else {
            a
        };
        let arithmetic = !matches!(op, "==" | "!=" | "<" | "<=" | ">" | ">=" | "&&" | "||");
        E {
            text: format!("({} {op} {})", a.text, b.text),
            typed: a.typed || b.typed,
            lit_like: arithmetic && a.lit_like && b.lit_like,
        }
    }

    /// A divisor of type `t` that cannot be zero: `(e | 1)` or a non-zero
    /// literal (`-1` included, for `MIN / -1`).
    pub fn divisor(&mut self, t: &Ty, depth: u32) -> E {
        match self.rng.weighted(&[3, 2]) {
            0 => {
                let e = self.scalar(t, depth);
                let one = E::lit("1");
                self.bin(t, e, "|", one)
            }
            _ => {
                let mut choices = vec![1i128, 2, 3, 7, t.max()];
                if t.min() < 0 {
                    choices.extend([-1, -2, t.min()]);
                }
                let v = *self.rng.pick(&choices);
                lit_expr(t, v, &mut self.rng)
            }
        }
    }

    fn bool_expr(&mut self, depth: u32) -> E {
        let d = depth - 1;
        let calls = self.has_call(&Ty::Bool);
        match self
            .rng
            .weighted(&[6, 3, 2, 1, if calls { 1 } else { 0 }, 1])
        {
            0 => {
                let t = self.rng.pick(&INTS).clone();
                let op = *self.rng.pick(&["==", "!=", "<", "<=", ">", ">="]);
                let a = self.scalar(&t, d);
                let b = self.scalar(&t, d);
                let c = self.bin(&t, a, op, b);
                E::typed(c.text)
            }
            1 => {
                let op = *self.rng.pick(&["&&", "||"]);
                let a = self.scalar(&Ty::Bool, d);
                let b = self.scalar(&Ty::Bool, d);
                E::typed(format!("({} {op} {})", a.text, b.text))
            }
            2 => {
                let a = self.scalar(&Ty::Bool, d);
                E::typed(format!("(!{})", a.text))
            }
            3 => {
                let op = *self.rng.pick(&["==", "!="]);
                let a = self.scalar(&Ty::Bool, d);
                let b = self.scalar(&Ty::Bool, d);
                E::typed(format!("({} {op} {})", a.text, b.text))
            }
            4 => self
                .call_scalar(&Ty::Bool, d)
                .unwrap_or_else(|| self.leaf(&Ty::Bool)),
            _ => self.leaf(&Ty::Bool),
        }
    }

    /// A leaf of scalar type `t`: literal, constant, place, length, size.
    pub fn leaf(&mut self, t: &Ty) -> E {
        let consts: Vec<String> = self
            .consts
            .iter()
            .filter(|c| c.ty == *t)
            .map(|c| c.name.clone())
            .collect();
        let i64_extras = *t == Ty::I64;
        match self.rng.weighted(&[
            3,
            5,
            if consts.is_empty() { 0 } else { 1 },
            if i64_extras { 1 } else { 0 },
            if i64_extras { 1 } else { 0 },
        ]) {
            0 => self.literal(t),
            1 => match self.place(t, false, &[]) {
                Some((_, text)) => E::typed(text),
                None => self.literal(t),
            },
            2 => E::typed(self.rng.pick(&consts).clone()),
            3 => match self.len_expr() {
                Some(text) => E::typed(text),
                None => self.literal(t),
            },
            _ => {
                let ty = self.value_type();
                let src = self.ty_src(&ty);
                if self.has_template("g_sizeof") && self.rng.chance(1, 3) {
                    E::typed(format!("g_sizeof::<{src}>()"))
                } else {
                    E::typed(format!("size_of::<{src}>()"))
                }
            }
        }
    }

    /// A literal of scalar type `t` (untyped for integers).
    pub fn literal(&mut self, t: &Ty) -> E {
        if *t == Ty::Bool {
            return E::typed(if self.rng.chance(1, 2) {
                "true"
            } else {
                "false"
            });
        }
        let v = self.int_value(t);
        lit_expr(t, v, &mut self.rng)
    }

    /// `len(x)` of some array, slice or reusable slice in scope.
    fn len_expr(&mut self) -> Option<String> {
        let names: Vec<String> = self
            .vars()
            .filter(|v| matches!(v.ty, Ty::Array(..) | Ty::Slice(_) | Ty::Reusable(_)))
            .map(|v| v.name.clone())
            .collect();
        if names.is_empty() {
            return None;
        }
        Some(format!("len({})", self.rng.pick(&names)))
    }

    /// Whether a value of `v` holds a place of type `t` (for `write`, one
    /// that may be assigned: rooted in a `var` or `ref` parameter, or an
    /// element of a slice).
    fn reaches(&self, v: &Var, t: &Ty, write: bool) -> bool {
        let root_writable = v.mutable && v.role == Role::Plain;
        if v.ty == *t && (!write || root_writable) {
            return true;
        }
        match &v.ty {
            Ty::Slice(e) | Ty::Reusable(e) => v.min_len > 0 && e.contains(t, &self.structs),
            ty => ty != t && ty.contains(t, &self.structs) && (!write || root_writable),
        }
    }

    /// A place of type `t` rooted in a variable in scope whose name is not
    /// in `avoid`: `(root, text)`. With `write`, a place that may be
    /// assigned or passed by `ref`.
    pub fn place(&mut self, t: &Ty, write: bool, avoid: &[String]) -> Option<(String, String)> {
        let cands: Vec<Var> = self
            .vars()
            .filter(|v| !avoid.contains(&v.name) && self.reaches(v, t, write))
            .cloned()
            .collect();
        if cands.is_empty() {
            return None;
        }
        let v = self.rng.pick(&cands).clone();
        let mut text = v.name.clone();
        let mut cur = v.ty.clone();
        loop {
            let at_root = text == v.name;
            let here = cur == *t && (!at_root || !write || v.mutable && v.role == Role::Plain);
            let deeper = self.steps(&cur, t, &v, &text);
            if here && (deeper.is_empty() || t.is_scalar() || self.rng.chance(1, 2)) {
                return Some((v.name, text));
            }
            if deeper.is_empty() {
                // Only reachable by a path the checks above exclude.
                return None;
            }
            let (next_text, next_ty) = self.rng.pick(&deeper).clone();
            text = next_text;
            cur = next_ty;
        }
    }

    /// One step into a component of a place of type `cur` towards type `t`.
    fn steps(&mut self, cur: &Ty, t: &Ty, root: &Var, text: &str) -> Vec<(String, Ty)> {
        let mut out = Vec::new();
        match cur {
            Ty::Struct(k) => {
                for (f, fty) in self.structs[*k].fields.clone() {
                    if fty.contains(t, &self.structs) {
                        out.push((format!("{text}.{f}"), fty));
                    }
                }
            }
            Ty::Array(e, n) if *n > 0 && e.contains(t, &self.structs) => {
                let idx = self.index_static(*n, text);
                out.push((format!("{text}[{idx}]"), (**e).clone()));
            }
            Ty::Slice(e) | Ty::Reusable(e)
                if text == root.name && root.min_len > 0 && e.contains(t, &self.structs) =>
            {
                let idx = self.index_dyn(text, root.min_len);
                out.push((format!("{text}[{idx}]"), (**e).clone()));
            }
            _ => {}
        }
        out
    }

    /// An index below the static length `n` (>= 1) of the array `base`.
    pub fn index_static(&mut self, n: i64, base: &str) -> String {
        let loop_vars = self.loop_indices(n);
        // Computed indices nest at most two deep (the checker limits nesting).
        let computed = u32::from(self.index_nesting < 2);
        match self.rng.weighted(&[
            4,
            if loop_vars.is_empty() { 0 } else { 5 },
            2 * computed,
            computed,
        ]) {
            0 => self.rng.range(0, n - 1).to_string(),
            1 => self.rng.pick(&loop_vars).clone(),
            2 => {
                let e = self.index_operand();
                format!("ix({e}, {n})")
            }
            _ => {
                let e = self.index_operand();
                format!("ix({e}, len({base}))")
            }
        }
    }

    /// An index below the length of the slice `base`, known to be at least
    /// `min_len` (>= 1).
    pub fn index_dyn(&mut self, base: &str, min_len: i64) -> String {
        let loop_vars = self.loop_indices(min_len);
        let computed = u32::from(self.index_nesting < 2);
        match self
            .rng
            .weighted(&[3, if loop_vars.is_empty() { 0 } else { 3 }, 3 * computed])
        {
            0 => self.rng.range(0, min_len - 1).to_string(),
            1 => self.rng.pick(&loop_vars).clone(),
            _ => {
                let e = self.index_operand();
                format!("ix({e}, len({base}))")
            }
        }
    }

    /// Loop indices in scope whose static range lies in `0..n`, as `i64`.
    fn loop_indices(&self, n: i64) -> Vec<String> {
        self.vars()
            .filter(|v| {
                v.range
                    .is_some_and(|(lo, hi)| lo >= 0 && hi <= n && lo < hi)
            })
            .map(|v| {
                if v.ty == Ty::I64 {
                    v.name.clone()
                } else {
                    format!("({} as i64)", v.name)
                }
            })
            .collect()
    }

    /// The operand of an `ix(e, n)`: any integer, as `i64`.
    fn index_operand(&mut self) -> String {
        let t = self.rng.pick(&INTS).clone();
        self.index_nesting += 1;
        let e = self.as_i64(&t, 1);
        self.index_nesting -= 1;
        e
    }

    fn array_expr(&mut self, e: &Ty, n: i64, depth: u32) -> E {
        let t = Ty::Array(Box::new(e.clone()), n);
        let d = depth.saturating_sub(1);
        match self
            .rng
            .weighted(&[3, 3, if n <= 6 && n > 0 { 3 } else { 0 }, 2])
        {
            0 => {
                if let Some((_, text)) = self.place(&t, false, &[]) {
                    return E::typed(text);
                }
                self.array_repeat(e, n, d)
            }
            1 => self.array_repeat(e, n, d),
            2 => {
                // Typed by its first element, like the checker types it
                // without context (callers annotate the declarations).
                let parts: Vec<String> = (0..n).map(|_| self.expr(e, d).text).collect();
                E {
                    text: format!("[{}]", parts.join(", ")),
                    typed: false,
                    lit_like: false,
                }
            }
            _ => {
                if let Some(c) = self.call_value(&t, d) {
                    return c;
                }
                self.array_repeat(e, n, d)
            }
        }
    }

    /// `[v; n]`.
    fn array_repeat(&mut self, e: &Ty, n: i64, depth: u32) -> E {
        let v = self.expr(e, depth);
        let count = self.len_src(n);
        E {
            text: format!("[{}; {count}]", v.text),
            typed: false,
            lit_like: false,
        }
    }

    /// An array length as source: the number or a constant of that value.
    pub fn len_src(&mut self, n: i64) -> String {
        let names: Vec<String> = self
            .consts
            .iter()
            .filter(|c| c.ty == Ty::I64 && c.value == i128::from(n))
            .map(|c| c.name.clone())
            .collect();
        if !names.is_empty() && self.rng.chance(1, 2) {
            self.rng.pick(&names).clone()
        } else {
            n.to_string()
        }
    }

    fn struct_expr(&mut self, k: usize, depth: u32) -> E {
        let t = Ty::Struct(k);
        let d = depth.saturating_sub(1);
        match self.rng.weighted(&[3, 4, 2]) {
            0 => {
                if let Some((_, text)) = self.place(&t, false, &[]) {
                    return E::typed(text);
                }
            }
            2 => {
                if let Some(c) = self.call_value(&t, d) {
                    return c;
                }
            }
            _ => {}
        }
        let def = self.structs[k].clone();
        let mut fields: Vec<String> = def
            .fields
            .iter()
            .map(|(f, ft)| format!("{f}: {}", self.expr(ft, d).text))
            .collect();
        // Any order: the values are evaluated in declaration order.
        for i in (1..fields.len()).rev() {
            let j = self.rng.index(i + 1);
            fields.swap(i, j);
        }
        E::typed(format!("({} {{ {} }})", def.name, fields.join(", ")))
    }

    /// A slice of element type `elem` whose length is at least `need`, and
    /// that length bound.
    pub fn slice_expr(&mut self, elem: &Ty, need: i64) -> Option<(String, i64)> {
        let mut options: Vec<u8> = Vec::new();
        let arrays = self.array_roots(elem, need);
        if !arrays.is_empty() {
            options.extend([0, 0, 0]);
        }
        let slices: Vec<Var> = self
            .vars()
            .filter(|v| {
                matches!(&v.ty, Ty::Slice(e) | Ty::Reusable(e) if **e == *elem)
                    && v.min_len >= need
                    && (self.view_growables || !matches!(v.role, Role::Growable { .. }))
            })
            .cloned()
            .collect();
        if !slices.is_empty() {
            options.extend([1, 1]);
        }
        let calls: Vec<usize> = (0..self.ctx.callable)
            .filter(|&i| {
                let f = &self.funcs[i];
                f.ret == Some(Ty::Slice(Box::new(elem.clone())))
                    && f.ret_min_len >= need
                    && f.pure()
                    && self.affordable(f.cost)
            })
            .collect();
        if !calls.is_empty() {
            options.push(2);
        }
        if options.is_empty() {
            return None;
        }
        match *self.rng.pick(&options) {
            0 => {
                let (root, n) = self.rng.pick(&arrays).clone();
                let base = self.walk_to_array(&root, elem, n);
                let (range, len) = self.range_within(n, need, &base);
                Some((format!("{base}[{range}]"), len))
            }
            1 => {
                let v = self.rng.pick(&slices).clone();
                if matches!(v.ty, Ty::Slice(_)) && self.rng.chance(1, 4) {
                    return Some((v.name.clone(), v.min_len));
                }
                if self.has_template("g_tail") && v.min_len > need && self.rng.chance(1, 4) {
                    return Some((format!("g_tail({}[..])", v.name), v.min_len - 1));
                }
                let (range, len) = self.range_within(v.min_len, need, &v.name);
                Some((format!("{}[{range}]", v.name), len))
            }
            _ => {
                let f = self.funcs[*self.rng.pick(&calls)].clone();
                let args = self.call_args(&f, true)?;
                self.ctx.cost += self.ctx.mult * f.cost;
                Some((format!("{}({args})", f.name), f.ret_min_len))
            }
        }
    }

    /// A range `lo..hi` inside a length known to be at least `n`, at least
    /// `need` long; and the least length of the result.
    fn range_within(&mut self, n: i64, need: i64, base: &str) -> (String, i64) {
        match self.rng.weighted(&[2, 3, 2, 2, 1]) {
            0 => ("..".into(), n),
            1 => {
                let lo = self.rng.range(0, n - need);
                let hi = self.rng.range(lo + need, n);
                (format!("{lo}..{hi}"), hi - lo)
            }
            2 => {
                let lo = self.rng.range(0, n - need);
                (format!("{lo}.."), n - lo)
            }
            3 => {
                let hi = self.rng.range(need, n);
                (format!("..{hi}"), hi)
            }
            _ => {
                // The dynamic length itself.
                if need == 0 {
                    (format!("len({base}) / 2.."), 0)
                } else {
                    (format!("0..len({base})"), n)
                }
            }
        }
    }

    /// Variables holding an array of `elem` of length >= `need` somewhere
    /// inside (not behind a slice): `(root, length)` for each such array.
    fn array_roots(&self, elem: &Ty, need: i64) -> Vec<(String, i64)> {
        let mut out = Vec::new();
        for v in self.vars() {
            let mut lens = Vec::new();
            arrays_in(&v.ty, elem, need, &self.structs, &mut lens);
            for n in lens {
                out.push((v.name.clone(), n));
            }
        }
        out
    }

    /// A place text of an `[n]elem` array inside variable `root`.
    fn walk_to_array(&mut self, root: &str, elem: &Ty, n: i64) -> String {
        let target = Ty::Array(Box::new(elem.clone()), n);
        let v = self
            .vars()
            .find(|v| v.name == root)
            .expect("root in scope")
            .clone();
        let mut text = v.name.clone();
        let mut cur = v.ty.clone();
        while cur != target {
            let mut next = Vec::new();
            match &cur {
                Ty::Struct(k) => {
                    for (f, fty) in self.structs[*k].fields.clone() {
                        if fty.contains(&target, &self.structs) {
                            next.push((format!("{text}.{f}"), fty));
                        }
                    }
                }
                Ty::Array(e, m) => {
                    let idx = self.index_static(*m, &text);
                    next.push((format!("{text}[{idx}]"), (**e).clone()));
                }
                _ => unreachable!("walk_to_array through {cur:?}"),
            }
            let (t, c) = self.rng.pick(&next).clone();
            text = t;
            cur = c;
        }
        text
    }

    /// Whether a call of cost `cost` fits the current function's budget
    /// (and calls are not already nested two deep in arguments).
    pub fn affordable(&self, cost: u64) -> bool {
        self.call_nesting < 2
            && self.ctx.cost + self.ctx.mult.saturating_mul(cost) <= self.ctx.budget
    }

    /// Whether some pure callable function returns `t` or an aggregate
    /// holding it.
    fn has_call(&self, t: &Ty) -> bool {
        self.funcs[..self.ctx.callable].iter().any(|f| {
            f.pure()
                && self.affordable(f.cost)
                && f.ret
                    .as_ref()
                    .is_some_and(|r| !matches!(r, Ty::Slice(_)) && r.contains(t, &self.structs))
        })
    }

    /// A call of a pure function returning `t`, or a scalar component of
    /// an aggregate result (`f(..).f0`, `f(..)[1]`).
    fn call_scalar(&mut self, t: &Ty, depth: u32) -> Option<E> {
        let cands: Vec<usize> = (0..self.ctx.callable)
            .filter(|&i| {
                let f = &self.funcs[i];
                f.pure()
                    && self.affordable(f.cost)
                    && f.ret
                        .as_ref()
                        .is_some_and(|r| !matches!(r, Ty::Slice(_)) && r.contains(t, &self.structs))
            })
            .collect();
        if cands.is_empty() {
            return None;
        }
        let f = self.funcs[*self.rng.pick(&cands)].clone();
        let args = self.call_args(&f, true)?;
        self.ctx.cost += self.ctx.mult * f.cost;
        let mut text = format!("{}({args})", f.name);
        let mut cur = f.ret.clone().expect("filtered on a result");
        while cur != *t {
            let mut next = Vec::new();
            match &cur {
                Ty::Struct(k) => {
                    for (fname, fty) in self.structs[*k].fields.clone() {
                        if fty.contains(t, &self.structs) {
                            next.push((format!("{text}.{fname}"), fty));
                        }
                    }
                }
                Ty::Array(e, n) => {
                    let i = self.rng.range(0, n - 1);
                    next.push((format!("{text}[{i}]"), (**e).clone()));
                }
                _ => unreachable!(),
            }
            let (nt, nc) = self.rng.pick(&next).clone();
            text = nt;
            cur = nc;
        }
        let _ = depth;
        Some(E::typed(text))
    }

    /// A call of a pure function returning exactly `t`.
    fn call_value(&mut self, t: &Ty, _depth: u32) -> Option<E> {
        let cands: Vec<usize> = (0..self.ctx.callable)
            .filter(|&i| {
                let f = &self.funcs[i];
                f.pure() && self.affordable(f.cost) && f.ret.as_ref() == Some(t)
            })
            .collect();
        if cands.is_empty() {
            return None;
        }
        let f = self.funcs[*self.rng.pick(&cands)].clone();
        let args = self.call_args(&f, true)?;
        self.ctx.cost += self.ctx.mult * f.cost;
        Some(E::typed(format!("{}({args})", f.name)))
    }

    /// The argument list of a call of `f`, or `None` when some argument
    /// cannot be made here (no slice long enough, no mutable place).
    /// `pure` calls have value parameters only.
    pub fn call_args(&mut self, f: &super::FnSig, pure: bool) -> Option<String> {
        self.call_nesting += 1;
        let args = self.call_args_inner(f, pure);
        self.call_nesting -= 1;
        args
    }

    fn call_args_inner(&mut self, f: &super::FnSig, pure: bool) -> Option<String> {
        let mut args = Vec::new();
        let mut ref_roots: Vec<String> = Vec::new();
        for p in &f.params {
            if let Some(bound) = p.depth_bound {
                if self.rng.chance(2, 3) {
                    args.push(self.rng.range(0, bound).to_string());
                } else {
                    // The largest 2^k - 1 not above the bound.
                    let mut m = 1i64;
                    while m * 2 - 1 <= bound {
                        m *= 2;
                    }
                    let e = self.as_i64(&Ty::I64, 1);
                    args.push(format!("({e} & {})", m - 1));
                }
                continue;
            }
            if p.by_ref {
                assert!(!pure, "pure calls take no ref arguments");
                let (root, text) = self.place(&p.ty, true, &ref_roots)?;
                ref_roots.push(root);
                args.push(format!("ref {text}"));
                continue;
            }
            match &p.ty {
                Ty::Slice(e) => {
                    let (text, _) = self.slice_expr(e, p.min_len)?;
                    args.push(text);
                }
                Ty::Reusable(e) => {
                    let cands: Vec<String> = self
                        .vars()
                        .filter(|v| v.ty == Ty::Reusable(e.clone()) && v.min_len >= p.min_len)
                        .map(|v| v.name.clone())
                        .collect();
                    if cands.is_empty() {
                        return None;
                    }
                    args.push(self.rng.pick(&cands).clone());
                }
                t => {
                    let e = self.expr(t, 2);
                    args.push(e.text);
                }
            }
        }
        // Refs must not alias a place another argument reads through a
        // slice: the roots are distinct; value arguments are copies.
        Some(args.join(", "))
    }

    /// A call of a generic template at scalar type `t`.
    fn generic_scalar(&mut self, t: &Ty, depth: u32) -> E {
        let src = t.src(&self.structs);
        if self.has_template("g_twice") && self.rng.chance(1, 3) {
            let a = self.scalar(t, depth);
            let c = self.scalar(&Ty::Bool, depth);
            return E::typed(format!("g_twice::<{src}>({}, {})", a.text, c.text));
        }
        if self.has_template("g_pick") {
            let a = self.scalar(t, depth);
            let b = self.scalar(t, depth);
            let c = self.scalar(&Ty::Bool, depth);
            return E::typed(format!(
                "g_pick::<{src}>({}, {}, {})",
                a.text, b.text, c.text
            ));
        }
        self.leaf(t)
    }
}

/// Lengths of the arrays of `elem` (length >= `need`, > 0) inside type `t`,
/// not behind slices.
fn arrays_in(
    t: &Ty,
    elem: &Ty,
    need: i64,
    structs: &[super::types::StructDef],
    out: &mut Vec<i64>,
) {
    match t {
        Ty::Array(e, n) => {
            if **e == *elem && *n >= need {
                out.push(*n);
            }
            if *n > 0 {
                arrays_in(e, elem, need, structs, out);
            }
        }
        Ty::Struct(k) => {
            for (_, f) in &structs[*k].fields {
                arrays_in(f, elem, need, structs, out);
            }
        }
        _ => {}
    }
}

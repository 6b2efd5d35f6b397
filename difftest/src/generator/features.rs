//! The parts of a program that reach specific features: `main` and its
//! layout, edge values through every operator, the builtin `reusable::`
//! operations, the library pools and the generic templates.

use super::stmt::MAIN_BUDGET;
use super::types::Ty;
use super::{FnCtx, FnSig, Gen, MODULES, Out, Param, PoolState, Role, Var, lit_text};
use crate::program::{Item, ItemKind, Stmt};

/// A generic function a program may include.
pub(crate) struct Template {
    /// Its name (all start with `g_`).
    pub name: &'static str,
    /// Its source.
    pub text: &'static str,
    /// Templates it calls.
    pub needs: &'static [&'static str],
}

/// The generic functions: bodies use no operators on `T` (the language
/// checks generic bodies with `T` opaque).
pub(crate) const TEMPLATES: &[Template] = &[
    Template {
        name: "g_pick",
        text: "fn g_pick<T>(a: T, b: T, first: bool) -> T {\n    if first {\n        return a;\n    }\n    return b;\n}",
        needs: &[],
    },
    Template {
        name: "g_twice",
        text: "fn g_twice<T>(a: T, c: bool) -> T {\n    let b = g_pick(a, a, c);\n    return g_pick::<T>(b, a, !c);\n}",
        needs: &["g_pick"],
    },
    Template {
        name: "g_swap",
        text: "fn g_swap<T>(ref a: T, ref b: T) {\n    let t = a;\n    a = b;\n    b = t;\n}",
        needs: &[],
    },
    Template {
        name: "g_first",
        text: "fn g_first<T>(xs: []T) -> T {\n    return xs[0];\n}",
        needs: &[],
    },
    Template {
        name: "g_last",
        text: "fn g_last<T>(xs: []T) -> T {\n    return xs[len(xs) - 1];\n}",
        needs: &[],
    },
    Template {
        name: "g_at",
        text: "fn g_at<T>(xs: []T, i: i64) -> T {\n    return xs[ix(i, len(xs))];\n}",
        needs: &[],
    },
    Template {
        name: "g_fill",
        text: "fn g_fill<T>(xs: []T, v: T) {\n    for i in 0..len(xs) {\n        xs[i] = v;\n    }\n}",
        needs: &[],
    },
    Template {
        name: "g_count",
        text: "fn g_count<T>(xs: []T) -> i64 {\n    return len(xs) * size_of::<T>();\n}",
        needs: &[],
    },
    Template {
        name: "g_sizeof",
        text: "fn g_sizeof<T>() -> i64 {\n    return size_of::<T>();\n}",
        needs: &[],
    },
    Template {
        name: "g_pair",
        text: "fn g_pair<T>(a: T, b: T) -> [2]T {\n    return [a, b];\n}",
        needs: &[],
    },
    Template {
        name: "g_rep3",
        text: "fn g_rep3<T>(v: T) -> [3]T {\n    return [v; 3];\n}",
        needs: &[],
    },
    Template {
        name: "g_rev",
        text: "fn g_rev<T>(xs: []T) {\n    var i = 0;\n    var j = len(xs) - 1;\n    while i < j {\n        let t = xs[i];\n        xs[i] = xs[j];\n        xs[j] = t;\n        i += 1;\n        j -= 1;\n    }\n}",
        needs: &[],
    },
    Template {
        name: "g_tail",
        text: "fn g_tail<T>(xs: []T) -> []T {\n    if len(xs) == 0 {\n        return xs;\n    }\n    return xs[1..];\n}",
        needs: &[],
    },
    Template {
        name: "g_copyin",
        text: "fn g_copyin<T>(dst: []T, src: []T) -> i64 {\n    var n = 0;\n    for i in 0..len(src) {\n        if i < len(dst) {\n            dst[i] = src[i];\n            n += 1;\n        }\n    }\n    return n;\n}",
        needs: &[],
    },
    Template {
        name: "g_rgrow",
        text: "fn g_rgrow<T>(xs: reusable[]T, v: T, n: i64) -> reusable[]T {\n    var ys = xs;\n    for i in 0..n {\n        ys = reusable::append(ys, v);\n    }\n    return ys;\n}",
        needs: &[],
    },
    Template {
        name: "g_rpush",
        text: "fn g_rpush<T>(ref xs: reusable[]T, v: T) {\n    xs = reusable::append(xs, v);\n}",
        needs: &[],
    },
    Template {
        name: "g_rlen",
        text: "fn g_rlen<T>(xs: reusable[]T) -> i64 {\n    return len(xs) * 1000 + reusable::offset(xs);\n}",
        needs: &[],
    },
];

/// Cost of one call of a template (generous: the loops are short).
const TEMPLATE_COST: u64 = 40;

impl Gen {
    /// Whether template `name` is included.
    pub fn has_template(&self, name: &str) -> bool {
        self.templates.iter().any(|&i| TEMPLATES[i].name == name)
    }

    /// Picks the generic templates of this program (with what they call)
    /// and adds them as items.
    pub(super) fn pick_templates(&mut self) {
        let mut chosen: Vec<usize> = Vec::new();
        for (i, t) in TEMPLATES.iter().enumerate() {
            let reusable_only =
                t.name.starts_with("g_r") && t.name != "g_rev" && t.name != "g_rep3";
            if reusable_only && !self.feat.reusable {
                continue;
            }
            if self.rng.chance(1, 2) {
                chosen.push(i);
                for need in t.needs {
                    let j = TEMPLATES
                        .iter()
                        .position(|x| x.name == *need)
                        .expect("known template");
                    if !chosen.contains(&j) {
                        chosen.push(j);
                    }
                }
            }
        }
        chosen.sort_unstable();
        chosen.dedup();
        for &i in &chosen {
            self.text_item(TEMPLATES[i].text.to_string());
        }
        self.templates = chosen;
    }

    /// A function printing every operator applied to two values of type
    /// `t`, called from `main` with edge values.
    pub(super) fn gen_edge_function(&mut self, t: &Ty) {
        let idx = self.funcs.len();
        let name = format!("edges{idx}");
        let ts = t.src(&self.structs);
        let body: Vec<Stmt> = edge_ops(t, "a", "b", &mut self.rng)
            .into_iter()
            .map(Stmt::line)
            .collect();
        self.items.push(Item {
            kind: ItemKind::Func {
                head: format!("fn {name}(ref h: i64, a: {ts}, b: {ts}) {{"),
                body,
            },
            fixed: false,
        });
        let p = |ty: Ty, by_ref: bool| Param {
            ty,
            by_ref,
            min_len: 0,
            depth_bound: None,
        };
        self.funcs.push(FnSig {
            name,
            params: vec![p(Ty::I64, true), p(t.clone(), false), p(t.clone(), false)],
            ret: None,
            ret_min_len: 0,
            cost: 40,
        });
        self.edge_fn = Some((idx, t.clone()));
    }

    /// `main`: the checksum, constant and layout checks, the features in a
    /// random order between random statements, the pools' cleanup, the
    /// final checksum and the intended error.
    pub(super) fn gen_main(&mut self) -> Item {
        let returns = self.rng.chance(3, 5);
        let head = if returns {
            "fn main() -> i64 {"
        } else {
            "fn main() {"
        }
        .to_string();
        self.scopes = vec![Vec::new()];
        self.ctx = FnCtx {
            in_main: true,
            ret: returns.then_some(Ty::I64),
            mult: 1,
            budget: MAIN_BUDGET,
            has_h: true,
            callable: self.funcs.len(),
            ..FnCtx::default()
        };
        let mut body = Vec::new();
        let seed_val = self.int_value(&Ty::I64);
        body.push(Stmt::line(format!(
            "var h: i64 = {};",
            lit_text(&Ty::I64, seed_val, &mut self.rng)
        )));
        self.declare(Var {
            name: "h".into(),
            ty: Ty::I64,
            mutable: true,
            min_len: 0,
            range: None,
            role: Role::Plain,
        });
        if self.input.is_some() {
            // The input, folded into the checksum: every byte of stdin and of
            // each argument, and the arguments that are numbers.
            for line in [
                "let input = io::read_stdin();",
                "for b in input { h = mix(h, b as i64); }",
                "print(len(input), io::arg_count());",
                "for i in 0..io::arg_count() {",
                "    let a = io::arg(i);",
                "    for k, b in a { h = mix(h, (b as i64) + k); }",
                "    var v = 0;",
                "    if text::parse_int(a, ref v) { h = mix(h, v); print(v); }",
                "}",
                "print(h);",
            ] {
                body.push(Stmt::line(line));
            }
        }
        // The folded constants and the struct layouts, against the
        // generator's own arithmetic.
        for c in self.consts.clone() {
            if self.rng.chance(1, 2) {
                let v = if c.ty == Ty::Bool {
                    (if c.value != 0 { "true" } else { "false" }).to_string()
                } else {
                    lit_text(&c.ty, c.value, &mut self.rng)
                };
                body.push(Stmt::line(format!(
                    "assert({} == {v}, \"constant {}\");",
                    c.name, c.name
                )));
            } else {
                body.push(Stmt::line(format!("print({});", c.name)));
            }
        }
        for k in 0..self.structs.len() {
            let (size, _) = Ty::Struct(k).layout(&self.structs);
            let name = self.structs[k].name.clone();
            if self.rng.chance(1, 2) {
                body.push(Stmt::line(format!(
                    "assert(size_of::<{name}>() == {size}, \"size of {name}\");"
                )));
            }
            body.push(Stmt::line(format!("print(size_of::<{name}>());")));
        }
        #[derive(Clone, Copy)]
        enum F {
            Edges,
            Reusable,
            Pool(usize),
            Generics,
            Recursion,
            Traps,
        }
        let mut features = Vec::new();
        if self.edge_fn.is_some() {
            features.push(F::Edges);
        }
        if self.feat.reusable {
            for _ in 0..self.rng.range(1, 3) {
                features.push(F::Reusable);
            }
        }
        for m in 0..2 {
            if self.pool_modules[m] {
                for _ in 0..self.rng.range(1, 2) {
                    features.push(F::Pool(m));
                }
            }
        }
        if !self.templates.is_empty() {
            features.push(F::Generics);
        }
        if self.funcs.iter().any(|f| f.name.starts_with("rec")) {
            features.push(F::Recursion);
        }
        if self.feat.traps {
            features.push(F::Traps);
        }
        for i in (1..features.len()).rev() {
            let j = self.rng.index(i + 1);
            features.swap(i, j);
        }
        for f in features {
            let n = self.rng.range(1, 4) as usize;
            self.stmts(&mut body, n);
            match f {
                F::Edges => self.edges_feature(&mut body),
                F::Reusable => self.reusable_feature(&mut body),
                F::Pool(m) => self.pool_feature(&mut body, m),
                F::Generics => self.generics_feature(&mut body),
                F::Recursion => self.recursion_feature(&mut body),
                F::Traps => {
                    for _ in 0..self.rng.range(2, 4) {
                        self.trap(&mut body);
                    }
                }
            }
        }
        let n = self.rng.range(2, 6) as usize;
        self.stmts(&mut body, n);
        self.cleanup(&mut body);
        body.push(Stmt::line("print(h);"));
        if let Some(k) = self.error_kind {
            self.error_snippet(&mut body, k);
        }
        if returns {
            let r = match self.rng.index(3) {
                0 => "return h;".to_string(),
                1 => "return h & 255;".to_string(),
                _ => format!("return {};", self.rng.range(0, 255)),
            };
            body.push(Stmt::line(r));
        }
        self.scopes.clear();
        Item {
            kind: ItemKind::Func { head, body },
            fixed: true,
        }
    }

    /// Edge values through the edge function (in a loop over all pairs, and
    /// with literal arguments) and the same operators on `let`-bound edge
    /// literals, which the optimizer may fold.
    fn edges_feature(&mut self, out: &mut Out) {
        let (idx, t) = self.edge_fn.clone().expect("edge function generated");
        let name = self.funcs[idx].name.clone();
        let ts = t.src(&self.structs);
        let edges = edge_values(&t);
        let arr = self.fresh("e");
        let lits: Vec<String> = edges
            .iter()
            .map(|&v| lit_text(&t, v, &mut self.rng))
            .collect();
        let n = edges.len();
        out.push(Stmt::line(format!(
            "let {arr}: [{n}]{ts} = [{}];",
            lits.join(", ")
        )));
        let (i, j) = (self.fresh("i"), self.fresh("j"));
        out.push(Stmt::Loop {
            head: format!("for {i} in 0..{n} {{"),
            body: vec![
                Stmt::Loop {
                    head: format!("for {j} in 0..{n} {{"),
                    body: vec![Stmt::line(format!(
                        "{name}(ref h, {arr}[{i}], {arr}[{j}]);"
                    ))],
                },
                Stmt::line("print(h);"),
            ],
        });
        self.ctx.cost += (n * n) as u64 * 40;
        let a = lit_text(&t, *self.rng.pick(&edges), &mut self.rng);
        let b = lit_text(&t, *self.rng.pick(&edges), &mut self.rng);
        out.push(Stmt::line(format!("{name}(ref h, {a}, {b});")));
        let (an, bn) = (self.fresh("a"), self.fresh("b"));
        let a = lit_text(&t, *self.rng.pick(&edges), &mut self.rng);
        let b = lit_text(&t, *self.rng.pick(&edges), &mut self.rng);
        out.push(Stmt::line(format!("let {an}: {ts} = {a};")));
        out.push(Stmt::line(format!("let {bn}: {ts} = {b};")));
        for op in edge_ops(&t, &an, &bn, &mut self.rng) {
            out.push(Stmt::line(op));
        }
        out.push(Stmt::line("print(h);"));
    }

    /// An element type for a reusable or pool slice.
    fn elem_type(&mut self) -> Ty {
        match self
            .rng
            .weighted(&[6, if self.structs.is_empty() { 0 } else { 2 }, 2, 1])
        {
            0 => self.scalar_type(),
            1 => Ty::Struct(self.rng.index(self.structs.len())),
            2 => Ty::Array(Box::new(self.scalar_type()), self.rng.range(1, 3)),
            _ => Ty::Array(Box::new(Ty::I64), 0),
        }
    }

    /// A builtin reusable slice: allocated, observed, grown, resized; it
    /// stays in scope for the random statements (which may grow it in
    /// loops) and is freed by the cleanup or here.
    fn reusable_feature(&mut self, out: &mut Out) {
        let elem = self.elem_type();
        let es = self.ty_src(&elem);
        let name = self.fresh("r");
        let n0 = *self.rng.pick(&[0i64, 0, 1, 2, 3, 5, 8]);
        let init = match self.rng.index(3) {
            0 => format!("var {name}: reusable[]{es} = reusable::alloc::<{es}>({n0});"),
            1 => format!("var {name}: reusable[]{es} = reusable::alloc({n0});"),
            _ => format!("var {name} = reusable::alloc::<{es}>({n0});"),
        };
        out.push(Stmt::line(init));
        out.push(Stmt::line(format!("print(len({name}));")));
        out.push(Stmt::line(format!("print(reusable::offset({name}));")));
        self.declare(Var {
            name: name.clone(),
            ty: Ty::Reusable(Box::new(elem)),
            mutable: true,
            min_len: n0,
            range: None,
            role: Role::Growable {
                pool: None,
                max_len: n0,
            },
        });
        for _ in 0..self.rng.range(1, 3) {
            self.growth_of(out, &name);
        }
        self.observe(out, &name);
        if self.rng.chance(1, 4) {
            out.push(Stmt::line(format!("reusable::free({name});")));
            self.forget(&name);
        }
    }

    /// A library pool with one or two slices.
    fn pool_feature(&mut self, out: &mut Out, m: usize) {
        let module = MODULES[m];
        let p = self.fresh("p");
        let cap = *self.rng.pick(&[512i64, 4096, 4096, 65536]);
        out.push(Stmt::line(format!("var {p} = {module}::new({cap});")));
        self.pools.push(PoolState {
            var: p.clone(),
            module: m,
            cap,
        });
        for _ in 0..self.rng.range(1, 2) {
            let elem = self.elem_type();
            let es = self.ty_src(&elem);
            let q = self.fresh("q");
            let n0 = *self.rng.pick(&[0i64, 1, 2, 3, 4]);
            if !self.pool_fits(&p, &elem, n0, 0) {
                continue;
            }
            let init = if self.rng.chance(1, 2) {
                format!("var {q}: []{es} = {module}::alloc_slice::<{es}>(ref {p}, {n0});")
            } else {
                format!("var {q} = {module}::alloc_slice::<{es}>(ref {p}, {n0});")
            };
            out.push(Stmt::line(init));
            self.declare(Var {
                name: q.clone(),
                ty: Ty::Slice(Box::new(elem)),
                mutable: true,
                min_len: n0,
                range: None,
                role: Role::Growable {
                    pool: Some((p.clone(), m)),
                    max_len: n0,
                },
            });
            self.observe(out, &q);
            for _ in 0..self.rng.range(0, 2) {
                self.growth_of(out, &q);
            }
            self.observe(out, &q);
        }
        out.push(Stmt::line(format!("print({p}.tree.free_bytes);")));
    }

    /// Whether pool `p` can take a slice growing from `old` to `new`
    /// elements of `elem` (bounds of every live slice, moves counted twice,
    /// well inside the capacity).
    fn pool_fits(&self, p: &str, elem: &Ty, new: i64, old: i64) -> bool {
        let Some(pool) = self.pools.iter().find(|x| x.var == p) else {
            return false;
        };
        let size = elem.size(&self.structs);
        let mut total = 0i64;
        for v in self.vars() {
            if let Role::Growable {
                pool: Some((pv, _)),
                max_len,
            } = &v.role
                && pv == p
            {
                total += round8(max_len * v.ty.elem().expect("slice").size(&self.structs));
            }
        }
        total += round8(new * size) - round8(old * size);
        total * 3 <= pool.cap
    }

    /// Prints what can be observed of a growable slice: length, offset.
    fn observe(&mut self, out: &mut Out, name: &str) {
        let Some(v) = self.vars().find(|v| v.name == name).cloned() else {
            return;
        };
        match &v.role {
            Role::Growable { pool: None, .. } => {
                out.push(Stmt::line(format!("print(reusable::offset({name}));")));
                if self.has_template("g_rlen") && self.rng.chance(1, 2) {
                    out.push(Stmt::line(format!("print(g_rlen({name}));")));
                } else {
                    out.push(Stmt::line(format!("print(len({name}));")));
                }
            }
            Role::Growable {
                pool: Some((p, m)), ..
            } => {
                out.push(Stmt::line(format!(
                    "print({}::offset_of(ref {p}, {name}));",
                    MODULES[*m]
                )));
                out.push(Stmt::line(format!("print(len({name}));")));
            }
            _ => {}
        }
    }

    /// A print of a growable slice in scope (a random statement).
    pub fn observe_growable(&mut self, out: &mut Out) {
        let names: Vec<String> = self
            .vars()
            .filter(|v| matches!(v.role, Role::Growable { .. }))
            .map(|v| v.name.clone())
            .collect();
        if names.is_empty() {
            return;
        }
        let n = self.rng.pick(&names).clone();
        self.observe(out, &n);
    }

    /// A growth statement on a random growable slice (a random statement).
    pub fn growth_stmt(&mut self, out: &mut Out) {
        let names: Vec<String> = self
            .vars()
            .filter(|v| matches!(v.role, Role::Growable { .. }))
            .map(|v| v.name.clone())
            .collect();
        if names.is_empty() {
            return;
        }
        let n = self.rng.pick(&names).clone();
        self.growth_of(out, &n);
    }

    /// Grows (or, at the top level of `main`, resizes) the growable slice
    /// `name`, keeping its length bounds.
    fn growth_of(&mut self, out: &mut Out, name: &str) {
        let v = self
            .vars()
            .find(|v| v.name == name)
            .cloned()
            .expect("growable in scope");
        let Role::Growable { pool, max_len } = v.role.clone() else {
            unreachable!("not growable")
        };
        let elem = v.ty.elem().expect("slice").clone();
        let es = self.ty_src(&elem);
        let top = self.ctx.nesting == 0;
        let mult = self.ctx.mult as i64;
        // (statement, elements added (or the new length when `set`), set)
        let (text, count, set) = match &pool {
            None => {
                let val = self.expr(&elem, 2).text;
                let k = self.rng.range(0, 3);
                match self.rng.weighted(&[
                    4,
                    if self.has_template("g_rgrow") { 1 } else { 0 },
                    if self.has_template("g_rpush") { 1 } else { 0 },
                    if top { 2 } else { 0 },
                    if top { 1 } else { 0 },
                ]) {
                    0 => (
                        format!("{name} = reusable::append({name}, {val});"),
                        1,
                        false,
                    ),
                    1 => (
                        format!("{name} = g_rgrow::<{es}>({name}, {val}, {k});"),
                        k,
                        false,
                    ),
                    2 => (format!("g_rpush::<{es}>(ref {name}, {val});"), 1, false),
                    3 => {
                        let m = *self.rng.pick(&[0i64, 1, 2, 4, 9]);
                        (format!("{name} = reusable::resize({name}, {m});"), m, true)
                    }
                    _ => {
                        // A loop of appends.
                        let i = self.fresh("i");
                        let k = self.rng.range(1, 6);
                        let saved = self.ctx.mult;
                        self.ctx.mult *= k as u64;
                        let val = self.expr(&elem, 2).text;
                        self.ctx.mult = saved;
                        let body = vec![Stmt::line(format!(
                            "{name} = reusable::append({name}, {val});"
                        ))];
                        out.push(Stmt::Loop {
                            head: format!("for {i} in 0..{k} {{"),
                            body,
                        });
                        self.set_len(name, v.min_len + k, max_len + k);
                        return;
                    }
                }
            }
            Some((p, m)) => {
                let module = MODULES[*m];
                let val = self.expr(&elem, 2).text;
                if top && self.rng.chance(1, 3) {
                    let new = *self.rng.pick(&[0i64, 1, 3, 6]);
                    if !self.pool_fits(p, &elem, new, max_len) {
                        return;
                    }
                    (
                        format!("{name} = {module}::realloc_slice(ref {p}, {name}, {new});"),
                        new,
                        true,
                    )
                } else {
                    if !self.pool_fits(p, &elem, max_len + mult, max_len) {
                        return;
                    }
                    (
                        format!("{name} = {module}::append(ref {p}, {name}, {val});"),
                        1,
                        false,
                    )
                }
            }
        };
        if !set && pool.is_none() && (max_len + count * mult) > 4096 {
            return;
        }
        out.push(Stmt::line(text));
        if set {
            self.set_len(name, count, count);
        } else {
            let min = if top { v.min_len + count } else { v.min_len };
            self.set_len(name, min, max_len + count * mult);
        }
    }

    fn set_len(&mut self, name: &str, min: i64, max: i64) {
        if let Some(v) = self.var_mut(name) {
            v.min_len = min;
            if let Role::Growable { max_len, .. } = &mut v.role {
                *max_len = max;
            }
        }
    }

    /// A statement calling a generic template at a random type.
    pub fn generic_stmt(&mut self, out: &mut Out) {
        let names: Vec<&'static str> = self.templates.iter().map(|&i| TEMPLATES[i].name).collect();
        let name = *self.rng.pick(&names);
        self.call_template(out, name);
    }

    /// A call of template `name` (falls back to a declaration when the
    /// scope has nothing to call it with).
    fn call_template(&mut self, out: &mut Out, name: &str) {
        self.ctx.cost += self.ctx.mult * TEMPLATE_COST;
        let t = self.value_type();
        let ts = self.ty_src(&t);
        let printable = t.is_scalar() && self.ctx.mult <= 12;
        let text = match name {
            "g_pick" | "g_twice" => {
                let a = self.expr(&t, 2).text;
                let c = self.scalar(&Ty::Bool, 2).text;
                let call = if name == "g_pick" {
                    let b = self.expr(&t, 2).text;
                    format!("g_pick::<{ts}>({a}, {b}, {c})")
                } else {
                    format!("g_twice::<{ts}>({a}, {c})")
                };
                self.bind_or_print(out, call, &t, printable);
                return;
            }
            "g_swap" => {
                let Some(wt) = self.writable_type() else {
                    return self.decl(out);
                };
                let Some((r1, p1)) = self.place(&wt, true, &[]) else {
                    return self.decl(out);
                };
                let Some((_, p2)) = self.place(&wt, true, &[r1]) else {
                    return self.decl(out);
                };
                let ws = self.ty_src(&wt);
                format!("g_swap::<{ws}>(ref {p1}, ref {p2});")
            }
            "g_first" | "g_last" | "g_at" => {
                let Some((s, _)) = self.slice_expr(&t, 1) else {
                    return self.decl(out);
                };
                let call = if name == "g_at" {
                    let i = self.as_i64(&Ty::I64, 2);
                    format!("g_at::<{ts}>({s}, {i})")
                } else {
                    format!("{name}({s})")
                };
                self.bind_or_print(out, call, &t, printable);
                return;
            }
            "g_fill" => {
                let Some((s, _)) = self.slice_expr(&t, 0) else {
                    return self.decl(out);
                };
                let v = self.expr(&t, 2).text;
                format!("g_fill::<{ts}>({s}, {v});")
            }
            "g_rev" => {
                let Some((s, _)) = self.slice_expr(&t, 0) else {
                    return self.decl(out);
                };
                format!("g_rev({s});")
            }
            "g_copyin" => {
                let (Some((d, _)), Some((s, _))) = (self.slice_expr(&t, 0), self.slice_expr(&t, 0))
                else {
                    return self.decl(out);
                };
                if self.ctx.has_h {
                    format!("h += g_copyin({d}, {s});")
                } else {
                    format!("g_copyin({d}, {s});")
                }
            }
            "g_count" => {
                let Some((s, _)) = self.slice_expr(&t, 0) else {
                    return self.decl(out);
                };
                if self.ctx.mult <= 12 {
                    format!("print(g_count({s}));")
                } else {
                    format!("g_count({s});")
                }
            }
            "g_sizeof" => {
                if self.ctx.mult <= 12 {
                    format!("print(g_sizeof::<{ts}>());")
                } else {
                    return;
                }
            }
            "g_pair" | "g_rep3" => {
                let a = self.expr(&t, 2).text;
                let (call, rt) = if name == "g_pair" {
                    let b = self.expr(&t, 2).text;
                    (
                        format!("g_pair::<{ts}>({a}, {b})"),
                        Ty::Array(Box::new(t.clone()), 2),
                    )
                } else {
                    (
                        format!("g_rep3::<{ts}>({a})"),
                        Ty::Array(Box::new(t.clone()), 3),
                    )
                };
                self.bind_or_print(out, call, &rt, false);
                return;
            }
            "g_tail" => {
                self.view_growables = false;
                let slice = self.slice_expr(&t, 0);
                self.view_growables = true;
                let Some((s, len)) = slice else {
                    return self.decl(out);
                };
                let v = self.fresh("v");
                out.push(Stmt::line(format!("let {v} = g_tail({s});")));
                self.declare(Var {
                    name: v,
                    ty: Ty::Slice(Box::new(t)),
                    mutable: false,
                    min_len: (len - 1).max(0),
                    range: None,
                    role: Role::Plain,
                });
                return;
            }
            // The reusable templates are reached through growth statements.
            _ => return self.growth_stmt(out),
        };
        out.push(Stmt::line(text));
    }

    /// `let v = call;` (declared) or `print(call);` for a printable scalar.
    fn bind_or_print(&mut self, out: &mut Out, call: String, t: &Ty, printable: bool) {
        if printable && self.rng.chance(1, 2) {
            out.push(Stmt::line(format!("print({call});")));
            return;
        }
        let v = self.fresh("v");
        let mutable = self.rng.chance(1, 2);
        let kw = if mutable { "var" } else { "let" };
        out.push(Stmt::line(format!("{kw} {v} = {call};")));
        let min_len = match t {
            Ty::Array(_, n) => *n,
            _ => 0,
        };
        self.declare(Var {
            name: v,
            ty: t.clone(),
            mutable,
            min_len,
            range: None,
            role: Role::Plain,
        });
    }

    /// Every included template called at least once, most at two types.
    fn generics_feature(&mut self, out: &mut Out) {
        let names: Vec<&'static str> = self.templates.iter().map(|&i| TEMPLATES[i].name).collect();
        for name in names {
            for _ in 0..self.rng.range(1, 2) {
                self.call_template(out, name);
            }
        }
    }

    /// Calls of the recursive functions with depths up to their bounds.
    fn recursion_feature(&mut self, out: &mut Out) {
        let recs: Vec<FnSig> = self
            .funcs
            .iter()
            .filter(|f| f.name.starts_with("rec"))
            .cloned()
            .collect();
        for f in recs {
            if !self.affordable(f.cost) {
                continue;
            }
            let Some(args) = self.call_args(&f, false) else {
                continue;
            };
            self.ctx.cost += f.cost;
            let call = format!("{}({args})", f.name);
            match &f.ret {
                Some(t) if t.is_scalar() => out.push(Stmt::line(format!("print({call});"))),
                Some(t) => {
                    let v = self.fresh("v");
                    out.push(Stmt::line(format!("let {v} = {call};")));
                    self.declare(Var {
                        name: v,
                        ty: t.clone(),
                        mutable: false,
                        min_len: 0,
                        range: None,
                        role: Role::Plain,
                    });
                    out.push(Stmt::line("print(h);"));
                }
                None => out.push(Stmt::line(format!("{call};"))),
            }
        }
    }

    /// Frees the live pool slices, finishes the pools, frees some reusable
    /// slices.
    fn cleanup(&mut self, out: &mut Out) {
        let live: Vec<Var> = self
            .vars()
            .filter(|v| matches!(v.role, Role::Growable { .. }))
            .cloned()
            .collect();
        for v in &live {
            match &v.role {
                Role::Growable {
                    pool: Some((p, m)), ..
                } => {
                    out.push(Stmt::line(format!(
                        "{}::free_slice(ref {p}, {});",
                        MODULES[*m], v.name
                    )));
                }
                _ => {
                    if self.rng.chance(2, 3) {
                        out.push(Stmt::line(format!("reusable::free({});", v.name)));
                    }
                }
            }
        }
        for p in self.pools.clone() {
            out.push(Stmt::line(format!("print({}.tree.free_bytes);", p.var)));
            out.push(Stmt::line(format!(
                "{}::finish(ref {});",
                MODULES[p.module], p.var
            )));
        }
        for v in live {
            self.forget(&v.name);
        }
    }
}

/// `v` rounded up to a multiple of 8.
fn round8(v: i64) -> i64 {
    (v + 7) / 8 * 8
}

/// The edge values of an integer type.
fn edge_values(t: &Ty) -> Vec<i128> {
    if *t == Ty::U8 {
        vec![0, 255, 1, 128, 127]
    } else if *t == Ty::U64 {
        vec![0, t.max(), 1, 1 << 63, i64::MAX.into()]
    } else {
        vec![t.min(), t.max(), 0, -1, 1]
    }
}

/// Statements printing every operator on `a` and `b` of type `t`: the
/// arithmetic (division by `(b | 1)` and by `-1`), shifts by the operand
/// and by out-of-range literals, comparisons, unary operators and casts.
fn edge_ops(t: &Ty, a: &str, b: &str, rng: &mut crate::rng::Rng) -> Vec<String> {
    let ts = match t {
        Ty::I64 => "i64",
        Ty::I32 => "i32",
        Ty::U64 => "u64",
        _ => "u8",
    };
    let mut ops = vec![
        format!("{a} + {b}"),
        format!("{a} - {b}"),
        format!("{a} * {b}"),
        format!("{a} / ({b} | 1)"),
        format!("{a} % ({b} | 1)"),
        format!("{a} & {b}"),
        format!("{a} | {b}"),
        format!("{a} ^ {b}"),
        format!("{a} << {b}"),
        format!("{a} >> {b}"),
        format!("-{a}"),
        format!("!{a}"),
        format!("{a} < {b}"),
        format!("{a} >= {b}"),
        format!("{a} == {b}"),
        format!("{a} as i64"),
        format!("{a} as i32"),
        format!("{a} as u8"),
        format!("{a} as u64"),
        format!("({a} < {b}) as {ts}"),
    ];
    let amounts: &[i64] = match t {
        Ty::I64 => &[64, 65, 200, -1],
        Ty::I32 => &[32, 33, 200, -1],
        Ty::U64 => &[64, 65, 200, 255],
        _ => &[8, 9, 200, 255],
    };
    for &k in amounts {
        let lit = if k < 0 {
            format!("({k})")
        } else {
            k.to_string()
        };
        if rng.chance(1, 2) {
            ops.push(format!("{a} << {lit}"));
        } else {
            ops.push(format!("{a} >> {lit}"));
        }
    }
    if t.min() < 0 {
        ops.push(format!("{a} / (-1)"));
        ops.push(format!("{a} % (-1)"));
    } else {
        ops.push(format!("{a} / 255"));
    }
    let mut out: Vec<String> = ops.into_iter().map(|o| format!("print({o});")).collect();
    out.push(format!("h = mix(h, ({a} * {b}) as i64);"));
    out
}

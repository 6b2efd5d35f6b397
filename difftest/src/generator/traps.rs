//! Statements aimed at the places where a lowering goes wrong most often:
//! value semantics of aggregates (copies, a `ref` and a value of the same
//! variable, assignments whose right side reads the target), evaluation
//! order (struct fields in declaration order, call arguments and operands
//! left to right), places evaluated once in compound assignments, `for`
//! bounds evaluated once, short-circuit `&&` and `||` guarding side
//! effects and errors, shadowing, and calls with many parameters.

use super::types::{INTS, Ty};
use super::{FnSig, Gen, Out, Param, Role, Var};
use crate::program::{Item, ItemKind, Stmt};

/// Source of the helper the traps use to observe evaluation order.
pub(crate) const TICK: &str = "fn tick(ref k: i64) -> i64 {\n    k += 1;\n    return k;\n}";

impl Gen {
    /// One trap statement (group), chosen at random.
    pub fn trap(&mut self, out: &mut Out) {
        self.ctx.cost += self.ctx.mult * 8;
        match self.rng.index(9) {
            8 => self.trap_short_circuit(out),
            0 => self.trap_copy(out),
            1 => self.trap_permute(out),
            2 => self.trap_place_once(out),
            3 => self.trap_order(out),
            4 => self.trap_for_bound(out),
            5 => self.trap_shadow(out),
            6 => self.trap_alias(out),
            _ => self.trap_self_assign_call(out),
        }
    }

    /// A path from a value of type `t` to a scalar inside it (`.f1[2]`),
    /// with literal indices, and the scalar's type.
    fn scalar_path(&mut self, t: &Ty) -> Option<(String, Ty)> {
        let mut path = String::new();
        let mut cur = t.clone();
        loop {
            match &cur {
                _ if cur.is_scalar() => return Some((path, cur)),
                Ty::Struct(k) => {
                    let fields: Vec<(String, Ty)> = self.structs[*k]
                        .fields
                        .iter()
                        .filter(|(_, f)| has_scalar(f, &self.structs))
                        .cloned()
                        .collect();
                    if fields.is_empty() {
                        return None;
                    }
                    let (f, fty) = self.rng.pick(&fields).clone();
                    path.push_str(&format!(".{f}"));
                    cur = fty;
                }
                Ty::Array(e, n) if *n > 0 => {
                    path.push_str(&format!("[{}]", self.rng.range(0, n - 1)));
                    cur = (**e).clone();
                }
                _ => return None,
            }
        }
    }

    /// An aggregate variable in scope with a scalar inside (`writable`:
    /// rooted in a `var` or `ref` parameter).
    fn aggregate_var(&mut self, writable: bool) -> Option<Var> {
        let vars: Vec<Var> = self
            .vars()
            .filter(|v| {
                matches!(v.ty, Ty::Struct(_) | Ty::Array(..))
                    && has_scalar(&v.ty, &self.structs)
                    && (!writable || v.mutable && v.role == Role::Plain)
            })
            .cloned()
            .collect();
        if vars.is_empty() {
            return None;
        }
        Some(self.rng.pick(&vars).clone())
    }

    /// `var c = v;`, a write into `c`, then the same scalar of both: `v`
    /// must not see the write.
    fn trap_copy(&mut self, out: &mut Out) {
        let Some(v) = self.aggregate_var(false) else {
            return self.decl(out);
        };
        let Some((path, t)) = self.scalar_path(&v.ty) else {
            return self.decl(out);
        };
        let c = self.fresh("c");
        out.push(Stmt::line(format!("var {c} = {};", v.name)));
        let e = self.scalar(&t, 2).text;
        out.push(Stmt::line(format!("{c}{path} = {e};")));
        out.push(Stmt::line(format!("print({}{path});", v.name)));
        out.push(Stmt::line(format!("print({c}{path});")));
        self.declare(Var {
            name: c,
            ty: v.ty.clone(),
            mutable: true,
            min_len: match v.ty {
                Ty::Array(_, n) => n,
                _ => 0,
            },
            range: None,
            role: Role::Plain,
        });
    }

    /// An assignment whose right side is built from the target itself: a
    /// permuted array literal, or a struct literal whose fields read other
    /// fields of the target.
    fn trap_permute(&mut self, out: &mut Out) {
        let Some(v) = self.aggregate_var(true) else {
            return self.decl(out);
        };
        let name = v.name.clone();
        match &v.ty {
            Ty::Array(_, n) => {
                let n = *n;
                let mut idx: Vec<i64> = (0..n).collect();
                for i in (1..idx.len()).rev() {
                    let j = self.rng.index(i + 1);
                    idx.swap(i, j);
                }
                let parts: Vec<String> = idx.iter().map(|i| format!("{name}[{i}]")).collect();
                out.push(Stmt::line(format!("{name} = [{}];", parts.join(", "))));
            }
            Ty::Struct(k) => {
                let fields = self.structs[*k].fields.clone();
                let sname = self.structs[*k].name.clone();
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(f, t)| {
                        let same: Vec<&String> = fields
                            .iter()
                            .filter(|(_, u)| u == t)
                            .map(|(g, _)| g)
                            .collect();
                        format!("{f}: {name}.{}", self.rng.pick(&same))
                    })
                    .collect();
                out.push(Stmt::line(format!(
                    "{name} = {sname} {{ {} }};",
                    parts.join(", ")
                )));
            }
            _ => unreachable!("aggregate_var returns arrays and structs"),
        }
        for _ in 0..2 {
            if let Some((path, _)) = self.scalar_path(&v.ty) {
                out.push(Stmt::line(format!("print({name}{path});")));
            }
        }
    }

    /// `a[ix(tick(ref k), n)] op= e;`: the place (and its index's side
    /// effect) is evaluated once.
    fn trap_place_once(&mut self, out: &mut Out) {
        let t = self.rng.pick(&INTS).clone();
        let ts = t.src(&self.structs);
        let n = self.rng.range(1, 5);
        let (a, k) = (self.fresh("a"), self.fresh("k"));
        let fill = self.scalar_typed(&t, 1).text;
        out.push(Stmt::line(format!("var {a}: [{n}]{ts} = [{fill}; {n}];")));
        out.push(Stmt::line(format!(
            "var {k}: i64 = {};",
            self.rng.range(-3, 3)
        )));
        let op = *self.rng.pick(&["+", "-", "*", "^", "|", "<<", "/", "%"]);
        let rhs = if op == "/" || op == "%" {
            self.divisor(&t, 1).text
        } else {
            self.scalar(&t, 1).text
        };
        out.push(Stmt::line(format!(
            "{a}[ix(tick(ref {k}), {n})] {op}= {rhs};"
        )));
        out.push(Stmt::line(format!("print({k});")));
        for i in 0..n {
            out.push(Stmt::line(format!("print({a}[{i}]);")));
        }
        self.declare(Var {
            name: a,
            ty: Ty::Array(Box::new(t), n),
            mutable: true,
            min_len: n,
            range: None,
            role: Role::Plain,
        });
    }

    /// Evaluation order, observed through `tick`: struct literal fields
    /// (declaration order, whatever the source order), call arguments,
    /// operands, array literal elements.
    fn trap_order(&mut self, out: &mut Out) {
        let k = self.fresh("k");
        out.push(Stmt::line(format!("var {k}: i64 = 0;")));
        let int_struct = (0..self.structs.len()).find(|&s| {
            let f = &self.structs[s].fields;
            f.len() >= 2 && f.iter().filter(|(_, t)| t.is_int()).count() >= 2
        });
        match (self.rng.index(4), int_struct) {
            (0, Some(s)) => {
                let def = self.structs[s].clone();
                let mut parts: Vec<String> = def
                    .fields
                    .iter()
                    .map(|(f, t)| {
                        if t.is_int() {
                            format!("{f}: (tick(ref {k}) as {})", t.src(&self.structs))
                        } else {
                            format!("{f}: {}", self.expr(t, 1).text)
                        }
                    })
                    .collect();
                for i in (1..parts.len()).rev() {
                    let j = self.rng.index(i + 1);
                    parts.swap(i, j);
                }
                let v = self.fresh("v");
                out.push(Stmt::line(format!(
                    "let {v} = {} {{ {} }};",
                    def.name,
                    parts.join(", ")
                )));
                for (f, t) in &def.fields {
                    if t.is_int() {
                        out.push(Stmt::line(format!("print({v}.{f});")));
                    }
                }
            }
            (1, _) => {
                out.push(Stmt::line(format!(
                    "print(mix(tick(ref {k}), tick(ref {k}) * 3));"
                )));
            }
            (2, _) => {
                let op = *self.rng.pick(&["-", "<<", "/", "%", "^"]);
                out.push(Stmt::line(format!(
                    "print(tick(ref {k}) * 7 {op} tick(ref {k}));"
                )));
            }
            _ => {
                let v = self.fresh("v");
                out.push(Stmt::line(format!(
                    "let {v}: [3]i64 = [tick(ref {k}), tick(ref {k}) * 10, tick(ref {k}) * 100];"
                )));
                out.push(Stmt::line(format!("print({v}[0] + {v}[1] + {v}[2]);")));
            }
        }
        out.push(Stmt::line(format!("print({k});")));
    }

    /// A `for` whose bound variable the body changes: the bound was
    /// evaluated once, so the loop still ends.
    fn trap_for_bound(&mut self, out: &mut Out) {
        if self.ctx.loops >= 2 {
            return self.decl(out);
        }
        let nb = self.fresh("nb");
        let i = self.fresh("i");
        let e = self.as_i64(&Ty::I64, 1);
        out.push(Stmt::line(format!("var {nb} = ({e} & 3);")));
        out.push(Stmt::Loop {
            head: format!("for {i} in 0..{nb} {{"),
            body: vec![
                Stmt::line(format!("{nb} += 1;")),
                Stmt::line(format!("print({nb} * 100 + {i});")),
            ],
        });
        self.ctx.cost += self.ctx.mult * 4;
    }

    /// `let v = f(v);`: a new binding of an existing name, initialised from
    /// the old one; later statements see the new one.
    fn trap_shadow(&mut self, out: &mut Out) {
        let locals: Vec<Var> = self
            .vars()
            .filter(|v| v.name.starts_with('v') && v.ty.is_scalar() && v.role == Role::Plain)
            .cloned()
            .collect();
        if locals.is_empty() {
            return self.decl(out);
        }
        let old = self.rng.pick(&locals).clone();
        let t = self.scalar_type();
        let src = format!("({} as i64)", old.name);
        let (init, ty) = match t {
            Ty::Bool => (format!("{src} > 0"), Ty::Bool),
            _ => {
                let ts = t.src(&self.structs);
                let x = self.scalar(&t, 1).text;
                (format!("(({src} as {ts}) ^ {x})"), t)
            }
        };
        let mutable = self.rng.chance(1, 2);
        let kw = if mutable { "var" } else { "let" };
        let tsrc = ty.src(&self.structs);
        out.push(Stmt::line(format!("{kw} {}: {tsrc} = {init};", old.name)));
        out.push(Stmt::line(format!("print({});", old.name)));
        self.declare(Var {
            name: old.name,
            ty,
            mutable,
            min_len: 0,
            range: None,
            role: Role::Plain,
        });
    }

    /// A function taking the same aggregate by `ref` and by value: the
    /// value is a copy made at the call, so writes through the `ref` do not
    /// show in it.
    fn trap_alias(&mut self, out: &mut Out) {
        let Some(v) = self.aggregate_var(true) else {
            return self.decl(out);
        };
        let Some((path, t)) = self.scalar_path(&v.ty) else {
            return self.decl(out);
        };
        let f = self.fresh("alias");
        let ts = self.ty_src(&v.ty);
        let sts = t.src(&self.structs);
        let val = match t {
            Ty::Bool => format!("!b{path}"),
            _ => format!("b{path} + (1 as {sts})"),
        };
        self.text_item(format!(
            "fn {f}(ref a: {ts}, b: {ts}) -> {sts} {{\n    a{path} = {val};\n    let r = b{path};\n    a{path} = {val};\n    return r;\n}}"
        ));
        out.push(Stmt::line(format!("print({f}(ref {n}, {n}));", n = v.name)));
        out.push(Stmt::line(format!("print({}{path});", v.name)));
    }

    /// `v = f(ref v, ...)` with an aggregate result: the call writes `v`
    /// through the `ref`, then the result replaces it.
    fn trap_self_assign_call(&mut self, out: &mut Out) {
        let Some(v) = self.aggregate_var(true) else {
            return self.decl(out);
        };
        let Some((path, t)) = self.scalar_path(&v.ty) else {
            return self.decl(out);
        };
        let f = self.fresh("bump");
        let ts = self.ty_src(&v.ty);
        let val = match t {
            Ty::Bool => format!("!a{path}"),
            _ => format!("a{path} * (3 as {})", t.src(&self.structs)),
        };
        self.text_item(format!(
            "fn {f}(ref a: {ts}, n: i64) -> {ts} {{\n    var c = a;\n    a{path} = {val};\n    for i in 0..n {{\n        c = a;\n    }}\n    return c;\n}}"
        ));
        let n = self.rng.range(0, 2);
        out.push(Stmt::line(format!("{v} = {f}(ref {v}, {n});", v = v.name)));
        out.push(Stmt::line(format!("print({}{path});", v.name)));
    }

    /// `&&` and `||` whose right operand would have a side effect or fail
    /// (index out of bounds, division by zero) if it were evaluated.
    fn trap_short_circuit(&mut self, out: &mut Out) {
        let k = self.fresh("k");
        out.push(Stmt::line(format!("var {k}: i64 = 0;")));
        let t = self.rng.pick(&INTS).clone();
        let ts = t.src(&self.structs);
        let guard_false = format!("({k} > 100)");
        let guard_true = format!("({k} == 0)");
        let (cond, prints) = match self.rng.index(4) {
            0 => (format!("{guard_false} && (tick(ref {k}) > 0)"), "1"),
            1 => (format!("{guard_true} || (tick(ref {k}) > 0)"), "2"),
            2 => {
                let a = self.fresh("a");
                let fill = self.scalar_typed(&t, 1).text;
                out.push(Stmt::line(format!("let {a}: [3]{ts} = [{fill}; 3];")));
                let i = self.rng.range(3, 6);
                (format!("(len({a}) > {i}) && ({a}[{i}] == {a}[0])"), "3")
            }
            _ => {
                let (z, y) = (self.fresh("z"), self.fresh("y"));
                let fill = self.scalar_typed(&t, 1).text;
                out.push(Stmt::line(format!("var {z}: {ts} = {fill};")));
                out.push(Stmt::line(format!("{z} -= {z};")));
                let yv = self.scalar_typed(&t, 1).text;
                out.push(Stmt::line(format!("let {y}: {ts} = {yv};")));
                let op = *self.rng.pick(&["/", "%"]);
                if self.rng.chance(1, 2) {
                    (format!("({z} != 0) && (({y} {op} {z}) > {y})"), "4")
                } else {
                    (format!("({z} == 0) || (({y} {op} {z}) > {y})"), "5")
                }
            }
        };
        out.push(Stmt::If {
            arms: vec![(cond, vec![Stmt::line(format!("print({prints});"))])],
            els: Some(vec![Stmt::line("print(0);")]),
        });
        out.push(Stmt::line(format!("print({k});")));
    }

    /// A function with many parameters (past the argument registers),
    /// some aggregates, returning a checksum of all of them.
    pub(super) fn gen_many_params(&mut self) {
        let idx = self.funcs.len();
        let name = format!("many{idx}");
        let n = self.rng.range(7, 12) as usize;
        let mut params = Vec::new();
        let mut texts = Vec::new();
        let mut sum = Vec::new();
        for k in 0..n {
            let ty = if self.rng.chance(1, 4) {
                self.value_type()
            } else {
                self.scalar_type()
            };
            let src = self.ty_src(&ty);
            texts.push(format!("q{k}: {src}"));
            let paths: Vec<String> = if ty.is_scalar() {
                vec![String::new()]
            } else {
                (0..2)
                    .filter_map(|_| self.scalar_path(&ty).map(|p| p.0))
                    .collect()
            };
            for p in paths {
                sum.push(format!("h = mix(h, q{k}{p} as i64);"));
            }
            params.push(Param {
                ty,
                by_ref: false,
                min_len: 0,
                depth_bound: None,
            });
        }
        let mut body = vec![Stmt::line("var h: i64 = 0;")];
        body.extend(sum.into_iter().map(Stmt::line));
        body.push(Stmt::line("return h;"));
        self.items.push(Item {
            kind: ItemKind::Func {
                head: format!("fn {name}({}) -> i64 {{", texts.join(", ")),
                body,
            },
            fixed: false,
        });
        self.funcs.push(FnSig {
            name,
            params,
            ret: Some(Ty::I64),
            ret_min_len: 0,
            cost: 30,
        });
    }
}

/// Whether a value of `t` has a scalar inside (not behind a slice).
fn has_scalar(t: &Ty, structs: &[super::types::StructDef]) -> bool {
    match t {
        _ if t.is_scalar() => true,
        Ty::Array(e, n) => *n > 0 && has_scalar(e, structs),
        Ty::Struct(k) => structs[*k]
            .fields
            .iter()
            .any(|(_, f)| has_scalar(f, structs)),
        _ => false,
    }
}

//! The program generator: from a seed, a random Tern program that checks
//! cleanly, terminates by construction and prints only deterministic values,
//! together with what it is meant to do ([`Intent`]).
//!
//! Well-typed by construction: every expression is generated for a type, in
//! an environment of typed variables; integer literals are given a type by
//! their context or an annotation. Terminating by construction: loops have
//! literal or masked bounds or a counter the body cannot write, recursion
//! carries a depth argument bounded at every call, and every function has a
//! cost estimate (statements run, loop trips multiplied in) that calls may
//! not push past a budget. Safe by construction: indices are literals below a
//! known length, loop indices whose range fits, or `ix(e, n)` (a helper that
//! reduces `e` into `0..n`) against a length known to be positive; divisors
//! are `(e | 1)` or non-zero literals. A program meant to fail does so in one
//! statement at the end of `main`.
//!
//! Submodules: `types` (types and layout), `expr` (expressions and places),
//! `stmt` (statements and functions), `features` (`main`, and the snippets
//! that reach the builtins, the pools, generics and edge values), `traps`
//! (value semantics and evaluation order), `errors` (the runtime error a
//! program is meant to end in).

mod errors;
mod expr;
mod features;
mod stmt;
mod traps;
pub mod types;

use crate::program::{Item, ItemKind, Program, Stmt};
use crate::rng::Rng;
use types::{StructDef, Ty};

/// What a generated program is meant to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Intent {
    /// Run to the end: empty stderr, any exit status (main's value).
    Exit,
    /// End in one runtime error: status 101 and one `error: ` line on stderr
    /// containing `fragment`.
    Error {
        /// What kind of error (for reports).
        kind: &'static str,
        /// Text the error line must contain.
        fragment: String,
        /// What the error line must contain instead under `--sanitize`, when
        /// the sanitizer names the error itself: a double free, or a resize of
        /// a freed slice, is a use of a freed slice there (its tag check comes
        /// before the pool's own).
        sanitized: Option<&'static str>,
    },
}

impl Intent {
    /// A one-line description for reports and program headers.
    pub fn describe(&self) -> String {
        match self {
            Intent::Exit => "runs to the end".into(),
            Intent::Error { kind, fragment, .. } => format!("ends in {kind} ({fragment:?})"),
        }
    }

    /// The intent of the same program run with `--sanitize`: the same, or
    /// (see [`Intent::Error`]'s `sanitized`) the sanitizer's own error.
    pub fn sanitized(&self) -> Option<Intent> {
        match self {
            Intent::Error {
                kind,
                sanitized: Some(f),
                ..
            } => Some(Intent::Error {
                kind,
                fragment: (*f).into(),
                sanitized: None,
            }),
            _ => None,
        }
    }
}

/// A generated program and its intent.
#[derive(Clone, Debug)]
pub struct Generated {
    /// The per-program seed it was generated from.
    pub seed: u64,
    /// The program.
    pub program: Program,
    /// What it is meant to do.
    pub intent: Intent,
}

/// Generates the program of `seed`. The same seed always gives the same
/// program.
pub fn generate(seed: u64) -> Generated {
    let mut g = Gen::new(seed);
    let intent = g.build();
    let mut items = std::mem::take(&mut g.items);
    // Items may come in any order; shuffle all but `main` (kept last, where
    // a reader looks for it).
    let main = items.pop().expect("main is generated last");
    for i in (1..items.len()).rev() {
        let j = g.rng.index(i + 1);
        items.swap(i, j);
    }
    items.push(main);
    let mut uses: Vec<Item> = Vec::new();
    for (on, module) in g.pool_modules.iter().zip(MODULES) {
        if *on {
            uses.push(Item {
                kind: ItemKind::Text(format!("use {module};")),
                fixed: false,
            });
        }
    }
    let mut comment = vec![
        format!("tern-difftest program, seed {seed}"),
        format!("intent: {}", intent.describe()),
    ];
    if let Some(input) = &g.input {
        for module in ["io", "text"] {
            uses.push(Item {
                kind: ItemKind::Text(format!("use {module};")),
                fixed: false,
            });
        }
        comment.extend(input.stdin.iter().map(|l| format!("stdin: {l}")));
        if !input.args.is_empty() {
            comment.push(format!("args: {}", input.args.join(" ")));
        }
    }
    uses.extend(items);
    Generated {
        seed,
        program: Program {
            comment,
            items: uses,
        },
        intent,
    }
}

/// The two library pool modules.
pub(crate) const MODULES: [&str; 2] = ["slice_pool", "slice_pool_pure"];

/// What a variable is for, beyond its type.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// An ordinary variable or parameter.
    Plain,
    /// A loop counter: readable, never written by random statements.
    Counter,
    /// A builtin reusable slice (in `main`) or a pool slice whose length only
    /// the growth statements change; `max_len` bounds its length.
    Growable {
        /// `Some((pool variable, module index))` for a library pool slice.
        pool: Option<(String, usize)>,
        /// An upper bound of its length.
        max_len: i64,
    },
}

/// A variable in scope.
#[derive(Clone, Debug)]
pub(crate) struct Var {
    pub name: String,
    pub ty: Ty,
    /// `var` or `ref` parameter: may be assigned and passed by `ref`.
    pub mutable: bool,
    /// For slices and reusable slices: a length the value is known to have
    /// at least.
    pub min_len: i64,
    /// For an integer loop index: the static range `lo..hi` of its values.
    pub range: Option<(i64, i64)>,
    pub role: Role,
}

/// A parameter of a generated function.
#[derive(Clone, Debug)]
pub(crate) struct Param {
    pub ty: Ty,
    pub by_ref: bool,
    /// For slices and reusable slices: the least length callers pass.
    pub min_len: i64,
    /// A recursion depth: callers pass a value in `0..=bound`.
    pub depth_bound: Option<i64>,
}

/// The signature of a generated (non-generic) function.
#[derive(Clone, Debug)]
pub(crate) struct FnSig {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Option<Ty>,
    /// For a function returning a slice: the least length of the result.
    pub ret_min_len: i64,
    /// Statements one call runs, at most (estimated).
    pub cost: u64,
}

impl FnSig {
    /// No `ref` parameter: calls may appear inside expressions.
    pub fn pure(&self) -> bool {
        !self.params.iter().any(|p| p.by_ref)
    }
}

/// A constant item.
#[derive(Clone, Debug)]
pub(crate) struct ConstDef {
    pub name: String,
    pub ty: Ty,
    /// Its value (`bool` as 0/1).
    pub value: i128,
}

/// A library pool declared in `main`.
#[derive(Clone, Debug)]
pub(crate) struct PoolState {
    pub var: String,
    pub module: usize,
    pub cap: i64,
}

/// Per-function generation state.
#[derive(Clone, Debug, Default)]
pub(crate) struct FnCtx {
    pub in_main: bool,
    pub ret: Option<Ty>,
    /// For a slice-returning function: `(parameter, its min length, result min length)`.
    pub ret_slice: Option<(String, i64, i64)>,
    /// Enclosing loops.
    pub loops: u32,
    /// Enclosing blocks (ifs and loops).
    pub nesting: u32,
    /// Product of the enclosing loops' trip counts.
    pub mult: u64,
    /// Estimated statements run by the function so far.
    pub cost: u64,
    /// The cost the function may not exceed.
    pub budget: u64,
    /// The checksum `h` is in scope (main's `var h`, or a `ref h` parameter).
    pub has_h: bool,
    /// Functions callable from here: `funcs[..callable]`.
    pub callable: usize,
    /// The loop depth of a `while true` that must not `break` (it ends a
    /// function with a result: the language's "returns on every path" rule).
    pub no_break_at: Option<u32>,
}

/// Which optional parts a program has.
#[derive(Clone, Debug, Default)]
pub(crate) struct Features {
    pub generics: bool,
    pub reusable: bool,
    pub edges: bool,
    pub recursion: bool,
    pub unsafe_copy: bool,
    pub traps: bool,
}

/// What a program reads, when it reads (`Features` decides): its standard
/// input, line by line, and its arguments. The header comment carries both
/// (`// stdin:`, `// args:`), the form the runner and the test programs read.
#[derive(Clone, Debug, Default)]
pub(crate) struct Input {
    pub stdin: Vec<String>,
    pub args: Vec<String>,
}

/// The generator's state for one program.
pub(crate) struct Gen {
    pub rng: Rng,
    pub structs: Vec<StructDef>,
    pub consts: Vec<ConstDef>,
    pub funcs: Vec<FnSig>,
    /// Generic templates included (indices into `features::TEMPLATES`).
    pub templates: Vec<usize>,
    /// Library pool modules used (`use` lines).
    pub pool_modules: [bool; 2],
    /// The input the program reads (`io`), if it reads any.
    pub input: Option<Input>,
    pub items: Vec<Item>,
    pub scopes: Vec<Vec<Var>>,
    pub ctx: FnCtx,
    pub pools: Vec<PoolState>,
    pub feat: Features,
    /// The runtime error `main` is meant to end in.
    pub error_kind: Option<errors::ErrorKind>,
    /// The edge function: its index in `funcs` and its operand type.
    pub edge_fn: Option<(usize, Ty)>,
    /// Whether slice expressions may view growable slices (not when the
    /// view could outlive a growth that moves them).
    pub view_growables: bool,
    /// Calls being generated inside the arguments of other calls.
    pub call_nesting: u32,
    /// Index expressions being generated inside other index expressions.
    pub index_nesting: u32,
    next_name: u32,
}

impl Gen {
    fn new(seed: u64) -> Gen {
        Gen {
            rng: Rng::new(seed),
            structs: Vec::new(),
            consts: Vec::new(),
            funcs: Vec::new(),
            templates: Vec::new(),
            pool_modules: [false; 2],
            input: None,
            items: Vec::new(),
            scopes: Vec::new(),
            ctx: FnCtx::default(),
            pools: Vec::new(),
            feat: Features::default(),
            error_kind: None,
            edge_fn: None,
            view_growables: true,
            call_nesting: 0,
            index_nesting: 0,
            next_name: 0,
        }
    }

    /// A fresh name with the given prefix.
    pub fn fresh(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    /// Adds a text item.
    pub fn text_item(&mut self, text: String) {
        self.items.push(Item {
            kind: ItemKind::Text(text),
            fixed: false,
        });
    }

    /// Declares `v` in the innermost scope.
    pub fn declare(&mut self, v: Var) {
        self.scopes.last_mut().expect("a scope is open").push(v);
    }

    /// Every variable in scope (not shadowed), innermost last.
    pub fn vars(&self) -> impl Iterator<Item = &Var> {
        let all: Vec<&Var> = self.scopes.iter().flatten().collect();
        let visible: Vec<&Var> = all
            .iter()
            .enumerate()
            .filter(|(i, v)| !all[i + 1..].iter().any(|w| w.name == v.name))
            .map(|(_, v)| *v)
            .collect();
        visible.into_iter()
    }

    /// The variable called `name`, if in scope.
    pub fn var_mut(&mut self, name: &str) -> Option<&mut Var> {
        self.scopes
            .iter_mut()
            .flatten()
            .rev()
            .find(|v| v.name == name)
    }

    /// Removes `name` from scope (a freed slice).
    pub fn forget(&mut self, name: &str) {
        for s in &mut self.scopes {
            s.retain(|v| v.name != name);
        }
    }

    /// The whole program; returns its intent.
    fn build(&mut self) -> Intent {
        let r = &mut self.rng;
        self.feat = Features {
            generics: r.chance(2, 3),
            reusable: r.chance(1, 2),
            edges: r.chance(1, 2),
            recursion: r.chance(1, 2),
            unsafe_copy: r.chance(1, 6),
            traps: r.chance(2, 3),
        };
        // The library pools cost the most to compile (slice_pool_pure is
        // 1300 lines), so fewer programs use them.
        self.pool_modules = [r.chance(1, 6), r.chance(1, 12)];
        if r.chance(1, 4) {
            self.input = Some(self.gen_input());
        }
        let intent = self.pick_intent();
        self.gen_structs();
        self.gen_consts();
        self.helper_items();
        if self.feat.generics {
            self.pick_templates();
        }
        let n_funcs = self.rng.range(1, 6) as usize;
        for k in 0..n_funcs {
            if k == 1 && self.rng.chance(1, 4) {
                self.gen_many_params();
            }
            self.gen_function();
        }
        if self.feat.recursion {
            self.gen_recursive();
        }
        if self.feat.edges {
            let t = self.rng.pick(&types::INTS).clone();
            self.gen_edge_function(&t);
        }
        let main = self.gen_main();
        self.items.push(main);
        intent
    }

    /// Lines of standard input and arguments: short runs of letters, digits
    /// and punctuation (no white space in an argument), some arguments
    /// numbers, signed or not.
    fn gen_input(&mut self) -> Input {
        const CHARS: &[u8] = b"abcxyz0189 ,.-+_";
        let word = |r: &mut Rng, max: i64, spaces: bool| -> String {
            let n = r.range(0, max);
            (0..n)
                .map(|_| CHARS[r.index(CHARS.len())] as char)
                .filter(|c| spaces || *c != ' ')
                .collect()
        };
        let lines = self.rng.range(0, 5);
        let stdin = (0..lines).map(|_| word(&mut self.rng, 20, true)).collect();
        let n_args = self.rng.range(0, 4);
        let mut args = Vec::new();
        for _ in 0..n_args {
            let a = if self.rng.chance(1, 2) {
                self.rng.range(-50_000, 50_000).to_string()
            } else {
                word(&mut self.rng, 8, false)
            };
            // An empty argument cannot be written in an `// args:` line.
            args.push(if a.is_empty() { "x".into() } else { a });
        }
        Input { stdin, args }
    }

    /// The helpers every program may use: the safe index and the checksum mix.
    fn helper_items(&mut self) {
        self.text_item(
            "fn ix(i: i64, n: i64) -> i64 {\n    let r = i % n;\n    if r < 0 {\n        return r + n;\n    }\n    return r;\n}"
                .into(),
        );
        self.text_item(
            "fn mix(h: i64, v: i64) -> i64 {\n    return (h ^ v) * 1099511628211 + 14695981039;\n}"
                .into(),
        );
        if self.feat.traps {
            self.text_item(traps::TICK.into());
        }
    }

    /// The structs: fields of scalars, arrays and earlier structs.
    fn gen_structs(&mut self) {
        let n = self.rng.range(0, 4) as usize;
        for k in 0..n {
            let nf = self.rng.range(1, 5) as usize;
            let mut fields = Vec::new();
            for f in 0..nf {
                let ty = self.field_type(k);
                fields.push((format!("f{f}"), ty));
            }
            let name = format!("S{k}");
            let body: Vec<String> = fields
                .iter()
                .map(|(f, t)| format!("{f}: {}", self.ty_src(t)))
                .collect();
            let text = if self.rng.chance(1, 2) {
                format!("struct {name} {{ {} }}", body.join(", "))
            } else {
                let mut s = format!("struct {name} {{\n");
                for b in &body {
                    s.push_str(&format!("    {b},\n"));
                }
                s.push('}');
                s
            };
            self.structs.push(StructDef { name, fields });
            self.text_item(text);
        }
    }

    /// A field type for struct `k` (which may use structs `0..k`).
    fn field_type(&mut self, k: usize) -> Ty {
        match self.rng.weighted(&[6, 3, if k > 0 { 2 } else { 0 }, 1]) {
            0 => self.scalar_type(),
            1 => {
                let n = match self.rng.weighted(&[1, 8, 1]) {
                    0 => 0,
                    1 => self.rng.range(1, 4),
                    _ => self.rng.range(9, 24),
                };
                let e = if self.rng.chance(1, 4) {
                    Ty::Array(Box::new(self.scalar_type()), self.rng.range(1, 3))
                } else {
                    self.scalar_type()
                };
                Ty::Array(Box::new(e), n)
            }
            2 => {
                let s = Ty::Struct(self.rng.index(k));
                if self.rng.chance(1, 3) {
                    Ty::Array(Box::new(s), self.rng.range(1, 2))
                } else {
                    s
                }
            }
            _ => Ty::Bool,
        }
    }

    /// `i64`, `i32`, `u8`, `u64` or `bool`.
    pub fn scalar_type(&mut self) -> Ty {
        match self.rng.weighted(&[4, 3, 3, 2, 2]) {
            0 => Ty::I64,
            1 => Ty::I32,
            2 => Ty::U8,
            3 => Ty::U64,
            _ => Ty::Bool,
        }
    }

    /// A value type for locals, parameters and elements: scalars mostly,
    /// then arrays (nested too) and structs.
    pub fn value_type(&mut self) -> Ty {
        let structs = !self.structs.is_empty();
        match self.rng.weighted(&[
            10,
            3,
            if structs { 3 } else { 0 },
            if structs { 1 } else { 0 },
            1,
        ]) {
            0 => self.scalar_type(),
            1 => Ty::Array(Box::new(self.scalar_type()), self.array_len()),
            2 => Ty::Struct(self.rng.index(self.structs.len())),
            3 => {
                let s = Ty::Struct(self.rng.index(self.structs.len()));
                Ty::Array(Box::new(s), self.rng.range(1, 3))
            }
            _ => {
                let inner = Ty::Array(Box::new(self.scalar_type()), self.rng.range(1, 3));
                Ty::Array(Box::new(inner), self.rng.range(1, 3))
            }
        }
    }

    /// An array length: small, sometimes a constant's value.
    pub fn array_len(&mut self) -> i64 {
        let lens: Vec<i64> = self
            .consts
            .iter()
            .filter(|c| c.ty == Ty::I64 && (1..=8).contains(&c.value))
            .map(|c| c.value as i64)
            .collect();
        if !lens.is_empty() && self.rng.chance(1, 3) {
            return *self.rng.pick(&lens);
        }
        // Sometimes long: `[e; N]` fills longer arrays with a loop, and
        // copies of large values become `memcpy` calls.
        if self.rng.chance(1, 8) {
            return self.rng.range(9, 40);
        }
        self.rng.range(1, 6)
    }

    /// The source spelling of `t`, array lengths sometimes as a constant of
    /// that value.
    pub fn ty_src(&mut self, t: &Ty) -> String {
        match t {
            Ty::Array(e, n) => {
                let names: Vec<String> = self
                    .consts
                    .iter()
                    .filter(|c| c.ty == Ty::I64 && c.value == i128::from(*n))
                    .map(|c| c.name.clone())
                    .collect();
                let len = if !names.is_empty() && self.rng.chance(1, 2) {
                    self.rng.pick(&names).clone()
                } else {
                    n.to_string()
                };
                format!("[{len}]{}", self.ty_src(e))
            }
            Ty::Slice(e) => format!("[]{}", self.ty_src(e)),
            Ty::Reusable(e) => format!("reusable[]{}", self.ty_src(e)),
            _ => t.src(&self.structs),
        }
    }

    /// The constants: plain values, sizes of structs, arithmetic on other
    /// constants; several are small `i64`s used as array lengths.
    fn gen_consts(&mut self) {
        let n = self.rng.range(1, 5) as usize;
        for _ in 0..n {
            let name = self.fresh("K");
            let (ty, text, value) = self.const_expr();
            self.text_item(format!("const {name}: {} = {text};", ty.src(&self.structs)));
            self.consts.push(ConstDef { name, ty, value });
        }
    }

    /// A constant expression with its type and folded value.
    fn const_expr(&mut self) -> (Ty, String, i128) {
        let sizes: Vec<usize> = (0..self.structs.len()).collect();
        match self
            .rng
            .weighted(&[3, if sizes.is_empty() { 0 } else { 2 }, 3, 1])
        {
            0 => {
                let v = self.rng.range(1, 8);
                (Ty::I64, v.to_string(), v.into())
            }
            1 => {
                let k = *self.rng.pick(&sizes);
                let size = Ty::Struct(k).size(&self.structs);
                let name = self.structs[k].name.clone();
                if self.rng.chance(1, 2) {
                    (Ty::I64, format!("size_of::<{name}>()"), size.into())
                } else {
                    // A small array length derived from a size.
                    let v = size / 8 % 5 + 1;
                    (
                        Ty::I64,
                        format!("size_of::<{name}>() / 8 % 5 + 1"),
                        v.into(),
                    )
                }
            }
            2 => {
                // Arithmetic on earlier constants and literals, folded with
                // the language's wrapping rules.
                let ty = self.rng.pick(&types::INTS).clone();
                let a = self.const_operand(&ty);
                let b = self.const_operand(&ty);
                let ops = ["+", "-", "*", "&", "|", "^", "/", "%", "<<", ">>"];
                let op = *self.rng.pick(&ops);
                let (b_text, b_val) = if (op == "/" || op == "%") && b.1 == 0 {
                    ("1".to_string(), 1)
                } else {
                    b
                };
                let v = fold(&ty, op, a.1, b_val);
                (ty, format!("({} {op} {b_text})", a.0), v)
            }
            _ => {
                let a = self.rng.range(0, 9);
                let b = self.rng.range(0, 9);
                (Ty::Bool, format!("{a} < {b}"), i128::from(a < b))
            }
        }
    }

    /// An operand of a constant expression of type `ty`: a literal or an
    /// earlier constant of that type (cast when it has another type).
    fn const_operand(&mut self, ty: &Ty) -> (String, i128) {
        let same: Vec<(String, i128)> = self
            .consts
            .iter()
            .filter(|c| c.ty == *ty)
            .map(|c| (c.name.clone(), c.value))
            .collect();
        if !same.is_empty() && self.rng.chance(1, 2) {
            return self.rng.pick(&same).clone();
        }
        let v = self.int_value(ty);
        (lit_text(ty, v, &mut self.rng), v)
    }

    /// A value of an integer type: edges, small values or anything.
    pub fn int_value(&mut self, ty: &Ty) -> i128 {
        match self.rng.weighted(&[4, 4, 2]) {
            0 => {
                let mut edges = vec![ty.min(), ty.max(), 0, 1];
                if ty.min() < 0 {
                    edges.push(-1);
                }
                *self.rng.pick(&edges)
            }
            1 => i128::from(self.rng.range(0, 16)),
            // `u64` draws from the low half, as `i64` values do.
            _ => i128::from(
                self.rng
                    .range(ty.min() as i64, ty.max().min(i64::MAX.into()) as i64),
            ),
        }
    }
}

/// A literal's text for value `v` of type `ty`: negative values in
/// parentheses (the `-` is part of the literal), positive ones sometimes in
/// hexadecimal or with digit separators.
pub(crate) fn lit_text(ty: &Ty, v: i128, rng: &mut Rng) -> String {
    debug_assert!(
        ty.min() <= v && v <= ty.max(),
        "{v} out of range for {ty:?}"
    );
    if v < 0 {
        return format!("({v})");
    }
    // A literal takes `i64` where nothing gives it a type (an operand of
    // `as`, of an untyped expression): `u64` values past `i64::MAX` are
    // written as the complement of one that fits, typed by its own cast.
    if v > i64::MAX.into() {
        return format!("(!({} as u64))", u64::MAX as i128 - v);
    }
    match rng.weighted(&[6, 1, 1]) {
        1 => format!("0x{v:x}"),
        2 if v >= 1000 => {
            let s = v.to_string();
            let mut out = String::new();
            for (i, c) in s.chars().enumerate() {
                if i > 0 && (s.len() - i).is_multiple_of(3) {
                    out.push('_');
                }
                out.push(c);
            }
            out
        }
        _ => v.to_string(),
    }
}

/// Folds `a op b` at type `ty` with the run-time semantics (wrapping
/// arithmetic, shift amounts modulo the width, `>>` arithmetic for signed
/// types); `b` is non-zero for `/` and `%`.
pub(crate) fn fold(ty: &Ty, op: &str, a: i128, b: i128) -> i128 {
    let bits = ty.bits();
    let signed = ty.min() < 0;
    let ua = (a as u128) & mask(bits);
    let sh = (b.rem_euclid(i128::from(bits))) as u32;
    let v = match op {
        "+" => a + b,
        "-" => a - b,
        "*" => a.wrapping_mul(b),
        "&" => a & b,
        "|" => a | b,
        "^" => a ^ b,
        "/" => {
            if signed && a == ty.min() && b == -1 {
                a
            } else {
                a / b
            }
        }
        "%" => {
            if b == -1 {
                0
            } else {
                a % b
            }
        }
        "<<" => ((ua << sh) & mask(bits)) as i128,
        ">>" => {
            if signed {
                a >> sh
            } else {
                (ua >> sh) as i128
            }
        }
        _ => panic!("unknown operator {op}"),
    };
    ty.wrap(v)
}

fn mask(bits: u32) -> u128 {
    (1u128 << bits) - 1
}

/// Statements of a block as generated: a list the generator appends to.
pub(crate) type Out = Vec<Stmt>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_follows_the_language() {
        assert_eq!(fold(&Ty::I64, "/", i64::MIN.into(), -1), i64::MIN.into());
        assert_eq!(fold(&Ty::I32, "%", i32::MIN.into(), -1), 0);
        assert_eq!(fold(&Ty::I64, "<<", 1, 64), 1);
        assert_eq!(fold(&Ty::I64, "<<", 1, -1), i64::MIN.into());
        assert_eq!(fold(&Ty::U8, ">>", 255, 9), 127);
        assert_eq!(fold(&Ty::I32, ">>", -8, 33), -4);
        assert_eq!(fold(&Ty::U8, "-", 3, 5), 254);
        assert_eq!(fold(&Ty::I64, "*", i64::MAX.into(), 2), -2);
        assert_eq!(fold(&Ty::I64, "/", -7, 2), -3);
        assert_eq!(fold(&Ty::I64, "%", -7, 2), -1);
        let max = i128::from(u64::MAX);
        assert_eq!(fold(&Ty::U64, "/", max, 2), i128::from(u64::MAX / 2));
        assert_eq!(fold(&Ty::U64, ">>", max, 65), i128::from(u64::MAX >> 1));
        assert_eq!(fold(&Ty::U64, "*", max, max), 1);
        assert_eq!(fold(&Ty::U64, "-", 0, 1), max);
    }

    #[test]
    fn literals_in_range() {
        let mut r = Rng::new(3);
        assert_eq!(
            lit_text(&Ty::I64, i64::MIN.into(), &mut r),
            "(-9223372036854775808)"
        );
        assert_eq!(lit_text(&Ty::U64, u64::MAX.into(), &mut r), "(!(0 as u64))");
        for _ in 0..50 {
            let t = lit_text(&Ty::U8, 255, &mut r);
            assert!(t == "255" || t == "0xff", "{t}");
        }
    }
}

#[cfg(test)]
mod sample_tests {
    //! The generator against the real front end: determinism, and a sample
    //! of programs that must all check cleanly and reach every feature.

    use super::*;
    use crate::tern_bin::workspace_root;

    /// Loads `use NAME;` from the workspace's `stdlib/`.
    struct StdlibLoader;

    impl tern_compiler::Loader for StdlibLoader {
        fn load(&self, name: &str, _from: &str) -> tern_compiler::Loaded {
            let path = workspace_root().join("stdlib").join(format!("{name}.tern"));
            tern_compiler::Loaded::from_bytes(format!("stdlib/{name}.tern"), std::fs::read(path))
        }
        fn is_library(&self, display: &str) -> bool {
            display.starts_with("stdlib/")
        }
    }

    fn sample_size() -> u64 {
        std::env::var("TERN_DIFFTEST_SAMPLE")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(150)
    }

    #[test]
    fn same_seed_same_program() {
        for seed in [0, 1, 42, u64::MAX] {
            let a = generate(seed);
            let b = generate(seed);
            assert_eq!(a.program, b.program);
            assert_eq!(a.intent, b.intent);
        }
        assert_ne!(generate(1).program.render(), generate(2).program.render());
    }

    #[test]
    fn sampled_programs_check_with_the_front_end() {
        let mut failures = Vec::new();
        for i in 0..sample_size() {
            let seed = crate::rng::program_seed(7, i);
            let text = generate(seed).program.render();
            if let Err(d) = tern_compiler::compile("prog.tern", &text, &StdlibLoader) {
                failures.push(format!("seed {seed}:\n{}", d.render()));
            }
        }
        assert!(
            failures.is_empty(),
            "{} programs do not check:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }

    /// The most arms of any `if` chain in `block`, nested blocks included.
    fn longest_chain(block: &crate::program::Block) -> usize {
        use crate::program::Stmt;
        block
            .iter()
            .map(|s| {
                let own = match s {
                    Stmt::If { arms, .. } => arms.len(),
                    _ => 0,
                };
                s.children()
                    .into_iter()
                    .map(longest_chain)
                    .fold(own, usize::max)
            })
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn the_sample_has_chains_the_backend_joins_in_a_tree() {
        use crate::program::ItemKind;
        // More than 16 arms: codegen's `if_arms`, not nested `if`s.
        let longest = (0..sample_size())
            .flat_map(|i| generate(crate::rng::program_seed(7, i)).program.items)
            .filter_map(|item| match item.kind {
                ItemKind::Func { body, .. } => Some(longest_chain(&body)),
                ItemKind::Text(_) => None,
            })
            .max()
            .unwrap_or(0);
        assert!(longest > 16, "the longest chain has {longest} arms");
    }

    #[test]
    fn the_sample_reaches_every_feature() {
        // Generation alone is fast: a larger sample than the front-end check.
        let texts: Vec<String> = (0..sample_size() * 4)
            .map(|i| generate(crate::rng::program_seed(7, i)).program.render())
            .collect();
        let all = texts.join("\n");
        let wanted = [
            // operators and edge values
            "<< 64",
            "<< 200",
            "(-1)",
            "/ (-1)",
            "% (-1)",
            "-9223372036854775808",
            "-2147483648",
            "9223372036854775807",
            "2147483647",
            "255",
            "as u8",
            "as i32",
            "as i64",
            "as u64",
            "(!(0 as u64))",
            ": u64",
            "true as",
            " >> ",
            " ^ ",
            " | ",
            " & ",
            "(!",
            "(-(",
            " % ",
            " / ",
            " * ",
            "<=",
            ">=",
            "!=",
            "&&",
            "||",
            // statements
            "while true {",
            "while w",
            "for i",
            "break;",
            "continue;",
            "} else if ",
            "} else {",
            "+= ",
            "/= ",
            "<<= ",
            "return;",
            // functions and types
            "ref h: i64",
            "ref p",
            ": []",
            "fn rec",
            "g_pick::<",
            "g_swap",
            "g_rev(",
            "g_tail(",
            "size_of::<S",
            "struct S",
            "const K",
            "]; K",
            "[..]",
            "..]",
            "len(",
            // builtins and pools
            "reusable::alloc",
            "reusable::append",
            "reusable::resize",
            "reusable::free",
            "reusable::offset",
            "slice_pool::new",
            "slice_pool::alloc_slice",
            "slice_pool::append",
            "slice_pool::realloc_slice",
            "slice_pool::free_slice",
            "slice_pool::offset_of",
            "slice_pool::finish",
            "slice_pool_pure::new",
            "unsafe::copy",
            // the runtime errors
            "panic(\"boom",
            "panic(\"detail",
            "assert(h != h",
            "(1 << 61)",
            "panic(\"unreachable\")",
            "fn alias",
            "tick(ref k",
            "var nb",
            "(1 << 40)",
            "(1 << 59)",
        ];
        let missing: Vec<&str> = wanted
            .iter()
            .copied()
            .filter(|w| !all.contains(w))
            .collect();
        assert!(
            missing.is_empty(),
            "not generated in the sample: {missing:?}"
        );
        let errors = texts
            .iter()
            .filter(|t| !t.contains("intent: runs to the end"))
            .count();
        assert!(
            errors * 8 > texts.len(),
            "too few programs meant to fail: {errors}"
        );
    }
}

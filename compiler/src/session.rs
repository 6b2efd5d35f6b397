//! Programs assembled from parts: the front end's API for an incremental
//! session (the REPL). Pure, like the rest of the crate: the host owns the
//! memory and the sources, this module says what they mean.
//!
//! A session program is
//! * **item sources**, each with its own display name, all in one namespace:
//!   a diagnostic in any of them is rendered against that source's own text
//!   and line numbers (`use` in one resolves from that source's name);
//! * an **entry**: the live bindings (host memory, described by type), the
//!   input (statements, or one expression whose value is wanted) as a source
//!   of its own, and where the input's new bindings and value are to be kept.
//!
//! The compiler writes the entry function itself: it reads every binding from
//! its slot, runs the input, writes back every binding the input did not rebind,
//! and stores the new bindings and the value into slots the host hands out
//! ([`Slots`]) once their types are known. Everything it generates lives in a
//! source named [`GENERATED`] whose names begin with `$`, which no user can
//! write: no user name is special. What the host needs back comes as data
//! ([`Compiled`]): the value's type, the new bindings, and which bindings a
//! redefinition changed the layout of.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::Arc;

use crate::diagnostics::messages::EscapeOrigin;
use crate::diagnostics::{Diagnostic, ErrorKind, NoteKind, Sink};
use crate::source::{FileId, SourceMap, Span};
use crate::syntax::{self, ast};
use crate::tir::{self, Type};
use crate::{Diagnostics, Loader, check, load_modules};

/// Display name of the code the compiler generates around an input.
pub const GENERATED: &str = "<repl:generated>";
/// The local that holds an expression input's value.
const VALUE: &str = "$value";

/// One source: a display name and its text.
#[derive(Clone, Debug)]
pub struct Source {
    pub name: String,
    pub text: String,
}

/// What an input is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    /// Statements: top-level `let`/`var` become bindings.
    Statements,
    /// One expression: its value is kept for the host to show.
    Expression,
}

/// A binding that lives in host memory between inputs.
#[derive(Clone, Debug)]
pub struct Binding {
    pub name: String,
    /// Its type as written in Tern (`tir::Program::type_name`).
    pub ty: String,
    /// `tir::Program::value_shape` of its type when its slot was written.
    pub shape: String,
    pub mutable: bool,
    /// Address of its slot (the host's memory, `layout(ty).size` bytes).
    pub addr: u64,
}

/// Hands out host memory for a value of `bytes` bytes: its address, or
/// `None` when the host will not keep that much.
pub type Slots<'a> = &'a mut (dyn FnMut(u64) -> Option<u64> + Send);

/// A new binding of an input, with the slot it is kept in.
#[derive(Clone, Debug)]
pub struct NewBinding {
    pub name: String,
    pub ty: Type,
    pub mutable: bool,
    pub addr: u64,
}

/// How an expression input's value was kept.
#[derive(Clone, Debug)]
pub struct Value {
    pub ty: Type,
    /// The slot: the value itself, or for a slice its `(ptr, len)` with only
    /// `len` written (a slice is shown by its length; its elements may live
    /// in the input's frame).
    pub addr: u64,
}

/// A checked session program.
#[derive(Debug)]
pub struct Compiled {
    pub program: tir::Program,
    /// The expression input's value (`None` for statements or no input).
    pub value: Option<Value>,
    /// The input's top-level `let`/`var` bindings, the last of each name.
    pub new_bindings: Vec<NewBinding>,
    /// Indices of the entry's bindings whose type no longer has the shape
    /// they were stored with (a redefinition changed its layout): the host
    /// must drop them. Their slots were neither read nor written.
    pub changed: Vec<usize>,
    /// Names of the entry's bindings the input may change in place (see
    /// [`changed_in_place`]): their write-backs come at the end of the
    /// entry, so when the input fails before that they still hold what
    /// they held, which the input may have freed or moved (`r =
    /// reusable::resize(r, 64); panic(..)`). The host drops them then.
    pub may_change: Vec<String>,
}

/// The entry of a session program.
pub struct Entry<'a> {
    pub bindings: &'a [Binding],
    pub input: Option<(&'a Source, InputKind)>,
}

/// What a text typed at a prompt is, told from the language's own tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputShape {
    pub kind: InputKindOrItems,
    /// No bracket, string literal or block comment is left open: nothing
    /// more is needed (excess closers count as complete; the parser reports
    /// them).
    pub complete: bool,
}

/// The kind of a prompt input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKindOrItems {
    /// Nothing but blanks and comments.
    Empty,
    /// Items: it starts with `fn`, `struct`, `const`, `use` or `extern`.
    Items,
    /// Statements or an expression ([`InputKind`]).
    Run(InputKind),
}

/// The shape of `text`: items, statements (it starts with a statement
/// keyword or a block, or ends with `;`) or an expression (anything else,
/// a struct literal included), and whether it is complete. A text with an
/// unterminated comment and nothing else is statements, so that the error
/// is reported once the host stops waiting for more.
pub fn input_shape(text: &str) -> InputShape {
    use syntax::lexer::Tok;
    let (toks, open) = syntax::tokens(text);
    let balance = Balance::of_tokens(&toks, open);
    let kind = match toks.first().map(|t| &t.tok) {
        None if open => InputKindOrItems::Run(InputKind::Statements),
        None => InputKindOrItems::Empty,
        Some(Tok::Fn | Tok::Struct | Tok::Const | Tok::Use | Tok::Extern) => {
            InputKindOrItems::Items
        }
        // `priv fn` (private to the session's module: as good as `fn`).
        Some(Tok::Ident(n)) if n == "priv" && toks.get(1).is_some_and(|t| t.tok == Tok::Fn) => {
            InputKindOrItems::Items
        }
        Some(t) if t.begins_statement() || *t == Tok::LBrace => {
            InputKindOrItems::Run(InputKind::Statements)
        }
        Some(_) if toks.last().is_some_and(|t| t.tok == Tok::Semi) => {
            InputKindOrItems::Run(InputKind::Statements)
        }
        Some(_) => InputKindOrItems::Run(InputKind::Expression),
    };
    InputShape {
        kind,
        complete: balance.complete(),
    }
}

/// How far a text leaves brackets open, and whether it ends inside a
/// string literal or block comment: what [`InputShape::complete`] is told
/// from. Kept line by line, it makes a long piped input linear: a text that
/// ends outside any literal or comment is followed by a line whose tokens
/// are its own (a newline ends every other token), so the two balances add
/// ([`Balance::then`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Balance {
    /// Openers minus closers.
    depth: i64,
    /// An unterminated string literal or block comment at the end.
    open: bool,
}

impl Balance {
    /// The balance of `text`.
    pub fn of(text: &str) -> Balance {
        let (toks, open) = syntax::tokens(text);
        Balance::of_tokens(&toks, open)
    }

    fn of_tokens(toks: &[syntax::lexer::Token], open: bool) -> Balance {
        use syntax::lexer::Tok;
        let depth = toks
            .iter()
            .map(|t| match t.tok {
                Tok::LParen | Tok::LBracket | Tok::LBrace => 1,
                Tok::RParen | Tok::RBracket | Tok::RBrace => -1,
                _ => 0,
            })
            .sum();
        Balance { depth, open }
    }

    /// The balance of `whole`, the text this is the balance of followed by
    /// a newline and `line`: `line`'s own added, unless this text ends
    /// inside a literal or comment (then `whole` is lexed again).
    pub fn then(self, line: &str, whole: &str) -> Balance {
        if self.open {
            return Balance::of(whole);
        }
        let next = Balance::of(line);
        Balance {
            depth: self.depth + next.depth,
            open: next.open,
        }
    }

    /// Nothing more is needed (excess closers count: the parser reports
    /// them).
    pub fn complete(self) -> bool {
        !self.open && self.depth <= 0
    }
}

/// Whether `text` parses as one expression (its type and names aside).
pub fn parses_as_expression(text: &str) -> bool {
    let mut sink = Sink::default();
    let toks = syntax::lexer::lex(0, text, &mut sink);
    syntax::parser::parse_expr_only(toks, text, &mut sink);
    sink.is_empty()
}

/// `text` with the final `;` a REPL user may leave out, when it parses
/// (as statements, or as `items`) with that one `;` added and fails without
/// it (`var p = P { x: 1 }`, `use vec`, `x = 5`); `None` when the text needs
/// no `;` (`if c { ... }`) or has other errors.
pub fn with_final_semicolon(text: &str, items: bool) -> Option<String> {
    let parses = |t: &str| {
        let mut sink = Sink::default();
        let toks = syntax::lexer::lex(0, t, &mut sink);
        if items {
            syntax::parser::parse_with_ranges(toks, t, &mut sink);
        } else {
            syntax::parser::parse_stmts(toks, t, &mut sink);
        }
        sink.is_empty()
    };
    let with = format!("{};", text.trim_end());
    (!parses(text) && parses(&with)).then_some(with)
}

/// The items of `source` one by one: the name each defines (`use m` for a
/// use) and its text, or the syntax errors.
pub fn split_items(source: &Source) -> Result<Vec<Item>, Diagnostics> {
    let mut sources = SourceMap::default();
    let file = sources.add(source.name.clone(), source.text.clone());
    let mut sink = Sink::default();
    let toks = syntax::lexer::lex(file, &source.text, &mut sink);
    let items = syntax::parser::parse_with_ranges(toks, &source.text, &mut sink);
    if !sink.is_empty() {
        return Err(sink.finish(Arc::new(sources)));
    }
    let file = sources.file(file);
    Ok(items
        .into_iter()
        .map(|(item, span)| {
            let (line, col) = file.line_col(span.lo);
            let (key, is_fn) = match &item {
                ast::Item::Use(m) => (format!("use {}", m.name), false),
                ast::Item::Const(c) => (c.name.name.clone(), false),
                ast::Item::Struct(s) => (s.name.name.clone(), false),
                ast::Item::Extern(x) => (x.name.name.clone(), true),
                ast::Item::Fn(f) => (f.name.name.clone(), true),
            };
            let params = match &item {
                ast::Item::Fn(f) if f.generics.is_empty() => Some(
                    f.params
                        .iter()
                        .map(|p| (p.by_ref, source.text[range(p.ty.span)].to_string()))
                        .collect(),
                ),
                _ => None,
            };
            Item {
                key,
                is_fn,
                is_extern: matches!(item, ast::Item::Extern(_)),
                params,
                text: source.text[range(span)].to_string(),
                at: range(span).start,
                line,
                col,
            }
        })
        .collect())
}

/// One item of [`split_items`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// `f` for `fn f`, `struct f`, `const f`, `extern fn f`; `use m` for a use:
    /// the key under which a later definition replaces it.
    pub key: String,
    /// A function (`fn` or `extern fn`).
    pub is_fn: bool,
    pub is_extern: bool,
    /// A non-generic `fn`'s parameters: `ref` or not, and the type as written.
    pub params: Option<Vec<(bool, String)>>,
    pub text: String,
    /// Where the item starts in its source: the byte offset, and the 1-based
    /// line and column.
    pub at: usize,
    pub line: u32,
    pub col: u32,
}

impl Item {
    /// The item as a source of its own named `name` that keeps its line
    /// and column from the source it came from (blank lines and spaces
    /// before it), so diagnostics in it point at the right place.
    pub fn in_place(&self, name: &str) -> Source {
        let mut text = "\n".repeat(self.line as usize - 1);
        text.push_str(&" ".repeat(self.col as usize - 1));
        text.push_str(&self.text);
        Source {
            name: name.to_string(),
            text,
        }
    }
}

fn range(span: Span) -> std::ops::Range<usize> {
    span.lo as usize..span.hi as usize
}

/// Front end over a session program: `items` and an entry function built
/// from `entry`. New bindings and the value get slots from `slots` (a value
/// or binding it refuses is an error at the input).
pub fn compile(
    items: &[Source],
    entry: &Entry,
    slots: Slots,
    loader: &dyn Loader,
) -> Result<Compiled, Diagnostics> {
    crate::with_stack(|| {
        let Some((input, _)) = entry.input else {
            return compile_here(items, entry, slots, loader);
        };
        // The entry reads and writes back only the bindings the input names:
        // no other can be reached from it (items cannot name a binding), and
        // an entry over every binding made each input cost as much as the
        // session was long (a piped script of `let`s took quadratic time).
        // A binding whose layout a redefinition changed was dropped by the
        // definition's own compile, which sees every binding.
        let named = identifiers(&input.text);
        let used: Vec<usize> = (0..entry.bindings.len())
            .filter(|&k| named.contains(entry.bindings[k].name.as_str()))
            .collect();
        if used.len() == entry.bindings.len() {
            return compile_here(items, entry, slots, loader);
        }
        let subset: Vec<Binding> = used.iter().map(|&k| entry.bindings[k].clone()).collect();
        let mut compiled = compile_here(
            items,
            &Entry {
                bindings: &subset,
                input: entry.input,
            },
            slots,
            loader,
        )?;
        // Indices into `subset` back to indices into the entry's bindings.
        for k in &mut compiled.changed {
            *k = used[*k];
        }
        Ok(compiled)
    })
}

/// The identifiers among the tokens of `text`.
fn identifiers(text: &str) -> std::collections::HashSet<String> {
    syntax::tokens(text)
        .0
        .into_iter()
        .filter_map(|t| match t.tok {
            syntax::lexer::Tok::Ident(n) => Some(n),
            _ => None,
        })
        .collect()
}

fn compile_here(
    items: &[Source],
    entry: &Entry,
    slots: Slots,
    loader: &dyn Loader,
) -> Result<Compiled, Diagnostics> {
    // Pass 1: the input as written, reading the bindings: the types of the
    // value and the new bindings, and which bindings changed shape (or
    // cannot be read at all any more: then again without them).
    let first = match assemble(items, entry, &Keep::default(), loader) {
        Ok(first) => first,
        Err(Failed { broken, .. }) if !broken.is_empty() => {
            let rest: Vec<Binding> = (0..entry.bindings.len())
                .filter(|k| !broken.contains(k))
                .map(|k| entry.bindings[k].clone())
                .collect();
            let mut compiled = compile_here(
                items,
                &Entry {
                    bindings: &rest,
                    input: entry.input,
                },
                slots,
                loader,
            )?;
            // Indices into `rest` back to indices into the entry's bindings.
            let kept: Vec<usize> = (0..entry.bindings.len())
                .filter(|k| !broken.contains(k))
                .collect();
            let mut changed: Vec<usize> = compiled.changed.iter().map(|&k| kept[k]).collect();
            changed.extend(broken);
            changed.sort_unstable();
            compiled.changed = changed;
            return Ok(compiled);
        }
        Err(failed) => return Err(failed.diagnostics),
    };
    let program = &first.program;
    let main = program.function(program.main);
    let changed: Vec<usize> = entry
        .bindings
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            let now = main
                .locals
                .iter()
                .find(|l| l.name == b.name)
                .map(|l| program.value_shape(&l.ty));
            now.as_deref() != Some(b.shape.as_str())
        })
        .map(|(k, _)| k)
        .collect();
    if !changed.is_empty() || entry.input.is_none() {
        return Ok(Compiled {
            program: first.program,
            value: None,
            new_bindings: Vec::new(),
            changed,
            may_change: Vec::new(),
        });
    }
    let mut keep = Keep::default();
    for stmt in &main.body.stmts {
        let tir::Stmt::Let { local, init } = stmt else {
            continue;
        };
        let l = &main.locals[local.0 as usize];
        if init.span.file != first.input_file || l.name == VALUE {
            continue;
        }
        keep.bindings.retain(|k| k.name != l.name);
        keep.bindings.push(Kept {
            name: l.name.clone(),
            ty: l.ty.clone(),
            text: String::new(),
            mutable: l.mutable,
            addr: 0,
            at: init.span,
        });
    }
    let mut refused = Vec::new();
    for k in &mut keep.bindings {
        let bytes = program.layout(&k.ty).size;
        match (program.type_name(&k.ty), slots(bytes)) {
            (Some(text), Some(a)) => (k.text, k.addr) = (text, a),
            (None, _) => refused.push(ErrorKind::NoValueToKeep(k.name.clone())),
            (_, None) => refused.push(ErrorKind::TooLargeToKeep {
                what: format!("`{}`", k.name),
                bytes,
            }),
        }
    }
    if let Some(l) = main.locals.iter().find(|l| l.name == VALUE) {
        let bytes = program.layout(&l.ty).size;
        match (program.type_name(&l.ty), slots(bytes)) {
            (Some(text), Some(addr)) => {
                keep.value = Some(KeptValue {
                    ty: l.ty.clone(),
                    text,
                    bytes,
                    addr,
                })
            }
            (None, _) => refused.push(ErrorKind::NoValueToShow),
            (_, None) => refused.push(ErrorKind::TooLargeToKeep {
                what: "the value".into(),
                bytes,
            }),
        }
    }
    if !refused.is_empty() {
        let mut sink = Sink::default();
        for kind in refused {
            sink.error(kind, first.input_span);
        }
        return Err(sink.finish(first.sources));
    }
    // Pass 2: the same with the stores; this is the program that runs.
    let second = assemble(items, entry, &keep, loader).map_err(|f| f.diagnostics)?;
    let may_change = changed_in_place(&second.program, entry.bindings);
    Ok(Compiled {
        may_change,
        value: keep.value.map(|v| Value {
            ty: v.ty,
            addr: v.addr,
        }),
        new_bindings: keep
            .bindings
            .into_iter()
            .map(|k| NewBinding {
                name: k.name,
                ty: k.ty,
                mutable: k.mutable,
                addr: k.addr,
            })
            .collect(),
        program: second.program,
        changed,
    })
}

/// The bindings holding addresses (a slice, a reusable slice, a pool handle)
/// that the entry of `program` may change in place: those named by the root
/// local of an assigned place, of a `ref` argument or of a sliced array
/// (through fields and array elements, which are the binding's own bytes;
/// an element of a slice is memory elsewhere), and those the input declares
/// again. By name, so an input's own local of the same name
/// counts too: dropping a binding the input did not change loses a value,
/// keeping one it changed could keep freed memory.
fn changed_in_place(program: &tir::Program, bindings: &[Binding]) -> Vec<String> {
    fn root(e: &tir::Expr) -> Option<tir::LocalId> {
        match &e.kind {
            tir::ExprKind::Local(id) => Some(*id),
            tir::ExprKind::Field(x, _) => root(x),
            tir::ExprKind::Index(a, _) if matches!(a.ty, Type::Array(..)) => root(a),
            _ => None,
        }
    }
    fn assigned<'a>(b: &'a tir::Block, out: &mut Vec<&'a tir::Expr>) {
        for s in &b.stmts {
            if let tir::Stmt::Assign { place, .. } | tir::Stmt::CompoundAssign { place, .. } = s {
                out.push(place);
            }
            tir::visit::stmt_parts(s, &mut |p| {
                if let tir::visit::Part::Block(inner) = p {
                    assigned(inner, out);
                }
            });
        }
    }
    let main = program.function(program.main);
    let mut changed = Vec::new();
    assigned(&main.body, &mut changed);
    tir::visit::each_expr(&main.body, &mut |e| match &e.kind {
        tir::ExprKind::Call { args, .. } | tir::ExprKind::CallExtern { args, .. } => {
            changed.extend(args.iter().filter_map(|a| match a {
                tir::Arg::Ref(x) => Some(x),
                tir::Arg::Value(_) => None,
            }));
        }
        // A slice of an array in a binding views the binding's own bytes:
        // whatever it is handed to may write them (`g(arr[..])`).
        tir::ExprKind::SliceRange { base, .. } if matches!(base.ty, Type::Array(..)) => {
            changed.push(base);
        }
        _ => {}
    });
    let mut names: std::collections::HashSet<&str> = changed
        .into_iter()
        .filter_map(root)
        .map(|id| main.locals[id.0 as usize].name.as_str())
        .collect();
    // Each name's first local (the entry's own local of a binding is the
    // first of its name) and how many locals have it.
    let mut locals: std::collections::HashMap<&str, (&tir::Local, usize)> =
        std::collections::HashMap::new();
    for l in &main.locals {
        locals.entry(l.name.as_str()).or_insert((l, 0)).1 += 1;
    }
    // A binding the input declares again (`var r = reusable::append(r, 5);`):
    // the new one replaces it only when the input ends well, and its value
    // may come from the old one's memory, freed meanwhile.
    names.extend(
        bindings
            .iter()
            .filter(|b| locals.get(b.name.as_str()).is_some_and(|&(_, n)| n > 1))
            .map(|b| b.name.as_str()),
    );
    // A binding of scalars and arrays of them holds no address: its old
    // value is as good as any (a failed input changes no such binding).
    let struct_fields: Vec<Vec<Type>> = program
        .structs
        .iter()
        .map(|s| s.fields.iter().map(|f| f.ty.clone()).collect())
        .collect();
    let facts = check::StructFacts::new(&struct_fields, vec![false; struct_fields.len()]);
    bindings
        .iter()
        .filter(|b| names.contains(b.name.as_str()))
        .filter(|b| {
            locals
                .get(b.name.as_str())
                .is_some_and(|(l, _)| facts.holds_pool(&l.ty))
        })
        .map(|b| b.name.clone())
        .collect()
}

/// The `return` statements among `stmts`, in nested blocks too (an input
/// holds no function items). Iterative: an `else if` chain may be long.
fn returns(stmts: &[ast::Stmt]) -> Vec<Span> {
    let mut out = Vec::new();
    let mut work: Vec<&[ast::Stmt]> = vec![stmts];
    while let Some(list) = work.pop() {
        for s in list {
            match &s.kind {
                ast::StmtKind::Return(_) => out.push(s.span),
                ast::StmtKind::If { then, else_, .. } => {
                    work.push(&then.stmts);
                    if let Some(e) = else_ {
                        work.push(&e.stmts);
                    }
                }
                ast::StmtKind::While { body, .. }
                | ast::StmtKind::For { body, .. }
                | ast::StmtKind::ForEach { body, .. } => work.push(&body.stmts),
                _ => {}
            }
        }
    }
    out.sort_by_key(|s| s.lo);
    out
}

/// What pass 2 stores: the input's new bindings and its value.
#[derive(Default)]
struct Keep {
    bindings: Vec<Kept>,
    value: Option<KeptValue>,
}

/// A new binding to store.
struct Kept {
    name: String,
    ty: Type,
    /// `ty` as written.
    text: String,
    mutable: bool,
    addr: u64,
    /// Its initializer in the input (where an error about keeping it points).
    at: Span,
}

/// The value to store.
struct KeptValue {
    ty: Type,
    text: String,
    bytes: u64,
    addr: u64,
}

/// One checked assembly of a session program.
struct Assembled {
    program: tir::Program,
    sources: Arc<SourceMap>,
    input_file: FileId,
    input_span: Span,
}

/// Parses every part, builds the entry function and checks the whole.
fn assemble(
    items: &[Source],
    entry: &Entry,
    keep: &Keep,
    loader: &dyn Loader,
) -> Result<Assembled, Failed> {
    let mut sources = SourceMap::default();
    let mut sink = Sink::default();
    let mut root = ast::Module {
        items: Vec::new(),
        broken: Vec::new(),
    };
    for s in items {
        let file = sources.add(s.name.clone(), s.text.clone());
        let parsed = syntax::parse_file(file, &s.text, &mut sink);
        root.items.extend(parsed.items);
        root.broken.extend(parsed.broken);
        // Its lexical errors are reported by the parse already.
        let toks = syntax::lexer::lex(file, &s.text, &mut Sink::default());
        refuse_entry_calls(&toks, &mut sink);
    }
    let prelude = prelude(entry);
    let pre_file = sources.add(GENERATED.into(), prelude.clone());
    let mut body = generated_stmts(pre_file, &prelude, &mut sink);
    // The names the input binds at its top level.
    let mut rebound = HashSet::new();
    let (input_file, input_span) = match entry.input {
        Some((input, kind)) => {
            let file = sources.add(input.name.clone(), input.text.clone());
            let toks = syntax::lexer::lex(file, &input.text, &mut sink);
            refuse_entry_calls(&toks, &mut sink);
            match kind {
                InputKind::Statements => {
                    let stmts = syntax::parser::parse_stmts(toks, &input.text, &mut sink);
                    for span in returns(&stmts) {
                        sink.error(ErrorKind::ReturnInInput, span);
                    }
                    for s in &stmts {
                        if let ast::StmtKind::Let { name, .. } = &s.kind {
                            rebound.insert(name.name.clone());
                        }
                    }
                    body.extend(stmts)
                }
                InputKind::Expression => {
                    if let Some(e) = syntax::parser::parse_expr_only(toks, &input.text, &mut sink) {
                        body.push(ast::Stmt {
                            span: e.span,
                            kind: ast::StmtKind::Let {
                                mutable: false,
                                name: ast::Ident {
                                    name: VALUE.into(),
                                    span: e.span,
                                },
                                ty: None,
                                init: e,
                            },
                        });
                    }
                }
            }
            (file, Span::new(file, 0, input.text.len() as u32))
        }
        None => (pre_file, Span::new(pre_file, 0, 0)),
    };
    let (post, post_lines) = postlude(entry, keep, &rebound);
    let post_file = sources.add(GENERATED.into(), post.clone());
    body.extend(generated_stmts(post_file, &post, &mut sink));
    let span = Span::new(pre_file, 0, 0);
    root.items.push(ast::Item::Fn(ast::FnItem {
        private: false,
        name: ast::Ident {
            name: "main".into(),
            // Where what is said of the entry function as a whole is
            // placed: the input's start (a frame too large for the
            // stack, or for the compiler's limit, is the input's locals).
            span: Span::new(input_file, 0, 0),
        },
        generics: Vec::new(),
        params: Vec::new(),
        ret: None,
        body: ast::Block { stmts: body, span },
    }));
    let root = check::ParsedModule {
        name: None,
        file: pre_file,
        ast: root,
        uses: Default::default(),
    };
    let parsed_cleanly = sink.is_empty();
    let program = load_modules(root, loader, &mut sources, &mut sink)
        .and_then(|modules| check::check_program(&modules, &sources, &mut sink, parsed_cleanly));
    let post_text = sources.file(post_file).clone();
    let pre_text = sources.file(pre_file).clone();
    // Bindings the generated code cannot even read or write back any more
    // (their type no longer resolves after a redefinition): the host drops them.
    // (A write-back refused by the escape rule is the input's error, below.)
    let mut broken: Vec<usize> = sink
        .iter()
        .filter_map(|d| {
            let span = d.span;
            let line = |f: &crate::source::SourceFile| f.line_col(span.lo).0 as usize - 1;
            if span.file == pre_file && span.hi > span.lo {
                // Line `k` reads `entry.bindings[k]` (the entry function
                // itself, whose errors point at an empty span here, is not one).
                Some(line(&pre_text)).filter(|&k| k < entry.bindings.len())
            } else if span.file == post_file && !matches!(d.kind, ErrorKind::EscapeStore { .. }) {
                match post_lines.get(line(&post_text)) {
                    Some(PostLine::WriteBack(b)) => Some(*b),
                    _ => None,
                }
            } else {
                None
            }
        })
        .collect();
    broken.sort_unstable();
    broken.dedup();
    sink.rewrite(|d| {
        let post_line = (d.span.file == post_file)
            .then(|| {
                post_lines
                    .get(post_text.line_col(d.span.lo).0 as usize - 1)
                    .copied()
            })
            .flatten();
        in_user_terms(d, post_line, entry, keep, input_span)
    });
    let sources = Arc::new(sources);
    match program {
        Some(program) if sink.is_empty() => Ok(Assembled {
            program,
            sources,
            input_file,
            input_span,
        }),
        _ => Err(Failed {
            diagnostics: sink.finish(sources),
            broken,
        }),
    }
}

/// The session's entry is the generated `main`, which the user cannot
/// define (the host refuses a `fn main`): a call of `main` in an input or an
/// item would run the entry again, the input included, until the stack ran
/// out. To the user there is no `main`. Told from the tokens (a `main` not
/// after `::` or `fn`, before `(` or `::<`), so an item no input calls yet is
/// refused when it is defined, not when it is first called.
fn refuse_entry_calls(toks: &[syntax::lexer::Token], sink: &mut Sink) {
    use syntax::lexer::Tok;
    for (i, t) in toks.iter().enumerate() {
        let after_path = i > 0 && matches!(toks[i - 1].tok, Tok::ColonColon | Tok::Fn);
        let called = toks
            .get(i + 1)
            .is_some_and(|n| matches!(n.tok, Tok::LParen | Tok::ColonColon));
        if matches!(&t.tok, Tok::Ident(n) if n == "main") && !after_path && called {
            // The call's span: to the `)` that closes its arguments.
            let mut depth = 0;
            let close = toks[i + 1..].iter().find(|n| {
                match n.tok {
                    Tok::LParen => depth += 1,
                    Tok::RParen => depth -= 1,
                    _ => {}
                }
                depth == 0 && n.tok == Tok::RParen
            });
            let hi = close.map_or(t.span.hi, |c| c.span.hi);
            sink.error(
                ErrorKind::UnknownName("main".into()),
                Span::new(t.span.file, t.span.lo, hi),
            );
        }
    }
}

/// A failed assembly: the diagnostics, and the bindings whose generated
/// read or write-back failed (indices into the entry's bindings).
struct Failed {
    diagnostics: Diagnostics,
    broken: Vec<usize>,
}

/// A diagnostic about generated code, said about the input: a store of a
/// binding that holds a slice of the input's frame (a new binding: at its
/// initializer; an existing `var` the input assigned: at the input), or the
/// entry's frame, which is the input's.
fn in_user_terms(
    mut d: Diagnostic,
    post_line: Option<PostLine>,
    entry: &Entry,
    keep: &Keep,
    input_span: Span,
) -> Diagnostic {
    match (&d.kind, post_line) {
        (ErrorKind::EscapeStore { array, .. }, Some(PostLine::Keep(k))) => {
            let k = &keep.bindings[k];
            // The literal is the whole initializer (`let s: []u8 = "abc";`):
            // the same text kept as the array it is works. (Inside an array
            // or a struct, the view would be of that binding's own copy.)
            if *array == EscapeOrigin::Text && d.labels.iter().any(|l| l.span == k.at) {
                d.notes = vec![NoteKind::KeepText];
            }
            d.kind = ErrorKind::CannotKeep {
                name: k.name.clone(),
                array: array.clone(),
            };
            d.span = k.at;
        }
        (ErrorKind::EscapeStore { array, .. }, Some(PostLine::WriteBack(b))) => {
            d.kind = ErrorKind::CannotKeep {
                name: entry.bindings[b].name.clone(),
                array: array.clone(),
            };
            d.span = input_span;
        }
        (ErrorKind::FrameTooLarge { name, bytes }, _) if name == "main" => {
            d.kind = ErrorKind::InputFrameTooLarge { bytes: *bytes };
            d.span = input_span;
        }
        _ => {}
    }
    d
}

/// Statements of a generated part.
fn generated_stmts(file: FileId, text: &str, sink: &mut Sink) -> Vec<ast::Stmt> {
    let toks = syntax::lexer::lex_as(file, text, sink, true);
    syntax::parser::parse_stmts(toks, text, sink)
}

/// What a line of the generated text after the input does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PostLine {
    /// Stores the new binding `keep.bindings[k]`.
    Keep(usize),
    /// Stores the value.
    Value,
    /// Writes back `entry.bindings[k]`, a binding the input did not rebind.
    WriteBack(usize),
}

/// `unsafe::slice::<TY>(ADDR, 1)[0]`: the slot at `addr` as a place.
fn slot(ty: &str, addr: u64) -> String {
    format!("unsafe::slice::<{ty}>({addr}, 1)[0]")
}

/// The text before the input: read every binding from its slot (line `k`:
/// `entry.bindings[k]`).
fn prelude(entry: &Entry) -> String {
    let mut pre = String::new();
    for b in entry.bindings {
        let kw = if b.mutable { "var" } else { "let" };
        let _ = writeln!(pre, "{kw} {}: {} = {};", b.name, b.ty, slot(&b.ty, b.addr));
    }
    pre
}

/// The text after the input: store each kept binding and the value, and
/// write back each binding the input did not bind again at its top level
/// (`rebound`, the names of its top-level `let`s and `var`s); what each
/// line does, in order. A `let` is written back too: its value cannot be
/// assigned, but an array in it can be written through a slice (`let s =
/// "abc"; upper(s[..]);`), as in a compiled program. (Rebound names are
/// known before the first assembly, which has no [`Keep`] yet: a write-back
/// of `var x: i64` from a new `let x = true` would be a type error there.)
fn postlude(entry: &Entry, keep: &Keep, rebound: &HashSet<String>) -> (String, Vec<PostLine>) {
    let mut post = String::new();
    let mut lines = Vec::new();
    for (i, k) in keep.bindings.iter().enumerate() {
        let _ = writeln!(post, "{} = {};", slot(&k.text, k.addr), k.name);
        lines.push(PostLine::Keep(i));
    }
    if let Some(v) = &keep.value {
        lines.push(PostLine::Value);
        let addr = v.addr;
        let _ = match v.ty {
            Type::Slice(_) | Type::Reusable(_) => {
                writeln!(post, "unsafe::slice::<i64>({addr}, 2)[1] = len({VALUE});")
            }
            // Aggregates are copied out as bytes: a struct may hold a slice
            // of the input's frame, which a store would (rightly) refuse.
            Type::Array(..) | Type::Struct(_) => writeln!(
                post,
                "unsafe::copy({addr}, unsafe::addr({VALUE}), {});",
                v.bytes
            ),
            _ => writeln!(post, "{} = {VALUE};", slot(&v.text, addr)),
        };
    }
    for (i, b) in entry.bindings.iter().enumerate() {
        if !rebound.contains(&b.name) {
            let _ = writeln!(post, "{} = {};", slot(&b.ty, b.addr), b.name);
            lines.push(PostLine::WriteBack(i));
        }
    }
    (post, lines)
}

//! The REPL session: the newest definition of every item, the persistent
//! bindings and their memory, and the evaluation of one input.
//!
//! Every input becomes a whole program for `tern_compiler::compile`: all
//! current items, then `fn main()` whose body rebinds each persistent binding
//! from its slot (`let __sK = unsafe::slice::<T>(ADDR, 1); var x: T = __sK[0];`),
//! runs the input, and writes `var`s and new bindings back to their slots.
//! The input is compiled twice by the front end: first without write-backs,
//! to learn the types of the new top-level bindings (and of an expression),
//! then with them; only the second is compiled by Cranelift and run.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use tern_codegen::{OptLevel, Options};
use tern_compiler::tir::{Program, Stmt, Type};

use super::exec::{Outcome, Worker};
use super::scan::{self, ItemText};
use super::value::{format_value, type_display, type_source};
use crate::loader::FsLoader;

/// Largest binding or value the session keeps (1 GiB).
const MAX_SLOT_BYTES: u64 = 1 << 30;

/// File name of generated programs in diagnostics and runtime locations.
const FILE: &str = "<repl>";

/// A persistent binding: its name, source type and slot.
#[derive(Clone, Debug)]
struct Binding {
    name: String,
    ty: String,
    /// `tir::Program::value_shape` of the type when the slot was written: a
    /// redefinition that changes it drops the binding.
    shape: String,
    mutable: bool,
    /// Address of the slot (8-aligned, session memory).
    addr: u64,
}

/// What a line range of a generated program holds, for mapping locations.
#[derive(Clone, Debug)]
enum Region {
    Item(String),
    Input,
}

/// A generated program and where its parts are.
struct Generated {
    text: String,
    /// Name shown for locations in the input (`<repl>`, or the file `:load`ed).
    input_name: String,
    /// (first line, line count, what); lines 1-based.
    regions: Vec<(u32, u32, Region)>,
}

impl Generated {
    fn new() -> Generated {
        Generated {
            text: String::new(),
            input_name: FILE.to_string(),
            regions: Vec::new(),
        }
    }

    fn line(&self) -> u32 {
        self.text.matches('\n').count() as u32 + 1
    }

    fn push(&mut self, s: &str) {
        self.text.push_str(s);
    }

    fn region(&mut self, text: &str, what: Region) {
        let start = self.line();
        let lines = text.matches('\n').count() as u32 + 1;
        self.text.push_str(text);
        self.text.push('\n');
        self.regions.push((start, lines, what));
    }

    /// `(prefix, line)` of generated line `line`: the input's own line or the
    /// line within an item, with the location prefix to show.
    fn map(&self, line: u32) -> Option<(String, u32)> {
        self.line_map().map(line)
    }

    /// What [`Generated::map`] needs, apart from the text.
    fn line_map(&self) -> LineMap {
        LineMap {
            input_name: self.input_name.clone(),
            regions: self.regions.clone(),
        }
    }

    /// The last line of the input region.
    fn input_end(&self) -> Option<u32> {
        self.regions
            .iter()
            .find_map(|(start, n, what)| matches!(what, Region::Input).then_some(start + n - 1))
    }

    /// The text of generated line `line` (1-based).
    fn source_line(&self, line: u32) -> &str {
        let index = (line as usize).saturating_sub(1);
        self.text.lines().nth(index).unwrap_or("")
    }
}

/// Where the parts of a generated program are (see [`Generated`]).
#[derive(Clone, Debug)]
struct LineMap {
    input_name: String,
    regions: Vec<(u32, u32, Region)>,
}

impl LineMap {
    /// See [`Generated::map`].
    fn map(&self, line: u32) -> Option<(String, u32)> {
        self.regions.iter().find_map(|(start, n, what)| {
            (line >= *start && line < start + n).then(|| {
                let prefix = match what {
                    Region::Input => self.input_name.clone(),
                    Region::Item(key) => format!("<repl:{key}>"),
                };
                (prefix, line - start + 1)
            })
        })
    }
}

/// What kind of input the body of the entry holds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InputKind {
    Statements,
    Expression,
}

/// Front-end, Cranelift and run times of one input.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timing {
    pub front: Duration,
    /// `None` when the input was not compiled to machine code (items, errors).
    pub cranelift: Option<Duration>,
    /// `None` when the input did not run.
    pub run: Option<Duration>,
}

/// One REPL session.
pub struct Session {
    items: Vec<ItemText>,
    bindings: Vec<Binding>,
    /// Slot memory, freed only with the session (bindings point into it).
    memory: Vec<Box<[u64]>>,
    /// The thread every input runs on.
    worker: Worker,
    loader: FsLoader,
    options: Options,
    /// Report timing after each input (`:time`).
    pub timing: bool,
    /// Timing of the last evaluated input.
    pub last_timing: Timing,
}

impl Session {
    /// A fresh session; sets up the builtin pool and the failure path.
    pub fn new() -> Result<Session, String> {
        tern_runtime::builtin::with_pool(|_| ())?;
        let worker = Worker::start()?;
        let mut options = Options::new(OptLevel::O2);
        options.interrupt_flag = Some(tern_runtime::abi::interrupt::interrupt_flag_address());
        Ok(Session {
            items: Vec::new(),
            bindings: Vec::new(),
            memory: Vec::new(),
            worker,
            loader: FsLoader::from_env(),
            options,
            timing: false,
            last_timing: Timing::default(),
        })
    }

    /// `:set OPTION VALUE`: `sanitize on` compiles the inputs from now on as
    /// `--sanitize` does; `sanitize off` is refused once a slice was
    /// allocated under it (its pointer carries a tag unsanitized code cannot
    /// follow).
    pub fn set(&mut self, arg: &str) {
        let words: Vec<&str> = arg.split_whitespace().collect();
        match words.as_slice() {
            ["sanitize", "on"] => {
                self.options.sanitize = true;
                println!("sanitize on");
            }
            ["sanitize", "off"] => {
                if self.options.sanitize && tern_runtime::sanitize::tags_issued() {
                    eprintln!(
                        "error: sanitize stays on: slices allocated under it carry tags that unsanitized code cannot follow"
                    );
                } else {
                    self.options.sanitize = false;
                    println!("sanitize off");
                }
            }
            ["sanitize"] => println!(
                "sanitize {}",
                if self.options.sanitize { "on" } else { "off" }
            ),
            _ => eprintln!("error: `:set` takes `sanitize on` or `sanitize off` (see :help)"),
        }
    }

    /// Evaluates one complete input (items, statements or an expression):
    /// results go to stdout, errors to stderr.
    pub fn eval(&mut self, input: &str) {
        // A Ctrl-C from before this input (at the prompt) is not meant for it.
        tern_runtime::abi::interrupt::clear_interrupt();
        let (toks, _) = scan::scan(input);
        if toks.is_empty() {
            return;
        }
        self.last_timing = Timing::default();
        if scan::starts_with_item(&toks) {
            self.define(input, FILE);
        } else if scan::is_statements(input, &toks) {
            self.run_input(input, InputKind::Statements);
        } else {
            self.run_input(input, InputKind::Expression);
        }
        if self.timing {
            let t = self.last_timing;
            let ms = |d: Duration| d.as_secs_f64() * 1e3;
            let mut line = format!("time: front end {:.3} ms", ms(t.front));
            if let Some(c) = t.cranelift {
                line += &format!(", cranelift {:.3} ms", ms(c));
            }
            if let Some(r) = t.run {
                line += &format!(", run {:.3} ms", ms(r));
            }
            eprintln!("{line}");
        }
    }

    /// Adds or replaces items after checking that the whole program still
    /// compiles with them.
    fn define(&mut self, input: &str, input_name: &str) {
        let new = match scan::split_items(input) {
            Ok(items) => items,
            Err(msg) => {
                eprintln!("{FILE}: error: {msg}");
                return;
            }
        };
        if new.iter().any(|i| i.is_fn && i.key == "main") {
            eprintln!(
                "{FILE}: error: `main` is the REPL's entry point; give the function another name"
            );
            return;
        }
        let kept: Vec<ItemText> = self
            .items
            .iter()
            .filter(|old| !new.iter().any(|n| n.key == old.key))
            .cloned()
            .collect();
        let mut g = Generated::new();
        g.input_name = input_name.to_string();
        for item in &kept {
            g.region(&item.text, Region::Item(item.key.clone()));
        }
        g.region(input, Region::Input);
        self.entry(&mut g, None, "");
        let start = Instant::now();
        let result = tern_compiler::compile(FILE, &g.text, &self.loader);
        self.last_timing.front = start.elapsed();
        match result {
            Ok(program) => {
                // A binding whose type now means other bytes (a struct it
                // reaches was redefined, a constant used as an array length
                // changed) would be read with the new layout: drop it.
                let main = program.function(program.main);
                self.bindings.retain(|b| {
                    let now = main
                        .locals
                        .iter()
                        .find(|l| l.name == b.name)
                        .map(|l| program.value_shape(&l.ty));
                    let kept = now.as_deref() == Some(b.shape.as_str());
                    if !kept {
                        eprintln!(
                            "note: binding `{}` dropped: the layout of its type `{}` changed",
                            b.name, b.ty
                        );
                    }
                    kept
                });
                self.items = kept;
                self.items.extend(new);
            }
            Err(diags) => eprint!("{}", render(&g, &diags)),
        }
    }

    /// Appends the entry function: the prelude, `input` (if any) and `post`.
    fn entry(&self, g: &mut Generated, input: Option<(&str, InputKind)>, post: &str) {
        g.push("fn main() {\n");
        for (k, b) in self.bindings.iter().enumerate() {
            let kw = if b.mutable { "var" } else { "let" };
            g.push(&format!(
                "let __s{k} = unsafe::slice::<{ty}>({addr}, 1); {kw} {name}: {ty} = __s{k}[0];\n",
                ty = b.ty,
                addr = b.addr,
                name = b.name
            ));
        }
        match input {
            Some((text, InputKind::Statements)) => g.region(text, Region::Input),
            Some((text, InputKind::Expression)) => {
                g.push("let __v = (\n");
                g.region(text, Region::Input);
                g.push(");\n");
            }
            None => {}
        }
        g.push(post);
        g.push("}\n");
    }

    /// Front end on the program for `input` without write-backs (phase 1).
    fn compile_input(
        &mut self,
        input: &str,
        kind: InputKind,
    ) -> (Generated, Result<Program, tern_compiler::Diagnostics>) {
        let mut g = self.items_program();
        self.entry(&mut g, Some((input, kind)), "");
        let start = Instant::now();
        let result = tern_compiler::compile(FILE, &g.text, &self.loader);
        self.last_timing.front += start.elapsed();
        (g, result)
    }

    /// The items part of a program.
    fn items_program(&self) -> Generated {
        let mut g = Generated::new();
        for item in &self.items {
            g.region(&item.text, Region::Item(item.key.clone()));
        }
        g
    }

    /// Compiles with the front end, timing it; renders errors to stderr.
    fn front(&mut self, g: &Generated) -> Option<Program> {
        let start = Instant::now();
        let result = tern_compiler::compile(FILE, &g.text, &self.loader);
        self.last_timing.front += start.elapsed();
        match result {
            Ok(p) => Some(p),
            Err(diags) => {
                eprint!("{}", render(g, &diags));
                None
            }
        }
    }

    /// A slot of `bytes` bytes (at least one word), zeroed; `None` when the
    /// memory cannot be had.
    fn slot(&mut self, bytes: u64) -> Option<u64> {
        if bytes > MAX_SLOT_BYTES {
            return None;
        }
        let words = bytes.div_ceil(8).max(1) as usize;
        let mut mem = Vec::new();
        mem.try_reserve_exact(words).ok()?;
        mem.resize(words, 0u64);
        let mem = mem.into_boxed_slice();
        let addr = mem.as_ptr() as u64;
        self.memory.push(mem);
        Some(addr)
    }

    /// Runs a statement or expression input.
    fn run_input(&mut self, input: &str, kind: InputKind) {
        // A statement input may leave out its final `;`.
        let mut input = input.to_string();
        let trimmed = input.trim_end();
        if kind == InputKind::Statements && !trimmed.ends_with(';') && !trimmed.ends_with('}') {
            input.truncate(trimmed.len());
            input.push(';');
        }
        // Phase 1: types of the new bindings and of the expression.
        let (g, result) = self.compile_input(&input, kind);
        let (kind, p1) = match result {
            Ok(p) => (kind, p),
            Err(diags) if kind == InputKind::Expression => {
                // An "expression" that is really a statement (a call of a
                // function without a value, an assignment without `;`).
                let statement = format!("{input};");
                match self.compile_input(&statement, InputKind::Statements).1 {
                    Ok(p) => {
                        input = statement;
                        (InputKind::Statements, p)
                    }
                    Err(_) => {
                        eprint!("{}", render(&g, &diags));
                        return;
                    }
                }
            }
            Err(diags) => {
                eprint!("{}", render(&g, &diags));
                return;
            }
        };
        let p1 = &p1;
        let input = input.as_str();
        let main = p1.function(p1.main);
        let mut new: Vec<(String, Type, bool)> = Vec::new();
        let mut value_ty = None;
        let mut skip = self.bindings.len();
        for stmt in &main.body.stmts {
            let Stmt::Let { local, .. } = stmt else {
                continue;
            };
            let l = &main.locals[local.0 as usize];
            if l.name == "__v" {
                value_ty = Some(l.ty.clone());
                continue;
            }
            if l.name.starts_with("__") {
                continue;
            }
            if skip > 0 {
                skip -= 1;
                continue;
            }
            new.retain(|(n, _, _)| *n != l.name);
            new.push((l.name.clone(), l.ty.clone(), l.mutable));
        }
        // Phase 2: slots and write-backs.
        let mut post = String::new();
        let mut fresh = Vec::new();
        for (k, b) in self.bindings.iter().enumerate() {
            if b.mutable && !new.iter().any(|(n, _, _)| *n == b.name) {
                let _ = writeln!(post, "__s{k}[0] = {};", b.name);
            }
        }
        for (j, (name, ty, mutable)) in new.iter().enumerate() {
            let Some(src) = type_source(p1, ty) else {
                eprintln!("{FILE}: error: `{name}` has no value to keep");
                return;
            };
            let Some(addr) = self.slot(p1.layout(ty).size) else {
                eprintln!(
                    "{FILE}: error: `{name}` is too large to keep ({} bytes)",
                    p1.layout(ty).size
                );
                return;
            };
            let _ = writeln!(
                post,
                "let __n{j} = unsafe::slice::<{src}>({addr}, 1); __n{j}[0] = {name};"
            );
            fresh.push(Binding {
                name: name.clone(),
                ty: src,
                shape: p1.value_shape(ty),
                mutable: *mutable,
                addr,
            });
        }
        let mut result_slot = None;
        if let Some(ty) = &value_ty {
            let Some(src) = type_source(p1, ty) else {
                eprintln!("{FILE}: error: this expression has no value to show");
                return;
            };
            let Some(addr) = self.slot(p1.layout(ty).size) else {
                eprintln!(
                    "{FILE}: error: the value is too large to show ({} bytes)",
                    p1.layout(ty).size
                );
                return;
            };
            // The value is shown after the input's frame is gone, so it is
            // copied out with `unsafe::` rather than stored as a binding
            // would be: a slice may view an array of that frame (the escape
            // rule would refuse the store), and showing one reads only its
            // length, never its elements (`value::format_value`).
            let size = p1.layout(ty).size;
            let _ = match ty {
                Type::Slice(_) | Type::Reusable(_) => writeln!(
                    post,
                    "let __r = unsafe::slice::<i64>({addr}, 2); __r[1] = len(__v);"
                ),
                _ if repr_is_memory(ty) => {
                    writeln!(post, "unsafe::copy({addr}, unsafe::addr(__v), {size});")
                }
                _ => writeln!(
                    post,
                    "let __r = unsafe::slice::<{src}>({addr}, 1); __r[0] = __v;"
                ),
            };
            result_slot = Some(addr);
        }
        let mut g = self.items_program();
        self.entry(&mut g, Some((input, kind)), &post);
        let Some(program) = self.front(&g) else {
            return;
        };
        let start = Instant::now();
        let symbols = tern_runtime::abi::symbols();
        let jit = match crate::stack::jit(&program, &self.options, &symbols) {
            Ok(j) => j,
            Err(e) => {
                eprintln!("error: {e}");
                return;
            }
        };
        self.last_timing.cranelift = Some(start.elapsed());
        // Where the sanitizer records a free, it records it in the user's terms:
        // the message may name it long after this input's program is gone.
        if self.options.sanitize {
            let lines = g.line_map();
            tern_runtime::sanitize::set_location_map(Some(Box::new(move |loc: &str| {
                map_loc(&lines, loc)
            })));
        }
        let start = Instant::now();
        let outcome = self.worker.run(jit.entry());
        self.last_timing.run = Some(start.elapsed());
        // SAFETY: the worker is back from this code, whatever the outcome,
        // and nothing keeps pointers into it.
        unsafe { jit.free() };
        match outcome {
            Outcome::Done => {
                self.bindings
                    .retain(|b| !fresh.iter().any(|f| f.name == b.name));
                self.bindings.extend(fresh);
                if let (Some(addr), Some(ty)) = (result_slot, value_ty) {
                    // SAFETY: the entry stored a value of `ty` (laid out
                    // by this same program) into this slot.
                    let text = unsafe { format_value(&program, &ty, addr as *const u8) };
                    println!("{text}");
                    // Nothing refers to the value's slot any more.
                    self.memory.retain(|m| m.as_ptr() as u64 != addr);
                }
            }
            Outcome::Failed { loc, msg } => {
                eprintln!("error: {}: {msg}", map_loc(&g.line_map(), &loc));
            }
            Outcome::Fault => {
                eprintln!("error: stack overflow or invalid memory access");
            }
        }
    }

    /// `:load`: defines the items of a file's text; a `fn main` is blanked
    /// out (keeping line numbers) since the REPL's entry has that name.
    pub fn load_items(&mut self, text: &str, file: &str) {
        let mut text = text.to_string();
        match scan::split_items(&text) {
            Ok(items) => {
                for item in items.iter().filter(|i| i.is_fn && i.key == "main") {
                    if let Some(at) = text.find(&item.text) {
                        let blank: String = item
                            .text
                            .chars()
                            .map(|c| if c == '\n' { c } else { ' ' })
                            .collect();
                        text.replace_range(at..at + item.text.len(), &blank);
                    }
                }
            }
            Err(msg) => {
                eprintln!("{file}: error: {msg}");
                return;
            }
        }
        if scan::scan(&text).0.is_empty() {
            return;
        }
        self.define(&text, file);
    }

    /// The type of expression `expr`, or its errors.
    pub fn type_of(&mut self, expr: &str) {
        let mut g = self.items_program();
        self.entry(&mut g, Some((expr, InputKind::Expression)), "");
        let result = tern_compiler::compile(FILE, &g.text, &self.loader);
        match result {
            Ok(p) => {
                let main = p.function(p.main);
                let ty = main
                    .locals
                    .iter()
                    .find(|l| l.name == "__v")
                    .map(|l| type_display(&p, &l.ty))
                    .unwrap_or_else(|| "()".into());
                println!("{ty}");
            }
            Err(d) if d.len() == 1 && d.summaries()[0].3 == "this expression has no value" => {
                println!("()")
            }
            Err(d) => eprint!("{}", render(&g, &d)),
        }
    }

    /// The CLIF of function item `name`, compiled as the REPL compiles it.
    pub fn clif(&mut self, name: &str) {
        let Some(item) = self.items.iter().find(|i| i.is_fn && i.key == name) else {
            eprintln!("{FILE}: error: no function `{name}` is defined");
            return;
        };
        if item.text.starts_with("extern") {
            eprintln!("{FILE}: error: `{name}` is an extern function: it has no CLIF");
            return;
        }
        let Some(params) = scan::fn_params(&item.text) else {
            eprintln!(
                "{FILE}: error: `{name}` is generic: its code exists per instantiation (use `tern build --emit clif`)"
            );
            return;
        };
        // A call (never run) makes the function part of the program.
        let mut call = String::new();
        let mut args = Vec::new();
        for (k, (by_ref, ty)) in params.iter().enumerate() {
            let _ = writeln!(call, "var __a{k}: {ty} = unsafe::slice::<{ty}>(0, 1)[0];");
            args.push(if *by_ref {
                format!("ref __a{k}")
            } else {
                format!("__a{k}")
            });
        }
        let _ = writeln!(call, "{name}({});", args.join(", "));
        let mut g = self.items_program();
        self.entry(&mut g, None, &call);
        let Some(program) = self.front(&g) else {
            return;
        };
        let mut opts = self.options.clone();
        opts.emit_clif = true;
        // Shown without the interrupt polls: their flag address changes
        // from run to run.
        opts.interrupt_flag = None;
        let symbols = tern_runtime::abi::symbols();
        match crate::stack::jit(&program, &opts, &symbols) {
            Ok(mut jit) => {
                let clif = std::mem::take(&mut jit.listing.clif);
                // SAFETY: this code was only compiled, never run.
                unsafe { jit.free() };
                let head = format!("; fn {name}\n");
                match clif.find(&head) {
                    Some(at) => {
                        let rest = &clif[at..];
                        let end = rest[1..].find("\n; fn ").map_or(rest.len(), |e| e + 2);
                        print!("{}", &rest[..end]);
                    }
                    None => eprintln!("{FILE}: error: no CLIF was produced for `{name}`"),
                }
            }
            Err(e) => eprintln!("error: {e}"),
        }
    }
}

/// Whether values of `ty` live in memory (arrays, structs) rather than in
/// registers, so `unsafe::addr` of a binding of it is the value's address.
fn repr_is_memory(ty: &Type) -> bool {
    matches!(ty, Type::Array(..) | Type::Struct(_))
}

/// A runtime location `file:line:col` of a generated program, mapped back to
/// what the user typed.
fn map_loc(g: &LineMap, loc: &str) -> String {
    let mut parts = loc.rsplitn(3, ':');
    let (Some(col), Some(line), Some(file)) = (parts.next(), parts.next(), parts.next()) else {
        return loc.to_string();
    };
    match (file == FILE, line.parse::<u32>()) {
        (true, Ok(line)) => match g.map(line) {
            Some((prefix, l)) => format!("{prefix}:{l}:{col}"),
            None => loc.to_string(),
        },
        _ => loc.to_string(),
    }
}

/// The message of a diagnostic in generated code, in the user's terms where
/// it is about the input: a binding written back to its slot
/// (`__nJ[0] = NAME;`) that holds a slice of an array of the input's frame,
/// or the input's frame itself (the generated `main`'s).
fn generated(g: &Generated, line: u32, d: &tern_compiler::Diagnostic) -> Option<String> {
    use tern_compiler::diagnostics::ErrorKind;
    let kept = g
        .source_line(line)
        .split_once("[0] = ")
        .and_then(|(_, rest)| rest.strip_suffix(';'));
    match (&d.kind, kept) {
        (ErrorKind::EscapeStore { array, .. }, Some(name)) => Some(format!(
            "`{name}` cannot be kept: it holds a slice of {array}, which lives only while this input runs"
        )),
        // The input runs as the body of a generated `main`.
        (ErrorKind::FrameTooLarge { name, bytes }, _) if name == "main" => Some(format!(
            "this input needs up to {bytes} bytes of stack, more than the limit of 512 MiB; keep large arrays in a pool (`reusable[]T`, `slice_pool`)"
        )),
        _ => None,
    }
}

/// Diagnostics of a generated program, against what the user typed: the
/// location, the source line and a caret under the span.
fn render(g: &Generated, diags: &tern_compiler::Diagnostics) -> String {
    let mut out = String::new();
    for ((file, line, col, msg), d) in diags.summaries().into_iter().zip(diags.list()) {
        if file != FILE {
            // A module's own error: the front end's rendering is right.
            let _ = writeln!(out, "{file}:{line}:{col}: error: {msg}");
            continue;
        }
        // An error on the line after the input (the generated `);` or `}`)
        // is about the end of what the user typed.
        let (line, col) = match (g.map(line), generated(g, line, d)) {
            (Some(_), _) => (line, col),
            (None, Some(said)) => {
                let _ = writeln!(out, "{FILE}: error: {said}");
                continue;
            }
            (None, None) => match g.input_end() {
                Some(end) if line == end + 1 => (end, g.source_line(end).len() as u32 + 1),
                _ => {
                    let _ = writeln!(out, "{FILE}: error: {msg}");
                    continue;
                }
            },
        };
        let Some((prefix, l)) = g.map(line) else {
            let _ = writeln!(out, "{FILE}: error: {msg}");
            continue;
        };
        let src = g.source_line(line);
        // Columns count characters; the span counts bytes: underline the
        // characters the span covers on this line.
        let span_bytes = d.span.hi.saturating_sub(d.span.lo) as usize;
        let mut covered = 0;
        let width = src
            .chars()
            .skip((col as usize).saturating_sub(1))
            .take_while(|c| {
                let inside = covered < span_bytes;
                covered += c.len_utf8();
                inside
            })
            .count()
            .max(1);
        let gutter = l.to_string();
        let pad = " ".repeat(gutter.len());
        let _ = writeln!(out, "{prefix}:{l}:{col}: error: {msg}");
        let _ = writeln!(out, "{gutter} | {src}");
        let _ = writeln!(
            out,
            "{pad} | {}{}",
            " ".repeat((col as usize).saturating_sub(1)),
            "^".repeat(width)
        );
    }
    out
}

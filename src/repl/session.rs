//! The REPL session: the newest definition of every item, the persistent
//! bindings and their memory, and the evaluation of one input.
//!
//! The front end does the language work through its session API
//! (`tern_compiler::session`): every input is compiled as a program of the
//! current items (one source each, named `<repl:NAME>`), the bindings (slots
//! in this session's memory, described by type) and the input (its own
//! source, `<repl>` or the `:load`ed file), and the compiler says what came
//! of it as data: the value's type, the new bindings, the bindings a
//! redefinition changed. Diagnostics are the compiler's, rendered by its one
//! renderer against what the user typed.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tern_codegen::{OptLevel, Options};
use tern_compiler::session::{self, Binding, Entry, InputKind, InputKindOrItems, Item, Source};

use super::exec::{Outcome, Worker};
use super::value::format_value;
use crate::loader::FsLoader;

/// Largest binding or value the session keeps (1 GiB).
const MAX_SLOT_BYTES: u64 = 1 << 30;

/// File name of what the user types, in diagnostics and runtime locations.
pub(super) const FILE: &str = "<repl>";

/// Front-end, Cranelift and run times of one input.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timing {
    pub front: Duration,
    /// `None` when the input was not compiled to machine code (items, errors).
    pub cranelift: Option<Duration>,
    /// `None` when the input did not run.
    pub run: Option<Duration>,
}

/// Session memory for bindings and values: 8-aligned, zeroed, one block per
/// slot.
#[derive(Default)]
struct Slots {
    blocks: Vec<Box<[u64]>>,
}

impl Slots {
    /// A slot of `bytes` bytes (at least one word); `None` when it is larger
    /// than the session keeps or the memory cannot be had.
    fn take(&mut self, bytes: u64) -> Option<u64> {
        if bytes > MAX_SLOT_BYTES {
            return None;
        }
        let words = bytes.div_ceil(8).max(1) as usize;
        let mut mem = Vec::new();
        mem.try_reserve_exact(words).ok()?;
        mem.resize(words, 0u64);
        let mem = mem.into_boxed_slice();
        let addr = mem.as_ptr() as u64;
        self.blocks.push(mem);
        Some(addr)
    }

    /// Gives back the slot at `addr`.
    fn free(&mut self, addr: u64) {
        self.blocks.retain(|m| m.as_ptr() as u64 != addr);
    }

    /// Moves every slot of `other` into these.
    fn adopt(&mut self, other: Slots) {
        self.blocks.extend(other.blocks);
    }
}

/// The inputs entered so far: how many, and the latest one's text. The
/// sanitizer's location map reads it when a slice is freed, so that a later
/// `use of a freed slice` names the input that freed it (every input is
/// `<repl>`, its lines counted from 1).
#[derive(Default)]
struct Entered {
    count: u64,
    latest: String,
}

/// A location of the input being run (`<repl>:LINE:COL`) as the sanitizer
/// records it: with the input's number and its line, shown as runtime
/// errors show program text and cut at 60 characters. Other locations (an
/// item's `<repl:NAME>`, a `:load`ed file) name themselves already.
fn input_site(loc: &str, entered: &Entered) -> String {
    let Some(line) = loc
        .strip_prefix("<repl>:")
        .and_then(|rest| rest.split(':').next())
        .and_then(|l| l.parse::<usize>().ok())
    else {
        return loc.to_string();
    };
    let text = entered
        .latest
        .lines()
        .nth(line.saturating_sub(1))
        .unwrap_or("");
    let mut shown = tern_runtime::io::shown_text(text.trim().as_bytes());
    if let Some((cut, _)) = shown.char_indices().nth(60) {
        shown.truncate(cut);
        shown.push_str("...");
    }
    format!("{loc} in input {}: `{shown}`", entered.count)
}

/// An item of the session and where it was defined.
struct Defined {
    item: Item,
    /// `<repl>` or the path of the file `:load`ed.
    origin: String,
}

impl Defined {
    /// The item as a source: typed ones as `<repl:NAME>` (lines counted in
    /// the item), loaded ones as their file at their own line, so that a
    /// diagnostic names the file's line and its `use` resolves from there.
    fn source(&self) -> Source {
        if self.origin == FILE {
            Source {
                name: format!("<repl:{}>", self.item.key),
                text: self.item.text.clone(),
            }
        } else {
            self.item.in_place(&self.origin)
        }
    }
}

/// One REPL session.
pub struct Session {
    items: Vec<Defined>,
    bindings: Vec<Binding>,
    /// The bindings' slots, freed only with the session.
    memory: Slots,
    /// The thread every input runs on.
    worker: Worker,
    loader: FsLoader,
    options: Options,
    /// Report timing after each input (`:time`).
    pub timing: bool,
    /// Timing of the last evaluated input.
    pub last_timing: Timing,
    /// The inputs entered so far (shared with the sanitizer's location map).
    entered: Arc<Mutex<Entered>>,
}

impl Session {
    /// A fresh session; sets up the builtin pool and the failure path.
    pub fn new() -> Result<Session, String> {
        tern_runtime::builtin::with_pool(|_| ())?;
        let worker = Worker::start()?;
        let mut options = Options::new(OptLevel::O2);
        options.verify |= crate::config::verify();
        options.interrupt_flag = Some(tern_runtime::abi::interrupt::interrupt_flag_address());
        options.stack_limit = Some(super::exec::stack_limit_address());
        // The sanitizer records where a slice was freed; the location text
        // must outlive the input's code, which is freed after it runs, and
        // name the input among all the `<repl>` ones.
        let entered = Arc::new(Mutex::new(Entered::default()));
        let shared = Arc::clone(&entered);
        tern_runtime::sanitize::set_location_map(Some(Box::new(move |loc: &str| {
            input_site(loc, &shared.lock().unwrap_or_else(|e| e.into_inner()))
        })));
        Ok(Session {
            items: Vec::new(),
            bindings: Vec::new(),
            memory: Slots::default(),
            worker,
            loader: FsLoader::from_env(),
            options,
            timing: false,
            last_timing: Timing::default(),
            entered,
        })
    }

    /// Forgets every item and binding (`:reset`); the builtin pool and what
    /// it holds stay (other slices may still view it).
    pub fn reset(&mut self) {
        self.items.clear();
        self.bindings.clear();
        self.memory = Slots::default();
    }

    /// `:list`: the items (by kind and name) and the bindings with their
    /// types.
    pub fn list(&self) {
        for Defined { item, .. } in &self.items {
            let kind = item.text.split_whitespace().next().unwrap_or("");
            let kind = if item.is_extern { "extern fn" } else { kind };
            match item.key.strip_prefix("use ") {
                Some(module) => reply!("use {module}"),
                None => reply!("{kind} {}", item.key),
            }
        }
        for b in &self.bindings {
            let kw = if b.mutable { "var" } else { "let" };
            reply!("{kw} {}: {}", b.name, b.ty);
        }
    }

    /// Every name the session defines (items, then bindings), for completion.
    pub fn names(&self) -> Vec<String> {
        self.items
            .iter()
            .filter(|d| !d.item.key.starts_with("use "))
            .map(|d| d.item.key.clone())
            .chain(self.bindings.iter().map(|b| b.name.clone()))
            .collect()
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
                reply!("sanitize on");
            }
            ["sanitize", "off"] => {
                // Once an input ran under it the runtime's sanitizer is on:
                // the library pools tag what they hand out from then on,
                // even to unsanitized code, which cannot follow the tags.
                if self.options.sanitize
                    && (tern_runtime::sanitize::tags_issued() || tern_runtime::sanitize::enabled())
                {
                    say!(
                        "error: sanitize stays on: slices allocated under it carry tags that unsanitized code cannot follow"
                    );
                } else {
                    self.options.sanitize = false;
                    reply!("sanitize off");
                }
            }
            ["sanitize"] => reply!(
                "sanitize {}",
                if self.options.sanitize { "on" } else { "off" }
            ),
            _ => say!("error: `:set` takes `sanitize on` or `sanitize off` (see :help)"),
        }
    }

    /// Evaluates one complete input (items, statements or an expression):
    /// results go to stdout, errors to stderr.
    pub fn eval(&mut self, input: &str) {
        // A Ctrl-C from before this input (at the prompt) is not meant for it.
        super::exec::clear_interrupt();
        let shape = session::input_shape(input);
        self.last_timing = Timing::default();
        if matches!(shape.kind, InputKindOrItems::Empty) {
            return;
        }
        {
            let mut entered = self.entered.lock().unwrap_or_else(|e| e.into_inner());
            entered.count += 1;
            entered.latest = input.to_string();
        }
        match shape.kind {
            InputKindOrItems::Empty => {}
            InputKindOrItems::Items => self.define(input, FILE),
            InputKindOrItems::Run(kind) => self.run_input(input, kind, shape.complete),
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
            say!("{line}");
        }
    }

    /// The current items as sources, one per item, leaving out those whose
    /// key is in `replaced`.
    fn item_sources(&self, replaced: &[Item]) -> Vec<Source> {
        self.items
            .iter()
            .filter(|old| !replaced.iter().any(|n| n.key == old.item.key))
            .map(Defined::source)
            .collect()
    }

    /// Adds or replaces the items of `input` after checking that the whole
    /// program still compiles with them; drops the bindings whose type they
    /// change the layout of.
    fn define(&mut self, input: &str, input_name: &str) {
        let text = match input_name {
            FILE => session::with_final_semicolon(input, true),
            _ => None,
        };
        let source = Source {
            name: input_name.to_string(),
            text: text.unwrap_or_else(|| input.to_string()),
        };
        let new = match session::split_items(&source) {
            Ok(items) => items,
            Err(diags) => {
                say_part!("{}", crate::frontend::colored(diags.render()));
                return;
            }
        };
        if new.iter().any(|i| i.is_fn && i.key == "main") {
            say!("{FILE}: error: `main` is the REPL's entry point; give the function another name");
            return;
        }
        let mut sources = self.item_sources(&new);
        sources.push(source);
        let entry = Entry {
            bindings: &self.bindings,
            input: None,
        };
        let start = Instant::now();
        let result = session::compile(&sources, &entry, &mut |_| None, &self.loader);
        self.last_timing.front = start.elapsed();
        match result {
            Ok(compiled) => {
                self.drop_changed(&compiled.changed);
                self.items
                    .retain(|old| !new.iter().any(|n| n.key == old.item.key));
                self.items.extend(new.into_iter().map(|item| Defined {
                    item,
                    origin: input_name.to_string(),
                }));
            }
            Err(diags) => say_part!("{}", diags.render()),
        }
    }

    /// Drops the bindings at indices `changed` (their type no longer lays
    /// out as when they were stored), with a note for each.
    fn drop_changed(&mut self, changed: &[usize]) {
        let names: Vec<String> = changed
            .iter()
            .map(|&k| {
                let b = &self.bindings[k];
                say!(
                    "note: binding `{}` dropped: the layout of its type `{}` changed",
                    b.name,
                    b.ty
                );
                b.name.clone()
            })
            .collect();
        for name in names {
            self.forget(&name);
        }
    }

    /// Drops the bindings a failed input may have changed in place
    /// (`session::Compiled::may_change`): it ended before writing them back,
    /// so they hold what they held before it, which it may have freed or
    /// moved (a reusable slice resized, a pool finished).
    fn drop_unwritten(&mut self, names: &[String]) {
        for name in names {
            if self.bindings.iter().any(|b| &b.name == name) {
                say!(
                    "note: binding `{name}` dropped: the input that changes it failed before writing it back (it may hold memory the input freed)"
                );
                self.forget(name);
            }
        }
    }

    /// Removes binding `name` (redefined or dropped) and frees its slot.
    /// Nothing refers to the slot: every input reads the bindings into its
    /// own frame (`session::compile`'s entry), and a slice of that frame
    /// cannot be kept, so no other binding points into it.
    fn forget(&mut self, name: &str) {
        if let Some(k) = self.bindings.iter().position(|b| b.name == name) {
            let old = self.bindings.remove(k);
            self.memory.free(old.addr);
        }
    }

    /// Runs a statement or expression input.
    /// `complete`: nothing is left open (a statement input is then given
    /// the final `;` it may leave out).
    fn run_input(&mut self, input: &str, kind: InputKind, complete: bool) {
        let mut text = input.to_string();
        if kind == InputKind::Statements
            && complete
            && let Some(t) = session::with_final_semicolon(&text, false)
        {
            text = t;
        }
        let sources = self.item_sources(&[]);
        let mut fresh = Slots::default();
        let start = Instant::now();
        let mut result = self.compile_input(&sources, &text, kind, &mut fresh);
        if let (Err(first), InputKind::Expression) = (&result, kind) {
            // An "expression" that is really a statement (a call of a
            // function without a value, an assignment without `;`). When
            // it fails as one too, its errors as a statement are the ones
            // to show if it is one: it parses only as a statement (`k =
            // true`), or as an expression it merely had no value.
            let statement = no_value(first)
                || (!session::parses_as_expression(&text)
                    && session::with_final_semicolon(&text, false).is_some());
            let mut other = Slots::default();
            match self.compile_input(
                &sources,
                &format!("{text};"),
                InputKind::Statements,
                &mut other,
            ) {
                Ok(c) => {
                    result = Ok(c);
                    fresh = other;
                }
                Err(d) if statement => result = Err(d),
                Err(_) => {}
            }
        }
        self.last_timing.front = start.elapsed();
        let compiled = match result {
            Ok(c) => c,
            Err(diags) => {
                say_part!("{}", crate::frontend::colored(diags.render()));
                return;
            }
        };
        if !compiled.changed.is_empty() {
            // Cannot happen after `define` (it drops them), but a binding
            // read with another layout must never run: drop, do not run.
            self.drop_changed(&compiled.changed);
            say!("{FILE}: error: the input was not run; enter it again");
            return;
        }
        let program = &compiled.program;
        let start = Instant::now();
        let symbols = tern_runtime::abi::symbols();
        let jit = match crate::stack::jit(program, &self.options, &symbols) {
            Ok(j) => j,
            Err(e) => {
                say!("error: {e}");
                return;
            }
        };
        self.last_timing.cranelift = Some(start.elapsed());
        if self.timing {
            for note in &jit.listing.notes {
                say!("{note}");
            }
        }
        let start = Instant::now();
        // SAFETY: the table and its code live until `free` below, and are
        // unregistered first.
        unsafe { tern_runtime::backtrace::table::register(jit.debug_table) };
        let outcome = self.worker.run(jit.entry());
        self.last_timing.run = Some(start.elapsed());
        tern_runtime::backtrace::table::unregister(jit.debug_table);
        // SAFETY: the worker is back from this code, whatever the outcome,
        // and nothing keeps pointers into it.
        unsafe { jit.free() };
        match outcome {
            Outcome::Done => {
                for nb in &compiled.new_bindings {
                    self.forget(&nb.name);
                    self.bindings.push(Binding {
                        name: nb.name.clone(),
                        ty: program.type_name(&nb.ty).unwrap_or_default(),
                        shape: program.value_shape(&nb.ty),
                        mutable: nb.mutable,
                        addr: nb.addr,
                    });
                }
                if let Some(v) = &compiled.value {
                    // SAFETY: the entry stored a value of `v.ty` (laid out
                    // by this same program) into this slot.
                    let text = unsafe { format_value(program, &v.ty, v.addr as *const u8) };
                    reply!("{text}");
                    // Nothing refers to the value's slot any more.
                    fresh.free(v.addr);
                }
                self.memory.adopt(fresh);
            }
            Outcome::Failed { loc, msg } => {
                say!("error: {loc}: {msg}");
                self.drop_unwritten(&compiled.may_change);
            }
            Outcome::Fault(report) => {
                match report {
                    Some(report) => say!("{}", report.trim_end()),
                    None => say!("error: stack overflow or invalid memory access"),
                }
                self.drop_unwritten(&compiled.may_change);
            }
        }
    }

    /// The session program for input `text`, with new slots from `fresh`.
    fn compile_input(
        &self,
        sources: &[Source],
        text: &str,
        kind: InputKind,
        fresh: &mut Slots,
    ) -> Result<session::Compiled, tern_compiler::Diagnostics> {
        let input = Source {
            name: FILE.into(),
            text: text.to_string(),
        };
        let entry = Entry {
            bindings: &self.bindings,
            input: Some((&input, kind)),
        };
        session::compile(sources, &entry, &mut |b| fresh.take(b), &self.loader)
    }

    /// `:load`: defines the items of a file's text; a `fn main` is blanked
    /// out (keeping line numbers) since the REPL's entry has that name.
    pub fn load_items(&mut self, text: &str, file: &str) {
        let mut text = text.to_string();
        let source = Source {
            name: file.to_string(),
            text: text.clone(),
        };
        match session::split_items(&source) {
            Ok(items) => {
                // At the item's own place (the same text may stand in a
                // comment before it); from the last, so a blank of another
                // length moves no place still to blank.
                for item in items.iter().rev().filter(|i| i.is_fn && i.key == "main") {
                    let blank: String = item
                        .text
                        .chars()
                        .map(|c| if c == '\n' { c } else { ' ' })
                        .collect();
                    text.replace_range(item.at..item.at + item.text.len(), &blank);
                }
            }
            Err(diags) => {
                say_part!("{}", crate::frontend::colored(diags.render()));
                return;
            }
        }
        if session::input_shape(&text).kind == InputKindOrItems::Empty {
            return;
        }
        self.define(&text, file);
    }

    /// The type of expression `expr`, or its errors.
    pub fn type_of(&mut self, expr: &str) {
        let sources = self.item_sources(&[]);
        // Compiled, never run: the slots are not needed.
        let mut none = Slots::default();
        match self.compile_input(&sources, expr, InputKind::Expression, &mut none) {
            Ok(c) => {
                let ty = c.value.and_then(|v| c.program.type_name(&v.ty));
                reply!("{}", ty.unwrap_or_else(|| "()".into()));
            }
            Err(d) if d.len() == 1 && no_value(&d) => reply!("()"),
            Err(d) => say_part!("{}", d.render()),
        }
    }

    /// The CLIF of function item `name`, compiled as the REPL compiles it.
    pub fn clif(&mut self, name: &str) {
        let Some(Defined { item, .. }) = self
            .items
            .iter()
            .find(|d| d.item.is_fn && d.item.key == name)
        else {
            say!("{FILE}: error: no function `{name}` is defined");
            return;
        };
        if item.is_extern {
            say!("{FILE}: error: `{name}` is an extern function: it has no CLIF");
            return;
        }
        let Some(params) = &item.params else {
            say!(
                "{FILE}: error: `{name}` is generic: its code exists per instantiation (use `tern build --emit clif`)"
            );
            return;
        };
        // A call (never run) makes the function part of the program; its
        // arguments are read from address 0, which is never dereferenced.
        let args: Vec<String> = params
            .iter()
            .map(|(by_ref, ty)| {
                let arg = format!("unsafe::slice::<{ty}>(0, 1)[0]");
                if *by_ref { format!("ref {arg}") } else { arg }
            })
            .collect();
        let call = format!("{name}({});", args.join(", "));
        let sources = self.item_sources(&[]);
        let mut none = Slots::default();
        // Without the bindings: one named like the function would shadow it
        // (`let f = 10;` made `:clif f` call the integer).
        let input = Source {
            name: FILE.into(),
            text: call,
        };
        let entry = Entry {
            bindings: &[],
            input: Some((&input, InputKind::Statements)),
        };
        let compiled = session::compile(&sources, &entry, &mut |b| none.take(b), &self.loader);
        let program = match compiled {
            Ok(c) => c.program,
            Err(d) => {
                say_part!("{}", crate::frontend::colored(d.render()));
                return;
            }
        };
        let mut opts = self.options.clone();
        opts.emit_clif = true;
        // Shown without the interrupt polls and stack checks: their
        // addresses change from run to run.
        opts.interrupt_flag = None;
        opts.stack_limit = None;
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
                        let text = &rest[..end];
                        reply!("{}", text.strip_suffix('\n').unwrap_or(text));
                    }
                    None => say!("{FILE}: error: no CLIF was produced for `{name}`"),
                }
            }
            Err(e) => say!("error: {e}"),
        }
    }
}

/// Whether `d` says the expression has no value (`:type` shows `()`).
fn no_value(d: &tern_compiler::Diagnostics) -> bool {
    use tern_compiler::diagnostics::ErrorKind;
    matches!(
        d.list()[0].kind,
        ErrorKind::UnitValue | ErrorKind::NoValueToShow
    )
}

//! Tern's front end: source text to a typed, monomorphized program
//! (`tir::Program`). This crate never imports Cranelift and does no IO of its
//! own: sources come in through a loader the driver supplies.
//!
//! Module map:
//! * `source` — files, byte spans, line/column lookup;
//! * `syntax` — lexer, syntax tree, Pratt parser;
//! * `check` — name resolution, type checking, constant folding,
//!   monomorphization into `tir`;
//! * `dump` — a text form of `tir` for snapshots;
//! * `session` — programs assembled from parts for an incremental host (the
//!   REPL): item sources, bindings in host memory, an input;
//! * `diagnostics` — errors as data and their one renderer (all wording in
//!   `diagnostics::messages`).

mod check;
pub mod diagnostics;
pub mod dump;
pub mod session;
pub mod source;
pub mod syntax;
pub mod tir;

pub use diagnostics::{Diagnostic, Diagnostics};

use diagnostics::{ErrorKind, Sink};
use source::SourceMap;
use std::collections::HashMap;
use std::sync::Arc;

/// What a loader found for `use NAME;`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loaded {
    /// The module's display name (for diagnostics) and its text.
    Source(String, String),
    /// The module exists (display name) but its bytes are not UTF-8.
    NotUtf8(String),
    /// The module exists (display name) but is longer than
    /// [`MAX_SOURCE_BYTES`] (or never ends: a device, a FIFO).
    TooLarge(String),
    /// A file is there (display name) but cannot be read as a module: a
    /// directory, a FIFO or a socket, or reading it failed; the reason, in
    /// words.
    Unreadable(String, String),
    NotFound,
}

/// The longest source file the driver reads (an entry file, a module, a
/// REPL `:load`): 64 MiB. A loader reads at most one byte more, so a file
/// that never ends (`/dev/zero`, a FIFO) is refused instead of filling memory.
pub const MAX_SOURCE_BYTES: u64 = 64 << 20;

impl Loaded {
    /// The display name of the file found, if one was.
    pub fn display(&self) -> Option<&str> {
        match self {
            Loaded::Source(d, _)
            | Loaded::NotUtf8(d)
            | Loaded::TooLarge(d)
            | Loaded::Unreadable(d, _) => Some(d),
            Loaded::NotFound => None,
        }
    }

    /// The result of reading `bytes` (or failing to) for a module shown as
    /// `display`: a read error is `NotFound` (the loader may look elsewhere).
    pub fn from_bytes(display: String, bytes: std::io::Result<Vec<u8>>) -> Loaded {
        match bytes {
            Ok(b) => match String::from_utf8(b) {
                Ok(text) => Loaded::Source(display, text),
                Err(_) => Loaded::NotUtf8(display),
            },
            Err(_) => Loaded::NotFound,
        }
    }
}

/// Where `use NAME;` finds its source. The driver implements it over the file
/// system + embedded stdlib; tests implement it over a HashMap. `Sync`: the
/// front end runs on a thread of its own (see `with_stack`).
pub trait Loader: Sync {
    /// Module `name` imported from the file with display name `from`.
    fn load(&self, name: &str, from: &str) -> Loaded;
    /// Whether the module this loader returned as `display` is
    /// standard-library code (backtraces tell it from the user's).
    fn is_library(&self, display: &str) -> bool {
        let _ = display;
        false
    }
    /// The directory this loader reads the standard library from when the
    /// user named one (`TERN_STDLIB`), as shown, and whether it is a
    /// directory: a module not found then says where it was looked for.
    fn stdlib_dir(&self) -> Option<(String, bool)> {
        None
    }
}

/// Stack size of the thread the compiler runs on: its passes recurse once
/// per level of the syntax tree, and chains (`a + b + ...`, `else if`) may
/// be `syntax::parser::MAX_CHAIN_LINKS` levels deep (a 100,000-term sum
/// uses about 250 MiB optimized, 1.2 GiB unoptimized). Only the pages used
/// are ever touched; where the address space cannot be had, smaller stacks
/// are tried ([`STACK_FALLBACKS`]).
pub const STACK_SIZE: usize = 1 << 32;

/// Smaller stacks tried in turn when a [`STACK_SIZE`] one cannot be created.
const STACK_FALLBACKS: [usize; 2] = [1 << 30, 1 << 28];

thread_local! {
    static ON_COMPILER_STACK: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` on a thread with a `STACK_SIZE` stack (or right here when this
/// thread is already one) and return its result; a panic in `f` is resumed
/// in the caller. Whatever walks a `tir::Program` recursively (the backend,
/// a dump) runs in here; `compile` does so by itself.
pub fn with_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if ON_COMPILER_STACK.with(|c| c.get()) {
        return f();
    }
    // The closure moves to whichever thread starts; the lock is only held to
    // take it out.
    let slot = std::sync::Mutex::new(Some(f));
    let take = || slot.lock().unwrap_or_else(|e| e.into_inner()).take();
    std::thread::scope(|scope| {
        for size in std::iter::once(STACK_SIZE).chain(STACK_FALLBACKS) {
            let spawned = std::thread::Builder::new()
                .name("tern-compiler".into())
                .stack_size(size)
                .spawn_scoped(scope, || {
                    ON_COMPILER_STACK.with(|c| c.set(true));
                    take().map(|f| f())
                });
            if let Ok(thread) = spawned {
                match thread.join() {
                    Ok(Some(r)) => return r,
                    Ok(None) => break,
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
        }
        // No thread could be made: run here, on the caller's stack.
        let f = take().expect("the compiler ran nowhere yet");
        f()
    })
}

/// The diagnostic of a root file that is not UTF-8, in the form of every
/// other (`file:line:col: error: ...`, the line and a caret): `bytes` is the
/// file, `at` the offset of its first byte that is not UTF-8 (what precedes
/// it is valid). The line is shown with that byte and any later bad ones
/// replaced by U+FFFD.
pub fn file_not_utf8(file_name: &str, bytes: &[u8], at: usize) -> Diagnostics {
    let mut sources = SourceMap::default();
    let text = String::from_utf8_lossy(bytes).into_owned();
    let file = sources.add(file_name.to_string(), text);
    let mut sink = Sink::default();
    // The replacement character stands at `at` in the lossy text.
    let lo = at as u32;
    let span = source::Span {
        file,
        lo,
        hi: lo + '\u{fffd}'.len_utf8() as u32,
    };
    let byte = bytes.get(at).copied().unwrap_or(0);
    sink.push(Diagnostic::new(ErrorKind::FileNotUtf8 { byte }, span));
    sink.finish(Arc::new(sources))
}

/// Front end entry: parse, resolve, check, monomorphize. `file_name` is the
/// display name used in diagnostics and in `tir::Program::files[0]`. Runs
/// on a thread with `STACK_SIZE` of stack (`with_stack`).
pub fn compile(
    file_name: &str,
    text: &str,
    loader: &dyn Loader,
) -> Result<tir::Program, Diagnostics> {
    with_stack(|| compile_here(file_name, text, loader))
}

fn compile_here(
    file_name: &str,
    text: &str,
    loader: &dyn Loader,
) -> Result<tir::Program, Diagnostics> {
    let mut sources = SourceMap::default();
    let mut sink = Sink::default();
    let file = sources.add(file_name.to_string(), text.to_string());
    let root = check::ParsedModule {
        name: None,
        file,
        ast: syntax::parse_file(file, text, &mut sink),
        uses: HashMap::new(),
    };
    // A root file with syntax errors may have lost its `main` to them.
    let root_parsed_cleanly = sink.is_empty();
    let program = load_modules(root, loader, &mut sources, &mut sink).and_then(|modules| {
        check::check_program(&modules, &sources, &mut sink, root_parsed_cleanly)
    });
    match program {
        Some(p) if sink.is_empty() => Ok(p),
        _ => Err(sink.finish(Arc::new(sources))),
    }
}

/// Parse every module the (parsed) root reaches through `use`, each once
/// (cyclic `use` is fine: a module already loaded is just linked). A `use`
/// is resolved from the file it is written in (a root assembled from several
/// sources has several), and a module name names one file in a program: a
/// `use` that finds another file than the one the name already stands for
/// is an error (a program's own `slice_pool.tern` and the standard library's
/// `vec_pool`, which uses the standard library's `slice_pool`), after which
/// the program is not checked (`None`: its modules would be checked against
/// the wrong module's items).
fn load_modules(
    root: check::ParsedModule,
    loader: &dyn Loader,
    sources: &mut SourceMap,
    sink: &mut Sink,
) -> Option<Vec<check::ParsedModule>> {
    let mut modules = vec![root];
    let mut clash = false;
    let mut by_name: HashMap<String, Bound> = HashMap::new();
    let mut next = 0;
    while next < modules.len() {
        let uses: Vec<syntax::ast::Ident> = modules[next]
            .ast
            .items
            .iter()
            .filter_map(|i| match i {
                syntax::ast::Item::Use(name) => Some(name.clone()),
                _ => None,
            })
            .collect();
        for name in uses {
            let from = sources.file(name.span.file).name.clone();
            let loaded = loader.load(&name.name, &from);
            let target = match by_name.get(&name.name) {
                Some(bound) => match (bound.file.as_deref(), loaded.display()) {
                    (Some(first), Some(here)) if first != here => {
                        // Reported at the program's own `use`, not inside
                        // the standard library's file, when one is.
                        let in_library = |s: source::Span| sources.file(s.file).library;
                        let at = if in_library(name.span) && !in_library(bound.first_use) {
                            bound.first_use
                        } else {
                            name.span
                        };
                        sink.error(
                            ErrorKind::ModuleNameClash {
                                module: name.name.clone(),
                                first: first.to_string(),
                                second: here.to_string(),
                            },
                            at,
                        );
                        clash = true;
                        None
                    }
                    _ => bound.target,
                },
                None => {
                    let bound = Bound {
                        file: loaded.display().map(str::to_string),
                        target: parse_loaded(&name, loaded, loader, sources, sink, &mut modules),
                        first_use: name.span,
                    };
                    let t = bound.target;
                    by_name.insert(name.name.clone(), bound);
                    t
                }
            };
            if let Some(t) = target {
                modules[next].uses.insert(name.name.clone(), t);
            }
        }
        next += 1;
    }
    (!clash).then_some(modules)
}

/// What a module name stands for in a program, once a `use` resolved it.
struct Bound {
    /// The file it names (its display name), if one was found.
    file: Option<String>,
    /// Its index in the program's modules, if it parsed into one.
    target: Option<usize>,
    /// The `use` that resolved it first.
    first_use: source::Span,
}

/// The module `use name` found (`loaded`), parsed and added to `modules`
/// (its index), or the error that it could not be read.
fn parse_loaded(
    name: &syntax::ast::Ident,
    loaded: Loaded,
    loader: &dyn Loader,
    sources: &mut SourceMap,
    sink: &mut Sink,
    modules: &mut Vec<check::ParsedModule>,
) -> Option<usize> {
    match loaded {
        Loaded::Source(display, src) => {
            let library = loader.is_library(&display);
            let file = sources.add(display, src);
            sources.files[file as usize].library = library;
            let text = sources.file(file).text.clone();
            let ast = syntax::parse_file(file, &text, sink);
            modules.push(check::ParsedModule {
                name: Some(name.name.clone()),
                file,
                ast,
                uses: HashMap::new(),
            });
            Some(modules.len() - 1)
        }
        Loaded::NotUtf8(display) => {
            sink.error(
                ErrorKind::ModuleNotUtf8 {
                    module: name.name.clone(),
                    file: display,
                },
                name.span,
            );
            None
        }
        Loaded::TooLarge(display) => {
            sink.error(
                ErrorKind::ModuleTooLarge {
                    module: name.name.clone(),
                    file: display,
                },
                name.span,
            );
            None
        }
        Loaded::Unreadable(display, why) => {
            sink.error(
                ErrorKind::ModuleUnreadable {
                    module: name.name.clone(),
                    file: display,
                    why,
                },
                name.span,
            );
            None
        }
        Loaded::NotFound => {
            let mut d = diagnostics::Diagnostic::new(
                ErrorKind::ModuleNotFound(name.name.clone()),
                name.span,
            );
            if let Some((dir, is_dir)) = loader.stdlib_dir() {
                d = d.note(diagnostics::NoteKind::StdlibDir {
                    dir,
                    module: name.name.clone(),
                    is_dir,
                });
            }
            sink.push(d);
            None
        }
    }
}

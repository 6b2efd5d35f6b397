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
//! * `diagnostics` — errors as data and their one renderer (all wording in
//!   `diagnostics::messages`).

mod check;
pub mod diagnostics;
pub mod dump;
pub mod source;
pub mod syntax;
pub mod tir;

pub use diagnostics::{Diagnostic, Diagnostics};

use diagnostics::{ErrorKind, Sink};
use source::SourceMap;
use std::collections::HashMap;
use std::sync::Arc;

/// Where `use NAME;` finds its source. The driver implements it over the file
/// system + embedded stdlib; tests implement it over a HashMap.
pub trait Loader {
    /// Module `name` imported from the file with display name `from`:
    /// Some((display_name, source_text)) or None when not found.
    fn load(&self, name: &str, from: &str) -> Option<(String, String)>;
}

/// Front end entry: parse, resolve, check, monomorphize. `file_name` is the
/// display name used in diagnostics and in `tir::Program::files[0]`.
pub fn compile(
    file_name: &str,
    text: &str,
    loader: &dyn Loader,
) -> Result<tir::Program, Diagnostics> {
    let mut sources = SourceMap::default();
    let mut sink = Sink::default();
    let modules = load_modules(file_name, text, loader, &mut sources, &mut sink);
    // A root file with syntax errors may have lost its `main` to them.
    let root_parsed_cleanly = sink.is_empty();
    let program = check::check_program(&modules, &sources, &mut sink, root_parsed_cleanly);
    match program {
        Some(p) if sink.is_empty() => Ok(p),
        _ => Err(sink.finish(Arc::new(sources))),
    }
}

/// Parse the root file and every module it reaches through `use`, each
/// once (cyclic `use` is fine: a module already loaded is just linked).
fn load_modules(
    file_name: &str,
    text: &str,
    loader: &dyn Loader,
    sources: &mut SourceMap,
    sink: &mut Sink,
) -> Vec<check::ParsedModule> {
    let root = sources.add(file_name.to_string(), text.to_string());
    let ast = syntax::parse_file(root, text, sink);
    let mut modules = vec![check::ParsedModule {
        name: None,
        file: root,
        ast,
        uses: HashMap::new(),
    }];
    let mut by_name: HashMap<String, Option<usize>> = HashMap::new();
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
        let from = sources.file(modules[next].file).name.clone();
        for name in uses {
            let target = match by_name.get(&name.name) {
                Some(t) => *t,
                None => {
                    let t = match loader.load(&name.name, &from) {
                        Some((display, src)) => {
                            let file = sources.add(display, src);
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
                        None => {
                            sink.error(ErrorKind::ModuleNotFound(name.name.clone()), name.span);
                            None
                        }
                    };
                    by_name.insert(name.name.clone(), t);
                    t
                }
            };
            if let Some(t) = target {
                modules[next].uses.insert(name.name.clone(), t);
            }
        }
        next += 1;
    }
    modules
}

//! `tern repl`: an interactive JIT session (see `docs/repl.md`).
//!
//! * `editor` — input lines: the line editor (history, completion) or stdin;
//! * `session` — items, bindings, slots; each input as a whole program;
//! * `exec` — running JIT code on a worker thread that a runtime error or a
//!   fault returns to its waiting point instead of ending the process;
//! * `value` — how values and types are shown.
//!
//! With a terminal, input is read with line editing, history kept between
//! sessions and completion of names (rustyline), and prompts are shown;
//! otherwise lines are read from stdin with no prompts or banners, so a piped
//! session prints only results and errors.

mod editor;
mod exec;
mod session;
mod value;

use std::io::{IsTerminal, Write};

use crate::Failure;
use editor::{Input, Line};
use session::Session;
use tern_compiler::session::Balance;

const HELP: &str = "\
Enter an item (fn, struct, const, use, extern fn), statements (`let`/`var`
bindings persist), or an expression to print its value. Input continues
over several lines while a bracket, string or comment is open (an empty
line ends it regardless).
Commands:
  :help         this text
  :quit         end the session (so does end of input)
  :load FILE    define the items of FILE (a `fn main` is skipped)
  :type EXPR    the type of EXPR
  :clif NAME    the Cranelift IR of function NAME
  :time         toggle compile and run timing
  :list         the items and the bindings (with their types)
  :reset        forget every item and binding
  :set sanitize on|off
                check every access to a pool slice (use after free, use
                after a moving append) from the next input on";

/// Runs the REPL until `:quit` or end of input.
pub fn repl() -> Result<(), Failure> {
    let mut session = Session::new().map_err(|e| Failure::new(1, format!("error: {e}")))?;
    let terminal = std::io::stdin().is_terminal();
    let mut input = Input::open(terminal);
    if matches!(input, Input::Piped(_)) {
        // The session reads fd 0 ahead of its programs, in blocks: a
        // program's read would take a later input, or the rest of a line.
        tern_runtime::io::end_stdin();
    }
    if matches!(input, Input::Editor { .. }) {
        reply!("Tern REPL — :help for help, :quit to leave");
    }
    let mut pending = Pending::default();
    loop {
        let line = match input.line(!pending.text.is_empty()) {
            Line::Text(line) => line,
            // Ctrl-C at the prompt abandons what was typed, as in a shell.
            Line::Interrupted => {
                pending = Pending::default();
                continue;
            }
            // The input it belongs to is dropped, all of it: its lines are
            // still read to where the input ends (its brackets closed, or
            // a blank line), so that none of them runs as an input of its
            // own (a line past an `if false {` did).
            Line::NotUtf8 { col, byte, lossy } => {
                let at = format!("{}:{}:{col}", session::FILE, pending.next_line());
                pending.poison(format!(
                    "error: {at}: the input is not valid UTF-8 (byte {byte:#04x}); it was not run"
                ));
                lossy
            }
            // As a source file longer than that is refused. The line is
            // gone (never held whole): its brackets are taken as balanced.
            Line::TooLong => {
                let at = format!("{}:{}", session::FILE, pending.next_line());
                pending.poison(format!(
                    "error: {at}: the line is longer than {MAX_MIB} MiB; its input was not run"
                ));
                // Alone, it was its whole input.
                if pending.lines == 0 {
                    say!("{}", pending.poison.take().unwrap_or_default());
                    pending = Pending::default();
                    continue;
                }
                pending.lines += 1;
                continue;
            }
            Line::Failed(e) => {
                tern_runtime::stats::write_if_requested();
                return Err(Failure::new(
                    1,
                    format!("error: cannot read the REPL's input: {e}"),
                ));
            }
            Line::End => {
                // An unfinished input at the end is still evaluated: the
                // front end says what is missing.
                if let Some(why) = pending.poison.take() {
                    say!("{why}");
                } else if !pending.text.trim().is_empty() {
                    session.eval(&pending.text);
                }
                break;
            }
        };
        if pending.lines == 0 && pending.poison.is_none() && line.trim_start().starts_with(':') {
            input.remember(&line);
            if !command(&mut session, line.trim()) {
                break;
            }
            input.set_names(session.names());
            let _ = std::io::stdout().flush();
            continue;
        }
        if !pending.push(&line) {
            continue;
        }
        if let Some(why) = pending.poison.take() {
            say!("{why}");
            pending = Pending::default();
            continue;
        }
        let text = std::mem::take(&mut pending).text;
        input.remember(&text);
        session.eval(&text);
        input.set_names(session.names());
        let _ = std::io::stdout().flush();
    }
    // The session is the program: its end is `main`'s return, which
    // writes the pool statistics (as `io::exit` at the prompt does).
    tern_runtime::stats::write_if_requested();
    Ok(())
}

/// The limit of a source file, and so of an input, in MiB.
const MAX_MIB: u64 = tern_compiler::MAX_SOURCE_BYTES >> 20;

/// The input being typed: its lines so far, and their brackets kept line by
/// line ([`Balance::then`]: relexing the whole text at every line made a
/// long piped input quadratic).
#[derive(Default)]
struct Pending {
    text: String,
    balance: Balance,
    /// Lines read into the input so far.
    lines: usize,
    /// Why the input will not run (reported when it ends): a line that is
    /// not UTF-8 or too long, or the input past the limit of a source file.
    /// Its text is no longer kept; its brackets still are.
    poison: Option<String>,
}

impl Pending {
    /// The number the next line gets in the input.
    fn next_line(&self) -> usize {
        self.lines + 1
    }

    /// Marks the input as one that will not run (the first reason stays).
    fn poison(&mut self, why: String) {
        self.poison.get_or_insert(why);
        self.text = String::new();
    }

    /// Adds `line`: whether the input is now complete (no bracket, string
    /// or comment left open; an empty line ends it regardless, so a typo
    /// cannot swallow the rest of the session). An input that grows past the
    /// limit of a source file is poisoned, and its text let go.
    fn push(&mut self, line: &str) -> bool {
        let force = self.lines > 0 && line.trim().is_empty();
        self.lines += 1;
        if self.poison.is_some() {
            // The text is gone: a comment or literal left open is
            // followed through this line alone.
            self.balance = self.balance.then(line, line);
            return force || self.balance.complete();
        }
        if self.lines > 1 {
            self.text.push('\n');
        }
        self.text.push_str(line);
        if self.text.len() as u64 > tern_compiler::MAX_SOURCE_BYTES {
            self.poison(format!(
                "error: {}: the input is longer than {MAX_MIB} MiB; it was not run",
                session::FILE
            ));
            self.balance = self.balance.then(line, line);
        } else {
            self.balance = self.balance.then(line, &self.text);
        }
        force || self.balance.complete()
    }
}

/// Runs a `:` command; `false` ends the session.
fn command(session: &mut Session, line: &str) -> bool {
    let (name, arg) = match line.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (line, ""),
    };
    match (name, arg.is_empty()) {
        // Text after a command that takes none is a mistake, not something
        // to drop (`:quit now` skipped the rest of a piped session).
        (":quit" | ":q" | ":help" | ":h" | ":time" | ":list" | ":reset", false) => {
            say!("error: `{name}` takes no argument (see :help)")
        }
        (":quit" | ":q", true) => return false,
        (":help" | ":h", true) => reply!("{HELP}"),
        (":time", true) => {
            session.timing = !session.timing;
            reply!("timing {}", if session.timing { "on" } else { "off" });
        }
        (":list", true) => session.list(),
        (":reset", true) => {
            session.reset();
            reply!("session reset");
        }
        (":type" | ":t", false) => session.type_of(arg),
        (":clif", false) => session.clif(arg),
        (":load", false) => load(session, arg),
        (":set", false) => session.set(arg),
        (":type" | ":t" | ":clif" | ":load" | ":set", true) => {
            say!("error: `{name}` needs an argument (see :help)")
        }
        _ => say!("error: unknown command `{name}` (see :help)"),
    }
    true
}

/// `:load FILE`: the file's items, except a `fn main`.
fn load(session: &mut Session, file: &str) {
    // Opening a FIFO waits for a writer, which nothing at the prompt can
    // interrupt: refuse it as a module's is refused (a shell's `tern run
    // FIFO` can be stopped).
    if let Some(why) = std::fs::metadata(file)
        .ok()
        .and_then(|m| crate::loader::not_a_source(&m))
    {
        say!("error: cannot read `{file}`: {why}");
        return;
    }
    let text = match crate::loader::read_source(std::path::Path::new(file)) {
        Ok(t) => t,
        Err(e) => {
            say!("{}", crate::frontend::colored(e.message(file)));
            return;
        }
    };
    session.load_items(&text, file);
}

//! `tern repl`: an interactive JIT session (see `docs/repl.md`).
//!
//! * `scan` — token boundaries: complete input, items vs statements;
//! * `session` — items, bindings, slots; each input as a whole program;
//! * `exec` — running JIT code on a worker thread that a runtime error or a
//!   fault parks instead of ending the process;
//! * `value` — how values and types are shown.
//!
//! With a terminal, input is read with line editing and history (rustyline)
//! and prompts are shown; otherwise lines are read from stdin with no prompts
//! or banners, so a piped session prints only results and errors.

mod exec;
mod scan;
mod session;
mod value;

use std::io::{BufRead, IsTerminal, Write};

use crate::Failure;
use session::Session;

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
  :set sanitize on|off
                check every access to a pool slice (use after free, use
                after a moving append) from the next input on";

/// Where input lines come from.
enum Input {
    Editor(Box<rustyline::DefaultEditor>),
    Piped(std::io::StdinLock<'static>),
}

impl Input {
    /// The next line without its newline; `None` at end of input.
    fn line(&mut self, continuation: bool) -> Option<String> {
        match self {
            Input::Editor(ed) => {
                let prompt = if continuation { "  ... " } else { "tern> " };
                loop {
                    match ed.readline(prompt) {
                        Ok(line) => return Some(line),
                        // Ctrl-C abandons the line, as in a shell.
                        Err(rustyline::error::ReadlineError::Interrupted) => {
                            if continuation {
                                return Some(String::from("\u{3}"));
                            }
                        }
                        Err(_) => return None,
                    }
                }
            }
            Input::Piped(stdin) => {
                // Bytes, not `read_line`: invalid UTF-8 must not end the
                // session; it becomes U+FFFD, which the front end reports.
                let mut bytes = Vec::new();
                match stdin.read_until(b'\n', &mut bytes) {
                    Ok(0) | Err(_) => None,
                    Ok(_) => {
                        let line = String::from_utf8_lossy(&bytes);
                        let trimmed = line.strip_suffix('\n').unwrap_or(&line);
                        Some(trimmed.strip_suffix('\r').unwrap_or(trimmed).to_string())
                    }
                }
            }
        }
    }

    fn remember(&mut self, entry: &str) {
        if let Input::Editor(ed) = self {
            let _ = ed.add_history_entry(entry);
        }
    }
}

/// Runs the REPL until `:quit` or end of input.
pub fn repl() -> Result<(), Failure> {
    let mut session = Session::new().map_err(|e| Failure::new(1, format!("error: {e}")))?;
    let mut input = if std::io::stdin().is_terminal() {
        match rustyline::DefaultEditor::new() {
            Ok(ed) => {
                println!("Tern REPL — :help for help, :quit to leave");
                Input::Editor(Box::new(ed))
            }
            Err(_) => Input::Piped(std::io::stdin().lock()),
        }
    } else {
        Input::Piped(std::io::stdin().lock())
    };
    let mut buffer = String::new();
    loop {
        let Some(line) = input.line(!buffer.is_empty()) else {
            // An unfinished input at the end is still evaluated: the front
            // end says what is missing.
            if !buffer.trim().is_empty() {
                session.eval(&buffer);
            }
            break;
        };
        if line == "\u{3}" {
            buffer.clear();
            continue;
        }
        if buffer.is_empty() && line.trim_start().starts_with(':') {
            input.remember(&line);
            if !command(&mut session, line.trim()) {
                break;
            }
            let _ = std::io::stdout().flush();
            continue;
        }
        // An empty line ends a multi-line input even with brackets still
        // open, so a typo cannot swallow the rest of the session.
        let force = !buffer.is_empty() && line.trim().is_empty();
        if !buffer.is_empty() {
            buffer.push('\n');
        }
        buffer.push_str(&line);
        if !force && scan::needs_more(&buffer) {
            continue;
        }
        let text = std::mem::take(&mut buffer);
        input.remember(&text);
        session.eval(&text);
        let _ = std::io::stdout().flush();
    }
    Ok(())
}

/// Runs a `:` command; `false` ends the session.
fn command(session: &mut Session, line: &str) -> bool {
    let (name, arg) = match line.split_once(char::is_whitespace) {
        Some((n, a)) => (n, a.trim()),
        None => (line, ""),
    };
    match (name, arg.is_empty()) {
        (":quit" | ":q", _) => return false,
        (":help" | ":h", _) => println!("{HELP}"),
        (":time", _) => {
            session.timing = !session.timing;
            println!("timing {}", if session.timing { "on" } else { "off" });
        }
        (":type" | ":t", false) => session.type_of(arg),
        (":clif", false) => session.clif(arg),
        (":load", false) => load(session, arg),
        (":set", false) => session.set(arg),
        (":type" | ":t" | ":clif" | ":load" | ":set", true) => {
            eprintln!("error: `{name}` needs an argument (see :help)")
        }
        _ => eprintln!("error: unknown command `{name}` (see :help)"),
    }
    true
}

/// `:load FILE`: the file's items, except a `fn main`.
fn load(session: &mut Session, file: &str) {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read `{file}`: {e}");
            return;
        }
    };
    session.load_items(&text, file);
}

//! Where input lines come from: a line editor on a terminal (rustyline, with
//! history kept between sessions and completion of names), plain lines from
//! stdin otherwise.

use std::cell::RefCell;
use std::io::{BufRead, Read};
use std::path::PathBuf;
use std::rc::Rc;

use rustyline::completion::{Completer, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::DefaultHistory;
use rustyline::validate::Validator;
use rustyline::{Context, Editor, Helper};

/// The words completion offers besides the builtins and the session's names.
const KEYWORDS: &[&str] = &[
    "fn", "struct", "const", "use", "extern", "let", "var", "if", "else", "while", "for", "in",
    "return", "break", "continue", "ref", "true", "false", "i64", "i32", "u8", "u64", "bool",
    ":help", ":quit", ":load", ":type", ":clif", ":time", ":set", ":reset", ":list",
];

/// Completes the word before the cursor from the keywords and the names the
/// session defines (kept up to date by the REPL loop).
pub struct Names(Rc<RefCell<Vec<String>>>);

impl Completer for Names {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let start = line[..pos]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .map_or(0, |i| i + 1);
        let word = &line[start..pos];
        if word.is_empty() {
            return Ok((pos, Vec::new()));
        }
        let names = self.0.borrow();
        let builtins = tern_compiler::tir::BUILTINS.iter().map(|b| b.name);
        let mut found: Vec<&str> = KEYWORDS
            .iter()
            .copied()
            .chain(builtins)
            .chain(names.iter().map(String::as_str))
            .filter(|n| n.starts_with(word))
            .collect();
        found.sort_unstable();
        found.dedup();
        let pairs = found
            .into_iter()
            .map(|n| Pair {
                display: n.to_string(),
                replacement: n.to_string(),
            })
            .collect();
        Ok((start, pairs))
    }
}

impl Hinter for Names {
    type Hint = String;
}
impl Highlighter for Names {}
impl Validator for Names {}
impl Helper for Names {}

/// `path` when its folder is this user's alone (created 0700 if missing;
/// the checks of the runtime library's cache: no other user owns it or a
/// parent that could swap it, none can write it), named by its resolved
/// path; else `None`, with a warning. A history in a folder another user
/// controls was followed into the user's files, or read by that user.
fn trusted_history(path: PathBuf) -> Option<PathBuf> {
    let dir = path.parent()?;
    match crate::staticlib::private_dir(dir) {
        Ok(real) => Some(real.join(path.file_name()?)),
        Err(why) => {
            eprintln!(
                "warning: not keeping the REPL history in `{}`: {why}",
                dir.display()
            );
            None
        }
    }
}

/// Entries the history keeps (rustyline's default is 100).
const HISTORY_ENTRIES: usize = 10_000;

/// The editor's settings: the default but for the history's length.
fn config() -> rustyline::Config {
    let builder = rustyline::Config::builder().max_history_size(HISTORY_ENTRIES);
    builder.map(|b| b.build()).unwrap_or_default()
}

/// The input of a session.
pub enum Input {
    /// A terminal: line editing, history in `history` (if a place for it was
    /// found), completion from `names`.
    Editor {
        editor: Box<Editor<Names, DefaultHistory>>,
        history: Option<PathBuf>,
        names: Rc<RefCell<Vec<String>>>,
    },
    Piped(std::io::StdinLock<'static>),
}

/// What the user did at the prompt.
pub enum Line {
    Text(String),
    /// Ctrl-C: abandon the input being typed.
    Interrupted,
    /// A piped line that is not UTF-8: the column (in characters) and the
    /// value of its first bad byte.
    NotUtf8 {
        col: usize,
        byte: u8,
        /// The line with each bad sequence replaced, only to follow its
        /// brackets (so the rest of its input is dropped with it).
        lossy: String,
    },
    /// A piped line longer than a source file may be: read to its end and
    /// dropped, never held whole (`tern repl < /dev/zero`).
    TooLong,
    End,
    /// The input could not be read (`tern repl < folder`): the session
    /// ends with the error, not as if the input had ended.
    Failed(std::io::Error),
}

/// Reads `stdin` up to and including the next newline (or to its end),
/// keeping nothing.
fn skip_line(stdin: &mut impl BufRead) {
    while let Ok(buf) = stdin.fill_buf() {
        if buf.is_empty() {
            return;
        }
        if let Some(i) = buf.iter().position(|&b| b == b'\n') {
            stdin.consume(i + 1);
            return;
        }
        let n = buf.len();
        stdin.consume(n);
    }
}

impl Input {
    /// The editor when stdin is a terminal (and one can be made), else
    /// plain lines.
    pub fn open(terminal: bool) -> Input {
        if terminal && let Ok(mut editor) = Editor::<Names, DefaultHistory>::with_config(config()) {
            let names = Rc::new(RefCell::new(Vec::new()));
            editor.set_helper(Some(Names(names.clone())));
            let mut history = crate::config::history_file().and_then(trusted_history);
            // Only a regular file (or none yet): opening a FIFO there
            // waited for a writer, and the REPL never started.
            if let Some(path) = &history
                && std::fs::metadata(path).is_ok_and(|m| !m.is_file())
            {
                eprintln!(
                    "warning: not using the REPL history `{}`: it is not a regular file; it is left as it is",
                    path.display()
                );
                history = None;
            }
            if let Some(path) = &history {
                match editor.load_history(path) {
                    Ok(()) => {}
                    // A missing file is a first session.
                    Err(ReadlineError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
                    // Saving over a file that could not be read (a line
                    // that is not UTF-8, say) would drop what it holds.
                    Err(e) => {
                        eprintln!(
                            "warning: not using the REPL history `{}`: {e}; the file is left as it is",
                            path.display()
                        );
                        history = None;
                    }
                }
            }
            return Input::Editor {
                editor: Box::new(editor),
                history,
                names,
            };
        }
        Input::Piped(std::io::stdin().lock())
    }

    /// The next line without its newline.
    pub fn line(&mut self, continuation: bool) -> Line {
        match self {
            Input::Editor { editor, .. } => {
                let prompt = if continuation { "  ... " } else { "tern> " };
                match editor.readline(prompt) {
                    Ok(line) => Line::Text(line),
                    Err(ReadlineError::Interrupted) => Line::Interrupted,
                    Err(ReadlineError::Io(e)) => Line::Failed(e),
                    Err(_) => Line::End,
                }
            }
            Input::Piped(stdin) => {
                // Bytes, not `read_line`: invalid UTF-8 must not end the
                // session, nor be rewritten (inside a string literal a
                // replacement character would pass for what was sent).
                let mut bytes = Vec::new();
                let limit = tern_compiler::MAX_SOURCE_BYTES;
                match stdin.by_ref().take(limit + 1).read_until(b'\n', &mut bytes) {
                    Ok(0) => Line::End,
                    Err(e) => Line::Failed(e),
                    Ok(_) if bytes.len() as u64 > limit => {
                        skip_line(stdin);
                        Line::TooLong
                    }
                    Ok(_) => match String::from_utf8(bytes) {
                        Ok(line) => {
                            let trimmed = line.strip_suffix('\n').unwrap_or(&line);
                            Line::Text(trimmed.strip_suffix('\r').unwrap_or(trimmed).to_string())
                        }
                        Err(e) => {
                            // One line: the bad byte is on its first.
                            let (_, col, byte) = crate::loader::first_bad_byte(&e);
                            let lossy = String::from_utf8_lossy(e.as_bytes());
                            let lossy = lossy.trim_end_matches(['\n', '\r']).to_string();
                            Line::NotUtf8 { col, byte, lossy }
                        }
                    },
                }
            }
        }
    }

    /// Adds a complete input to the history (saved as it goes, so a session
    /// that ends any way keeps it).
    pub fn remember(&mut self, entry: &str) {
        if let Input::Editor {
            editor, history, ..
        } = self
        {
            let _ = editor.add_history_entry(entry);
            if let Some(path) = history {
                if let Some(dir) = path.parent() {
                    let _ = std::fs::create_dir_all(dir);
                }
                // Appended under the file's lock: a session running beside
                // this one keeps its entries (a save rewrote the file from
                // this session's memory).
                let _ = editor.append_history(path);
            }
        }
    }

    /// The names completion offers besides the keywords.
    pub fn set_names(&mut self, new: Vec<String>) {
        if let Input::Editor { names, .. } = self {
            *names.borrow_mut() = new;
        }
    }
}

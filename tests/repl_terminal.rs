//! `tern repl` on a pseudo-terminal, as a person uses it: line editing,
//! prompts, and Ctrl-C typed as the byte 0x03, which the terminal turns into
//! SIGINT while an input runs (and which the line editor reads as a key at
//! the prompt). Piped transcripts (`tests/repl.rs`) cannot show either.

mod child_support;
mod pty_support;

use std::io::{Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use pty_support::open_pty;

/// A REPL on the slave side of a pty; we hold the master.
struct Terminal {
    /// The REPL, until [`Terminal::wait`] takes it.
    child: Option<Child>,
    master: std::fs::File,
    /// Everything the REPL wrote, as it arrives.
    output: Receiver<Vec<u8>>,
    /// What was read so far and not yet matched.
    seen: String,
}

impl Terminal {
    fn start(dir: &std::path::Path) -> Terminal {
        let (master, slave) = open_pty();
        let slave_fd = slave.as_raw_fd();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tern"));
        cmd.arg("repl")
            .current_dir(dir)
            .env("TERM", "xterm")
            .env("HOME", dir)
            .env("XDG_DATA_HOME", dir.join("data"))
            .env_remove("TERN_STDLIB")
            .stdin(Stdio::from(slave.try_clone().expect("dup")))
            .stdout(Stdio::from(slave.try_clone().expect("dup")))
            .stderr(Stdio::from(slave));
        // SAFETY: only async-signal-safe calls between fork and exec: a new
        // session whose controlling terminal is the pty, so Ctrl-C typed on
        // it signals the REPL.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setsid() < 0 || libc::ioctl(slave_fd, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd.spawn().expect("tern starts");
        let master = std::fs::File::from(master);
        let mut reader = master.try_clone().expect("dup master");
        let (tx, output) = mpsc::channel();
        std::thread::spawn(move || {
            let mut buf = [0u8; 65536];
            // EIO once the child has closed the slave side.
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                    break;
                }
            }
        });
        Terminal {
            child: Some(child),
            master,
            output,
            seen: String::new(),
        }
    }

    /// Waits for the REPL to end (killed, and the test failed, after
    /// [`child_support::PATIENCE`]); its exit status.
    fn wait(&mut self) -> std::process::ExitStatus {
        let child = self.child.take().expect("the REPL is running");
        child_support::wait(child).status
    }

    fn send(&mut self, bytes: &str) {
        self.master
            .write_all(bytes.as_bytes())
            .expect("write to pty");
    }

    /// Waits until the output contains `text`; returns what came before it
    /// and forgets everything up to its end.
    fn expect(&mut self, text: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(at) = self.seen.find(text) {
                let before = self.seen[..at].to_string();
                self.seen.drain(..at + text.len());
                return before;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match self.output.recv_timeout(left) {
                Ok(bytes) => self.seen.push_str(&String::from_utf8_lossy(&bytes)),
                Err(_) => panic!(
                    "no `{text}` in the REPL's output; it showed:\n{}",
                    self.seen
                ),
            }
        }
    }

    /// Types `line` and Enter, and waits for the next prompt; returns what
    /// the REPL printed for it (echo included).
    fn line(&mut self, line: &str) -> String {
        self.send(&format!("{line}\r"));
        self.expect("tern> ")
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("tern-repl-pty-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

#[test]
fn ctrl_c_stops_the_running_input_and_the_session_goes_on() {
    let dir = scratch("ctrl-c");
    let mut t = Terminal::start(&dir);
    t.expect("tern> ");
    // Each input line stays narrower than the terminal (80 columns with the
    // prompt): a wider one is redrawn with its prompt, which `line` would
    // take for the next one.
    // `spin` prints its argument, then loops: Ctrl-C is typed once that line
    // is out, so it reaches the loop (its poll, column 53), never the
    // compiler or an earlier poll.
    t.line("fn spin(k: i64) -> i64 { print(k); var i = 0; while true { i += k; } }");
    t.line("var n = 5;");
    // Runs until interrupted; `n = 7` happens before but is not kept, like
    // any input that fails.
    t.send("n = 7; spin(31337)\r");
    // The echo has `31337)`: only the program's line ends right after it.
    t.expect("\r\n31337\r\n");
    t.send("\u{3}");
    let shown = t.expect("tern> ");
    assert!(
        shown.contains("error: <repl:spin>:1:53: interrupted"),
        "the interrupted input's error: {shown:?}"
    );
    let shown = t.line("n + 1");
    assert!(shown.contains("6\r\n"), "bindings survive: {shown:?}");
    // Code without loops stops at a function entry (its stack check
    // doubles as the poll): after `go`'s line, the next poll is the entry
    // of `c2`.
    t.line("fn c2(d: i64) -> i64 { if d == 0 { return 1; } return c2(d-1)+c2(d-1); }");
    t.line("fn go() -> i64 { print(31338); return c2(60); }");
    t.send("go()\r");
    t.expect("\r\n31338\r\n");
    t.send("\u{3}");
    t.expect("error: <repl:c2>:1:4: interrupted");
    t.expect("tern> ");
    // Ctrl-C at the prompt clears the line being typed.
    t.send("n * 1000");
    t.send("\u{3}");
    t.expect("tern> ");
    let shown = t.line("n");
    assert!(
        shown.contains("5\r\n"),
        "the abandoned line did not run: {shown:?}"
    );
    assert!(!shown.contains("5000"), "{shown:?}");
    t.send(":quit\r");
    let status = t.wait();
    assert_eq!(status.code(), Some(0));
}

#[test]
fn names_complete_with_tab_and_history_outlives_the_session() {
    let dir = scratch("complete");
    let mut t = Terminal::start(&dir);
    t.expect("tern> ");
    t.line("fn spin_count() -> i64 { return 7; }");
    t.line("let answer_here = 35;");
    // Tab completes a function and a binding (a unique prefix each).
    t.send("spin_c\t() + answer_h\t\r");
    t.expect("42\r\n");
    t.expect("tern> ");
    t.send(":quit\r");
    assert_eq!(t.wait().code(), Some(0));
    let history = std::fs::read_to_string(dir.join("data/tern/history")).expect("history saved");
    assert!(history.contains("let answer_here = 35;"), "{history}");
    assert!(history.contains("spin_count() + answer_here"), "{history}");
    // A new session starts with it: Up twice recalls the input before
    // `:quit`, which runs (and fails: this session defines nothing yet).
    let mut t = Terminal::start(&dir);
    t.expect("tern> ");
    t.send("\u{1b}[A\u{1b}[A\r");
    // On a terminal, diagnostics are coloured.
    t.expect("\x1b[1m<repl>:1:1:\x1b[0m \x1b[1;31merror\x1b[0m\x1b[1m: cannot find `spin_count`");
    t.expect("tern> ");
    t.send(":quit\r");
    assert_eq!(t.wait().code(), Some(0));
}

/// Two sessions at once both keep their inputs in the history (each
/// appends under the file's lock: a session once rewrote the file from its
/// own memory, dropping the other's entries), and a history file that
/// cannot be read is left as it is, with a warning (saving over it dropped
/// every entry after a line that is not UTF-8).
#[test]
fn the_history_keeps_every_session_and_never_drops_what_it_cannot_read() {
    let dir = scratch("history");
    let file = dir.join("data/tern/history");
    let mut a = Terminal::start(&dir);
    a.expect("tern> ");
    let mut b = Terminal::start(&dir);
    b.expect("tern> ");
    a.line("let from_a_1 = 1;");
    b.line("let from_b_1 = 2;");
    a.line("let from_a_2 = 3;");
    b.line("let from_b_2 = 4;");
    for t in [&mut a, &mut b] {
        t.send(":quit\r");
        assert_eq!(t.wait().code(), Some(0));
    }
    let history = std::fs::read_to_string(&file).expect("history saved");
    for entry in ["from_a_1", "from_b_1", "from_a_2", "from_b_2"] {
        assert!(history.contains(entry), "{entry} in {history}");
    }
    let mut bytes = b"#V2\nlet kept_1 = 1;\nlet bad = \"\xe9\";\n".to_vec();
    bytes.extend_from_slice(b"let kept_2 = 2;\n");
    std::fs::write(&file, &bytes).expect("write history");
    let mut t = Terminal::start(&dir);
    let shown = t.expect("tern> ");
    assert!(
        shown.contains("warning: not using the REPL history") && shown.contains("left as it is"),
        "{shown:?}"
    );
    t.line("2 + 2");
    t.send(":quit\r");
    assert_eq!(t.wait().code(), Some(0));
    assert_eq!(std::fs::read(&file).expect("history"), bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A history that is no regular file is not used, with a warning, and left
/// as it is: a FIFO there kept the REPL waiting for a writer before its
/// first prompt, deaf to Ctrl-C.
#[test]
fn a_history_that_is_no_regular_file_is_not_used() {
    let dir = scratch("history-fifo");
    let folder = dir.join("data/tern");
    std::fs::create_dir_all(&folder).expect("history folder");
    let fifo = folder.join("history");
    child_support::mkfifo(&fifo);
    let mut t = Terminal::start(&dir);
    let shown = t.expect("tern> ");
    assert!(
        shown.contains("warning: not using the REPL history")
            && shown.contains("it is not a regular file; it is left as it is"),
        "{shown:?}"
    );
    t.line("let kept_nowhere = 1;");
    t.send(":quit\r");
    assert_eq!(t.wait().code(), Some(0));
    use std::os::unix::fs::FileTypeExt as _;
    assert!(
        std::fs::symlink_metadata(&fifo)
            .unwrap()
            .file_type()
            .is_fifo()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The history's folder must be the user's alone, as the runtime cache's
/// is: one others can write (a shared `HOME`, say) is not used, with a
/// warning, and nothing is written into it (a history there was followed
/// into the user's files, or read by the folder's other users).
#[test]
fn a_history_folder_others_can_write_is_not_used() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = scratch("history-shared");
    let folder = dir.join("data/tern");
    std::fs::create_dir_all(&folder).expect("history folder");
    std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).expect("chmod");
    let mut t = Terminal::start(&dir);
    let shown = t.expect("tern> ");
    assert!(
        shown.contains("warning: not keeping the REPL history in")
            && shown.contains("it is writable by other users (mode 0777)"),
        "{shown:?}"
    );
    t.line("let kept_nowhere = 1;");
    t.send(":quit\r");
    assert_eq!(t.wait().code(), Some(0));
    assert!(!folder.join("history").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_deep_recursion_that_prints_leaves_the_session_usable() {
    // On a terminal stdout is line-buffered, so every `print` writes, under
    // the runtime's output lock: the recursion must stop at a function entry
    // (the REPL's stack limit), never inside `print` (before the limit, the
    // fault hit there and the lock was never released: the session hung).
    let dir = scratch("print-overflow");
    let mut t = Terminal::start(&dir);
    t.expect("tern> ");
    t.line("fn down(k: i64) -> i64 { print(k); return down(k + 1) + 1; }");
    for _ in 0..3 {
        t.send("down(0)\r");
        t.expect("error: <repl:down>:1:4: stack overflow");
        t.expect("tern> ");
        let shown = t.line("40 + 2");
        assert!(shown.contains("42\r\n"), "{shown:?}");
    }
    t.send(":quit\r");
    assert_eq!(t.wait().code(), Some(0));
}

//! What a run needs to be reproduced: the machine, the tools, and
//! fingerprints of the compiler and stdlib that produced the figures.

use std::path::Path;
use std::process::Command;

/// The first line a tool prints for `args`, or why there is none.
fn tool_line(program: &str, args: &[&str]) -> String {
    match Command::new(program).args(args).output() {
        Ok(o) => {
            let text = if o.stdout.is_empty() {
                o.stderr
            } else {
                o.stdout
            };
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        }
        Err(e) => format!("unavailable ({e})"),
    }
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|e| format!("unavailable ({e})"))
}

/// `word` as a POSIX shell reads it back: as it is when it is made of
/// safe characters only, in single quotes when it has no control
/// characters, else in bash's `$'...'` with escapes (a newline in a path
/// would otherwise split a record's line in two).
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./,:=+@%".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        return word.to_string();
    }
    if !word.chars().any(char::is_control) {
        return format!("'{}'", word.replace('\'', r"'\''"));
    }
    let mut out = String::from("$'");
    for c in word.chars() {
        match c {
            '\n' => out.push_str(r"\n"),
            '\t' => out.push_str(r"\t"),
            '\r' => out.push_str(r"\r"),
            '\\' => out.push_str(r"\\"),
            '\'' => out.push_str(r"\'"),
            c if c.is_control() => {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    out.push_str(&format!("\\x{b:02x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A `key: value` description of the machine and tools.
pub fn describe(command_line: &str) -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let mhz = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("cpu MHz")
                .and_then(|r| r.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let nproc = std::thread::available_parallelism()
        .map(|n| n.get().to_string())
        .unwrap_or_else(|_| "unknown".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| m.lines().next().map(str::to_string))
        .unwrap_or_default();
    [
        ("command", command_line.to_string()),
        (
            "working directory",
            std::env::current_dir()
                .map(|d| shell_word(&d.to_string_lossy()))
                .unwrap_or_else(|e| format!("unknown ({e})")),
        ),
        ("nproc", nproc),
        ("cpu model", model),
        ("cpu MHz", mhz),
        ("memory", mem),
        ("kernel", read_trimmed("/proc/sys/kernel/osrelease")),
        ("load average", read_trimmed("/proc/loadavg")),
        ("rustc", tool_line("rustc", &["--version"])),
        ("cc", tool_line(&c_compiler_words()[0], &["--version"])),
        (
            "CC",
            std::env::var("CC")
                .map(|cc| shell_word(&cc))
                .unwrap_or_else(|_| "(unset: cc)".into()),
        ),
        ("libc", tool_line("ldd", &["--version"])),
        ("valgrind", tool_line("valgrind", &["--version"])),
        (
            "GLIBC_TUNABLES",
            std::env::var("GLIBC_TUNABLES").unwrap_or_else(|_| "(unset: glibc defaults)".into()),
        ),
        (
            "TERN_STDLIB",
            std::env::var("TERN_STDLIB").unwrap_or_else(|_| "(unset: embedded stdlib)".into()),
        ),
        (
            "TERN_POOL_BYTES",
            std::env::var("TERN_POOL_BYTES").unwrap_or_else(|_| "(unset)".into()),
        ),
        (
            "TERN_RUNTIME_LIB",
            std::env::var("TERN_RUNTIME_LIB")
                .unwrap_or_else(|_| "(unset: the runtime built with tern)".into()),
        ),
        ("allocator environment", allocator_environment()),
    ]
    .iter()
    .map(|(k, v)| format!("{k}: {v}\n"))
    .collect()
}

/// The variables besides `GLIBC_TUNABLES` that change what malloc does in
/// every side's process, or which allocator it is: `MALLOC_*` (glibc's
/// older settings) and the dynamic linker's `LD_PRELOAD` and
/// `LD_LIBRARY_PATH`, `name=value` separated by spaces.
fn allocator_environment() -> String {
    let mut set: Vec<String> = std::env::vars_os()
        .filter_map(|(k, v)| {
            let k = k.to_string_lossy().into_owned();
            let relevant = k.starts_with("MALLOC_") || k == "LD_PRELOAD" || k == "LD_LIBRARY_PATH";
            relevant.then(|| format!("{k}={}", shell_word(&v.to_string_lossy())))
        })
        .collect();
    set.sort();
    if set.is_empty() {
        "(none of MALLOC_*, LD_PRELOAD, LD_LIBRARY_PATH)".into()
    } else {
        set.join(" ")
    }
}

/// `CC` split into words (a compiler and its own arguments, as `tern
/// build` takes it), or `cc`.
fn c_compiler_words() -> Vec<String> {
    let words: Vec<String> = std::env::var("CC")
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    if words.is_empty() {
        vec!["cc".into()]
    } else {
        words
    }
}

/// The C compiler the C sides and the launcher are built with: the one
/// `tern build` links the Tern sides with (`CC`, else `cc`), so that every
/// side of a run uses the same compiler.
pub fn c_compiler() -> std::process::Command {
    let words = c_compiler_words();
    let mut cmd = std::process::Command::new(&words[0]);
    cmd.args(&words[1..]);
    cmd
}

/// FNV-1a, 64 bits: a fingerprint to tell builds apart, not a security hash.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Fingerprints of the tern executable and the runtime library it links,
/// then of each stdlib module it compiles with (`stdlib`: name and source),
/// one `fnv1a-64  bytes  what` line each.
pub fn fingerprints(
    tern: &Path,
    runtime_lib: Option<&Path>,
    stdlib: &[(String, String)],
) -> String {
    let mut out = String::from("# fnv1a-64 of each file, then of each stdlib module\n");
    for p in std::iter::once(tern).chain(runtime_lib) {
        match std::fs::read(p) {
            Ok(b) => out.push_str(&format!(
                "{:016x}  {:>10}  {}\n",
                fnv1a(&b),
                b.len(),
                p.display()
            )),
            Err(e) => out.push_str(&format!("unreadable  {}: {e}\n", p.display())),
        }
    }
    let mut modules: Vec<&(String, String)> = stdlib.iter().collect();
    modules.sort();
    for (name, text) in modules {
        out.push_str(&format!(
            "{:016x}  {:>10}  stdlib module {name}\n",
            fnv1a(text.as_bytes()),
            text.len()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every word reads back as itself in bash, on one line.
    #[test]
    fn shell_words_read_back_whole() {
        for word in [
            "plain/path-1.trace",
            "",
            "sp ace",
            "it's",
            "two\nlines",
            "tab\tq'uote\\",
            "ünïcode",
            "\u{1}ctl",
        ] {
            let quoted = shell_word(word);
            assert!(!quoted.contains('\n'), "{quoted}");
            let o = std::process::Command::new("bash")
                .arg("-c")
                .arg(format!("printf %s {quoted}"))
                .output()
                .unwrap();
            assert_eq!(String::from_utf8(o.stdout).unwrap(), word, "{quoted}");
        }
        assert_eq!(shell_word("--out"), "--out");
    }

    #[test]
    fn fnv1a_known_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}

//! What the `io` module does where the test-program format cannot reach:
//! a file the program may not open (as root the child drops to `nobody`,
//! since root opens anything), and a program started with stdin closed.
//! JIT, AOT and the interpreter alike.

mod pool_support;

use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::Command;

use pool_support::child;
use pool_support::{Mode, program_command, scratch};

/// The program `text` as a file in `dir`.
fn program(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let file = dir.join(format!("{name}.tern"));
    std::fs::write(&file, text).unwrap();
    file
}

/// The three ways to run `file`: JIT, AOT (built now), the interpreter.
fn every_mode(file: &Path, dir: &Path) -> Vec<(&'static str, Command)> {
    let mut interp = Command::new(env!("CARGO_BIN_EXE_tern"));
    interp
        .args(["run", "--interp", file.to_str().unwrap()])
        .env(
            "TERN_STDLIB",
            Path::new(env!("CARGO_MANIFEST_DIR")).join("stdlib"),
        );
    vec![
        ("JIT", program_command(file, Mode::Jit, "-O2", dir).unwrap()),
        ("AOT", program_command(file, Mode::Aot, "-O2", dir).unwrap()),
        ("interp", interp),
    ]
}

#[test]
fn a_file_the_program_may_not_open_is_a_located_error() {
    let dir = scratch("io-denied");
    // Reachable by `nobody`: the scratch directory and the program.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let secret = dir.join("secret.txt");
    std::fs::write(&secret, "no").unwrap();
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let file = program(
        &dir,
        "denied",
        &format!(
            "use io;\nfn main() {{\n    var d = reusable::alloc::<u8>(0);\n    print(io::try_read_file(\"{0}\", ref d) == io::DENIED);\n    let x = io::read_file(\"{0}\");\n}}\n",
            secret.display()
        ),
    );
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for (mode, mut cmd) in every_mode(&file, &dir) {
        if root {
            // SAFETY: setgid/setuid only, between fork and exec.
            unsafe {
                cmd.pre_exec(|| {
                    if libc::setgid(65534) != 0 || libc::setuid(65534) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let o = child::run(cmd, None, child::PATIENCE);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "true\n",
            "{mode}: {err}"
        );
        assert_eq!(o.status.code(), Some(101), "{mode}: {err}");
        let first = err.lines().next().unwrap_or_default().to_string();
        assert_eq!(
            first,
            format!(
                "error: {}:5:13: cannot open '{}': Permission denied",
                file.display(),
                secret.display()
            ),
            "{mode}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_closed_stdin_reads_as_empty() {
    let dir = scratch("io-closed-stdin");
    let file = program(
        &dir,
        "stdin",
        "use io;\nfn main() {\n    let all = io::read_stdin();\n    var f = io::stdin();\n    var line = reusable::alloc::<u8>(0);\n    print(len(all), io::read_line(ref f, ref line));\n}\n",
    );
    for (mode, mut cmd) in every_mode(&file, &dir) {
        // SAFETY: only `close`, async-signal-safe, between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                libc::close(0);
                Ok(())
            });
        }
        let o = child::run(cmd, None, child::PATIENCE);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout),
            "0 false\n",
            "{mode}: {err}"
        );
        assert_eq!(o.status.code(), Some(0), "{mode}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

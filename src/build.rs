//! `tern build`: compile to an object and link it with the runtime into an
//! executable, or write the CLIF, the object or the disassembly.

use std::path::{Path, PathBuf};

use tern_codegen::{Options, link_executable};

use crate::Failure;
use crate::frontend::compile_file;
use crate::staticlib::find_runtime_lib;

/// What `--emit` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    /// Cranelift IR of every function, headed by its Tern name.
    Clif,
    /// The relocatable object file.
    Obj,
    /// The disassembly of the generated machine code.
    Asm,
}

/// Builds `file` into `out` (default: the file's stem, plus `.clif`, `.o`
/// or `.s` with `--emit`; `-` is stdout, for an `--emit` only).
pub fn build(
    file: &str,
    out: Option<&Path>,
    mut opts: Options,
    emit: Option<Emit>,
) -> Result<(), Failure> {
    let to_stdout = out == Some(Path::new("-"));
    if to_stdout && emit.is_none() {
        return Err(Failure::new(
            2,
            "error: `-o -` writes to stdout, which only `--emit clif`, `--emit asm` or `--emit obj` can do; give the executable a file name".into(),
        ));
    }
    let out_given = out;
    let out: PathBuf = match out {
        Some(p) => p.to_path_buf(),
        None => {
            let stem = Path::new(file)
                .file_stem()
                .map(PathBuf::from)
                .unwrap_or_else(|| "a.out".into());
            match emit {
                // `x.tern.tern`'s executable would be `x.tern`: never a
                // source file of the user's under a name they did not give.
                None if stem.extension().is_some_and(|e| e == "tern") && stem.exists() => {
                    return Err(Failure::new(
                        1,
                        format!(
                            "error: the default output `{}` would replace a Tern source file; choose a name with `-o`",
                            stem.display()
                        ),
                    ));
                }
                None => stem,
                Some(Emit::Clif) => stem.with_extension("clif"),
                Some(Emit::Obj) => stem.with_extension("o"),
                Some(Emit::Asm) => stem.with_extension("s"),
            }
        }
    };
    // `-o dir/` names a folder: one that is not there is said so (the
    // final rename said `Not a directory`).
    if !to_stdout && out.as_os_str().as_encoded_bytes().ends_with(b"/") && !out.is_dir() {
        return Err(cannot_write(&out, "no such directory"));
    }
    if !to_stdout {
        // A missing input (or a folder) is that, not an output named as
        // the input (`tern build prog` for `prog.tern` said so). Only
        // then read here: a FIFO's text (`<(...)`) can be read once.
        if !std::fs::metadata(file).is_ok_and(|m| !m.is_dir()) {
            crate::frontend::read_input(file)?;
        }
        refuse_to_overwrite_input(file, &out)?;
    }
    if out_given.is_none() {
        refuse_to_replace_by_default(&out, emit)?;
    }
    let (program, _) = compile_file(file)?;
    // Nor a module the program uses (`use m;` with `-o m.tern`).
    if !to_stdout {
        for module in program.files.iter().skip(1) {
            if same_file(module, &out) {
                return Err(Failure::new(
                    1,
                    format!(
                        "error: the output `{}` is a source file of the program (module `{module}`); choose another name with `-o`",
                        out.display()
                    ),
                ));
            }
        }
    }
    opts.emit_clif = emit == Some(Emit::Clif);
    opts.emit_asm = emit == Some(Emit::Asm);
    let object = crate::stack::object(&program, &opts)
        .map_err(|e| Failure::new(1, format!("error: {e}")))?;
    for note in object
        .listing
        .usage_notes
        .iter()
        .chain(&object.listing.notes)
    {
        say!("{note}");
    }
    match emit {
        Some(Emit::Clif) => return write(&out, object.listing.clif.as_bytes()),
        Some(Emit::Asm) => return write(&out, object.listing.asm.as_bytes()),
        Some(Emit::Obj) => return write(&out, &object.bytes),
        None => {}
    }
    // A directory is no executable's name (`-o dir/` would otherwise fail
    // at the final rename, which reports `Not a directory`).
    if out.is_dir() {
        return Err(cannot_write(&out, "Is a directory (os error 21)"));
    }
    // A missing directory is the user's path, not the linker's problem.
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty())
        && !dir.is_dir()
    {
        return Err(cannot_write(&out, "no such directory"));
    }
    // Declared before the scratch folder, so dropped after it: a SIGINT,
    // SIGTERM or SIGHUP during the link removes the folder, then ends the
    // process by that signal.
    let signals = crate::deferred_signals::Deferred::install();
    // The object (and the runtime library, when no cache directory can be
    // trusted) goes into a private temporary directory (mode 0700, a fresh
    // unpredictable name, removed on drop), so no file of the user's (nor a
    // failure message about one) is ever a temporary name.
    let scratch = private_tempdir("tern-build-").map_err(|e| {
        Failure::new(
            1,
            format!("error: cannot create a temporary directory: {e}"),
        )
    })?;
    let runtime =
        find_runtime_lib(scratch.path()).map_err(|e| Failure::new(1, format!("error: {e}")))?;
    // Nor the runtime library the link reads (`TERN_RUNTIME_LIB`), as a C
    // compiler refuses an output that is one of its inputs.
    if same_file(&runtime.to_string_lossy(), &out) {
        return Err(Failure::new(
            1,
            format!(
                "error: the output `{}` is the runtime library the program is linked with (`TERN_RUNTIME_LIB`); choose another name with `-o`",
                out.display()
            ),
        ));
    }
    let obj_path = scratch.path().join("program.o");
    std::fs::write(&obj_path, &object.bytes).map_err(|e| {
        Failure::new(
            1,
            format!("error: cannot write a temporary object file: {e}"),
        )
    })?;
    // Linked in the scratch directory and moved into place only when it
    // worked: a failed build (no C compiler, a link error, `CC=true`) leaves
    // whatever `out` named as it was.
    let exe = scratch.path().join("program");
    link_executable(&obj_path, &runtime, &exe).map_err(|e| {
        let kept = if out.exists() {
            format!(" (`{}` is left as it was)", out.display())
        } else {
            String::new()
        };
        Failure::new(1, format!("error: {e}{kept}"))
    })?;
    if signals.pending() {
        // `signals`' drop ends the process: no message, `out` untouched.
        return Err(Failure::new(1, String::new()));
    }
    let mut from = std::fs::File::open(&exe).map_err(|e| cannot_write(&out, &e.to_string()))?;
    let mode = from
        .metadata()
        .map_err(|e| cannot_write(&out, &e.to_string()))?
        .permissions();
    let to = target(&out)?;
    if !matches!(to, Target::Replace) {
        // Writing into a FIFO (or a pipe at stdout) waits for its reader:
        // with the scratch folder gone (the open file keeps the
        // executable) and the signals no longer held, Ctrl-C ends the wait
        // and leaves nothing behind. (Held, they kept the build waiting
        // for good.)
        drop(scratch);
        drop(signals);
    }
    install(&mut from, mode, &out, to)
}

/// Where an output goes (see [`target`]).
#[derive(Clone, Copy)]
enum Target {
    /// A new file renamed over the name ([`replace`]): a regular file, a
    /// link to one, nothing yet.
    Replace,
    /// Written into the node the name is (a device, a FIFO), or that the
    /// link the name is reaches (`through_link`): [`write_into`].
    Into { through_link: bool },
    /// This process's own stdout or stderr (`-o /dev/stdout`, whatever
    /// the shell sent it to): written through that descriptor.
    Descriptor(i32),
}

/// Where an output named `out` goes. A device, FIFO or socket at `out`
/// (`-o /dev/null`) is written into, as a C compiler's linker does: a
/// rename would replace the node itself (run as root, `/dev/null` became a
/// regular file); so is what a link reaches when it is such a node. The
/// process's own stdout or stderr, however named (`/dev/stdout`,
/// `/proc/self/fd/1`, a link to either, or the file the shell sent it to),
/// is written through its descriptor, at its offset and in its append mode
/// (`>> log` is appended to, not emptied): replaced, `/dev/stdout` became
/// a regular file when run as root and the file the shell redirected
/// stdout to stayed empty. A socket, or a link to one, cannot be written
/// into and is refused by name. Any other symbolic link is replaced, as the
/// linker replaces it, and its target left alone.
fn target(out: &Path) -> Result<Target, Failure> {
    use std::os::unix::fs::FileTypeExt as _;
    if let Some(fd) = std::fs::metadata(out)
        .ok()
        .and_then(|m| tern_runtime::output_names::descriptor_of(&m))
    {
        return Ok(Target::Descriptor(fd));
    }
    let Ok(meta) = std::fs::symlink_metadata(out) else {
        return Ok(Target::Replace);
    };
    let special = |kind: std::fs::FileType| !kind.is_file() && !kind.is_dir();
    let kind = meta.file_type();
    // (A socket cannot be opened for writing: `No such device or address`
    // said nothing of the kind.)
    if kind.is_socket() {
        return Err(cannot_write(out, "it is a socket; name another output"));
    }
    if kind.is_symlink() {
        return match std::fs::metadata(out).map(|m| m.file_type()) {
            Ok(kind) if kind.is_socket() => Err(cannot_write(
                out,
                "it links to a socket; name another output",
            )),
            // (Followed only where no other user could have planted it: a
            // link in `/tmp` to a disk would have taken the executable.)
            Ok(kind) if special(kind) => {
                tern_runtime::output_names::refuse_planted_link(out)
                    .map_err(|why| cannot_write(out, &why))?;
                Ok(Target::Into { through_link: true })
            }
            _ => Ok(Target::Replace),
        };
    }
    Ok(if special(kind) {
        Target::Into {
            through_link: false,
        }
    } else {
        Target::Replace
    })
}

/// Writes what `from` gives to `out` as [`target`] says: a new file (with
/// permissions `mode`) replacing `out` in one step, or into the node, link
/// or descriptor `out` names.
fn install(
    from: &mut dyn std::io::Read,
    mode: std::fs::Permissions,
    out: &Path,
    to: Target,
) -> Result<(), Failure> {
    match to {
        Target::Replace => replace(from, mode, out),
        Target::Into { through_link } => write_into(from, out, through_link),
        Target::Descriptor(fd) => {
            // SAFETY: fd 1 or 2 stays open for the process's life; the
            // `File` must not close it.
            let mut file = std::mem::ManuallyDrop::new(unsafe {
                <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd)
            });
            let written =
                std::io::copy(from, &mut *file).map_err(|e| cannot_write(out, &e.to_string()))?;
            make_executable(&file, written, mode);
            Ok(())
        }
    }
}

/// Gives a regular file that holds exactly the executable just written
/// through a descriptor (`tern build -o /dev/stdout > p`) the executable
/// bits `mode` has, where it has read bits, as a C compiler's linker does;
/// a file that held something before (`>> log`) is left as it is. Best
/// effort: the bytes are there either way.
fn make_executable(file: &std::fs::File, written: u64, mode: std::fs::Permissions) {
    use std::os::unix::fs::PermissionsExt as _;
    let Ok(meta) = file.metadata() else {
        return;
    };
    if !meta.is_file() || meta.len() != written {
        return;
    }
    let now = meta.permissions().mode() & 0o7777;
    let wanted = now | ((now & 0o444) >> 2 & mode.mode() & 0o111);
    if wanted != now {
        let _ = file.set_permissions(std::fs::Permissions::from_mode(wanted));
    }
}

/// The bytes `from` gives copied next to `out` under a temporary name (with
/// permissions `mode`), then renamed over it, so `out` is either the old
/// file or the whole new one (the `--emit` listings are installed the same
/// way: a full disk once left a listing half written over the old one, and
/// a link at a default name had its target overwritten).
fn replace(
    from: &mut dyn std::io::Read,
    mode: std::fs::Permissions,
    out: &Path,
) -> Result<(), Failure> {
    let dir = out
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Created with `mode` (less the umask, as any new file), O_EXCL.
    let staged = tempfile::Builder::new()
        .prefix(".tern-build-")
        .permissions(mode)
        .tempfile_in(dir)
        .map_err(|e| cannot_write(out, &e.to_string()))?;
    // Through the handle `tempfile` opened, never the name again.
    std::io::copy(from, &mut staged.as_file()).map_err(|e| cannot_write(out, &e.to_string()))?;
    staged
        .persist(out)
        .map_err(|e| cannot_write(out, &e.error.to_string()))?;
    Ok(())
}

/// A fresh temporary folder only this user can read (mode 0700 whatever
/// the umask: the program's object and the runtime library go there),
/// removed on drop.
pub(crate) fn private_tempdir(prefix: &str) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt as _;
    tempfile::Builder::new()
        .prefix(prefix)
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir()
}

/// [`install`] into a file that is not a regular one: its bytes written
/// through the existing node, opened without following a link (unless
/// `through_link`: `out` is a link to such a node) and never created, and
/// checked to be still no regular file once open (a name replaced since
/// the check, by a link or a file, is an error: the executable never lands
/// in a file the user did not name).
fn write_into(from: &mut dyn std::io::Read, out: &Path, through_link: bool) -> Result<(), Failure> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let replaced = || std::io::Error::other("it was replaced by a regular file while building");
    let nofollow = if through_link { 0 } else { libc::O_NOFOLLOW };
    std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(nofollow)
        .open(out)
        .and_then(|mut to| {
            if to.metadata()?.is_file() {
                return Err(replaced());
            }
            std::io::copy(from, &mut to)?;
            Ok(())
        })
        .map_err(|e| cannot_write(out, &e.to_string()))
}

/// Writes `bytes` to `path`, or to stdout when `path` is `-`.
fn write(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    if path == Path::new("-") {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        return out
            .write_all(bytes)
            .and_then(|()| out.flush())
            .map_err(|e| Failure::new(1, format!("error: cannot write to stdout: {e}")));
    }
    use std::os::unix::fs::PermissionsExt as _;
    // What `std::fs::write` would have created: 0666 less the umask.
    let mode = std::fs::Permissions::from_mode(0o666);
    install(&mut &bytes[..], mode, path, target(path)?)
}

fn cannot_write(path: &Path, why: &str) -> Failure {
    Failure::new(
        1,
        format!("error: cannot write `{}`: {why}", path.display()),
    )
}

/// A default output name (the user named no file) replaces only what a
/// build of the same kind would have written there: an ELF file for an
/// executable or an object, a listing that starts as this compiler's do for
/// `--emit asm` or `clif`. Anything else there (notes in `prog` beside
/// `prog.tern`, a hand-written `prog.s`) is the user's and stays.
fn refuse_to_replace_by_default(out: &Path, emit: Option<Emit>) -> Result<(), Failure> {
    use std::io::Read as _;
    let Ok(meta) = std::fs::symlink_metadata(out) else {
        return Ok(());
    };
    if meta.file_type().is_symlink() {
        return Err(Failure::new(
            1,
            format!(
                "error: the default output `{}` is a symbolic link; name the output with `-o` to replace it",
                out.display()
            ),
        ));
    }
    if !meta.is_file() {
        return Ok(());
    }
    let mut head = Vec::new();
    let read = std::fs::File::open(out).and_then(|f| f.take(64).read_to_end(&mut head));
    let signature: &[u8] = match emit {
        None | Some(Emit::Obj) => b"\x7fELF",
        Some(Emit::Asm) => tern_codegen::asm::ASM_HEADER.as_bytes(),
        Some(Emit::Clif) => tern_codegen::lower::CLIF_HEADER.as_bytes(),
    };
    let ours = read.is_ok() && (head.is_empty() || head.starts_with(signature));
    if ours {
        return Ok(());
    }
    let kind = match emit {
        None => "an executable",
        Some(Emit::Obj) => "an object file",
        Some(Emit::Asm) => "an assembly listing tern wrote",
        Some(Emit::Clif) => "a CLIF listing tern wrote",
    };
    Err(Failure::new(
        1,
        format!(
            "error: the default output `{}` exists and is not {kind}; name the output with `-o` to replace it",
            out.display()
        ),
    ))
}

/// The output must never be the input: `tern build prog` on a source file
/// without an extension would otherwise replace the source by the executable.
/// The same file is the same path, or the same device and inode (a hard
/// link, or a path through links that canonicalizing cannot see).
fn refuse_to_overwrite_input(file: &str, out: &Path) -> Result<(), Failure> {
    if same_file(file, out) {
        return Err(Failure::new(
            1,
            format!(
                "error: the output `{}` is the input file; choose another name with `-o`",
                out.display()
            ),
        ));
    }
    Ok(())
}

/// Whether `file` and `out` name one file: the same path, or the same device
/// and inode (a hard link, or a path through links that canonicalizing
/// cannot see).
fn same_file(file: &str, out: &Path) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    let same_path = match (std::fs::canonicalize(file), std::fs::canonicalize(out)) {
        (Ok(a), Ok(b)) => a == b,
        _ => Path::new(file) == out,
    };
    let same_inode = match (std::fs::metadata(file), std::fs::metadata(out)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    };
    same_path || same_inode
}

//! The `tern` driver: `run` (JIT, or the reference interpreter with
//! `--interp`), `build` (AOT), `check` (front end only);
//! `repl` (JIT session, `src/repl/`); `bench` (the comparison matrix: the `tern-bench` crate, `bench/`).

/// `eprintln!` that never panics: a driver whose stderr is a closed pipe
/// (`tern check bad.tern 2>&1 | true`) still ends with its own status, where
/// `eprintln!` panics on the failed write. A diagnostic that cannot be
/// written is lost either way.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// [`say!`] without the newline (text that ends in its own).
macro_rules! say_part {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

/// `println!` for the REPL's own output (values, types, replies to
/// commands). Standard output gone (a closed pipe, a full disk) ends the
/// session with an error on stderr and status 1, where `println!` would
/// panic: nobody can read its answers any more.
macro_rules! reply {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        if let Err(e) = writeln!(out, $($arg)*).and_then(|()| out.flush()) {
            say!("error: tern repl: cannot write to stdout: {e}");
            std::process::exit(1);
        }
    }};
}

mod build;
mod config;
mod deferred_signals;
mod frontend;
mod loader;
mod repl;
mod run;
mod stack;
mod staticlib;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tern_codegen::{Inlining, OptLevel, Options};

/// A failed command: what to print on stderr and the exit status.
pub struct Failure {
    pub status: u8,
    pub message: String,
}

impl Failure {
    pub fn new(status: u8, message: String) -> Failure {
        Failure { status, message }
    }
}

#[derive(Parser)]
#[command(
    name = "tern",
    version,
    about = "The Tern language: run, build, check, repl, bench",
    after_help = ENVIRONMENT
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The environment variables `tern` reads (`tern --help`); `src/config.rs`
/// and the runtime (`TERN_POOL_BYTES`, `TERN_POOL_STATS`) are where they are read.
const ENVIRONMENT: &str = "\
Environment:
  TERN_POOL_BYTES   size of the builtin pool's arena in bytes (default 4 GiB; also read by built executables)
  TERN_POOL_STATS   a file: when the program ends normally, the runtime writes there each pool kind's
                    arena high-water mark in bytes (`builtin N`, `library N`, `pure N`; tern bench uses it);
                    an existing file is replaced only if it holds such a report or nothing
  TERN_STDLIB       directory of stdlib modules to use instead of the embedded ones
  TERN_RUNTIME_LIB  the runtime static library `tern build` links (default: the copy inside tern,
                    unpacked to $XDG_CACHE_HOME/tern, else ~/.cache/tern, else a private
                    temporary directory; see docs/security.md)
  TERN_VERIFY       1: run Cranelift's verifier on every function (always on in debug builds)
  CC                the C compiler `tern build` links with (default: cc)";

#[derive(Subcommand)]
enum Command {
    /// Compile FILE in-process (JIT) and run its `main`. Arguments after
    /// `--` are the program's (`io::arg_count()`, `io::arg(i)`):
    /// `tern run prog.tern -- a b`.
    Run {
        /// The Tern source file (its `fn main` runs).
        file: String,
        /// The program's arguments (after `--`).
        #[arg(last = true, value_name = "ARGS")]
        args: Vec<std::ffi::OsString>,
        #[command(flatten)]
        codegen: CodegenArgs,
        /// Report front-end, Cranelift and execution time on stderr.
        #[arg(long)]
        time: bool,
        /// Run FILE with the reference interpreter instead of compiling it
        /// (same output and status; -O is accepted and ignored).
        #[arg(long)]
        interp: bool,
        /// Write /tmp/perf-PID.map (each Tern function's address, size and
        /// name) so `perf report` names JIT-compiled functions (not with
        /// `--interp`, which compiles nothing).
        #[arg(long, conflicts_with = "interp")]
        perf_map: bool,
    },
    /// Compile FILE to a native executable (object + C compiler link).
    Build {
        /// The Tern source file.
        file: String,
        /// Output path (default: FILE's stem, with `.clif`, `.s` or `.o` for
        /// `--emit`); `-` writes an `--emit` to stdout.
        #[arg(short = 'o')]
        out: Option<PathBuf>,
        #[command(flatten)]
        codegen: CodegenArgs,
        /// Write the CLIF, the object or the disassembly instead of an executable.
        #[arg(long, value_enum)]
        emit: Option<build::Emit>,
    },
    /// Run the front end only and report its diagnostics.
    Check {
        /// The Tern source file.
        file: String,
    },
    /// The interactive JIT REPL.
    Repl,
    /// The slice_pool vs reusable[] benchmark matrix (`tern bench --help`).
    #[command(disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<String>,
    },
}

/// Code generation flags shared by `run` and `build` (JIT and AOT compile
/// alike).
#[derive(clap::Args)]
struct CodegenArgs {
    /// Optimization level: -O0, -O1 or -O2 (default).
    #[arg(short = 'O', value_parser = parse_level, default_value = "2")]
    opt: OptLevel,
    /// Which calls of Tern functions are inlined: `off`, `natural` (small
    /// callees; the default at -O2, `off` below) or `all` (every call that is
    /// not recursive).
    #[arg(long, value_enum)]
    inline: Option<InlineArg>,
    /// Never inline calls of this function (its display name, such as
    /// `exercise` or `slice_pool::append::<i64>`); may be repeated.
    #[arg(long = "keep-call", value_name = "NAME")]
    keep_call: Vec<String>,
    /// Check every element access and subslice of a pool slice (builtin
    /// `reusable[]`, `slice_pool`, `slice_pool_pure`): a use after free, or of
    /// a stale copy after a moving resize or append, is a located error.
    #[arg(long)]
    sanitize: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum InlineArg {
    Off,
    Natural,
    All,
}

impl CodegenArgs {
    fn options(&self) -> Options {
        let mut o = Options::new(self.opt);
        if let Some(i) = self.inline {
            o.inlining = match i {
                InlineArg::Off => Inlining::Off,
                InlineArg::Natural => Inlining::Natural,
                InlineArg::All => Inlining::All,
            };
        }
        o.verify |= config::verify();
        o.keep_calls = self.keep_call.clone();
        o.sanitize = self.sanitize;
        if let Ok(dir) = std::env::current_dir() {
            o.comp_dir = dir.display().to_string();
        }
        o
    }
}

/// `tern bench`: the harness (crate `tern-bench`), told what this driver
/// links and compiles with.
fn run_bench(args: &[String]) -> Result<(), Failure> {
    // Holds the runtime library while the harness runs when no cache
    // directory can be trusted (removed on return).
    let scratch = build::private_tempdir("tern-bench-").ok();
    // A signal that stops the run ends its child and removes `scratch`.
    tern_bench::interrupt::install(scratch.iter().map(|s| s.path().to_path_buf()).collect());
    let host = tern_bench::Host {
        runtime_lib: scratch
            .as_ref()
            .and_then(|s| staticlib::find_runtime_lib(s.path()).ok()),
        stdlib: loader::FsLoader::from_env().stdlib_sources(),
    };
    tern_bench::main(args, host).map_err(|f| Failure::new(f.status, f.message))
}

fn parse_level(s: &str) -> Result<OptLevel, String> {
    OptLevel::parse(s).ok_or_else(|| format!("`{s}` is not an optimization level (use 0, 1 or 2)"))
}

fn main() -> ExitCode {
    // `tern help bench`: the bench subcommand's options are the harness's,
    // which clap here does not know (it hands `bench`'s arguments on whole).
    let argv: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let result = if argv == ["help", "bench"] {
        run_bench(&["--help".to_string()])
    } else {
        match Cli::try_parse() {
            Ok(cli) => run_command(cli.command),
            Err(e) if !e.use_stderr() => print_info(&e),
            Err(e) => e.exit(),
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            say!("{}", f.message);
            ExitCode::from(f.status)
        }
    }
}

/// Prints `--help` or `--version` (clap's `exit` would ignore a failed
/// write: `tern --help > /dev/full` must not report success).
fn print_info(e: &clap::Error) -> Result<(), Failure> {
    use std::io::Write as _;
    e.print()
        .and_then(|()| std::io::stdout().flush())
        .map_err(|io| Failure::new(1, format!("error: cannot write to stdout: {io}")))
}

/// Runs one parsed subcommand.
fn run_command(command: Command) -> Result<(), Failure> {
    match command {
        Command::Run {
            file,
            args,
            codegen,
            time,
            interp,
            perf_map,
        } => {
            use std::os::unix::ffi::OsStringExt;
            tern_runtime::io::set_args(args.into_iter().map(OsStringExt::into_vec).collect());
            run::run(&file, codegen.options(), time, interp, perf_map)
        }
        .map(|status| {
            // The OS keeps the low 8 bits, exactly as for the AOT
            // executable whose C `main` returns the same value.
            std::process::exit(status)
        }),
        Command::Build {
            file,
            out,
            codegen,
            emit,
        } => build::build(&file, out.as_deref(), codegen.options(), emit),
        Command::Check { file } => frontend::compile_file(&file).map(|_| ()),
        Command::Repl => repl::repl(),
        Command::Bench { args } => run_bench(&args),
    }
}

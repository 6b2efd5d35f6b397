//! The `tern` driver: `run` (JIT), `build` (AOT), `check` (front end only);
//! `repl` (JIT session, `src/repl/`); `bench` (the comparison matrix, `src/bench/`).

mod bench;
mod build;
mod frontend;
mod loader;
mod repl;
mod run;
mod stack;
mod staticlib;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use tern_codegen::OptLevel;

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
#[command(name = "tern", version, about = "The Tern language: run, build, check")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Compile FILE in-process (JIT) and run its `main`.
    Run {
        file: String,
        /// Optimization level: -O0, -O1 or -O2 (default).
        #[arg(short = 'O', value_parser = parse_level, default_value = "2")]
        opt: OptLevel,
        /// Report front-end, Cranelift and execution time on stderr.
        #[arg(long)]
        time: bool,
    },
    /// Compile FILE to a native executable (object + C compiler link).
    Build {
        file: String,
        /// Output path (default: FILE's stem).
        #[arg(short = 'o')]
        out: Option<PathBuf>,
        /// Optimization level: -O0, -O1 or -O2 (default).
        #[arg(short = 'O', value_parser = parse_level, default_value = "2")]
        opt: OptLevel,
        /// Write the CLIF, the object or the disassembly instead of an executable.
        #[arg(long, value_enum)]
        emit: Option<build::Emit>,
    },
    /// Run the front end only and report its diagnostics.
    Check { file: String },
    /// The interactive JIT REPL.
    Repl,
    /// The slice_pool vs reusable[] benchmark matrix (`tern bench --help`).
    #[command(disable_help_flag = true)]
    Bench {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
        args: Vec<String>,
    },
}

fn parse_level(s: &str) -> Result<OptLevel, String> {
    OptLevel::parse(s).ok_or_else(|| format!("`{s}` is not an optimization level (use 0, 1 or 2)"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run { file, opt, time } => run::run(&file, opt, time).map(|status| {
            // The OS keeps the low 8 bits, exactly as for the AOT
            // executable whose C `main` returns the same value.
            std::process::exit(status)
        }),
        Command::Build {
            file,
            out,
            opt,
            emit,
        } => build::build(&file, out.as_deref(), opt, emit),
        Command::Check { file } => frontend::compile_file(&file).map(|_| ()),
        Command::Repl => repl::repl(),
        Command::Bench { args } => bench::main(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("{}", f.message);
            ExitCode::from(f.status)
        }
    }
}

//! The `tern-difftest` command line: a campaign of random programs run in
//! every mode of the `tern` driver (see docs/testing.md).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use tern_difftest::batch::{self, Config};
use tern_difftest::runner::Mode;
use tern_difftest::{generator, tern_bin};

/// Differential testing of the Tern compiler: random well-typed, terminating
/// programs run by `tern run` (JIT) at every -O level and by `tern build`
/// (AOT), whose outputs must all agree.
#[derive(Parser)]
#[command(name = "tern-difftest", version)]
struct Cli {
    /// Number of programs to generate and run.
    #[arg(long, default_value_t = 100)]
    programs: u64,
    /// Seed of the run: program i is generated from a seed derived from
    /// (SEED, i), which is what a disagreement line prints.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run only the program of this per-program seed (as printed).
    #[arg(long, value_name = "SEED")]
    only: Option<u64>,
    /// Print the program of this per-program seed and exit.
    #[arg(long, value_name = "SEED", conflicts_with = "only")]
    print: Option<u64>,
    /// Keep disagreeing programs (original and minimized) and every mode's
    /// output under DIR.
    #[arg(long, value_name = "DIR")]
    keep: Option<PathBuf>,
    /// Do not minimize disagreeing programs (they are minimized when kept).
    #[arg(long)]
    no_minimize: bool,
    /// Predicate runs the minimizer may make per program.
    #[arg(long, default_value_t = 300, value_name = "N")]
    max_tries: usize,
    /// The tern binary to test (default: build the workspace's own).
    #[arg(long, value_name = "PATH")]
    tern: Option<PathBuf>,
    /// Comma-separated modes: interp, jit-O0, jit-O1, jit-O2, aot-O0,
    /// aot-O1, aot-O2, and each of them with `+sanitize` (run with
    /// `--sanitize`).
    #[arg(long, value_delimiter = ',', value_parser = Mode::parse,
          default_value = "interp,jit-O0,jit-O1,jit-O2,aot-O0,aot-O2,jit-O2+sanitize")]
    modes: Vec<Mode>,
    /// Add the reference interpreter (`tern run --interp`) to the modes
    /// (it is in the default list; this adds it to a `--modes` list).
    #[arg(long)]
    interp: bool,
    /// Programs run in parallel.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=64))]
    jobs: u64,
    /// Per-run timeout in seconds; a run past it is a hang.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Run Cranelift's verifier in every compile (TERN_VERIFY=1).
    #[arg(long)]
    verify: bool,
    /// No progress lines on stderr.
    #[arg(long, short)]
    quiet: bool,
    /// Print each program's seed and time on stderr.
    #[arg(long, short)]
    verbose: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Some(seed) = cli.print {
        let g = generator::generate(seed);
        print!("{}", g.program.render());
        return ExitCode::SUCCESS;
    }
    let tern = match tern_bin::locate(cli.tern.as_deref()) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("tern-difftest: {e}");
            return ExitCode::from(2);
        }
    };
    let mut modes = cli.modes.clone();
    if cli.interp && !modes.contains(&Mode::Interp) {
        // First, so that it wins ties as the reference.
        modes.insert(0, Mode::Interp);
    }
    let mut config = Config::new(tern, cli.programs, cli.seed);
    config.only = cli.only;
    config.modes = modes;
    config.jobs = cli.jobs as usize;
    config.timeout = Duration::from_secs(cli.timeout);
    config.keep = cli.keep.clone();
    config.minimize = cli.keep.is_some() && !cli.no_minimize;
    config.max_tries = cli.max_tries;
    config.verify = cli.verify;
    config.progress = !cli.quiet;
    config.verbose = cli.verbose;
    let summary = match batch::run(&config, &mut |line| println!("{line}")) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("tern-difftest: {e}");
            return ExitCode::from(2);
        }
    };
    if !cli.quiet {
        eprintln!(
            "[tern-difftest] done in {:.1} s ({})",
            summary.elapsed.as_secs_f64(),
            config.tern.display()
        );
    }
    println!("{}", summary.last_line());
    if summary.disagreements() > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

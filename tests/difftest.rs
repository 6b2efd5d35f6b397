//! The differential tester's fixed-seed batch: random well-typed programs
//! (difftest/, docs/testing.md) run by this build's `tern` in the reference
//! interpreter, JIT at -O0, -O1, -O2, AOT at -O0, -O2 and JIT -O2 under
//! `--sanitize`; every mode must
//! print the same stdout and
//! stderr and exit with the same status, and each program must do what it
//! was generated to do.
//!
//! `TERN_DIFFTEST_PROGRAMS=N` (default [`DEFAULT_PROGRAMS`]) and
//! `TERN_DIFFTEST_SEED=S` change the batch; `TERN_DIFFTEST_MODES=interp,jit-O0,...`
//! the modes. A failure prints the disagreement lines; rerun one program
//! with `cargo run --release -p tern-difftest -- --only SEED --keep DIR`
//! to get it minimized.

use std::path::PathBuf;
use std::time::Duration;

use tern_difftest::batch::{self, Config};
use tern_difftest::runner::Mode;

/// Programs in the default batch: sized for the CI budget (a debug `tern`
/// compiles with the verifier on; about 1 s of CPU per program, 2 workers).
const DEFAULT_PROGRAMS: u64 = 200;
/// The batch's seed.
const DEFAULT_SEED: u64 = 20_261_130;

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().map(|v| {
        v.trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a number, not {v:?}"))
    })
}

#[test]
fn generated_programs_agree_in_every_mode() {
    let programs = env_u64("TERN_DIFFTEST_PROGRAMS").unwrap_or(DEFAULT_PROGRAMS);
    let seed = env_u64("TERN_DIFFTEST_SEED").unwrap_or(DEFAULT_SEED);
    let mut config = Config::new(PathBuf::from(env!("CARGO_BIN_EXE_tern")), programs, seed);
    if let Ok(list) = std::env::var("TERN_DIFFTEST_MODES") {
        config.modes = list
            .split(',')
            .map(|m| Mode::parse(m.trim()).unwrap_or_else(|e| panic!("TERN_DIFFTEST_MODES: {e}")))
            .collect();
    }
    // Generous: the debug driver compiles slowly, and CI machines are shared.
    config.timeout = Duration::from_secs(60);
    let mut lines = Vec::new();
    let summary = batch::run(&config, &mut |l| lines.push(l.to_string())).expect("the batch runs");
    eprintln!(
        "{} in {:.1} s",
        summary.last_line(),
        summary.elapsed.as_secs_f64()
    );
    assert!(
        summary.disagreements() == 0,
        "{}\n{}\nrerun one with: cargo run --release -p tern-difftest -- --only SEED --keep DIR",
        lines.join("\n"),
        summary.last_line()
    );
}

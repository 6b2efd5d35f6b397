//! A campaign: generate programs from per-program seeds, run each in every
//! mode on a pool of workers, report disagreements in program order,
//! minimize and keep the disagreeing programs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::generator::{Generated, generate};
use crate::minimize::{describe_size, minimize};
use crate::program::Program;
use crate::rng::program_seed;
use crate::runner::{DiffKind, Difference, Mode, Outcome, Runner, compare};

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// The driver under test.
    pub tern: PathBuf,
    /// Number of programs (ignored with `only`).
    pub programs: u64,
    /// The campaign seed: program `i` comes from `program_seed(seed, i)`.
    pub seed: u64,
    /// Run only the program of this per-program seed.
    pub only: Option<u64>,
    /// The modes every program runs in.
    pub modes: Vec<Mode>,
    /// Programs run in parallel.
    pub jobs: usize,
    /// Per-run timeout.
    pub timeout: Duration,
    /// Where disagreeing programs and their outputs are kept.
    pub keep: Option<PathBuf>,
    /// Minimize disagreeing programs.
    pub minimize: bool,
    /// Predicate calls the minimizer may make per program.
    pub max_tries: usize,
    /// Run Cranelift's verifier in every compile (`TERN_VERIFY=1`).
    pub verify: bool,
    /// Print progress lines on stderr.
    pub progress: bool,
    /// Print each program's seed and time on stderr.
    pub verbose: bool,
}

impl Config {
    /// A configuration with the defaults of the command line.
    pub fn new(tern: PathBuf, programs: u64, seed: u64) -> Config {
        Config {
            tern,
            programs,
            seed,
            only: None,
            modes: crate::runner::DEFAULT_MODES.to_vec(),
            jobs: 2,
            timeout: Duration::from_secs(20),
            keep: None,
            minimize: false,
            max_tries: 300,
            verify: false,
            progress: false,
            verbose: false,
        }
    }

    /// The per-program seeds of this run, in order.
    pub fn seeds(&self) -> Vec<u64> {
        match self.only {
            Some(s) => vec![s],
            None => (0..self.programs)
                .map(|i| program_seed(self.seed, i))
                .collect(),
        }
    }
}

/// The disagreements of one program.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The per-program seed.
    pub seed: u64,
    /// What differed.
    pub diffs: Vec<Difference>,
    /// The minimized program, if minimized.
    pub minimized: Option<String>,
    /// Where it was kept, if kept.
    pub kept: Option<PathBuf>,
}

impl Finding {
    /// One line per disagreement: `seed S: MODE: WHAT`.
    pub fn lines(&self) -> Vec<String> {
        self.diffs
            .iter()
            .map(|d| format!("seed {}: {}: {}", self.seed, d.mode, d.what))
            .collect()
    }
}

/// The result of a campaign.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Programs run.
    pub programs: u64,
    /// Programs with disagreements, in program order.
    pub findings: Vec<Finding>,
    /// Wall time.
    pub elapsed: Duration,
}

impl Summary {
    /// Total disagreement lines.
    pub fn disagreements(&self) -> usize {
        self.findings.iter().map(|f| f.diffs.len()).sum()
    }

    /// Every disagreement line, in program order.
    pub fn lines(&self) -> Vec<String> {
        self.findings.iter().flat_map(Finding::lines).collect()
    }

    /// `N programs, D disagreements`.
    pub fn last_line(&self) -> String {
        format!(
            "{} programs, {} disagreements",
            self.programs,
            self.disagreements()
        )
    }
}

/// A temporary directory removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("tern-difftest-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the campaign; `emit` receives each disagreement line as soon as the
/// programs before it are done (program order).
pub fn run(config: &Config, emit: &mut dyn FnMut(&str)) -> Result<Summary, String> {
    if config.modes.is_empty() {
        return Err("no modes to run".into());
    }
    let start = Instant::now();
    let tmp = TempDir::new()?;
    if let Some(k) = &config.keep {
        std::fs::create_dir_all(k).map_err(|e| format!("cannot create {}: {e}", k.display()))?;
    }
    let seeds = config.seeds();
    let mut runner = Runner::new(config.tern.clone(), config.timeout);
    runner.verify = config.verify;
    preflight(&runner, &tmp.0, &config.modes)?;
    let next = AtomicU64::new(0);
    let (tx, rx) = mpsc::channel::<(usize, Option<Finding>)>();
    let mut findings = Vec::new();
    std::thread::scope(|s| {
        for _ in 0..config.jobs.max(1) {
            let tx = tx.clone();
            let (next, seeds, runner, tmp) = (&next, &seeds, &runner, &tmp.0);
            // The generator recurses over expressions: give it room.
            let spawned = std::thread::Builder::new()
                .stack_size(64 << 20)
                .spawn_scoped(s, move || {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                        let Some(&seed) = seeds.get(i) else {
                            break;
                        };
                        let f = check_program(config, runner, tmp, seed);
                        if tx.send((i, f)).is_err() {
                            break;
                        }
                    }
                });
            if let Err(e) = spawned {
                eprintln!("tern-difftest: cannot start a worker: {e}");
            }
        }
        drop(tx);
        // Reorder: print program i's lines once 0..i are all in.
        let mut pending: BTreeMap<usize, Option<Finding>> = BTreeMap::new();
        let mut printed = 0usize;
        let mut last_progress = Instant::now();
        let mut last_count = 0usize;
        for (i, f) in rx {
            pending.insert(i, f);
            while let Some(f) = pending.remove(&printed) {
                if let Some(f) = f {
                    for line in f.lines() {
                        emit(&line);
                    }
                    findings.push(f);
                }
                printed += 1;
            }
            if config.progress
                && printed != last_count
                && (printed.is_multiple_of(100)
                    || last_progress.elapsed() > Duration::from_secs(60))
            {
                last_progress = Instant::now();
                last_count = printed;
                let d: usize = findings.iter().map(|f: &Finding| f.diffs.len()).sum();
                eprintln!(
                    "[tern-difftest] {printed}/{} programs, {d} disagreements, {:.0} s",
                    seeds.len(),
                    start.elapsed().as_secs_f64()
                );
            }
        }
    });
    Ok(Summary {
        programs: seeds.len() as u64,
        findings,
        elapsed: start.elapsed(),
    })
}

/// Runs a one-line program in every mode first, so that a setup problem (a
/// driver without `--interp`, no C compiler for AOT) is one clear error
/// rather than a disagreement per program.
fn preflight(runner: &Runner, tmp: &Path, modes: &[Mode]) -> Result<(), String> {
    let dir = tmp.join("preflight");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    std::fs::write(
        dir.join(FILE),
        "fn main() -> i64 {\n    print(42);\n    return 3;\n}\n",
    )
    .map_err(|e| format!("cannot write the preflight program: {e}"))?;
    for &m in modes {
        let o = runner.run(&dir, FILE, m);
        if o.status != Some(3) || o.stdout != "42\n" || !o.stderr.is_empty() {
            return Err(format!(
                "mode {} cannot run a trivial program with {} (status {:?}, stdout {:?}):\n{}",
                m.name(),
                runner.tern.display(),
                o.status,
                o.stdout,
                o.stderr.trim_end()
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(())
}

/// The file name programs are run under (their messages carry it).
const FILE: &str = "prog.tern";

/// Generates and runs the program of `seed`; minimizes and keeps it when
/// it disagrees.
fn check_program(config: &Config, runner: &Runner, tmp: &Path, seed: u64) -> Option<Finding> {
    let start = Instant::now();
    if config.verbose {
        eprintln!("[tern-difftest] seed {seed}: start");
    }
    let f = check_program_inner(config, runner, tmp, seed);
    if config.verbose {
        eprintln!(
            "[tern-difftest] seed {seed}: {} in {:.2} s",
            if f.is_some() { "DISAGREES" } else { "ok" },
            start.elapsed().as_secs_f64()
        );
    }
    f
}

fn check_program_inner(config: &Config, runner: &Runner, tmp: &Path, seed: u64) -> Option<Finding> {
    let g = generate(seed);
    let dir = tmp.join(format!("s{seed}"));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        return Some(setup_failure(
            seed,
            &format!("cannot create {}: {e}", dir.display()),
        ));
    }
    let result = run_program(runner, &dir, &g, config);
    let (results, diffs) = match result {
        Ok(r) => r,
        Err(e) => return Some(setup_failure(seed, &e)),
    };
    if diffs.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
        return None;
    }
    let mut finding = Finding {
        seed,
        diffs: diffs.clone(),
        minimized: None,
        kept: None,
    };
    let mut min_results = None;
    if config.minimize {
        let (p, r) = minimize_finding(config, runner, &dir, &g, &diffs);
        finding.minimized = Some(p.render());
        min_results = Some(r);
    }
    if let Some(keep) = &config.keep {
        match keep_finding(
            keep,
            &g,
            &finding,
            &results,
            min_results.as_ref(),
            &config.modes,
        ) {
            Ok(path) => finding.kept = Some(path),
            Err(e) => eprintln!("tern-difftest: {e}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Some(finding)
}

/// A program that could not even be set up (I/O) is reported as a
/// disagreement of its own, so it cannot go unnoticed.
fn setup_failure(seed: u64, what: &str) -> Finding {
    Finding {
        seed,
        diffs: vec![Difference {
            mode: "setup".into(),
            kind: DiffKind::Build,
            what: what.to_string(),
        }],
        minimized: None,
        kept: None,
    }
}

type Results = Vec<(Mode, Outcome)>;

/// Writes the program into `dir` and runs it in every mode.
fn run_program(
    runner: &Runner,
    dir: &Path,
    g: &Generated,
    config: &Config,
) -> Result<(Results, Vec<Difference>), String> {
    let path = dir.join(FILE);
    std::fs::write(&path, g.program.render())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let results = runner.run_all(dir, FILE, &config.modes);
    let diffs = compare(&results, &g.intent);
    Ok((results, diffs))
}

/// Shrinks the program while the same modes still disagree in the same way.
fn minimize_finding(
    config: &Config,
    runner: &Runner,
    dir: &Path,
    g: &Generated,
    diffs: &[Difference],
) -> (Program, Results) {
    let wanted: Vec<(String, DiffKind)> = diffs
        .iter()
        .map(|d| (d.mode.clone(), d.kind.clone()))
        .collect();
    let mut pred = |p: &Program| -> bool {
        let path = dir.join(FILE);
        if std::fs::write(&path, p.render()).is_err() || runner.check(dir, FILE).is_err() {
            return false;
        }
        let results = runner.run_all(dir, FILE, &config.modes);
        compare(&results, &g.intent)
            .iter()
            .any(|d| wanted.contains(&(d.mode.clone(), d.kind.clone())))
    };
    let (mut p, stats) = minimize(&g.program, &mut pred, config.max_tries);
    p.comment = vec![
        format!("tern-difftest program, seed {}, minimized", g.seed),
        format!("generated with intent: {}", g.intent.describe()),
    ];
    if config.progress {
        eprintln!(
            "[tern-difftest] seed {}: minimized to {} ({} tries, {} kept)",
            g.seed,
            describe_size(&p),
            stats.tries,
            stats.kept
        );
    }
    let _ = std::fs::write(dir.join(FILE), p.render());
    let results = runner.run_all(dir, FILE, &config.modes);
    (p, results)
}

/// Keeps a disagreeing program: `DIR/seed-S/` with `original.tern`, each
/// mode's `original.MODE.txt`, the same for `minimized`, and
/// `disagreements.txt`.
fn keep_finding(
    keep: &Path,
    g: &Generated,
    f: &Finding,
    results: &Results,
    min_results: Option<&Results>,
    modes: &[Mode],
) -> Result<PathBuf, String> {
    let dir = keep.join(format!("seed-{}", g.seed));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).map_err(|e| format!("cannot write {name}: {e}"))
    };
    write("original.tern", &g.program.render())?;
    for (m, o) in results {
        write(&format!("original.{}.txt", m.name()), &o.report(&m.name()))?;
    }
    if let (Some(text), Some(rs)) = (&f.minimized, min_results) {
        write("minimized.tern", text)?;
        for (m, o) in rs {
            write(&format!("minimized.{}.txt", m.name()), &o.report(&m.name()))?;
        }
    }
    let mut report = f.lines().join("\n");
    let modes: Vec<String> = modes.iter().map(|m| m.name()).collect();
    report.push_str(&format!(
        "\n\nintent: {}\nregenerate and rerun: cargo run --release -p tern-difftest -- --only {} --modes {} --keep DIR\n",
        g.intent.describe(),
        g.seed,
        modes.join(",")
    ));
    write("disagreements.txt", &report)?;
    Ok(dir)
}

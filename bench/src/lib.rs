//! The benchmark harness, apart from the product: `tern bench` (the
//! slice_pool vs reusable[] matrix, protocol: docs/benchmarks.md), which the
//! driver runs through [`main`], and the criterion benches of the pools
//! (`benches/`, with the slab baseline they compare against). It runs the
//! `tern` that called it as child processes, and valgrind when asked; the
//! product crates know nothing of either.
//!
//! Module map: `config` (options), `generate` (concrete programs from the
//! workload templates), `sample` (one measured child process), `checksum`
//! (all sides must agree), `stats` (median, ratio, geometric mean),
//! `report` (tables, CSV, SVG), `outdir` (a fresh output folder),
//! `machine` (machine description, fingerprints), `traces` (the recorded
//! allocation traces the `trace-*` workloads replay), `slab` (the slab
//! pool, a baseline of the criterion benches). This file runs the matrix: build
//! everything, then repetitions of interleaved samples.

pub mod checksum;
pub mod config;
pub mod generate;
pub mod interrupt;
pub mod machine;
pub mod outdir;
pub mod pools;
pub mod programs;
pub mod report;
pub mod sample;
pub mod slab;
pub mod stats;
pub mod traces;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use indicatif::{ProgressBar, ProgressStyle};

use checksum::Checksums;
use config::{Config, Metric, Mode, Parsed, Side, Workload, case_name, name};
use report::{Key, Results};

/// How `tern bench` ended badly: the exit status and the message.
#[derive(Debug)]
pub struct Failure {
    pub status: u8,
    pub message: String,
}

impl Failure {
    fn new(status: u8, message: String) -> Failure {
        Failure { status, message }
    }
}

/// What the driver that runs the harness knows and the harness must not
/// look up itself (it would find the build machine's files, not the ones the
/// driver uses).
pub struct Host {
    /// The runtime library `tern build` links, if it can be found.
    pub runtime_lib: Option<PathBuf>,
    /// The stdlib modules the driver compiles with: `(name, source)`.
    pub stdlib: Vec<(String, String)>,
}

/// Writes `text` to stdout. A failed write (a closed pipe: `tern bench |
/// head`) is ignored rather than a panic: the report is also in `--out`.
fn print_out(text: &str) {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Writes `text` to stderr, ignoring a failed write (as [`print_out`]).
fn print_err(text: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Entry point of `tern bench ARGS...`.
pub fn main(args: &[String], host: Host) -> Result<(), Failure> {
    let cfg = match config::parse(args) {
        Ok(Parsed::Run(c)) => c,
        Ok(Parsed::Info(text)) => {
            // Unlike the report (kept in `--out`), the help exists nowhere
            // else: a failed write is an error.
            use std::io::Write as _;
            let mut out = std::io::stdout().lock();
            return out
                .write_all(text.as_bytes())
                .and_then(|()| out.flush())
                .map_err(|e| Failure::new(1, format!("error: cannot write to stdout: {e}")));
        }
        Err(usage) => return Err(Failure::new(2, usage)),
    };
    if let Some(cpus) = &cfg.affinity {
        set_affinity(cpus).map_err(|e| Failure::new(2, format!("error: --affinity: {e}")))?;
    }
    if cfg.metric == Metric::Instructions
        && Command::new("valgrind").arg("--version").output().is_err()
    {
        return Err(Failure::new(
            2,
            "error: --metric instructions needs `valgrind` on PATH".into(),
        ));
    }
    let out = outdir::create(
        cfg.out.as_deref(),
        Path::new("bench-out"),
        std::time::SystemTime::now(),
    )
    .map_err(|e| Failure::new(2, format!("error: {e}")))?;
    interrupt::run_folder(out.clone());
    let bench =
        Bench::new(cfg, out.clone(), host).map_err(|e| Failure::new(1, format!("error: {e}")))?;
    let ok = bench
        .run()
        .map_err(|e| Failure::new(1, format!("error: {e}")))?;
    print_err(&format!("tern bench: everything is in {}\n", out.display()));
    if ok {
        Ok(())
    } else {
        Err(Failure::new(
            1,
            "error: some cases failed (see FAILED lines above)".into(),
        ))
    }
}

/// Pins this process (and so every child it starts) to `cpus`, every one
/// of which must be a CPU it may run on (the kernel would silently drop the
/// others from the mask).
fn set_affinity(cpus: &[usize]) -> Result<(), String> {
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut allowed: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 = this thread; `allowed` is valid for its size.
    if unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) }
        == 0
    {
        // SAFETY: every index is below 1024 = CPU_SETSIZE.
        let usable: Vec<usize> = (0..1024)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &allowed) })
            .collect();
        if let Some(c) = cpus.iter().find(|c| !usable.contains(c)) {
            let list: Vec<String> = usable.iter().map(usize::to_string).collect();
            return Err(format!(
                "CPU {c} is not one this process may run on ({})",
                list.join(",")
            ));
        }
    }
    // SAFETY: cpu_set_t is plain data; zeroed is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        // SAFETY: `c` < 1024 = CPU_SETSIZE, checked by the parser.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: pid 0 = this thread; `set` is valid for its size.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 {
        Ok(())
    } else {
        Err(format!(
            "sched_setaffinity({cpus:?}): {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// The trace a replay reads, and the builtin pool it needs.
#[derive(Clone, Debug)]
struct Input {
    /// The trace file (the replay's first argument).
    path: PathBuf,
    /// `TERN_POOL_BYTES` for the replay's runs, when its trace needs a
    /// larger builtin pool ([`traces::Footprint::builtin`]) than the one
    /// the environment asks for (or, without one, the runtime's default).
    pool_bytes: Option<i64>,
}

impl Input {
    /// The input of a replay of the trace at `path` with footprint `f`.
    fn new(path: PathBuf, f: traces::Footprint) -> Input {
        let env = std::env::var("TERN_POOL_BYTES").ok();
        Input {
            path,
            pool_bytes: pools::builtin_pool_override(f.builtin, env.as_deref()),
        }
    }
}

/// What one sample runs.
#[derive(Clone, Debug)]
enum Job {
    /// A built executable (a Tern side at a level, or the C baseline).
    Exe {
        workload: Workload,
        size: u32,
        side: Side,
        level: Option<u8>,
        exe: PathBuf,
        /// The trace a replay reads, if any.
        input: Option<Input>,
    },
    /// `tern run -O<level> --time SRC [-- INPUT]`.
    Jit {
        workload: Workload,
        size: u32,
        side: Side,
        level: u8,
        src: PathBuf,
        /// As for `Exe`.
        input: Option<Input>,
    },
}

impl Job {
    /// The trace a replay reads, if the job is one.
    fn trace(&self) -> Option<&Input> {
        let (Job::Exe { input, .. } | Job::Jit { input, .. }) = self;
        input.as_ref()
    }

    /// The file the program reads, if any (a trace replay's trace).
    fn input(&self) -> Option<&Path> {
        self.trace().map(|i| i.path.as_path())
    }

    /// Runs `cmd` in `dir` ([`Job::invocation`]'s), with the builtin pool
    /// a replay needs when it is not the default.
    fn place(&self, cmd: &mut Command, dir: Option<&Path>) {
        if let Some(d) = dir {
            cmd.current_dir(d);
        }
        if let Some(bytes) = self.trace().and_then(|i| i.pool_bytes) {
            cmd.env("TERN_POOL_BYTES", bytes.to_string());
        }
    }

    /// Where the program runs and its arguments: a replay runs in its
    /// trace's folder and names the trace by its file name alone (then
    /// `dry` for the dry run). The program reads its arguments into its
    /// pool, so a longer `--out` path would shift every placement after
    /// them, and with it the instruction count and the high-water mark.
    fn invocation(&self, dry: bool) -> (Option<&Path>, Vec<&std::ffi::OsStr>) {
        let Some(input) = self.input() else {
            return (None, Vec::new());
        };
        let args = input
            .file_name()
            .into_iter()
            .chain(dry.then_some(std::ffi::OsStr::new("dry")))
            .collect();
        (input.parent(), args)
    }

    fn case(&self) -> (Workload, u32, Side) {
        match self {
            Job::Exe {
                workload,
                size,
                side,
                ..
            }
            | Job::Jit {
                workload,
                size,
                side,
                ..
            } => (*workload, *size, *side),
        }
    }

    fn label(&self) -> String {
        match self {
            Job::Exe {
                workload,
                size,
                side,
                level,
                ..
            } => {
                let lv = level
                    .map(|l| format!("-O{l}"))
                    .unwrap_or_else(|| "cc-O2".into());
                format!("{} {} {lv} aot", case_name(*workload, *size), name(side))
            }
            Job::Jit {
                workload,
                size,
                side,
                level,
                ..
            } => {
                format!(
                    "{} {} -O{level} jit",
                    case_name(*workload, *size),
                    name(side)
                )
            }
        }
    }
}

struct Bench {
    cfg: Config,
    out: PathBuf,
    tern: PathBuf,
    host: Host,
    /// The launcher executables run under (`bench/workloads/c/launcher.c`),
    /// built with the programs when executables are measured by CPU time.
    launcher: std::cell::OnceCell<PathBuf>,
}

/// One row of `samples.csv`.
struct Row {
    rep: u32,
    warmup: bool,
    key: Key,
    value: f64,
    cpu_s: f64,
    wall_s: f64,
    compile_ms: Option<f64>,
    /// Peak resident memory of an executable's process, KiB (AOT samples
    /// run through the launcher).
    peak_rss_kib: Option<u64>,
    /// The side's pools' arena high-water marks, summed, bytes (AOT
    /// samples; the runtime's `TERN_POOL_STATS` report).
    pool_high_water: Option<u64>,
    /// For a replay, what the same replay allocating nothing measured
    /// (`value` is net of it).
    dry_value: Option<f64>,
    /// Instructions in `memset`/`memcpy`/`memmove` (the instruction metric;
    /// for a replay, net of the dry run's): what the figures without them
    /// leave out.
    mem_value: Option<f64>,
}

impl Bench {
    fn new(cfg: Config, out: PathBuf, host: Host) -> Result<Bench, String> {
        let tern = std::env::current_exe()
            .map_err(|e| format!("cannot locate the tern executable: {e}"))?;
        // Absolute: a replay runs in its trace's folder (`Job::invocation`).
        let out = std::path::absolute(&out)
            .map_err(|e| format!("cannot resolve `{}`: {e}", out.display()))?;
        Ok(Bench {
            cfg,
            out,
            tern,
            host,
            launcher: std::cell::OnceCell::new(),
        })
    }

    fn path(&self, parts: &[&str]) -> PathBuf {
        let mut p = self.out.clone();
        for part in parts {
            p.push(part);
        }
        if let Some(dir) = p.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        p
    }

    fn write(&self, parts: &[&str], text: &str) -> Result<PathBuf, String> {
        let p = self.path(parts);
        std::fs::write(&p, text).map_err(|e| format!("cannot write `{}`: {e}", p.display()))?;
        Ok(p)
    }

    /// Appends `text` to the file (made if missing), flushed at once: what
    /// a run has measured stays on disk if it is interrupted.
    fn append(&self, parts: &[&str], text: &str) -> Result<(), String> {
        use std::io::Write as _;
        use std::os::unix::fs::OpenOptionsExt as _;
        let p = self.path(parts);
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&p)
            .and_then(|mut f| f.write_all(text.as_bytes()))
            .map_err(|e| format!("cannot write `{}`: {e}", p.display()))
    }

    fn wants_jit(&self) -> bool {
        self.cfg.modes.iter().any(|m| *m != Mode::Aot)
    }

    /// Builds everything, runs the repetitions, writes the report. `Ok(false)`
    /// when some case failed (reported, and the rest still measured).
    fn run(&self) -> Result<bool, String> {
        let args: Vec<String> = std::env::args().collect();
        let command: Vec<String> = args.iter().map(|a| machine::shell_word(a)).collect();
        self.write(&["machine.txt"], &machine::describe(&command.join(" ")))?;
        self.write(
            &["fingerprints.txt"],
            &(machine::fingerprints(
                &self.tern,
                self.host.runtime_lib.as_deref(),
                &self.host.stdlib,
            ) + &traces::fingerprints()
                + &self
                    .cfg
                    .trace_file
                    .as_ref()
                    .map(|t| t.fingerprint(self.cfg.quick))
                    .unwrap_or_default()),
        )?;
        // The report says the run is not finished until it is, from before
        // the builds on: an interrupted run is marked whenever it stopped.
        // The files it names are there from then on too (empty until the
        // first sample: a run stopped during its builds named files that
        // did not exist).
        self.write(&["samples.csv"], samples_csv_header())?;
        self.write(&["logs", "samples.log"], "")?;
        self.write(&["report.txt"], NOT_FINISHED)?;
        // A stopped sample's files are not samples.
        for transient in [
            &["callgrind", "last.out"][..],
            &["logs", "last.rss"],
            &["logs", "last.stats"],
        ] {
            interrupt::remove_on_stop(self.path(transient));
        }
        let mut results = Results::default();
        let mut log = String::new();
        let jobs = self.build_all(&mut results, &mut log)?;
        self.write(&["logs", "build.log"], &log)?;
        print_err(&report::failure_list(&results));

        let mut checks = Checksums::default();
        let mut sample_log = String::new();
        // Samples and their log go to disk as they are taken, and the report
        // says the run is not finished until it is: an interrupted run keeps
        // what it measured, marked as such.
        let mut logged = 0;
        let per_job = match self.cfg.metric {
            Metric::Instructions => self
                .cfg
                .modes
                .iter()
                .filter(|m| **m != Mode::Aot)
                .count()
                .max(1) as u64,
            Metric::Cpu => 1,
        };
        let total = u64::from(self.cfg.reps + self.cfg.warmups) * jobs.len() as u64 * per_job;
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template(
                "{bar:40.cyan/blue} {pos}/{len} samples [{elapsed_precise}<{eta_precise}] {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        for rep in 0..self.cfg.warmups + self.cfg.reps {
            let warmup = rep < self.cfg.warmups;
            for job in &jobs {
                let (w, size, side) = job.case();
                bar.set_message(format!(
                    "{}{}",
                    if warmup { "warm-up " } else { "" },
                    job.label()
                ));
                if results.failed.contains_key(&(w, size, side)) {
                    bar.inc(per_job);
                    continue;
                }
                match self.sample(job, rep, warmup, &mut checks, &mut sample_log) {
                    Ok(new_rows) => {
                        if !warmup {
                            for row in &new_rows {
                                results.values.entry(row.key).or_default().push(row.value);
                                if let Some(kib) = row.peak_rss_kib {
                                    let mib = kib as f64 / 1024.0;
                                    results.peak_rss_mib.entry(row.key).or_default().push(mib);
                                }
                                if let Some(m) = row.mem_value {
                                    results
                                        .values_without_mem
                                        .entry(row.key)
                                        .or_default()
                                        .push(row.value - m);
                                }
                                if let Some(bytes) = row.pool_high_water {
                                    let kib = bytes as f64 / 1024.0;
                                    results
                                        .pool_high_water_kib
                                        .entry(row.key)
                                        .or_default()
                                        .push(kib);
                                }
                            }
                            // One JIT process reports one compile time,
                            // however many modes its sample fed.
                            if let Some((level, ms)) = new_rows
                                .iter()
                                .find_map(|r| Some((r.key.level, r.compile_ms?)))
                            {
                                results
                                    .compile_ms
                                    .entry((level, w, size, side))
                                    .or_default()
                                    .push(ms);
                            }
                        }
                        self.append(&["samples.csv"], &samples_csv(&new_rows, self.cfg.metric))?;
                    }
                    Err(why) => {
                        // `why` starts with the sample's label.
                        bar.suspend(|| print_err(&format!("FAILED {why}\n")));
                        let _ = writeln!(sample_log, "FAILED {why}");
                        results.failed.insert((w, size, side), why);
                    }
                }
                self.append(&["logs", "samples.log"], &sample_log[logged..])?;
                logged = sample_log.len();
                // The references as they are first seen: a stopped run
                // keeps them with its samples.
                self.write(&["checksums.txt"], &checks.listing())?;
                bar.inc(per_job);
            }
        }
        bar.finish_and_clear();
        self.write(&["checksums.txt"], &checks.listing())?;

        let mut text = String::new();
        let _ = writeln!(
            text,
            "tern bench: metric {}, calls {}, {} rep(s) after {} warm-up(s){}{}",
            name(&self.cfg.metric),
            name(&self.cfg.calls),
            self.cfg.reps,
            self.cfg.warmups,
            if self.cfg.sanitize {
                ", Tern sides --sanitize"
            } else {
                ""
            },
            if self.cfg.quick {
                ", --quick (not a measurement)"
            } else {
                ""
            }
        );
        if cfg!(debug_assertions) && self.wants_jit() {
            // A debug driver runs JIT code against its own debug
            // (unoptimized) runtime; executables link the embedded release
            // runtime whatever the driver's profile.
            text.push_str(
                "warning: this `tern` is a debug build; its in-process runtime is unoptimized and \
                 the JIT figures do not measure Tern (use `cargo run --release -- bench`)\n",
            );
        }
        text.push_str(&report::tern_over_c_tables(&self.cfg, &results));
        text.push_str(&report::ratio_tables(&self.cfg, &results));
        text.push_str(&report::absolute_tables(&self.cfg, &results));
        text.push_str(&report::without_mem_tables(&self.cfg, &results));
        if self.cfg.metric == Metric::Cpu {
            text.push_str(&report::compile_tables(&self.cfg, &results));
            text.push_str(&report::memory_tables(&self.cfg, &results));
        }
        text.push_str(&report::size_table(&results));
        let failures = report::failure_list(&results);
        if !failures.is_empty() {
            text.push('\n');
            text.push_str(&failures);
        }
        // The file first: a closed stdout (`tern bench | head`) must not
        // lose what was measured.
        self.write(&["report.txt"], &text)?;
        print_out(&text);
        self.write(&["ratios.svg"], &report::ratio_svg(&self.cfg, &results))?;
        Ok(results.failed.is_empty())
    }

    /// Generates and builds every program; returns the jobs of one
    /// repetition in their interleaved order (per case: every side at a
    /// level, executables first, then JIT runs, then C).
    fn build_all(&self, results: &mut Results, log: &mut String) -> Result<Vec<Job>, String> {
        let mut jobs = Vec::new();
        let aot = self.cfg.modes.contains(&Mode::Aot);
        if aot && self.cfg.metric == Metric::Cpu {
            // Without it the executables still run, and memory shows `-`.
            let src = self.write(&["src", "c", "launcher.c"], generate::LAUNCHER)?;
            let exe = self.path(&["bin", "launcher"]);
            let mut cmd = machine::c_compiler();
            cmd.arg("-O2").arg("-o").arg(&exe).arg(&src);
            if run_logged(&mut cmd, log).is_ok() {
                let _ = self.launcher.set(exe);
            }
        }
        let building = ProgressBar::new(self.cfg.cases().len() as u64);
        building.set_style(
            ProgressStyle::with_template("building {bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        for (w, size) in self.cfg.cases() {
            let stem = format!("{}-{size}", name(&w));
            building.set_message(stem.clone());
            let (input, arena) = match w.trace() {
                Some(t) => {
                    let p = self.path(&["traces", &format!("{t}.trace")]);
                    let f = match (&self.cfg.trace_file, w) {
                        (Some(file), Workload::TraceFile) => file.write(self.cfg.quick, &p)?,
                        _ => traces::write(t, self.cfg.quick, &p)?,
                    };
                    (Some(Input::new(p, f)), f.arena)
                }
                None => (None, pools::LIBRARY_ARENA_BYTES),
            };
            let mut exe_jobs = Vec::new();
            let mut jit_jobs = Vec::new();
            for &side in &self.cfg.sides {
                if side.is_c() {
                    continue;
                }
                let src_text = generate::tern_source(w, size, side, self.cfg.quick, arena);
                let src = self.write(&["src", &name(&side), &format!("{stem}.tern")], &src_text)?;
                for &level in &self.cfg.levels {
                    let dir = format!("{}-O{level}", name(&side));
                    let lv = format!("-O{level}");
                    let clif = self.path(&["clif", &dir, &format!("{stem}.clif")]);
                    let obj = self.path(&["obj", &dir, &format!("{stem}.o")]);
                    let exe = self.path(&["bin", &dir, &stem]);
                    // The executable only for the AOT mode: a JIT run
                    // needs no C compiler.
                    let steps: [(&Path, Option<&str>); 3] =
                        [(&clif, Some("clif")), (&obj, Some("obj")), (&exe, None)];
                    let mut failed = None;
                    for (target, emit) in steps.into_iter().take(if aot { 3 } else { 2 }) {
                        let mut cmd = Command::new(&self.tern);
                        cmd.arg("build").arg(&src).arg("-o").arg(target).arg(&lv);
                        cmd.args(self.cfg.calls.flags());
                        if self.cfg.sanitize {
                            cmd.arg("--sanitize");
                        }
                        if let Some(e) = emit {
                            cmd.arg("--emit").arg(e);
                        }
                        if let Err(e) = run_logged(&mut cmd, log) {
                            failed = Some(format!(
                                "`tern build {lv}{}` failed: {e}",
                                emit.map(|e| format!(" --emit {e}")).unwrap_or_default()
                            ));
                            break;
                        }
                    }
                    if let Some(why) = failed {
                        results.failed.entry((w, size, side)).or_insert(why);
                        continue;
                    }
                    let exe_bytes = std::fs::metadata(&exe).ok().map(|m| m.len());
                    results
                        .sizes
                        .insert((side, level, w, size), (exe_bytes, text_bytes(&obj)));
                    if aot {
                        exe_jobs.push(Job::Exe {
                            workload: w,
                            size,
                            side,
                            level: Some(level),
                            exe,
                            input: input.clone(),
                        });
                    }
                    if self.wants_jit() {
                        jit_jobs.push(Job::Jit {
                            workload: w,
                            size,
                            side,
                            level,
                            src: src.clone(),
                            input: input.clone(),
                        });
                    }
                }
            }
            // A program's C twin is built for the JIT modes too: their
            // Tern/C figures divide by its executable's.
            for side in [Side::C, Side::CZeroed] {
                if !self.cfg.sides.contains(&side) || !(aot || w.program().is_some()) {
                    continue;
                }
                self.write(&["src", "c", "common.h"], generate::C_HEADER)?;
                let src = self.write(
                    &["src", "c", &format!("{}.c", name(&w))],
                    generate::c_source(w),
                )?;
                let exe = self.path(&["bin", &name(&side), &stem]);
                let mut cmd = machine::c_compiler();
                cmd.args(generate::c_flags(w, size, side, self.cfg.quick))
                    .arg("-o")
                    .arg(&exe)
                    .arg(&src);
                match run_logged(&mut cmd, log) {
                    Ok(()) => {
                        let exe_bytes = std::fs::metadata(&exe).ok().map(|m| m.len());
                        results
                            .sizes
                            .insert((side, 2, w, size), (exe_bytes, text_bytes(&exe)));
                        exe_jobs.push(Job::Exe {
                            workload: w,
                            size,
                            side,
                            level: None,
                            exe,
                            input: input.clone(),
                        });
                    }
                    Err(e) => {
                        results
                            .failed
                            .insert((w, size, side), format!("`cc` failed: {e}"));
                    }
                }
            }
            jobs.extend(exe_jobs);
            jobs.extend(jit_jobs);
            building.inc(1);
            // What was built so far stays on disk if the run is stopped.
            self.write(&["logs", "build.log"], log)?;
        }
        building.finish_and_clear();
        Ok(jobs)
    }

    /// Runs one job once (twice for JIT under callgrind: total and exec
    /// are separate processes) and returns its rows. A replay runs a second
    /// time allocating nothing, and its rows are net of that run.
    fn sample(
        &self,
        job: &Job,
        rep: u32,
        warmup: bool,
        checks: &mut Checksums,
        log: &mut String,
    ) -> Result<Vec<Row>, String> {
        let mut rows = self.sample_once(job, rep, warmup, false, checks, log)?;
        if job.input().is_some() {
            let dry = self.sample_once(job, rep, warmup, true, checks, log)?;
            for (r, d) in rows.iter_mut().zip(&dry) {
                r.value -= d.value;
                r.dry_value = Some(d.value);
                if let (Some(m), Some(dm)) = (r.mem_value.as_mut(), d.mem_value) {
                    *m -= dm;
                }
            }
        }
        Ok(rows)
    }

    /// [`Self::sample`]'s run of the program (`dry`: the replay that
    /// allocates nothing, whose output is checked apart).
    fn sample_once(
        &self,
        job: &Job,
        rep: u32,
        warmup: bool,
        dry: bool,
        checks: &mut Checksums,
        log: &mut String,
    ) -> Result<Vec<Row>, String> {
        let (w, size, side) = job.case();
        let label = format!("{}{}", job.label(), if dry { " dry" } else { "" });
        // The dry runs of a case are checked against each other.
        let check_case = (w, if dry { 0 } else { size });
        let (dir, input) = job.invocation(dry);
        let mut rows = Vec::new();
        let row = |key: Key, value: f64, cpu_s: f64, wall_s: f64, compile_ms: Option<f64>| Row {
            rep,
            warmup,
            key,
            value,
            cpu_s,
            wall_s,
            compile_ms,
            peak_rss_kib: None,
            pool_high_water: None,
            dry_value: None,
            mem_value: None,
        };
        let key = |mode: Mode, level: u8| Key {
            mode,
            level,
            workload: w,
            size,
            side,
        };
        match job {
            Job::Exe { exe, level, .. } => {
                // CPU samples run through the launcher, which reports the
                // program's peak memory.
                let rss_file = self.path(&["logs", "last.rss"]);
                let stats_file = self.path(&["logs", "last.stats"]);
                let launcher = self
                    .launcher
                    .get()
                    .filter(|_| self.cfg.metric == Metric::Cpu);
                let mut cmd = match launcher {
                    Some(l) => {
                        let _ = std::fs::remove_file(&rss_file);
                        let mut c = Command::new(l);
                        c.arg(&rss_file).arg(exe);
                        c
                    }
                    None => Command::new(exe),
                };
                cmd.args(&input);
                job.place(&mut cmd, dir);
                let _ = std::fs::remove_file(&stats_file);
                cmd.env("TERN_POOL_STATS", &stats_file);
                let (o, ir, mem) = self.measure(cmd, None, &label, log)?;
                checks.check(check_case, side, &label, &o.stdout)?;
                // As for the JIT: a program that warns was not measured as
                // it runs normally (a dynamic linker's debug output, a
                // statistics file it could not write).
                if !o.stderr.trim().is_empty() {
                    return Err(format!("{label}: unexpected stderr: {:?}", o.stderr));
                }
                let peak = launcher.and_then(|_| {
                    std::fs::read_to_string(&rss_file)
                        .ok()?
                        .trim()
                        .parse::<u64>()
                        .ok()
                });
                // The C baseline (one build) stands in every level's AOT table.
                let levels = match level {
                    Some(l) => vec![*l],
                    None => self.cfg.levels.clone(),
                };
                let high_water = std::fs::read_to_string(&stats_file)
                    .ok()
                    .and_then(|r| sample::pool_high_water(&r, side));
                for l in levels {
                    rows.push(Row {
                        peak_rss_kib: peak,
                        pool_high_water: high_water,
                        mem_value: mem,
                        ..row(
                            key(Mode::Aot, l),
                            ir.unwrap_or(o.cpu_s),
                            o.cpu_s,
                            o.wall_s,
                            None,
                        )
                    });
                }
            }
            Job::Jit { src, level, .. } => {
                let mut cmd = Command::new(&self.tern);
                cmd.arg("run")
                    .arg(format!("-O{level}"))
                    .arg("--time")
                    .args(self.cfg.calls.flags());
                if self.cfg.sanitize {
                    cmd.arg("--sanitize");
                }
                cmd.arg(src);
                if !input.is_empty() {
                    cmd.arg("--").args(&input);
                }
                job.place(&mut cmd, dir);
                let modes: Vec<Mode> = self
                    .cfg
                    .modes
                    .iter()
                    .copied()
                    .filter(|m| *m != Mode::Aot)
                    .collect();
                let runs: Vec<(Vec<Mode>, Option<&str>)> = match self.cfg.metric {
                    Metric::Cpu => vec![(modes, None)],
                    Metric::Instructions => modes
                        .iter()
                        .map(|m| {
                            (
                                vec![*m],
                                if *m == Mode::JitExec {
                                    Some("tern_rt_main")
                                } else {
                                    None
                                },
                            )
                        })
                        .collect(),
                };
                for (modes, only) in runs {
                    // The copy keeps the replay's folder and pool. With
                    // TERN_TIME_CPU=1 the `--time` report adds `time:
                    // execution cpu` (src/run.rs).
                    let mut c = sample::copy(&cmd);
                    c.env("TERN_TIME_CPU", "1");
                    let (o, ir, mem) = self.measure(c, only, &label, log)?;
                    checks.check(check_case, side, &label, &o.stdout)?;
                    let sample::JitStderr { times, notes, rest } =
                        sample::parse_jit_times(&o.stderr);
                    // The compiler's notes go to the log, as a build's do.
                    log.push_str(&notes);
                    let t = times.ok_or_else(|| {
                        format!(
                            "{label}: `tern run --time` printed no complete time report: {:?}",
                            o.stderr
                        )
                    })?;
                    if !rest.trim().is_empty() {
                        return Err(format!("{label}: unexpected stderr: {rest:?}"));
                    }
                    let compile = t.front_ms + t.cranelift_ms;
                    for m in modes {
                        let (value, cpu, wall) = match (m, ir) {
                            (_, Some(ir)) => (ir, o.cpu_s, o.wall_s),
                            (Mode::JitExec, None) => {
                                (t.exec_cpu_ms / 1e3, t.exec_cpu_ms / 1e3, t.exec_ms / 1e3)
                            }
                            (_, None) => (o.cpu_s, o.cpu_s, o.wall_s),
                        };
                        let compile = if ir.is_none() { Some(compile) } else { None };
                        rows.push(Row {
                            mem_value: mem,
                            ..row(key(m, *level), value, cpu, wall, compile)
                        });
                    }
                }
            }
        }
        Ok(rows)
    }

    /// Runs `cmd` (under callgrind for the instruction metric), requires a
    /// clean exit, and returns the outcome, the instruction count and how
    /// many of those were in `memset`/`memcpy`/`memmove`.
    fn measure(
        &self,
        cmd: Command,
        only: Option<&str>,
        label: &str,
        log: &mut String,
    ) -> Result<(sample::Outcome, Option<f64>, Option<f64>), String> {
        let mut cmd = cmd;
        sample::settle_environment(&mut cmd);
        let (mut cmd, profile) = match self.cfg.metric {
            Metric::Cpu => (cmd, None),
            Metric::Instructions => {
                let p = self.path(&["callgrind", "last.out"]);
                (sample::under_callgrind(&cmd, &p, only), Some(p))
            }
        };
        let o = sample::run(&mut cmd).map_err(|e| format!("{label}: {e}"))?;
        let _ = writeln!(
            log,
            "{label}: status {} cpu {:.4}s wall {:.4}s",
            o.status, o.cpu_s, o.wall_s
        );
        if o.status != 0 {
            return Err(format!(
                "{label}: exit status {}; stderr: {}",
                o.status,
                o.stderr.trim()
            ));
        }
        let (ir, mem) = match profile {
            None => (None, None),
            Some(p) => {
                let text = std::fs::read_to_string(&p)
                    .map_err(|e| format!("{label}: no callgrind profile: {e}"))?;
                let _ = std::fs::remove_file(&p);
                let total = sample::callgrind_total(&text)
                    .ok_or_else(|| format!("{label}: callgrind profile without totals"))?;
                let mem = sample::callgrind_self(&text, sample::is_memset_or_memcpy);
                (Some(total as f64), Some(mem as f64))
            }
        };
        Ok((o, ir, mem))
    }
}

/// What `report.txt` says until the run has finished (scripts look for it).
const NOT_FINISHED: &str = "tern bench: this run did not finish; samples.csv and logs/samples.log hold the samples taken so far\n";

/// Runs a build step, appending the command and its output to `log`.
fn run_logged(cmd: &mut Command, log: &mut String) -> Result<(), String> {
    let shown = format!(
        "{} {}",
        cmd.get_program().to_string_lossy(),
        cmd.get_args()
            .map(|a| a.to_string_lossy())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let o = sample::run(cmd)?;
    let _ = writeln!(
        log,
        "$ {shown}\n{}{}(status {}, {:.3}s)",
        o.stdout, o.stderr, o.status, o.wall_s
    );
    if o.status == 0 {
        Ok(())
    } else {
        Err(o.stderr.lines().next().unwrap_or("no message").to_string())
    }
}

/// The machine-code bytes of an object or executable: the sum of its
/// `.text*` sections as `size -A` reports them.
fn text_bytes(file: &Path) -> Option<u64> {
    let o = Command::new("size").arg("-A").arg(file).output().ok()?;
    let text = String::from_utf8_lossy(&o.stdout);
    let sum = text
        .lines()
        .filter(|l| l.starts_with(".text"))
        .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    Some(sum)
}

/// The header line of `samples.csv`.
fn samples_csv_header() -> &'static str {
    "rep,warmup,workload,elem_bytes,side,level,mode,value,unit,cpu_s,wall_s,jit_compile_ms,peak_rss_kib,pool_high_water_bytes,dry_value,memset_memcpy_instructions\n"
}

/// The lines of `samples.csv` for `rows`.
fn samples_csv(rows: &[Row], metric: Metric) -> String {
    let unit = if metric == Metric::Cpu {
        "cpu_s"
    } else {
        "instructions"
    };
    // Seconds to the microsecond, as `cpu_s` (a value worked out from
    // milliseconds printed as `0.008667999999999999`); counts whole.
    let value = |v: f64| match metric {
        Metric::Cpu => format!("{v:.6}"),
        Metric::Instructions => v.to_string(),
    };
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        // A C sample stands in every level's table (one build, `cc-O2`):
        // it is one sample, written once.
        let again = r.key.side.is_c()
            && rows[..i].iter().any(|p| {
                p.rep == r.rep
                    && p.warmup == r.warmup
                    && Key {
                        level: r.key.level,
                        ..p.key
                    } == r.key
            });
        if again {
            continue;
        }
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{unit},{:.6},{:.6},{},{},{},{},{}",
            r.rep,
            r.warmup,
            name(&r.key.workload),
            r.key.size,
            name(&r.key.side),
            if r.key.side.is_c() {
                "cc-O2".to_string()
            } else {
                format!("O{}", r.key.level)
            },
            name(&r.key.mode),
            value(r.value),
            r.cpu_s,
            r.wall_s,
            r.compile_ms.map(|m| format!("{m:.3}")).unwrap_or_default(),
            r.peak_rss_kib.map(|k| k.to_string()).unwrap_or_default(),
            r.pool_high_water.map(|b| b.to_string()).unwrap_or_default(),
            r.dry_value.map(value).unwrap_or_default(),
            r.mem_value.map(|v| v.to_string()).unwrap_or_default()
        );
    }
    out
}

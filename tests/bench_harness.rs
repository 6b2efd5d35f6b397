//! Tests of `tern bench` itself (none of them times anything): argument
//! errors, `--out` never overwriting, a checksum mismatch failing its case
//! loudly, a tiny smoke run that writes every artifact, and the programs suite
//! (every program verified in Tern and C).

mod child_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tern() -> Command {
    Command::new(env!("CARGO_BIN_EXE_tern"))
}

/// A fresh scratch folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("tern-bench-harness-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn bench(args: &[&str], cwd: &Path, stdlib: Option<&Path>) -> Output {
    let mut cmd = tern();
    cmd.arg("bench").args(args).current_dir(cwd);
    match stdlib {
        Some(dir) => cmd.env("TERN_STDLIB", dir),
        None => cmd.env_remove("TERN_STDLIB"),
    };
    child_support::output(&mut cmd)
}

/// `tern bench ARGS --quick --reps 1 --warmups 0 --out DIR/run` run in
/// `dir`: its output, and the run's folder.
fn quick_run(dir: &Path, args: &[&str]) -> (Output, PathBuf) {
    quick_run_into(dir, "run", args)
}

/// [`quick_run`] with the run's folder at `dir/out`.
fn quick_run_into(dir: &Path, out: &str, args: &[&str]) -> (Output, PathBuf) {
    let out = dir.join(out);
    let mut all = args.to_vec();
    all.extend(["--quick", "--reps", "1", "--warmups", "0", "--out"]);
    all.push(out.to_str().unwrap());
    (bench(&all, dir, None), out)
}

/// [`quick_run`] that must succeed: its standard output and the run's
/// folder.
fn quick_ok(dir: &Path, args: &[&str]) -> (String, PathBuf) {
    let (o, out) = quick_run(dir, args);
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    (stdout, out)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The smallest real configuration: one quick case, builtin and C, AOT.
const TINY: &[&str] = &[
    "--quick",
    "--workloads",
    "fragmented",
    "--sizes",
    "8",
    "--modes",
    "aot",
    "--reps",
    "1",
    "--warmups",
    "0",
];

#[test]
fn bad_option_values_exit_2_with_a_clear_message_and_create_nothing() {
    let dir = scratch("bad-args");
    std::fs::write(dir.join("a-file"), "notes\n").unwrap();
    for (args, expected) in [
        (
            &["--sides", "builtin,bogus"][..],
            "invalid value 'bogus' for '--sides <SIDES>'",
        ),
        (
            &["--sizes", "16"][..],
            "`16` is not an element size (use 8 or 128)",
        ),
        (
            &["--levels", "O3"][..],
            "`O3` is not an optimization level (use 0, 1 or 2)",
        ),
        (
            &["--modes", "jit"][..],
            "invalid value 'jit' for '--modes <MODES>'",
        ),
        (
            &["--metric", "cycles"][..],
            "invalid value 'cycles' for '--metric <METRIC>'",
        ),
        (
            &["--affinity", "a-b"][..],
            "`a-b` is not a CPU list (e.g. `1`, `0,1` or `0-1`)",
        ),
        (
            &["--trace-file", "no-such.trace"][..],
            "error: --trace-file no-such.trace: cannot read it: ",
        ),
        (
            &["--affinity", "0,1023"][..],
            "error: --affinity: CPU 1023 is not one this process may run on (",
        ),
        (
            &["--out", "a-file/run"][..],
            "cannot create `a-file`: `a-file` is a file, not a folder",
        ),
        (
            &["--suite", "programs", "--calls", "boundary"][..],
            "error: `--calls boundary` keeps each matrix workload's `exercise` out of line; the programs suite has none",
        ),
    ] {
        let o = bench(args, &dir, None);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
    assert!(
        !dir.join("bench-out").exists(),
        "an argument error must not create an output folder"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn help_names_the_default_and_exits_0() {
    let o = child_support::output(tern().args(["bench", "--help"]));
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(
        out.contains("The default (O2 only, 3 repetitions, 1 warm-up)"),
        "{out}"
    );
    assert!(out.contains("--metric <METRIC>"), "{out}");
}

#[test]
fn an_existing_out_folder_is_never_overwritten() {
    let dir = scratch("out-exists");
    let out = dir.join("earlier-run");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("report.txt"), "earlier figures\n").unwrap();
    let o = bench(
        &[
            TINY,
            &["--sides", "builtin", "--out", out.to_str().unwrap()],
        ]
        .concat(),
        &dir,
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr),
        format!(
            "error: --out `{}` already exists; tern bench never overwrites an earlier run (choose a new folder)\n",
            out.display()
        )
    );
    assert_eq!(
        std::fs::read_to_string(out.join("report.txt")).unwrap(),
        "earlier figures\n"
    );
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_checksum_mismatch_fails_the_case_loudly() {
    let dir = scratch("mismatch");
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bench_harness/wrong_placement");
    let out = dir.join("run");
    let o = bench(
        &[
            TINY,
            &["--sides", "library", "--out", out.to_str().unwrap()],
        ]
        .concat(),
        &dir,
        Some(&fake),
    );
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(1), "{stdout}\n{stderr}");
    let failed = stderr
        .lines()
        .find(|l| l.starts_with("FAILED fragmented/8 library -O2 aot: placement checksum "))
        .unwrap_or_else(|| panic!("no FAILED line: {stderr}"));
    assert!(
        failed.ends_with(" printed by fragmented/8 builtin -O2 aot"),
        "{failed}"
    );
    assert!(
        stderr.ends_with("error: some cases failed (see FAILED lines above)\n"),
        "{stderr}"
    );
    assert!(
        stdout.contains("\nfragmented/8          FAIL\ngeomean                  -\n"),
        "{stdout}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_tiny_run_writes_every_artifact() {
    let dir = scratch("smoke");
    let out = dir.join("run");
    let o = bench(
        &[
            TINY,
            &["--sides", "builtin,c", "--out", out.to_str().unwrap()],
        ]
        .concat(),
        &dir,
        None,
    );
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.starts_with(
        "tern bench: metric cpu, calls natural, 1 rep(s) after 0 warm-up(s), --quick (not a measurement)\n"
    ));
    assert!(stdout.contains("Ratios side/builtin (CPU time, median), AOT (executable), -O2:\ncase                     c\nfragmented/8 "));
    assert!(stdout.contains(
        "\nPeak resident memory (MiB, median), AOT (executable), -O2:\ncase               builtin         c\nfragmented/8 "
    ), "{stdout}");
    for file in [
        "report.txt",
        "samples.csv",
        "checksums.txt",
        "machine.txt",
        "fingerprints.txt",
        "ratios.svg",
        "logs/build.log",
        "logs/samples.log",
        "src/builtin/fragmented-8.tern",
        "src/c/fragmented.c",
        "src/c/common.h",
        "src/c/launcher.c",
        "bin/launcher",
        "clif/builtin-O2/fragmented-8.clif",
        "bin/builtin-O2/fragmented-8",
        "bin/c/fragmented-8",
    ] {
        assert!(out.join(file).is_file(), "missing {file}");
    }
    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(
        lines[0],
        "rep,warmup,workload,elem_bytes,side,level,mode,value,unit,cpu_s,wall_s,jit_compile_ms,peak_rss_kib,pool_high_water_bytes,dry_value,memset_memcpy_instructions"
    );
    // Every executable sample has its peak memory, in KiB: more than the
    // launcher's own few hundred, far less than the driver's tens of MiB;
    // the builtin side its pool's high-water mark (C has no pool).
    // Not a replay, and CPU time: no dry run, no memset/memcpy count.
    for line in &lines[1..] {
        let fields: Vec<&str> = line.rsplit(',').take(4).collect();
        assert_eq!((fields[0], fields[1]), ("", ""), "{line}");
        let kib: u64 = fields[3].parse().expect(line);
        assert!((500..64 * 1024).contains(&kib), "{line}");
        match line.contains(",builtin,") {
            true => assert!(fields[2].parse::<u64>().expect(line) > 0, "{line}"),
            false => assert_eq!(fields[2], "", "{line}"),
        }
    }
    assert_eq!(lines.len(), 3, "{csv}");
    assert!(
        lines[1].starts_with("0,false,fragmented,8,builtin,O2,aot,"),
        "{csv}"
    );
    assert!(
        lines[2].starts_with("0,false,fragmented,8,c,cc-O2,aot,"),
        "{csv}"
    );
    let sums = std::fs::read_to_string(out.join("checksums.txt")).unwrap();
    assert!(sums.starts_with("fragmented/8 contents "), "{sums}");
    assert!(sums.contains("\nfragmented/8 placement "), "{sums}");
    let clif = std::fs::read_to_string(out.join("clif/builtin-O2/fragmented-8.clif")).unwrap();
    assert!(clif.contains("function"), "{clif}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `tern bench` of TINY's case with far more repetitions than a test waits
/// for, run in `dir` into `out` (its stderr to `stderr`): the child, once
/// `samples.csv` has `lines` lines (or 300 s have passed), and how many it
/// had then.
fn long_run(
    dir: &Path,
    out: &Path,
    stderr: std::process::Stdio,
    lines: usize,
) -> (std::process::Child, usize) {
    let mut args: Vec<&str> = TINY.to_vec();
    let reps = args.iter().position(|a| *a == "--reps").unwrap();
    args[reps + 1] = "100000";
    args.extend(["--sides", "builtin,c", "--out"]);
    args.push(out.to_str().unwrap());
    // Returned: the caller stops it and waits for it.
    #[allow(clippy::zombie_processes)]
    let child = tern()
        .arg("bench")
        .args(&args)
        .current_dir(dir)
        .env_remove("TERN_STDLIB")
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let csv = out.join("samples.csv");
    let started = std::time::Instant::now();
    loop {
        let have = std::fs::read_to_string(&csv).map_or(0, |t| t.lines().count());
        if have >= lines || started.elapsed().as_secs() > 300 {
            return (child, have);
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Samples go to disk as they are taken: a run stopped half-way (killed,
/// here) keeps what it measured, and its report says it did not finish.
#[test]
fn an_interrupted_run_keeps_its_samples() {
    let dir = scratch("interrupted");
    let out = dir.join("run");
    let csv = out.join("samples.csv");
    let (mut child, samples) = long_run(&dir, &out, std::process::Stdio::null(), 5);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(samples >= 5, "no samples written while the run went on");
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("rep,warmup,workload,"));
    for line in lines {
        assert!(line.contains(",fragmented,8,"), "{line}");
    }
    assert_eq!(
        std::fs::read_to_string(out.join("report.txt")).unwrap(),
        "tern bench: this run did not finish; samples.csv and logs/samples.log hold the samples taken so far\n"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A run without the AOT mode builds no executable, so it needs no C
/// compiler (`CC` names none here); its sizes table says so.
#[test]
fn a_jit_only_run_needs_no_c_compiler() {
    let dir = scratch("jit-only");
    let out = dir.join("run");
    let mut args: Vec<&str> = TINY.to_vec();
    let modes = args.iter().position(|a| *a == "--modes").unwrap();
    args[modes + 1] = "jit-exec";
    args.extend(["--sides", "builtin", "--out", out.to_str().unwrap()]);
    let o = child_support::output(
        tern()
            .arg("bench")
            .args(&args)
            .current_dir(&dir)
            .env_remove("TERN_STDLIB")
            .env("CC", "/nonexistent/cc"),
    );
    let stdout = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", text(&o.stderr));
    assert!(
        stdout.contains("\nbuiltin  -O2    fragmented/8              -"),
        "{stdout}"
    );
    assert!(!out.join("bin/builtin-O2/fragmented-8").exists());
    let _ = std::fs::remove_dir_all(dir);
}

/// A sample that writes to stderr fails its case in AOT as in the JIT (here
/// the dynamic linker's statistics, which `LD_DEBUG` asks every process
/// for), and the allocator environment every side ran with is recorded.
#[test]
fn stray_stderr_fails_an_executable_and_the_malloc_environment_is_recorded() {
    let dir = scratch("stray-stderr");
    let out = dir.join("run");
    let o = child_support::output(
        tern()
            .arg("bench")
            .args(TINY)
            .args(["--sides", "builtin,c", "--out", out.to_str().unwrap()])
            .current_dir(&dir)
            .env_remove("TERN_STDLIB")
            .env("LD_DEBUG", "statistics")
            .env("MALLOC_PERTURB_", "170")
            // cargo's own, for the test binary
            .env_remove("LD_LIBRARY_PATH"),
    );
    let all = text(&o.stdout) + &text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{all}");
    for side in ["builtin -O2", "c cc-O2"] {
        assert!(
            all.contains(&format!(
                "FAILED fragmented/8 {side} aot: unexpected stderr: "
            )),
            "{all}"
        );
    }
    let machine = std::fs::read_to_string(out.join("machine.txt")).unwrap();
    assert!(
        machine.contains("\nallocator environment: MALLOC_PERTURB_=170\n"),
        "{machine}"
    );
    let _ = std::fs::remove_dir_all(dir);
}

/// A run stopped before its folder exists (blocked reading a trace from a
/// FIFO nobody writes) says so instead of naming a folder.
#[test]
fn a_run_stopped_before_its_folder_names_none() {
    let dir = scratch("stopped-early");
    let fifo = dir.join("trace.fifo");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let out = dir.join("run");
    #[allow(clippy::zombie_processes)]
    let child = tern()
        .arg("bench")
        .args(["--trace-file", fifo.to_str().unwrap(), "--out"])
        .arg(&out)
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The signal watcher is a thread of its own: once it runs, the signal
    // is the harness's to handle.
    let tasks = format!("/proc/{}/task", child.id());
    let started = std::time::Instant::now();
    while std::fs::read_dir(&tasks).map_or(0, |d| d.count()) < 2 {
        assert!(
            started.elapsed() < child_support::PATIENCE,
            "no watcher thread"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // SAFETY: signals the child this test started.
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(sent, 0);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(143));
    assert_eq!(
        text(&o.stderr),
        "\ntern bench: stopped by signal 15 before the run folder was made; nothing was measured\n"
    );
    assert!(!out.exists());
    let _ = std::fs::remove_dir_all(dir);
}

/// SIGTERM (as `timeout` or `kill` sends it to the harness alone) stops a
/// run cleanly: its status says so, its samples and the unfinished mark
/// stay, and no sample's files are left half written.
#[test]
fn a_terminated_run_stops_its_child_and_says_so() {
    let dir = scratch("terminated");
    let out = dir.join("run");
    let (child, samples) = long_run(&dir, &out, std::process::Stdio::piped(), 3);
    // SAFETY: signals the child this test started.
    let sent = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    assert_eq!(sent, 0);
    let o = child.wait_with_output().unwrap();
    assert!(samples >= 3, "no samples written while the run went on");
    assert_eq!(o.status.code(), Some(143));
    assert!(
        text(&o.stderr).ends_with(&format!(
            "tern bench: stopped by signal 15; the run folder {} keeps the samples taken so far (report.txt says the run did not finish)\n",
            out.display()
        )),
        "{}",
        text(&o.stderr)
    );
    assert!(
        std::fs::read_to_string(out.join("report.txt"))
            .unwrap()
            .contains("did not finish")
    );
    // The references seen so far are kept with the samples.
    let sums = std::fs::read_to_string(out.join("checksums.txt")).unwrap();
    assert!(sums.starts_with("fragmented/8 contents "), "{sums}");
    for transient in ["logs/last.rss", "logs/last.stats"] {
        assert!(!out.join(transient).exists(), "{transient} left behind");
    }
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn closed_output_pipes_keep_the_report_and_the_exit_status() {
    // `tern bench ... 2>&1 | head -c0`: every write to stdout and stderr
    // fails with EPIPE. The run must still finish with status 0 and leave
    // its report in `--out` (a panic on the table's write lost it).
    let dir = scratch("closed_pipes");
    let out = dir.join("run");
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let status = tern()
        .arg("bench")
        .args(TINY)
        .args(["--sides", "builtin,c", "--out", out.to_str().unwrap()])
        .current_dir(&dir)
        .env_remove("TERN_STDLIB")
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let report = std::fs::read_to_string(out.join("report.txt")).unwrap();
    assert!(report.contains("\ngeomean "), "{report}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// [`quick_run`] of a trace replay `args` on the builtin, library and C
/// sides, AOT: it must succeed with `case` the one row of its ratio table.
/// The run's folder.
fn quick_replay(dir: &Path, args: &[&str], case: &str) -> PathBuf {
    let mut all = args.to_vec();
    all.extend(["--sides", "builtin,library,c", "--modes", "aot"]);
    let (stdout, out) = quick_ok(dir, &all);
    let table = "Ratios side/builtin (CPU time, median), AOT (executable), -O2:\n\
                 case               library         c\n";
    assert!(stdout.contains(&format!("{table}{case} ")), "{stdout}");
    out
}

/// A trace replay runs on every side against the same trace, each sample
/// twice (the replay, then the same replay allocating nothing), its figure
/// net of the second; every side prints the same checksum, and the dry runs
/// agree with each other.
#[test]
fn a_trace_replay_is_net_of_its_dry_run_and_every_side_agrees() {
    let dir = scratch("trace");
    let out = quick_replay(&dir, &["--workloads", "trace-sqlite"], "trace-sqlite/1");
    // The first twentieth of the trace, decompressed into the run's folder.
    let trace = std::fs::read(out.join("traces/sqlite.trace")).unwrap();
    assert_eq!(&trace[..8], b"TERNTRC1");
    let records = u32::from_le_bytes(trace[8..12].try_into().unwrap());
    assert_eq!(records, 444_339 / 20);
    assert_eq!(trace.len(), 16 + 8 * records as usize);
    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 3, "{csv}");
    for row in &rows {
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f[2..4], ["trace-sqlite", "1"], "{row}");
        let dry: f64 = f[14].parse().expect(row);
        assert!(dry > 0.0, "{row}");
        assert_eq!(f[15], "", "{row}");
    }
    let sums = std::fs::read_to_string(out.join("checksums.txt")).unwrap();
    let peak = format!("dry {}", 243_216);
    assert!(
        sums.starts_with(&format!(
            "trace-sqlite/1 dry contents {peak} (first seen: trace-sqlite/1 builtin -O2 aot dry)\n"
        )),
        "{sums}"
    );
    assert!(sums.contains("\ntrace-sqlite/1 contents "), "{sums}");
    assert!(
        sums.contains(&format!("\ntrace-sqlite/1 placement {records} 243216 ")),
        "{sums}"
    );
    for file in [
        "src/builtin/trace-sqlite-1.tern",
        "src/library/trace-sqlite-1.tern",
        "src/c/trace-sqlite.c",
    ] {
        assert!(out.join(file).is_file(), "missing {file}");
    }
    let prints = std::fs::read_to_string(out.join("fingerprints.txt")).unwrap();
    assert!(prints.contains("  trace sqlite.trace.gz\n"), "{prints}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The user's environment reaches the samples only as meant: a
/// `TERN_POOL_STATS` report of the user's stays as it was (every JIT sample
/// overwrote it with its own), a relative `TERN_STDLIB` names the same
/// folder in the trace replays' own folder (their JIT samples failed), and
/// CPU figures in `samples.csv` are whole microseconds (a value worked out
/// from milliseconds read `0.008667999999999999`).
#[test]
fn the_users_environment_reaches_the_samples_only_as_meant() {
    let dir = scratch("environment");
    let stdlib = dir.join("mystd");
    std::fs::create_dir(&stdlib).unwrap();
    for entry in std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("stdlib")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), stdlib.join(entry.file_name())).unwrap();
    }
    let stats = dir.join("mine.stats");
    std::fs::write(&stats, "builtin 123\nlibrary 456\n").unwrap();
    let out = dir.join("run");
    let mut cmd = tern();
    cmd.arg("bench")
        .args(["--workloads", "trace-sqlite,fragmented", "--sizes", "8"])
        .args(["--sides", "builtin,library", "--modes", "jit-exec"])
        .args(["--quick", "--reps", "1", "--warmups", "0", "--out"])
        .arg(&out)
        .current_dir(&dir)
        .env("TERN_STDLIB", "mystd")
        .env("TERN_POOL_STATS", &stats);
    let o = child_support::output(&mut cmd);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}{}",
        text(&o.stdout),
        text(&o.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&stats).unwrap(),
        "builtin 123\nlibrary 456\n"
    );
    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert_eq!(rows.len(), 4, "{csv}");
    for row in rows {
        let f: Vec<&str> = row.split(',').collect();
        for value in [f[7], f[14]].into_iter().filter(|v| !v.is_empty()) {
            let decimals = value.split_once('.').map_or(0, |(_, d)| d.len());
            assert!(decimals <= 6 && value.parse::<f64>().is_ok(), "{row}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `--sides c-zeroed` (not in the default set) replays a trace in C with
/// Tern's zero fill: its own executable, built from the same source with
/// `-DZERO_FILL`, printing the checksum every other side prints; the
/// programs suite refuses it.
#[test]
fn c_zeroed_is_the_c_replay_held_to_the_zero_fill() {
    let dir = scratch("c-zeroed");
    let (stdout, out) = quick_ok(
        &dir,
        &[
            "--workloads",
            "trace-git",
            "--sides",
            "c,c-zeroed",
            "--modes",
            "aot",
        ],
    );
    let table = "Ratios side/builtin (CPU time, median), AOT (executable), -O2:\n\
                 case                     c  c-zeroed\n\
                 trace-git/1 ";
    assert!(stdout.contains(table), "{stdout}");
    let log = std::fs::read_to_string(out.join("logs/build.log")).unwrap();
    let built: Vec<&str> = log.lines().filter(|l| l.starts_with("$ cc ")).collect();
    let c = built.iter().find(|l| l.contains("/bin/c/trace-git-1 "));
    let zeroed = built
        .iter()
        .find(|l| l.contains("/bin/c-zeroed/trace-git-1 "));
    assert!(!c.expect(&log).contains("-DZERO_FILL"), "{log}");
    assert!(zeroed.expect(&log).contains(" -DZERO_FILL "), "{log}");
    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    assert_eq!(csv.matches(",c-zeroed,cc-O2,aot,").count(), 1, "{csv}");
    let o = bench(&["--suite", "programs", "--sides", "c-zeroed"], &dir, None);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        text(&o.stderr).trim_end(),
        "error: the programs suite has the sides builtin (Tern) and c, not `c-zeroed`"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Where the run's folder is changes no replay's placements: the replay runs
/// in its trace's folder and names the trace by its file name, so the
/// arguments it reads into its pool are the same for every `--out`. (They
/// were not: a longer path moved the builtin pool's high-water mark.)
#[test]
fn a_replays_placements_do_not_depend_on_the_run_folder() {
    let dir = scratch("trace-out");
    let high_water = |out: &str| {
        let (o, out) = quick_run_into(
            &dir,
            out,
            &[
                "--workloads",
                "trace-python",
                "--sides",
                "builtin",
                "--modes",
                "aot",
            ],
        );
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
        let row = csv.lines().nth(1).expect(&csv).to_string();
        let f: Vec<&str> = row.split(',').collect();
        assert_eq!(f[2..5], ["trace-python", "1", "builtin"], "{row}");
        f[13].parse::<u64>().expect(&row)
    };
    let near = high_water("a");
    let far = high_water("a-folder-whose-name-is-longer-than-any-allocation-granule/run");
    assert_eq!(near, far);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes a `TERNTRC1` trace of `ids` objects and `(op, id, size)` records
/// to `path`; returns its bytes.
fn write_trace(path: &Path, ids: u32, records: &[(u32, u32, u32)]) -> Vec<u8> {
    let mut t = b"TERNTRC1".to_vec();
    t.extend((records.len() as u32).to_le_bytes());
    t.extend(ids.to_le_bytes());
    for (op, id, size) in records {
        t.extend((op << 30 | id).to_le_bytes());
        t.extend(size.to_le_bytes());
    }
    std::fs::write(path, &t).unwrap();
    t
}

/// A trace that keeps more live than the default pools hold (5 GiB: the
/// builtin pool's default is 4 GiB, the library's arena 1 GiB) replays on
/// every side, in the JIT too: `tern bench` sizes the library's arena from
/// the trace (twice its peak and its largest object, 13 GiB here) and sets
/// `TERN_POOL_BYTES` for the builtin's runs. Reserved address space only:
/// each object is touched at its two ends.
#[test]
fn a_trace_larger_than_the_default_pools_replays_in_every_mode() {
    let dir = scratch("trace-large");
    let big = 5 << 29; // 2.5 GiB
    // `--quick` keeps the first twentieth: the two large objects.
    let mut records = vec![(0, 0, big), (0, 1, big)];
    for id in 2..40 {
        records.push((0, id, 8 * id));
    }
    let file = dir.join("large.trace");
    write_trace(&file, 40, &records);
    let (_, out) = quick_ok(
        &dir,
        &[
            "--trace-file",
            file.to_str().unwrap(),
            "--sides",
            "builtin,library,c",
            "--modes",
            "aot,jit-exec",
        ],
    );
    let src = std::fs::read_to_string(out.join("src/library/trace-file-1.tern")).unwrap();
    assert!(
        src.contains("    var ctx = slice_pool::new(13958643712);\n"),
        "{src}"
    );
    let sums = std::fs::read_to_string(out.join("checksums.txt")).unwrap();
    assert!(
        sums.contains("\ntrace-file/1 placement 2 5368709120 "),
        "{sums}"
    );
    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    // builtin, library and C in AOT; builtin and library in the JIT.
    assert_eq!(csv.lines().skip(1).count(), 5, "{csv}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A trace of the user's own (`--trace-file`) replays as the workload
/// `trace-file` on every side, each side printing the same checksum; the run
/// keeps the trace it replayed and the file's fingerprint.
#[test]
fn a_trace_file_of_ones_own_replays_on_every_side() {
    let dir = scratch("trace-file");
    // 40 objects allocated, grown, shrunk and freed in an interleaved order.
    let mut records: Vec<(u32, u32, u32)> = Vec::new();
    for id in 0..40 {
        records.push((0, id, 8 + 24 * (id % 7)));
        if id % 3 == 0 {
            records.push((2, id, 300 + id));
        }
        if id % 2 == 1 {
            records.push((1, id - 1, 0));
        }
    }
    for id in (1..40).step_by(2) {
        records.push((2, id, 4));
    }
    let file = dir.join("mine.trace");
    let t = write_trace(&file, 40, &records);
    let out = quick_replay(
        &dir,
        &["--trace-file", file.to_str().unwrap()],
        "trace-file/1",
    );
    // `--quick` keeps the first twentieth of the records.
    let kept = std::fs::read(out.join("traces/file.trace")).unwrap();
    let n = records.len() / 20;
    assert_eq!(&kept[8..12], &(n as u32).to_le_bytes());
    assert_eq!(&kept[12..], &t[12..16 + 8 * n]);
    let sums = std::fs::read_to_string(out.join("checksums.txt")).unwrap();
    assert!(sums.contains("\ntrace-file/1 contents "), "{sums}");
    let prints = std::fs::read_to_string(out.join("fingerprints.txt")).unwrap();
    assert!(
        prints.contains(&format!("  trace file {}\n", file.display())),
        "{prints}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Each `--calls` mode builds and runs every side, AOT and JIT; the
/// compiler's notes (`--calls inline` stops at the inliner's budget in
/// `slice_pool_pure`) go to the logs, not into a JIT sample's stderr, which
/// must otherwise be empty.
#[test]
fn every_call_mode_runs_and_is_recorded() {
    let dir = scratch("calls");
    for calls in ["boundary", "inline"] {
        let out = dir.join(calls);
        let o = bench(
            &[
                "--quick",
                "--workloads",
                "fragmented",
                "--sizes",
                "8",
                "--reps",
                "1",
                "--warmups",
                "0",
                "--modes",
                "aot,jit-exec",
                "--sides",
                "builtin,library,pure",
                "--calls",
                calls,
                "--out",
                out.to_str().unwrap(),
            ],
            &dir,
            None,
        );
        let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
        assert_eq!(o.status.code(), Some(0), "{stdout}\n{stderr}");
        let samples = std::fs::read_to_string(out.join("logs/samples.log")).unwrap();
        assert_eq!(
            samples.contains("note: inlining stopped at its budget"),
            calls == "inline",
            "{samples}"
        );
        assert!(
            stdout.starts_with(&format!("tern bench: metric cpu, calls {calls}, ")),
            "{stdout}"
        );
        let report = std::fs::read_to_string(out.join("report.txt")).unwrap();
        assert!(report.contains(&format!("calls {calls}")), "{report}");
        let log = std::fs::read_to_string(out.join("logs/build.log")).unwrap();
        let flag = if calls == "boundary" {
            "--keep-call exercise"
        } else {
            "--inline all"
        };
        assert!(log.contains(flag), "{log}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_programs_suite_verifies_every_program_against_its_c_twin() {
    let dir = scratch("programs");
    // Every sample of both sides printed its program's verified result.
    let (stdout, out) = quick_ok(&dir, &["--suite", "programs", "--modes", "aot,jit-exec"]);
    let table = "Tern/C (CPU time, median; C is `cc -O2`), Tern at -O2:\n\
                 case                   aot  jit-exec\n";
    let at = stdout.find(table).unwrap_or_else(|| panic!("{stdout}"));
    let rows: Vec<&str> = stdout[at + table.len()..].lines().take(14).collect();
    let names = [
        "fannkuch",
        "queens",
        "sieve",
        "permute",
        "towers",
        "list",
        "storage",
        "bounce",
        "richards",
        "json",
        "binary-trees",
        "collatz",
        "matmul",
        "geomean",
    ];
    for (row, name) in rows.iter().zip(names) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells.len(), 3, "{row}");
        assert_eq!(cells[0], name, "{row}");
        for c in &cells[1..] {
            let r: f64 = c.parse().unwrap_or_else(|_| panic!("{row}"));
            assert!(r > 0.0, "{row}");
        }
    }
    // The C twin is built once and runs in the AOT samples only.
    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 13 * 3, "{csv}");
    let sums = std::fs::read_to_string(out.join("checksums.txt")).unwrap();
    assert!(
        sums.contains("sieve contents sieve: 669 primes, ok (first seen: sieve builtin -O2 aot)\n"),
        "{sums}"
    );
    for file in ["src/builtin/sieve-0.tern", "src/c/sieve.c", "bin/c/sieve-0"] {
        assert!(out.join(file).is_file(), "missing {file}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

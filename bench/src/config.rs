//! The options of `tern bench` and their validation. Bad values are usage
//! errors: clap prints what is wrong and the command exits with status 2.

use std::path::PathBuf;

use clap::{Parser, ValueEnum};

/// The most `--reps` or `--warmups` a run takes (their sum counts a
/// sample's runs in a `u32`).
const MAX_REPS: u32 = 1_000_000;

/// A workload template in `bench/workloads/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum)]
pub enum Workload {
    /// Many slices grown one element at a time, interleaved.
    Append,
    /// Fill, free a pattern of holes, refill at other sizes.
    Fragmented,
    /// Slices resized up and down at random.
    Resize,
    /// An application: adjacency lists of a random graph grown with spare
    /// capacity, then a breadth-first search (not in the default set).
    Graph,
    /// `graph` with every list grown to exactly its length (the cost of no
    /// spare capacity; not in the default set).
    GraphExact,
    /// An application: a factorial in a growing vector of limbs (not in
    /// the default set).
    Bignum,
    /// An application: binary trees of small node slices, built, walked and
    /// freed (the benchmarks-game shape; not in the default set).
    Binarytrees,
    /// An application: records encoded into a growing byte buffer and
    /// decoded back (not in the default set).
    Bytebuf,
    /// An application: rounds of similar strings kept and dropped together;
    /// the library sides drop them with one `reset` (not in the default set).
    Strings,
    /// `strings` with every side freeing each string (not in the default set).
    StringsFree,
    /// `strings` with the builtin side's strings carved from a bump `arena`
    /// and dropped by its `reset` (not in the default set).
    StringsArena,
    /// A replay of the allocation trace of CPython 3.11 tokenizing a module
    /// (bench/traces; byte slices, so one case per trace; not in the
    /// default set).
    TracePython,
    /// A replay of the trace of gcc's cc1 compiling a 1 700-line C file.
    TraceCc1,
    /// A replay of the trace of sqlite3 building and querying an in-memory
    /// database.
    TraceSqlite,
    /// A replay of the trace of `git log -p --stat` over this repository.
    TraceGit,
    /// A replay of the trace of mawk gathering 200 000 numbers into 4 000
    /// growing strings (each line allocates a longer string and frees the
    /// shorter: the pattern that sends most operations down the tree).
    TraceAwk,
    /// A replay of the trace of perl appending short pieces to 3 000
    /// strings picked at random (each append a `realloc`, most of them
    /// moving the string: the pattern of a realloc-heavy program).
    TracePerl,
    /// A replay of the trace in the file `--trace-file` names (one you
    /// recorded: bench/traces/README.md). Not in `traces` or `all`.
    TraceFile,
    // The programs suite (`--suite programs`, bench/programs): well-known
    // compute programs, each against its C twin; Tern and C sides only.
    /// benchmarks game fannkuch-redux, n = 10.
    Fannkuch,
    /// are-we-fast-yet Queens: eight queens by backtracking.
    Queens,
    /// are-we-fast-yet Sieve: primes up to 5000.
    Sieve,
    /// are-we-fast-yet Permute: the permutations of six elements.
    Permute,
    /// are-we-fast-yet Towers: towers of Hanoi, piles as linked lists.
    Towers,
    /// are-we-fast-yet List: the recursive `tail` over linked lists.
    List,
    /// are-we-fast-yet Storage: a tree of randomly sized arrays.
    Storage,
    /// are-we-fast-yet Bounce: balls bouncing in a box.
    Bounce,
    /// are-we-fast-yet Richards: an operating-system task scheduler.
    Richards,
    /// are-we-fast-yet Json: a recursive-descent JSON parser.
    Json,
    /// benchmarks game binary-trees: nodes allocated and freed one by one.
    #[value(name = "binary-trees")]
    BinaryTrees,
    /// Project Euler 14: the longest Collatz chain under one million.
    Collatz,
    /// The dense integer matrix product of two 128 x 128 matrices.
    Matmul,
}

impl Workload {
    /// The recorded trace a `trace-*` workload replays (its name in
    /// bench/traces), `None` for the others.
    pub fn trace(self) -> Option<&'static str> {
        match self {
            Workload::TracePython => Some("python"),
            Workload::TraceCc1 => Some("cc1"),
            Workload::TraceSqlite => Some("sqlite"),
            Workload::TraceGit => Some("git"),
            Workload::TraceAwk => Some("awk"),
            Workload::TracePerl => Some("perl"),
            Workload::TraceFile => Some("file"),
            _ => None,
        }
    }

    /// The file stem of a program of the programs suite (bench/programs),
    /// `None` for the matrix's workloads.
    pub fn program(self) -> Option<&'static str> {
        Some(match self {
            Workload::Fannkuch => "fannkuch",
            Workload::Queens => "queens",
            Workload::Sieve => "sieve",
            Workload::Permute => "permute",
            Workload::Towers => "towers",
            Workload::List => "list",
            Workload::Storage => "storage",
            Workload::Bounce => "bounce",
            Workload::Richards => "richards",
            Workload::Json => "json",
            Workload::BinaryTrees => "binarytrees",
            Workload::Collatz => "collatz",
            Workload::Matmul => "matmul",
            _ => return None,
        })
    }

    /// Every program of the programs suite.
    pub fn programs() -> Vec<Workload> {
        Workload::value_variants()
            .iter()
            .copied()
            .filter(|w| w.program().is_some())
            .collect()
    }
}

/// Which benchmark `tern bench` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Suite {
    /// The slice_pool vs reusable[] matrix (workloads x sizes x sides).
    Matrix,
    /// Well-known compute programs in Tern against their C twins (`cc -O2`):
    /// Tern/C per program and the geometric mean.
    Programs,
}

/// The element size of the trace workloads' cases: their slices hold bytes.
pub const TRACE_ELEM_BYTES: u32 = 1;

/// The "element size" of a program's one case (it has none; tables show the
/// program's name alone).
pub const PROGRAM_SIZE: u32 = 0;

/// One implementation of growable slices.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum)]
pub enum Side {
    /// `reusable[]T`, lowered by the compiler to the runtime's unchecked tree.
    Builtin,
    /// `stdlib/slice_pool.tern`: the runtime's checked tree via three externs.
    Library,
    /// `stdlib/slice_pool_pure.tern`: the same API with the tree in Tern.
    Pure,
    /// The same workloads in C with malloc/realloc/free (`cc -O2`; AOT only).
    C,
    /// C held to Tern's zero fill (not in the default set; AOT only): the
    /// trace replays with every allocation and every growth zero-filled
    /// (`memset` after `malloc` and a growing `realloc`), so the figure
    /// shows what the contract costs a malloc; every other workload's C
    /// side zero-fills already and runs as it is.
    CZeroed,
}

impl Side {
    /// Whether the side is a C program (`cc -O2`, AOT only, no pool).
    pub fn is_c(self) -> bool {
        matches!(self, Side::C | Side::CZeroed)
    }
}

/// What a figure measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, ValueEnum)]
pub enum Mode {
    /// The linked executable (`tern build`), whole process.
    Aot,
    /// `tern run`, execution of `main` only, timed inside the process.
    JitExec,
    /// `tern run`, the whole process (front end, Cranelift, execution).
    JitTotal,
}

/// Which calls the compiler inlines in the Tern sides (the C side is `cc -O2`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Calls {
    /// The compiler's own heuristic (`tern build/run` at the level's default).
    Natural,
    /// Each workload's `exercise` function stays out of line (`--keep-call
    /// exercise`); calls inside it follow the heuristic.
    Boundary,
    /// Every inlinable call is inlined (`--inline all`).
    Inline,
}

impl Calls {
    /// The `tern run` / `tern build` flags for this mode.
    pub fn flags(self) -> &'static [&'static str] {
        match self {
            Calls::Natural => &[],
            Calls::Boundary => &["--keep-call", "exercise"],
            Calls::Inline => &["--inline", "all"],
        }
    }
}

/// The quantity measured per sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Metric {
    /// CPU time (user+sys) of the child from the OS, plus wall time.
    Cpu,
    /// Instructions executed (`valgrind --tool=callgrind`, total Ir).
    Instructions,
}

/// How tables and labels name a case: `workload/size`, or a program's name
/// alone (it has no element size).
pub fn case_name(w: Workload, size: u32) -> String {
    if w.program().is_some() {
        name(&w)
    } else {
        format!("{}/{size}", name(&w))
    }
}

/// Names as the command line spells them (for tables and file names).
pub fn name<T: ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_string())
        .unwrap_or_default()
}

#[derive(Parser, Debug)]
#[command(
    name = "tern bench",
    about = "The slice_pool vs reusable[] matrix: workloads x element sizes x sides x modes x levels",
    long_about = "The slice_pool vs reusable[] matrix: every workload at every element size, for \
                  every side, mode and optimization level. Every sample is its own process; sides \
                  are interleaved within a repetition; the figure is the median of the repetitions \
                  after the warm-ups. Prints side/builtin ratios (geometric mean over the cases) and \
                  absolute medians; writes everything needed to reproduce the run under --out.\n\n\
                  The default (O2 only, 3 repetitions, 1 warm-up) takes about 1-3 minutes on a 2-core \
                  machine; ask for all levels with --levels 0,1,2.\n\n\
                  `--suite programs` runs thirteen compute programs (bench/programs) in Tern against their \
                  C twins instead, and prints Tern/C per program and mode with the geometric mean."
)]
struct Args {
    /// matrix: the slice_pool vs reusable[] matrix; programs: well-known
    /// compute programs (bench/programs) in Tern against their C twins,
    /// Tern/C per program and the geometric mean.
    #[arg(long, value_enum, default_value = "matrix")]
    suite: Suite,
    /// Workloads to run (comma separated): the synthetic append, fragmented,
    /// resize (the default); the applications graph, graph-exact, bignum,
    /// binarytrees, bytebuf, strings, strings-free, strings-arena; the
    /// replays of recorded allocation traces trace-python, trace-cc1,
    /// trace-sqlite, trace-git, trace-awk, trace-perl (or traces: all six); or all (every one of
    /// these). With `--suite programs`: the suite's programs (fannkuch,
    /// queens, sieve, permute, towers, list, storage, bounce, richards, json,
    /// binary-trees, collatz, matmul; or programs, the default: all of them).
    /// [default: append,fragmented,resize; with --trace-file: trace-file]
    #[arg(long, value_delimiter = ',', value_parser = parse_workload)]
    workloads: Option<Vec<WorkloadArg>>,
    /// A trace of your own to replay on every side as the workload
    /// `trace-file` (added to the workloads): a `TERNTRC1` file as
    /// bench/traces/convert.py writes one, or text, one operation a line
    /// (`alloc ID SIZE`, `realloc ID SIZE`, `free ID`; `#` comments; any
    /// token as ID), gzip compressed or not. It is checked whole before
    /// anything runs.
    #[arg(long)]
    trace_file: Option<PathBuf>,
    /// Element sizes in bytes: 8 (i64) and/or 128 ([16]i64); the matrix's
    /// only (the programs suite has none). [default: 8,128]
    #[arg(long, value_delimiter = ',', value_parser = parse_size)]
    sizes: Option<Vec<u32>>,
    /// Sides to compare; builtin is always measured (ratios are side/builtin).
    /// c-zeroed: the C side with Tern's zero fill (it differs from c in the
    /// trace replays only). [default: builtin,library,pure,c; with `--suite
    /// programs`: builtin,c]
    #[arg(long, value_delimiter = ',')]
    sides: Option<Vec<Side>>,
    /// Modes to measure.
    #[arg(long, value_delimiter = ',', default_values = ["aot", "jit-exec", "jit-total"])]
    modes: Vec<Mode>,
    /// Optimization levels: 0, 1, 2 (also written O2 or -O2). Default: 2 only.
    #[arg(long, value_delimiter = ',', default_values = ["2"], value_parser = parse_level, allow_hyphen_values = true)]
    levels: Vec<u8>,
    /// Measured repetitions per sample (median taken), at most 1000000.
    /// Default 3 (1 with --metric instructions).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=MAX_REPS as i64))]
    reps: Option<u32>,
    /// Discarded repetitions before the measured ones, at most 1000000.
    /// Default 1 (0 with --metric instructions).
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=MAX_REPS as i64))]
    warmups: Option<u32>,
    /// Shrink every workload about 20x (a quick check, not a measurement).
    #[arg(long)]
    quick: bool,
    /// cpu: CPU time from the OS; instructions: callgrind instruction counts.
    #[arg(long, value_enum, default_value = "cpu")]
    metric: Metric,
    /// Pin the harness and every sample to these CPUs (e.g. `1` or `0-1` or `0,1`).
    #[arg(long, value_parser = parse_cpu_list)]
    affinity: Option<CpuList>,
    /// Inlining of the Tern sides: natural (the compiler's heuristic),
    /// boundary (each workload's `exercise` function kept out of line) or
    /// inline (every inlinable call inlined).
    #[arg(long, value_enum, default_value = "natural")]
    calls: Calls,
    /// Compile and run every Tern side with `--sanitize` (to measure what the
    /// sanitizer costs; compare with a run without it).
    #[arg(long)]
    sanitize: bool,
    /// Output folder; must not exist yet. Default: bench-out/<UTC timestamp>/.
    #[arg(long)]
    out: Option<PathBuf>,
}

impl Config {
    /// The cases, `(workload, element size)`: every workload at every
    /// `--sizes` size, but the trace replays once each, at
    /// [`TRACE_ELEM_BYTES`] (their slices hold bytes).
    pub fn cases(&self) -> Vec<(Workload, u32)> {
        self.workloads
            .iter()
            .flat_map(|&w| {
                if w.program().is_some() {
                    vec![(w, PROGRAM_SIZE)]
                } else if w.trace().is_some() {
                    vec![(w, TRACE_ELEM_BYTES)]
                } else {
                    self.sizes.iter().map(|&s| (w, s)).collect()
                }
            })
            .collect()
    }
}

/// A validated configuration of one `tern bench` run.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// The matrix or the programs suite.
    pub suite: Suite,
    /// Workloads, sorted.
    pub workloads: Vec<Workload>,
    /// Element sizes in bytes (8, 128), sorted.
    pub sizes: Vec<u32>,
    /// Always starts with `Side::Builtin`, the denominator of every ratio.
    pub sides: Vec<Side>,
    pub modes: Vec<Mode>,
    /// Optimization levels 0..=2, sorted.
    pub levels: Vec<u8>,
    /// Measured repetitions (at least 1).
    pub reps: u32,
    /// Discarded repetitions before the measured ones.
    pub warmups: u32,
    /// Workloads shrunk 20x.
    pub quick: bool,
    /// CPU time or instruction counts.
    pub metric: Metric,
    /// CPUs to pin to, if asked.
    pub affinity: Option<Vec<usize>>,
    /// Inlining mode of the Tern sides.
    pub calls: Calls,
    /// Every Tern side compiled with `--sanitize`.
    pub sanitize: bool,
    /// The explicit output folder, if given.
    pub out: Option<PathBuf>,
    /// The trace the `trace-file` workload replays, read and checked by
    /// `parse`.
    pub trace_file: Option<crate::traces::FileTrace>,
}

/// What parsing the arguments came to: a configuration, or text that was
/// already the whole answer (`--help`).
#[derive(Debug)]
pub enum Parsed {
    Run(Config),
    /// `--help` or `--version`: print this on stdout and stop.
    Info(String),
}

/// Parses the arguments after `tern bench`. `Err` is the usage message
/// (the caller exits with status 2).
pub fn parse(args: &[String]) -> Result<Parsed, String> {
    let argv = std::iter::once("tern bench".to_string()).chain(args.iter().cloned());
    let a = match Args::try_parse_from(argv) {
        Ok(a) => a,
        Err(e) if !e.use_stderr() => return Ok(Parsed::Info(e.render().to_string())),
        Err(e) => return Err(e.render().to_string().trim_end().to_string()),
    };
    let instructions = a.metric == Metric::Instructions;
    let programs = a.suite == Suite::Programs;
    let default_sides: &[Side] = if programs {
        &[Side::Builtin, Side::C]
    } else {
        &[Side::Builtin, Side::Library, Side::Pure, Side::C]
    };
    let mut sides = vec![Side::Builtin];
    // A program is Tern (the builtin side) against C: it has no pool sides.
    if let Some(s) = a
        .sides
        .iter()
        .flatten()
        .find(|s| programs && matches!(s, Side::Library | Side::Pure | Side::CZeroed))
    {
        return Err(format!(
            "error: the programs suite has the sides builtin (Tern) and c, not `{}`",
            name(s)
        ));
    }
    // C is compiled ahead of time only: asked for by name, it needs the AOT
    // mode (by default it is simply absent from the JIT's tables).
    if let Some(s) = a
        .sides
        .iter()
        .flatten()
        .find(|s| matches!(s, Side::C | Side::CZeroed))
        && !a.modes.contains(&Mode::Aot)
    {
        return Err(format!(
            "error: the side `{}` is compiled ahead of time only: add `aot` to `--modes`",
            name(s)
        ));
    }
    sides.extend(
        dedup(a.sides.unwrap_or_else(|| default_sides.to_vec()))
            .into_iter()
            .filter(|s| *s != Side::Builtin),
    );
    let default_workloads = if programs {
        vec![WorkloadArg::Programs]
    } else if a.trace_file.is_some() {
        vec![WorkloadArg::One(Workload::TraceFile)]
    } else {
        [Workload::Append, Workload::Fragmented, Workload::Resize]
            .map(WorkloadArg::One)
            .to_vec()
    };
    let mut workloads = dedup(
        a.workloads
            .unwrap_or(default_workloads)
            .into_iter()
            .flat_map(|w| match w {
                WorkloadArg::One(w) => vec![w],
                WorkloadArg::All => Workload::value_variants()
                    .iter()
                    .copied()
                    .filter(|&w| w.program().is_none() && w != Workload::TraceFile)
                    .collect(),
                WorkloadArg::Traces => Workload::value_variants()
                    .iter()
                    .copied()
                    .filter(|&w| w.trace().is_some() && w != Workload::TraceFile)
                    .collect(),
                WorkloadArg::Programs => Workload::programs(),
            })
            .collect(),
    );
    if programs && a.calls == Calls::Boundary {
        return Err(
            "error: `--calls boundary` keeps each matrix workload's `exercise` out of line; the programs suite has none (use natural or inline)"
                .to_string(),
        );
    }
    if programs && a.sizes.is_some() {
        return Err(
            "error: `--sizes` sets the matrix's element sizes; the programs suite has none"
                .to_string(),
        );
    }
    let trace_file = match &a.trace_file {
        Some(path) => {
            if programs {
                return Err(
                    "error: `--trace-file` is a matrix workload; the programs suite has none"
                        .to_string(),
                );
            }
            let trace = crate::traces::FileTrace::read(path)
                .map_err(|e| format!("error: --trace-file {}: {e}", path.display()))?;
            if !workloads.contains(&Workload::TraceFile) {
                workloads.push(Workload::TraceFile);
                workloads.sort();
            }
            Some(trace)
        }
        None if workloads.contains(&Workload::TraceFile) => {
            return Err(
                "error: the workload `trace-file` replays the file `--trace-file PATH` names; give one"
                    .to_string(),
            );
        }
        None => None,
    };
    // A suite is one kind of case: its tables compare like with like.
    if let Some(w) = workloads.iter().find(|w| w.program().is_some() != programs) {
        return Err(if programs {
            format!(
                "error: `{}` is a matrix workload; `--suite programs` runs the programs (`--workloads programs`)",
                name(w)
            )
        } else {
            format!(
                "error: `{}` is a program of the programs suite: add `--suite programs`",
                name(w)
            )
        });
    }
    Ok(Parsed::Run(Config {
        suite: a.suite,
        workloads,
        sizes: dedup(a.sizes.unwrap_or_else(|| vec![8, 128])),
        sides,
        modes: dedup(a.modes),
        levels: dedup(a.levels),
        reps: a.reps.unwrap_or(if instructions { 1 } else { 3 }),
        warmups: a.warmups.unwrap_or(if instructions { 0 } else { 1 }),
        quick: a.quick,
        metric: a.metric,
        affinity: a.affinity.map(|c| c.0),
        calls: a.calls,
        sanitize: a.sanitize,
        out: a.out,
        trace_file,
    }))
}

/// Sorted, without repeats, so tables have a stable order.
fn dedup<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v.dedup();
    v
}

/// One `--workloads` item: a workload, `all` of the matrix's, the `traces`,
/// or the `programs`.
#[derive(Clone, Copy, Debug)]
enum WorkloadArg {
    One(Workload),
    All,
    Traces,
    Programs,
}

fn parse_workload(s: &str) -> Result<WorkloadArg, String> {
    match s {
        "all" => return Ok(WorkloadArg::All),
        "traces" => return Ok(WorkloadArg::Traces),
        "programs" => return Ok(WorkloadArg::Programs),
        _ => {}
    }
    Workload::from_str(s, false)
        .map(WorkloadArg::One)
        .map_err(|_| {
            let names: Vec<String> = Workload::value_variants().iter().map(name).collect();
            format!(
                "`{s}` is not a workload (use {}, traces, programs or all)",
                names.join(", ")
            )
        })
}

fn parse_size(s: &str) -> Result<u32, String> {
    match s {
        "8" => Ok(8),
        "128" => Ok(128),
        _ => Err(format!("`{s}` is not an element size (use 8 or 128)")),
    }
}

fn parse_level(s: &str) -> Result<u8, String> {
    // `2`, `O2` or `-O2`: a bare `-2` is no spelling of a level.
    let digit = s.strip_prefix("-O").or(s.strip_prefix('O')).unwrap_or(s);
    match digit {
        "0" => Ok(0),
        "1" => Ok(1),
        "2" => Ok(2),
        _ => Err(format!(
            "`{s}` is not an optimization level (use 0, 1 or 2)"
        )),
    }
}

/// A parsed `--affinity` value (one clap value, so not a bare `Vec`).
#[derive(Clone, Debug, PartialEq)]
struct CpuList(Vec<usize>);

fn parse_cpu_list(s: &str) -> Result<CpuList, String> {
    parse_cpus(s).map(CpuList)
}

/// Parses a CPU list: `1`, `0,1`, `0-3`, `0-1,3`.
pub fn parse_cpus(s: &str) -> Result<Vec<usize>, String> {
    let bad = || format!("`{s}` is not a CPU list (e.g. `1`, `0,1` or `0-1`)");
    let mut cpus = Vec::new();
    for part in s.split(',') {
        let (lo, hi) = match part.split_once('-') {
            Some((lo, hi)) => (lo, hi),
            None => (part, part),
        };
        let lo: usize = lo.trim().parse().map_err(|_| bad())?;
        let hi: usize = hi.trim().parse().map_err(|_| bad())?;
        if lo > hi || hi >= 1024 {
            return Err(bad());
        }
        cpus.extend(lo..=hi);
    }
    Ok(dedup(cpus))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn config(s: &str) -> Config {
        match parse(&args(s)) {
            Ok(Parsed::Run(c)) => c,
            other => panic!("expected a configuration, got {other:?}"),
        }
    }

    #[test]
    fn all_workloads_expand_in_declaration_order() {
        let matrix: Vec<Workload> = Workload::value_variants()
            .iter()
            .copied()
            .filter(|&w| w.program().is_none() && w != Workload::TraceFile)
            .collect();
        assert_eq!(config("--workloads all").workloads, matrix);
        // Named again beside `all`, a workload still runs once.
        assert_eq!(config("--workloads graph,all").workloads, matrix);
        assert_eq!(config("--workloads all").workloads.len(), 17);
        assert_eq!(
            config("--workloads traces,append").workloads,
            vec![
                Workload::Append,
                Workload::TracePython,
                Workload::TraceCc1,
                Workload::TraceSqlite,
                Workload::TraceGit,
                Workload::TraceAwk,
                Workload::TracePerl
            ]
        );
        match parse(&args("--workloads nope")) {
            Err(e) => assert!(e.contains("`nope` is not a workload (use append,"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_trace_file_adds_its_workload_once_checked() {
        let dir = std::env::temp_dir().join(format!("tern-bench-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let good = dir.join("good.trace");
        let mut t = b"TERNTRC1".to_vec();
        for w in [2u32, 1, 0, 16, 1 << 30, 0] {
            t.extend(w.to_le_bytes());
        }
        std::fs::write(&good, &t).unwrap();
        let f = good.display();
        let c = config(&format!("--trace-file {f}"));
        assert_eq!(c.workloads, vec![Workload::TraceFile]);
        assert_eq!(
            c.trace_file.as_ref().map(|t| t.path.as_path()),
            Some(good.as_path())
        );
        assert_eq!(
            config(&format!("--trace-file {f} --workloads trace-git,append")).workloads,
            vec![Workload::Append, Workload::TraceGit, Workload::TraceFile]
        );
        assert!(
            !config("--workloads all")
                .workloads
                .contains(&Workload::TraceFile)
        );
        let bad = dir.join("bad.trace");
        std::fs::write(&bad, &t[..20]).unwrap();
        // Four objects of 4 GiB live at once: more than any pool's arena.
        let huge = dir.join("huge.trace");
        let mut h = b"TERNTRC1".to_vec();
        h.extend([4u32, 4].iter().flat_map(|w| w.to_le_bytes()));
        for id in 0..4u32 {
            h.extend(id.to_le_bytes());
            h.extend(u32::MAX.to_le_bytes());
        }
        std::fs::write(&huge, &h).unwrap();
        let refusals = [
            (
                format!("--trace-file {}", bad.display()),
                format!("error: --trace-file {}: 2 records promised, 20 bytes", bad.display()),
            ),
            (
                format!("--trace-file {}", huge.display()),
                format!(
                    "error: --trace-file {}: it keeps 17179869184 bytes live at once, \
                     more than a pool's largest arena (17179869176 bytes)",
                    huge.display()
                ),
            ),
            (
                "--workloads trace-file".to_string(),
                "error: the workload `trace-file` replays the file `--trace-file PATH` names; give one"
                    .to_string(),
            ),
            (
                format!("--suite programs --trace-file {f}"),
                "error: `--trace-file` is a matrix workload; the programs suite has none"
                    .to_string(),
            ),
        ];
        for (line, want) in refusals {
            assert_eq!(parse(&args(&line)).unwrap_err(), want, "{line}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_programs_suite_is_its_programs_against_c() {
        let c = config("--suite programs");
        assert_eq!(c.suite, Suite::Programs);
        assert_eq!(c.workloads, Workload::programs());
        assert_eq!(c.workloads.len(), 13);
        assert_eq!(c.sides, vec![Side::Builtin, Side::C]);
        assert_eq!(c.cases()[0], (Workload::Fannkuch, PROGRAM_SIZE));
        assert_eq!(
            case_name(Workload::BinaryTrees, PROGRAM_SIZE),
            "binary-trees"
        );
        assert_eq!(case_name(Workload::Append, 8), "append/8");
        let c = config("--suite programs --workloads sieve,queens --modes aot");
        assert_eq!(c.workloads, vec![Workload::Queens, Workload::Sieve]);
        let e = parse(&args("--suite programs --sides c,library")).unwrap_err();
        assert_eq!(
            e,
            "error: the programs suite has the sides builtin (Tern) and c, not `library`"
        );
        let e = parse(&args("--suite programs --sides c-zeroed")).unwrap_err();
        assert_eq!(
            e,
            "error: the programs suite has the sides builtin (Tern) and c, not `c-zeroed`"
        );
        let e = parse(&args("--suite programs --workloads append")).unwrap_err();
        assert_eq!(
            e,
            "error: `append` is a matrix workload; `--suite programs` runs the programs (`--workloads programs`)"
        );
        let e = parse(&args("--workloads sieve")).unwrap_err();
        assert_eq!(
            e,
            "error: `sieve` is a program of the programs suite: add `--suite programs`"
        );
        assert_eq!(config("").suite, Suite::Matrix);
    }

    #[test]
    fn traces_are_one_case_each_at_byte_size() {
        let c = config("--workloads append,trace-cc1 --sizes 8,128");
        assert_eq!(
            c.cases(),
            vec![
                (Workload::Append, 8),
                (Workload::Append, 128),
                (Workload::TraceCc1, TRACE_ELEM_BYTES)
            ]
        );
        assert_eq!(Workload::TraceGit.trace(), Some("git"));
        assert_eq!(Workload::Graph.trace(), None);
    }

    #[test]
    fn defaults_are_o2_all_sides_three_reps() {
        let c = config("");
        assert_eq!(
            c.workloads,
            vec![Workload::Append, Workload::Fragmented, Workload::Resize]
        );
        assert_eq!(c.sizes, vec![8, 128]);
        assert_eq!(
            c.sides,
            vec![Side::Builtin, Side::Library, Side::Pure, Side::C]
        );
        assert_eq!(c.modes, vec![Mode::Aot, Mode::JitExec, Mode::JitTotal]);
        assert_eq!(c.levels, vec![2]);
        assert_eq!((c.reps, c.warmups, c.quick), (3, 1, false));
        assert_eq!(c.metric, Metric::Cpu);
    }

    #[test]
    fn builtin_is_always_first_and_lists_are_deduplicated() {
        let c = config("--sides c,library,library --levels O2,-O0,0 --sizes 128,8");
        assert_eq!(c.sides, vec![Side::Builtin, Side::Library, Side::C]);
        assert_eq!(c.levels, vec![0, 2]);
        assert_eq!(c.sizes, vec![8, 128]);
    }

    #[test]
    fn instructions_metric_defaults_to_one_rep_no_warmup() {
        let c = config("--metric instructions");
        assert_eq!((c.reps, c.warmups), (1, 0));
        let c = config("--metric instructions --reps 3 --warmups 2");
        assert_eq!((c.reps, c.warmups), (3, 2));
    }

    #[test]
    fn bad_values_are_usage_errors_naming_the_value() {
        let e = parse(&args("--sides builtin,bogus")).unwrap_err();
        assert!(e.contains("invalid value 'bogus' for '--sides"), "{e}");
        let e = parse(&args("--sizes 16")).unwrap_err();
        assert!(
            e.contains("`16` is not an element size (use 8 or 128)"),
            "{e}"
        );
        let e = parse(&args("--levels 3")).unwrap_err();
        assert!(
            e.contains("`3` is not an optimization level (use 0, 1 or 2)"),
            "{e}"
        );
        for bad in ["-1", "--O1", "OO1"] {
            let e = parse(&args(&format!("--levels={bad}"))).unwrap_err();
            assert!(
                e.contains(&format!(
                    "`{bad}` is not an optimization level (use 0, 1 or 2)"
                )),
                "{e}"
            );
        }
        let e = parse(&args("--reps 0")).unwrap_err();
        assert!(e.contains("--reps"), "{e}");
        let e = parse(&args("--suite programs --sizes 8")).unwrap_err();
        assert_eq!(
            e,
            "error: `--sizes` sets the matrix's element sizes; the programs suite has none"
        );
        // Together they count every sample's runs: neither may be so large
        // that the sum wraps (a run that measured nothing).
        for flag in ["--reps", "--warmups"] {
            let e = parse(&args(&format!("{flag} 4294967295"))).unwrap_err();
            assert!(e.contains(flag) && e.contains("1000000"), "{e}");
        }
        for sides in ["c", "library,c-zeroed"] {
            let e = parse(&args(&format!(
                "--sides {sides} --modes jit-exec,jit-total"
            )));
            let side = sides.rsplit(',').next().unwrap();
            assert_eq!(
                e.unwrap_err(),
                format!(
                    "error: the side `{side}` is compiled ahead of time only: add `aot` to `--modes`"
                )
            );
        }
        assert_eq!(
            config("--modes jit-exec").sides,
            [Side::Builtin, Side::Library, Side::Pure, Side::C]
        );
        let e = parse(&args("--affinity 2-1")).unwrap_err();
        assert!(e.contains("`2-1` is not a CPU list"), "{e}");
        let e = parse(&args("--frobnicate")).unwrap_err();
        assert!(e.contains("unexpected argument '--frobnicate'"), "{e}");
    }

    #[test]
    fn affinity_is_one_cpu_list() {
        assert_eq!(config("--affinity 0-1,3").affinity, Some(vec![0, 1, 3]));
        assert_eq!(config("").affinity, None);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpus("1"), Ok(vec![1]));
        assert_eq!(parse_cpus("0-2,1"), Ok(vec![0, 1, 2]));
        assert!(parse_cpus("x").is_err());
        assert!(parse_cpus("").is_err());
    }

    #[test]
    fn help_is_information_not_an_error() {
        match parse(&args("--help")) {
            Ok(Parsed::Info(text)) => assert!(text.contains("--levels 0,1,2"), "{text}"),
            other => panic!("expected help text, got {other:?}"),
        }
    }
}

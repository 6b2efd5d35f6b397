//! The figures of a run and their presentation: the ratio table, absolute
//! medians, JIT compile times, sizes, the samples CSV and the SVG plot.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::config::{Config, Metric, Mode, Side, Suite, Workload, case_name, name};
use super::stats::{geometric_mean, median, ratio};

/// One figure's coordinates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The mode measured.
    pub mode: Mode,
    /// Optimization level (the C baseline is filed under every level).
    pub level: u8,
    /// The workload.
    pub workload: Workload,
    /// Element size in bytes.
    pub size: u32,
    /// The side measured.
    pub side: Side,
}

/// Executable bytes (none built when no AOT mode runs) and machine-code
/// (`.text`) bytes, when known.
pub type Sizes = (Option<u64>, Option<u64>);

/// Everything measured, measured repetitions only (warm-ups are dropped).
#[derive(Default, Debug)]
pub struct Results {
    /// CPU seconds or instruction counts per key, one per repetition.
    pub values: BTreeMap<Key, Vec<f64>>,
    /// JIT front end + Cranelift milliseconds per (level, workload, size, side).
    pub compile_ms: BTreeMap<(u8, Workload, u32, Side), Vec<f64>>,
    /// Why a (workload, size, side) has no valid figures.
    pub failed: BTreeMap<(Workload, u32, Side), String>,
    /// Executable bytes and machine-code (`.text`) bytes per (side, level, workload, size).
    pub sizes: BTreeMap<(Side, u8, Workload, u32), Sizes>,
    /// Peak resident memory of an executable's process, MiB, one per repetition.
    pub peak_rss_mib: BTreeMap<Key, Vec<f64>>,
    /// The side's pools' arena high-water marks (summed), KiB, one per repetition.
    pub pool_high_water_kib: BTreeMap<Key, Vec<f64>>,
    /// Instruction counts without those of `memset`/`memcpy`/`memmove`
    /// (zero fills and copies: a Tern allocation is zeroed, a `malloc` not),
    /// one per repetition.
    pub values_without_mem: BTreeMap<Key, Vec<f64>>,
}

impl Results {
    /// The median figure of `key`, unless its case failed for that side.
    pub fn median(&self, key: &Key) -> Option<f64> {
        if self
            .failed
            .contains_key(&(key.workload, key.size, key.side))
        {
            return None;
        }
        median(self.values.get(key)?)
    }

    /// side/builtin for one key (`key.side` is the numerator).
    pub fn ratio(&self, key: &Key) -> Option<f64> {
        ratio(
            self.median(key),
            self.median(&Key {
                side: Side::Builtin,
                ..*key
            }),
        )
    }
}

/// The sides shown in a mode: C exists in AOT only.
pub fn sides_in(cfg: &Config, mode: Mode) -> Vec<Side> {
    cfg.sides
        .iter()
        .copied()
        .filter(|s| !s.is_c() || mode == Mode::Aot)
        .collect()
}

fn mode_title(mode: Mode, level: u8) -> String {
    let what = match mode {
        Mode::Aot => "AOT (executable)",
        Mode::JitExec => "JIT exec (execution only, in-process)",
        Mode::JitTotal => "JIT total (whole `tern run` process)",
    };
    format!("{what}, -O{level}")
}

/// A table cell right-aligned in its 10-character column, and at least one
/// space after the cell before it: a figure too wide for the column (a ratio
/// over a near-zero median) pushes the rest of its row right instead of
/// running into its neighbour, so a row still splits on whitespace.
fn column(text: &str) -> String {
    if text.len() >= 10 {
        format!(" {text}")
    } else {
        format!("{text:>10}")
    }
}

fn cell(v: Option<f64>, failed: bool) -> String {
    match (v, failed) {
        (_, true) => "FAIL".into(),
        (Some(v), _) => format!("{v:.3}"),
        (None, _) => "-".into(),
    }
}

/// The ratio tables: side/builtin per case, per mode and level, with the
/// geometric-mean row (over cases whose ratio exists; "-" if any is missing).
pub fn ratio_tables(cfg: &Config, r: &Results) -> String {
    ratio_tables_in(cfg, r, ratio_unit(cfg))
}

/// What a ratio table divides, for its title.
fn ratio_unit(cfg: &Config) -> &'static str {
    match cfg.metric {
        Metric::Cpu => "CPU time",
        Metric::Instructions => "instructions",
    }
}

/// The `geomean` row under a table of ratio columns: each column's
/// geometric mean, or `-` when any of its cells is missing.
fn geomean_row(out: &mut String, cfg: &Config, columns: &[Vec<Option<f64>>]) {
    let _ = write!(out, "{:<1$}", "geomean", label_width(cfg));
    for col in columns {
        let all: Option<Vec<f64>> = col.iter().copied().collect();
        out.push_str(&column(&cell(all.and_then(|v| geometric_mean(&v)), false)));
    }
    out.push('\n');
}

/// [`ratio_tables`] and [`absolute_tables`] of the instruction counts
/// without `memset`/`memcpy`/`memmove`, when the run counted them.
pub fn without_mem_tables(cfg: &Config, r: &Results) -> String {
    if cfg.metric != Metric::Instructions || r.values_without_mem.is_empty() {
        return String::new();
    }
    let without = Results {
        values: r.values_without_mem.clone(),
        failed: r.failed.clone(),
        ..Results::default()
    };
    ratio_tables_in(cfg, &without, "instructions without memset/memcpy")
        + &absolute_tables_in(cfg, &without, "M instructions without memset/memcpy", 1e-6)
}

/// The ratio tables with `unit` in their titles.
fn ratio_tables_in(cfg: &Config, r: &Results, unit: &str) -> String {
    let mut out = String::new();
    for &mode in &cfg.modes {
        for &level in &cfg.levels {
            let sides: Vec<Side> = sides_in(cfg, mode)
                .into_iter()
                .filter(|s| *s != Side::Builtin)
                .collect();
            if sides.is_empty() {
                continue;
            }
            let _ = writeln!(
                out,
                "\nRatios side/builtin ({unit}, median), {}:",
                mode_title(mode, level)
            );
            header_row(&mut out, cfg, &sides);
            let mut per_side: Vec<Vec<Option<f64>>> = vec![Vec::new(); sides.len()];
            for (w, size) in cfg.cases() {
                case_label(&mut out, cfg, w, size);
                for (i, s) in sides.iter().enumerate() {
                    let key = Key {
                        mode,
                        level,
                        workload: w,
                        size,
                        side: *s,
                    };
                    let failed = r.failed.contains_key(&(w, size, *s))
                        || r.failed.contains_key(&(w, size, Side::Builtin));
                    let v = r.ratio(&key);
                    per_side[i].push(v);
                    out.push_str(&column(&cell(v, failed)));
                }
                out.push('\n');
            }
            geomean_row(&mut out, cfg, &per_side);
        }
    }
    out
}

/// The programs suite's figure: Tern/C per program, one column per mode
/// (Tern's figure in that mode over the C twin's executable), with the
/// geometric-mean row; one table per level. Empty unless the run is the
/// programs suite with its C side.
pub fn tern_over_c_tables(cfg: &Config, r: &Results) -> String {
    if cfg.suite != Suite::Programs || !cfg.sides.contains(&Side::C) {
        return String::new();
    }
    let unit = ratio_unit(cfg);
    let mut out = String::new();
    for &level in &cfg.levels {
        let _ = writeln!(
            out,
            "\nTern/C ({unit}, median; C is `cc -O2`), Tern at -O{level}:"
        );
        let _ = write!(out, "{:<1$}", "case", label_width(cfg));
        for m in &cfg.modes {
            out.push_str(&column(&name(m)));
        }
        out.push('\n');
        let mut per_mode: Vec<Vec<Option<f64>>> = vec![Vec::new(); cfg.modes.len()];
        for (w, size) in cfg.cases() {
            case_label(&mut out, cfg, w, size);
            let key = |mode, side| Key {
                mode,
                level,
                workload: w,
                size,
                side,
            };
            let failed = r.failed.contains_key(&(w, size, Side::Builtin))
                || r.failed.contains_key(&(w, size, Side::C));
            for (i, &m) in cfg.modes.iter().enumerate() {
                let v = ratio(
                    r.median(&key(m, Side::Builtin)),
                    r.median(&key(Mode::Aot, Side::C)),
                );
                per_mode[i].push(v);
                out.push_str(&column(&cell(v, failed)));
            }
            out.push('\n');
        }
        geomean_row(&mut out, cfg, &per_mode);
    }
    out
}

/// Absolute medians (ms of CPU, or millions of instructions) per case.
pub fn absolute_tables(cfg: &Config, r: &Results) -> String {
    let (unit, scale) = match cfg.metric {
        Metric::Cpu => ("ms CPU", 1e3),
        Metric::Instructions => ("M instructions", 1e-6),
    };
    absolute_tables_in(cfg, r, unit, scale)
}

/// The absolute tables of `r`'s figures times `scale`, in `unit`.
fn absolute_tables_in(cfg: &Config, r: &Results, unit: &str, scale: f64) -> String {
    let mut out = String::new();
    // A replay's figure is net of the same replay allocating nothing: on a
    // trace too short to time, the difference is noise and can be negative.
    let mut below_noise = false;
    for &mode in &cfg.modes {
        for &level in &cfg.levels {
            let sides = sides_in(cfg, mode);
            let _ = writeln!(out, "\nMedians ({unit}), {}:", mode_title(mode, level));
            header_row(&mut out, cfg, &sides);
            for (w, size) in cfg.cases() {
                case_label(&mut out, cfg, w, size);
                for s in &sides {
                    let key = Key {
                        mode,
                        level,
                        workload: w,
                        size,
                        side: *s,
                    };
                    let v = r.median(&key).map(|v| v * scale);
                    let text = match (v, r.failed.contains_key(&(w, size, *s))) {
                        (_, true) => "FAIL".into(),
                        (Some(v), _) => {
                            below_noise |= v <= 0.0;
                            format!("{v:.1}")
                        }
                        (None, _) => "-".into(),
                    };
                    out.push_str(&column(&text));
                }
                out.push('\n');
            }
        }
    }
    if below_noise {
        out.push_str(
            "note: a figure at or below 0 is a replay's, net of the same replay allocating nothing, \
             within that run's noise: ",
        );
        out.push_str(match cfg.metric {
            Metric::Cpu => {
                "the trace is too short to time (no ratio is shown for it); \
                 measure it with --metric instructions or replay a longer trace\n"
            }
            // Counts repeat, but the replay and its dry run are different
            // code: a trace of a few operations is within their difference.
            Metric::Instructions => {
                "the trace is too short to measure (no ratio is shown for it); replay a longer trace\n"
            }
        });
    }
    out
}

/// Peak resident memory of the executables (AOT: the program's whole
/// process, what a user pays; a JIT process also holds the compiler, so it
/// is not shown), and the pools' arena high-water marks (the highest end
/// offset any allocation reached in each pool the side used, summed: how far
/// the placement policy spread, whatever the OS made resident; see
/// `sample::pool_high_water`), medians of the repetitions.
pub fn memory_tables(cfg: &Config, r: &Results) -> String {
    let mut out = String::new();
    if !cfg.modes.contains(&Mode::Aot) {
        return out;
    }
    // (title, figures, decimals): a pool's mark can be a few KiB.
    let tables = [
        ("Peak resident memory (MiB, median)", &r.peak_rss_mib, 1),
        (
            "Pool high-water mark (KiB, median)",
            &r.pool_high_water_kib,
            0,
        ),
    ];
    for (title, figures, decimals) in tables {
        if figures.is_empty() {
            continue;
        }
        for &level in &cfg.levels {
            let sides = sides_in(cfg, Mode::Aot);
            let _ = writeln!(out, "\n{title}, {}:", mode_title(Mode::Aot, level));
            header_row(&mut out, cfg, &sides);
            for (w, size) in cfg.cases() {
                case_label(&mut out, cfg, w, size);
                for s in &sides {
                    let key = Key {
                        mode: Mode::Aot,
                        level,
                        workload: w,
                        size,
                        side: *s,
                    };
                    let text = match figures.get(&key).and_then(|v| median(v)) {
                        _ if r.failed.contains_key(&(w, size, *s)) => "FAIL".into(),
                        Some(v) => format!("{v:.decimals$}"),
                        None => "-".into(),
                    };
                    out.push_str(&column(&text));
                }
                out.push('\n');
            }
        }
    }
    out
}

/// The width of a per-case table's first column: 16, or wider when a case
/// label (`strings-arena/128`) needs it, so the columns stay aligned.
fn label_width(cfg: &Config) -> usize {
    cfg.cases()
        .iter()
        .map(|&(w, size)| case_name(w, size).len() + 1)
        .max()
        .unwrap_or(0)
        .max(16)
}

/// The header row of a per-case table: `case` and one column per side.
fn header_row(out: &mut String, cfg: &Config, sides: &[Side]) {
    let _ = write!(out, "{:<1$}", "case", label_width(cfg));
    for s in sides {
        out.push_str(&column(&name(s)));
    }
    out.push('\n');
}

/// The first column of a per-case row, `workload/size`.
fn case_label(out: &mut String, cfg: &Config, w: Workload, size: u32) {
    let _ = write!(out, "{:<1$}", case_name(w, size), label_width(cfg));
}

/// JIT compile time (front end + Cranelift), apart from run time.
pub fn compile_tables(cfg: &Config, r: &Results) -> String {
    if r.compile_ms.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    let sides = sides_in(cfg, Mode::JitExec);
    for &level in &cfg.levels {
        let _ = writeln!(
            out,
            "\nJIT compile time (front end + Cranelift, ms, median), -O{level}:"
        );
        header_row(&mut out, cfg, &sides);
        for (w, size) in cfg.cases() {
            case_label(&mut out, cfg, w, size);
            for s in &sides {
                let v = r
                    .compile_ms
                    .get(&(level, w, size, *s))
                    .and_then(|v| median(v));
                out.push_str(&column(
                    &v.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into()),
                ));
            }
            out.push('\n');
        }
    }
    out
}

/// Executable and machine-code sizes.
pub fn size_table(r: &Results) -> String {
    let mut out = String::from("\nSizes (bytes): side level case executable .text\n");
    for ((side, level, w, size), (exe, text)) in &r.sizes {
        let level = if side.is_c() {
            "cc-O2".to_string()
        } else {
            format!("-O{level}")
        };
        let shown = |b: &Option<u64>| b.map(|b| b.to_string()).unwrap_or_else(|| "-".into());
        let (exe, text) = (shown(exe), shown(text));
        let _ = writeln!(
            out,
            "{:<8} {:<6} {:<16} {:>10} {:>8}",
            name(side),
            level,
            case_name(*w, *size),
            exe,
            text
        );
    }
    out
}

/// The failures, one line each.
pub fn failure_list(r: &Results) -> String {
    let mut out = String::new();
    for ((w, size, side), why) in &r.failed {
        let _ = writeln!(out, "FAILED {} {}: {why}", case_name(*w, *size), name(side));
    }
    out
}

/// An SVG bar chart of the ratios: one panel per (mode, level), one group of
/// bars per case plus the geometric mean, a line at 1.0.
pub fn ratio_svg(cfg: &Config, r: &Results) -> String {
    let colors = [
        ("library", "#1f77b4"),
        ("pure", "#d62728"),
        ("c", "#7f7f7f"),
    ];
    let panels: Vec<(Mode, u8)> = cfg
        .modes
        .iter()
        .flat_map(|m| cfg.levels.iter().map(move |l| (*m, *l)))
        .collect();
    let groups: Vec<String> = cfg
        .cases()
        .iter()
        .map(|&(w, s)| case_name(w, s))
        .chain(std::iter::once("geomean".into()))
        .collect();
    let (pw, ph, top) = (720.0, 220.0, 40.0);
    let height = top + panels.len() as f64 * (ph + 50.0);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{pw}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"10\" y=\"20\" font-size=\"14\">tern bench: side/builtin ratios (smaller is better)</text>\n"
    );
    for (pi, (mode, level)) in panels.iter().enumerate() {
        let sides: Vec<Side> = sides_in(cfg, *mode)
            .into_iter()
            .filter(|s| *s != Side::Builtin)
            .collect();
        let y0 = top + pi as f64 * (ph + 50.0) + 20.0;
        let mut rows: Vec<Vec<Option<f64>>> = cfg
            .cases()
            .iter()
            .map(|(w, s)| {
                sides
                    .iter()
                    .map(|side| {
                        r.ratio(&Key {
                            mode: *mode,
                            level: *level,
                            workload: *w,
                            size: *s,
                            side: *side,
                        })
                    })
                    .collect()
            })
            .collect();
        let gm: Vec<Option<f64>> = (0..sides.len())
            .map(|i| {
                rows.iter()
                    .map(|row| row[i])
                    .collect::<Option<Vec<f64>>>()
                    .and_then(|v| geometric_mean(&v))
            })
            .collect();
        rows.push(gm);
        let max = rows
            .iter()
            .flatten()
            .flatten()
            .fold(1.5f64, |m, v| m.max(*v))
            * 1.1;
        let (x0, plot_w) = (50.0, pw - 70.0);
        let y = |v: f64| y0 + ph - v / max * ph;
        let _ = writeln!(
            svg,
            "<text x=\"{x0}\" y=\"{}\">{}</text>",
            y0 - 5.0,
            mode_title(*mode, *level)
        );
        let _ = writeln!(
            svg,
            "<rect x=\"{x0}\" y=\"{y0}\" width=\"{plot_w}\" height=\"{ph}\" fill=\"none\" stroke=\"#ccc\"/>"
        );
        let (x1, y1) = (x0 + plot_w, y(1.0));
        let _ = writeln!(
            svg,
            "<line x1=\"{x0}\" x2=\"{x1}\" y1=\"{y1:.1}\" y2=\"{y1:.1}\" stroke=\"black\" stroke-dasharray=\"4 2\"/>"
        );
        let _ = writeln!(svg, "<text x=\"5\" y=\"{:.1}\">1.0</text>", y(1.0) + 4.0);
        let gw = plot_w / groups.len() as f64;
        let bw = (gw - 10.0) / sides.len().max(1) as f64;
        for (gi, g) in groups.iter().enumerate() {
            let gx = x0 + gi as f64 * gw + 5.0;
            for (si, side) in sides.iter().enumerate() {
                let color = colors
                    .iter()
                    .find(|(n, _)| *n == name(side))
                    .map(|c| c.1)
                    .unwrap_or("#2ca02c");
                if let Some(v) = rows[gi][si] {
                    let _ = writeln!(
                        svg,
                        "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"><title>{} {g}: {v:.3}</title></rect>",
                        gx + si as f64 * bw,
                        y(v),
                        bw - 1.0,
                        y0 + ph - y(v),
                        name(side)
                    );
                    let _ = writeln!(
                        svg,
                        "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"8\">{v:.2}</text>",
                        gx + si as f64 * bw,
                        y(v) - 2.0
                    );
                }
            }
            let _ = writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\">{g}</text>",
                gx,
                y0 + ph + 14.0
            );
        }
        for (si, side) in sides.iter().enumerate() {
            let color = colors
                .iter()
                .find(|(n, _)| *n == name(side))
                .map(|c| c.1)
                .unwrap_or("#2ca02c");
            let lx = x0 + plot_w - 200.0 + si as f64 * 70.0;
            let _ = writeln!(
                svg,
                "<rect x=\"{lx}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{}\" y=\"{}\">{}</text>",
                y0 - 15.0,
                lx + 14.0,
                y0 - 6.0,
                name(side)
            );
        }
    }
    svg.push_str("</svg>\n");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Parsed, parse};

    fn cfg(args: &str) -> Config {
        let a: Vec<String> = args.split_whitespace().map(str::to_string).collect();
        match parse(&a) {
            Ok(Parsed::Run(c)) => c,
            _ => panic!("bad test config"),
        }
    }

    fn put(r: &mut Results, w: Workload, side: Side, vals: &[f64]) {
        let key = Key {
            mode: Mode::Aot,
            level: 2,
            workload: w,
            size: 8,
            side,
        };
        r.values.insert(key, vals.to_vec());
    }

    #[test]
    fn memory_table_shows_medians_in_mib_and_fail() {
        let c = cfg("--workloads append,resize --sizes 8 --sides library --modes aot");
        let mut r = Results::default();
        let key = |w, side| Key {
            mode: Mode::Aot,
            level: 2,
            workload: w,
            size: 8,
            side,
        };
        r.peak_rss_mib
            .insert(key(Workload::Append, Side::Builtin), vec![2.0, 9.0, 3.0]);
        r.peak_rss_mib
            .insert(key(Workload::Append, Side::Library), vec![4.25]);
        r.failed
            .insert((Workload::Resize, 8, Side::Library), "boom".into());
        assert_eq!(
            memory_tables(&c, &r),
            "\nPeak resident memory (MiB, median), AOT (executable), -O2:\n\
             case               builtin   library\n\
             append/8               3.0       4.2\n\
             resize/8                 -      FAIL\n"
        );
        r.pool_high_water_kib
            .insert(key(Workload::Append, Side::Library), vec![24.0]);
        assert!(memory_tables(&c, &r).ends_with(
            "\nPool high-water mark (KiB, median), AOT (executable), -O2:\n\
             case               builtin   library\n\
             append/8                 -        24\n\
             resize/8                 -      FAIL\n"
        ));
        // No AOT mode, no table (a JIT process holds the compiler too).
        assert_eq!(memory_tables(&cfg("--modes jit-exec"), &r), "");
    }

    #[test]
    fn ratio_table_uses_medians_and_geometric_mean() {
        let c = cfg("--workloads append,resize --sizes 8 --sides library --modes aot");
        let mut r = Results::default();
        put(&mut r, Workload::Append, Side::Builtin, &[1.0, 9.0, 2.0]);
        put(&mut r, Workload::Append, Side::Library, &[4.0, 4.0, 0.0]);
        put(&mut r, Workload::Resize, Side::Builtin, &[3.0]);
        put(&mut r, Workload::Resize, Side::Library, &[1.5]);
        assert_eq!(
            ratio_tables(&c, &r),
            "\nRatios side/builtin (CPU time, median), AOT (executable), -O2:\n\
             case               library\n\
             append/8             2.000\n\
             resize/8             0.500\n\
             geomean              1.000\n"
        );
        assert_eq!(
            absolute_tables(&c, &r),
            "\nMedians (ms CPU), AOT (executable), -O2:\n\
             case               builtin   library\n\
             append/8            2000.0    4000.0\n\
             resize/8            3000.0    1500.0\n"
        );
        assert!(ratio_svg(&c, &r).contains("<title>library geomean: 1.000</title>"));
    }

    /// A replay too short to time can come out below its dry run: the
    /// figure is shown as measured, with a note, and gets no ratio.
    #[test]
    fn a_figure_below_the_dry_runs_noise_is_noted() {
        let c = cfg("--workloads append --sizes 8 --sides library --modes aot");
        let mut r = Results::default();
        put(&mut r, Workload::Append, Side::Builtin, &[-0.0001]);
        put(&mut r, Workload::Append, Side::Library, &[0.002]);
        let text = absolute_tables(&c, &r);
        assert!(
            text.contains("append/8              -0.1       2.0\n"),
            "{text}"
        );
        assert!(
            text.ends_with("the trace is too short to time (no ratio is shown for it); measure it with --metric instructions or replay a longer trace\n"),
            "{text}"
        );
        assert!(ratio_tables(&c, &r).contains("append/8                 -\n"));
        let counted =
            cfg("--workloads append --sizes 8 --sides library --modes aot --metric instructions");
        assert!(
            absolute_tables(&counted, &r).ends_with(
                "the trace is too short to measure (no ratio is shown for it); replay a longer trace\n"
            ),
            "{}",
            absolute_tables(&counted, &r)
        );
        put(&mut r, Workload::Append, Side::Builtin, &[0.001]);
        assert!(!absolute_tables(&c, &r).contains("note:"));
    }

    #[test]
    fn a_figure_wider_than_its_column_stays_apart_from_its_neighbours() {
        assert_eq!(column("1.000"), "     1.000");
        assert_eq!(column("175854.316"), " 175854.316");
        let row = format!("{}{}", column("1682.632"), column("175854.316"));
        assert_eq!(
            row.split_whitespace().collect::<Vec<_>>(),
            ["1682.632", "175854.316"]
        );
    }

    #[test]
    fn a_long_case_label_widens_the_first_column() {
        let c = cfg("--workloads strings-arena --sizes 128 --sides library --modes aot");
        let mut r = Results::default();
        for (side, v) in [(Side::Builtin, 1.0), (Side::Library, 2.0)] {
            let key = Key {
                mode: Mode::Aot,
                level: 2,
                workload: Workload::StringsArena,
                size: 128,
                side,
            };
            r.values.insert(key, vec![v]);
        }
        assert_eq!(
            ratio_tables(&c, &r),
            "\nRatios side/builtin (CPU time, median), AOT (executable), -O2:\n\
             case                 library\n\
             strings-arena/128      2.000\n\
             geomean                2.000\n"
        );
    }

    #[test]
    fn a_failed_case_shows_fail_and_voids_the_geometric_mean() {
        let c = cfg("--workloads append,resize --sizes 8 --sides library --modes aot");
        let mut r = Results::default();
        put(&mut r, Workload::Append, Side::Builtin, &[1.0]);
        put(&mut r, Workload::Append, Side::Library, &[1.0]);
        put(&mut r, Workload::Resize, Side::Builtin, &[1.0]);
        put(&mut r, Workload::Resize, Side::Library, &[1.0]);
        r.failed
            .insert((Workload::Resize, 8, Side::Library), "checksum".into());
        let t = ratio_tables(&c, &r);
        assert!(t.contains("resize/8              FAIL\n"), "{t}");
        assert!(t.contains("geomean                  -\n"), "{t}");
        assert_eq!(failure_list(&r), "FAILED resize/8 library: checksum\n");
    }
}

//! The allocation traces recorded from real programs (bench/traces: the
//! shim, the capture script, the `TERNTRC1` format), embedded in `tern` so
//! that `tern bench` needs no checkout, and written out for a run.

use std::io::Read;
use std::path::Path;

/// `(name, gzip-compressed TERNTRC1 trace)` of every recorded trace.
const TRACES: [(&str, &[u8]); 4] = [
    ("python", include_bytes!("../traces/python.trace.gz")),
    ("cc1", include_bytes!("../traces/cc1.trace.gz")),
    ("sqlite", include_bytes!("../traces/sqlite.trace.gz")),
    ("git", include_bytes!("../traces/git.trace.gz")),
];

/// Bytes of a trace's header: the magic, the record count, the id count.
const HEADER: usize = 16;
/// Bytes of one record.
const RECORD: usize = 8;

/// The trace `name`, decompressed and checked; with `quick`, only its first
/// twentieth of records (objects still live then stay live to the end,
/// where every replayer frees what is left, so the shorter trace is one as
/// well).
pub fn load(name: &str, quick: bool) -> Result<Vec<u8>, String> {
    let gz = TRACES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| *b)
        .ok_or_else(|| format!("no recorded trace `{name}`"))?;
    let mut t = Vec::new();
    flate2::read::GzDecoder::new(gz)
        .read_to_end(&mut t)
        .map_err(|e| format!("trace `{name}`: {e}"))?;
    let records = check(name, &t)?;
    if quick {
        let keep = (records / 20).max(1);
        t.truncate(HEADER + RECORD * keep);
        t[8..12].copy_from_slice(&(keep as u32).to_le_bytes());
    }
    Ok(t)
}

/// Checks a trace's magic and length; returns its record count.
fn check(name: &str, t: &[u8]) -> Result<usize, String> {
    if t.len() < HEADER || &t[..8] != b"TERNTRC1" {
        return Err(format!("trace `{name}`: no TERNTRC1 header"));
    }
    let records = u32::from_le_bytes(t[8..12].try_into().expect("4 bytes")) as usize;
    if t.len() != HEADER + RECORD * records {
        return Err(format!(
            "trace `{name}`: {records} records promised, {} bytes",
            t.len()
        ));
    }
    Ok(records)
}

/// Writes the trace `name` (see [`load`]) to `path`.
pub fn write(name: &str, quick: bool, path: &Path) -> Result<(), String> {
    let t = load(name, quick)?;
    std::fs::write(path, t).map_err(|e| format!("cannot write `{}`: {e}", path.display()))
}

/// One `fnv1a-64  bytes  what` line per embedded trace (its compressed
/// bytes), in the form of the run's other fingerprints.
pub fn fingerprints() -> String {
    TRACES
        .iter()
        .map(|(n, b)| {
            format!(
                "{:016x}  {:>10}  trace {n}.trace.gz\n",
                crate::machine::fnv1a(b),
                b.len()
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_trace_decompresses_whole_and_quick_keeps_a_twentieth() {
        for (name, _) in TRACES {
            let full = load(name, false).unwrap();
            let records = check(name, &full).unwrap();
            assert!(records > 100_000, "{name}: {records} records");
            let quick = load(name, true).unwrap();
            assert_eq!(check(name, &quick).unwrap(), records / 20, "{name}");
            assert_eq!(&quick[..8], &full[..8]);
            assert_eq!(
                &quick[12..HEADER],
                &full[12..HEADER],
                "{name}: id count kept"
            );
            assert_eq!(&quick[HEADER..], &full[HEADER..quick.len()], "{name}");
        }
        assert_eq!(load("nope", false).unwrap_err(), "no recorded trace `nope`");
    }

    #[test]
    fn a_trace_of_the_wrong_length_is_refused() {
        let mut t = load("sqlite", true).unwrap();
        t.pop();
        let e = check("sqlite", &t).unwrap_err();
        assert!(e.contains("records promised"), "{e}");
        assert!(check("x", b"TERNTRC2").is_err());
    }
}

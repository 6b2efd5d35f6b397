//! The allocation traces recorded from real programs (bench/traces: the
//! shim, the capture script, the `TERNTRC1` format), embedded in `tern` so
//! that `tern bench` needs no checkout, and written out for a run; and a
//! trace of the user's own (`--trace-file`), read from its file.
//!
//! Every trace is checked whole before a replay: the header, the length and
//! each record against the objects live at that point, so that no side is
//! handed an operation its replayer would have to trust (the C baseline
//! frees what the trace tells it to).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::pools::{LIBRARY_ARENA_BYTES, MAX_ARENA_BYTES};

mod text;

/// `(name, gzip-compressed TERNTRC1 trace)` of every recorded trace.
const TRACES: [(&str, &[u8]); 6] = [
    ("python", include_bytes!("../../traces/python.trace.gz")),
    ("cc1", include_bytes!("../../traces/cc1.trace.gz")),
    ("sqlite", include_bytes!("../../traces/sqlite.trace.gz")),
    ("git", include_bytes!("../../traces/git.trace.gz")),
    ("awk", include_bytes!("../../traces/awk.trace.gz")),
    ("perl", include_bytes!("../../traces/perl.trace.gz")),
];

/// Bytes of a trace's header: the magic, the record count, the id count.
const HEADER: usize = 16;
/// Bytes of one record.
const RECORD: usize = 8;
/// Ids are below this (a record's op takes the top two of its 32 bits).
const MAX_IDS: u32 = 1 << 30;

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
    finish(t, quick).map_err(|e| format!("trace `{name}`: {e}"))
}

/// The largest trace a file may hold, compressed or decompressed (1 GiB,
/// 134 million records; the recorded ones hold at most a million): reading
/// stops there rather than exhausting memory on a wrong file or a gzip bomb.
pub const MAX_TRACE_BYTES: u64 = 1 << 30;

/// The trace in the file at `path` (gzip-compressed or not, at most
/// [`MAX_TRACE_BYTES`] either way; `TERNTRC1`, or the text form of
/// [`text`]), checked, and shortened as [`load`] does with `quick`.
pub fn load_file(path: &Path, quick: bool) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    // A regular file's size is known before a byte is read (a sparse file
    // of 100 GB was read to the limit, a GiB of memory, first).
    if let Ok(meta) = file.metadata()
        && meta.is_file()
        && meta.len() > MAX_TRACE_BYTES
    {
        return Err(format!(
            "more than {MAX_TRACE_BYTES} bytes ({}), the limit for a trace",
            meta.len()
        ));
    }
    let t = read_trace(file, MAX_TRACE_BYTES)?;
    if t.starts_with(b"TERNTRC1") {
        return finish(t, quick);
    }
    let src = std::str::from_utf8(&t).map_err(|e| {
        format!(
            "neither a TERNTRC1 trace nor a text trace (byte {} is not UTF-8)",
            e.valid_up_to()
        )
    })?;
    finish(text::parse(src)?, quick)
}

/// The bytes of the trace `r` holds, decompressed if it is gzip, each form
/// at most `limit` bytes.
fn read_trace(r: impl Read, limit: u64) -> Result<Vec<u8>, String> {
    let over = |what: &str| format!("more than {limit} bytes{what}, the limit for a trace");
    let raw = read_capped(r, limit).map_err(|e| match e {
        Capped::Io(e) => format!("cannot read it: {e}"),
        Capped::Over => over(""),
    })?;
    if !raw.starts_with(&[0x1f, 0x8b]) {
        return Ok(raw);
    }
    // Every member, as `zcat` reads them: files joined with `cat` are one
    // gzip file, and bytes after the last member are an error, not ignored.
    let mut t = Vec::new();
    let read = flate2::read::MultiGzDecoder::new(&raw[..])
        .take(limit + 1)
        .read_to_end(&mut t);
    match read {
        // A file cut short, or damaged, or followed by other bytes: where
        // it broke, in what it had given (the bytes read so far stay in `t`).
        Err(e) => Err(format!(
            "the gzip file breaks off after {} bytes decompressed ({} bytes compressed in all): {e}",
            t.len(),
            raw.len()
        )),
        Ok(_) if t.len() as u64 > limit => Err(over(" decompressed")),
        Ok(_) => Ok(t),
    }
}

/// Why [`read_capped`] read nothing.
#[derive(Debug)]
enum Capped {
    Io(std::io::Error),
    /// The reader went past the limit.
    Over,
}

/// All of `r`, or [`Capped::Over`] once it passes `limit` bytes.
fn read_capped(r: impl Read, limit: u64) -> Result<Vec<u8>, Capped> {
    let mut t = Vec::new();
    r.take(limit + 1).read_to_end(&mut t).map_err(Capped::Io)?;
    if t.len() as u64 > limit {
        return Err(Capped::Over);
    }
    Ok(t)
}

/// Checks the decompressed trace `t` ([`check`], [`check_records`], that a
/// pool can hold it: [`footprint`]) and keeps its first twentieth with
/// `quick`.
fn finish(t: Vec<u8>, quick: bool) -> Result<Vec<u8>, String> {
    check(&t)?;
    check_records(&t)?;
    footprint(&t)?;
    Ok(shorten(t, quick))
}

/// What a replay of a trace asks of the pools (reserved address space: a
/// pool commits only the pages it touches, so room costs nothing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// The arena of the library and pure sides' pool: twice the trace's
    /// peak of live bytes (each size rounded up to 8, and a realloc's new
    /// size counted beside its old one, as a move holds both) plus its
    /// largest object, for first fit's fragmentation; rounded up to a GiB,
    /// at least [`LIBRARY_ARENA_BYTES`] (what every other workload
    /// reserves), at most [`MAX_ARENA_BYTES`]. (A trace that fragments
    /// past that fails its case with the pool's `exhausted` error.)
    pub arena: i64,
    /// The builtin pool the replay needs: that arena and the replayer's
    /// tables by object id (24 bytes an id) with a MiB of slack, at most
    /// [`MAX_ARENA_BYTES`]. Above the environment's `TERN_POOL_BYTES` (or
    /// [`crate::pools::BUILTIN_POOL_BYTES`] without one), `tern bench`
    /// sets it for the replay's runs.
    pub builtin: i64,
}

/// The [`Footprint`] of the checked trace `t`; an error when its peak of
/// live bytes alone exceeds the largest arena, which no pool can replay.
pub fn footprint(t: &[u8]) -> Result<Footprint, String> {
    let ids = u32::from_le_bytes(t[12..HEADER].try_into().expect("4 bytes")) as usize;
    // Sizes in granules of 8 bytes (below 2^29): 4 bytes an id.
    let mut granules = vec![0u32; ids];
    let (mut live, mut peak, mut largest) = (0i64, 0i64, 0i64);
    for rec in t[HEADER..].chunks_exact(RECORD) {
        let w = u32::from_le_bytes(rec[..4].try_into().expect("4 bytes"));
        let size = u32::from_le_bytes(rec[4..].try_into().expect("4 bytes"));
        let g = (size as u64).div_ceil(8) as u32;
        let was = &mut granules[(w & 0x3fff_ffff) as usize];
        let (old, new) = (*was as i64 * 8, g as i64 * 8);
        match w >> 30 {
            1 => {
                live -= old;
                *was = 0;
            }
            op => {
                // A realloc (op 2) that moves holds both spans a moment.
                if op == 2 {
                    peak = peak.max(live + new);
                }
                live += new - old;
                *was = g;
            }
        }
        peak = peak.max(live);
        largest = largest.max(new);
    }
    if peak > MAX_ARENA_BYTES {
        return Err(format!(
            "it keeps {peak} bytes live at once, more than a pool's largest arena ({MAX_ARENA_BYTES} bytes)"
        ));
    }
    // The builtin side's replayer keeps its tables in the same pool.
    let tables = 24 * ids as i64 + (1 << 20);
    if peak > MAX_ARENA_BYTES - tables {
        return Err(format!(
            "it keeps {peak} bytes live at once; with the builtin side's tables by object id ({tables} bytes) that is more than a pool's largest arena ({MAX_ARENA_BYTES} bytes)"
        ));
    }
    const GIB: i64 = 1 << 30;
    let wanted = (2 * peak + largest + GIB - 1) / GIB * GIB;
    let arena = wanted.clamp(LIBRARY_ARENA_BYTES, MAX_ARENA_BYTES);
    let builtin = (arena + tables).min(MAX_ARENA_BYTES);
    Ok(Footprint { arena, builtin })
}

/// With `quick`, the first twentieth of the records of the checked trace
/// `t` (at least one); else `t`.
fn shorten(mut t: Vec<u8>, quick: bool) -> Vec<u8> {
    if quick {
        let records = (t.len() - HEADER) / RECORD;
        let keep = (records / 20).max(1).min(records);
        t.truncate(HEADER + RECORD * keep);
        t[8..12].copy_from_slice(&(keep as u32).to_le_bytes());
    }
    t
}

/// A trace of the user's own (`--trace-file`), read and checked once when
/// the arguments are: what the run copies into its folder, replays and
/// fingerprints, so a file changed during the run changes none of them.
#[derive(Clone, PartialEq)]
pub struct FileTrace {
    /// The file, as the command line named it.
    pub path: PathBuf,
    /// Its trace, decompressed and checked.
    trace: Arc<Vec<u8>>,
}

impl FileTrace {
    /// Reads and checks the trace in `path` ([`load_file`]).
    pub fn read(path: &Path) -> Result<FileTrace, String> {
        Ok(FileTrace {
            path: path.to_path_buf(),
            trace: Arc::new(load_file(path, false)?),
        })
    }

    /// Writes the trace (its first twentieth with `quick`) to `to`;
    /// returns its [`Footprint`].
    pub fn write(&self, quick: bool, to: &Path) -> Result<Footprint, String> {
        save(shorten(self.trace.to_vec(), quick), to)
    }

    /// The fingerprint line of the trace (decompressed), in the form of
    /// [`fingerprints`]'; with `quick`, a second line for what was replayed
    /// and saved under `traces/` (its first twentieth).
    pub fn fingerprint(&self, quick: bool) -> String {
        let mut out = format!(
            "{:016x}  {:>10}  trace file {}\n",
            crate::machine::fnv1a(&self.trace),
            self.trace.len(),
            crate::machine::shell_word(&self.path.to_string_lossy())
        );
        if quick {
            let short = shorten(self.trace.to_vec(), true);
            out.push_str(&format!(
                "{:016x}  {:>10}  trace file, its first twentieth (--quick): traces/file.trace\n",
                crate::machine::fnv1a(&short),
                short.len()
            ));
        }
        out
    }
}

impl std::fmt::Debug for FileTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "FileTrace({}, {} bytes)",
            self.path.display(),
            self.trace.len()
        )
    }
}

/// Checks a trace's magic and length; returns its record count.
fn check(t: &[u8]) -> Result<usize, String> {
    if !t.starts_with(b"TERNTRC1") {
        return Err("no TERNTRC1 header".to_string());
    }
    if t.len() < HEADER {
        return Err(format!(
            "a TERNTRC1 header of {} bytes, not {HEADER} (the record and id counts are missing)",
            t.len()
        ));
    }
    // Ids are below 2^30 (the record's op takes the top two bits); a larger
    // count would only make every replayer reserve a table for nothing.
    let ids = u32::from_le_bytes(t[12..HEADER].try_into().expect("4 bytes"));
    if ids > MAX_IDS {
        return Err(format!("an id count of {ids}, past 2^30"));
    }
    let records = u32::from_le_bytes(t[8..12].try_into().expect("4 bytes")) as usize;
    if t.len() != HEADER + RECORD * records {
        return Err(format!("{records} records promised, {} bytes", t.len()));
    }
    Ok(records)
}

/// Checks every record of a trace whose header and length [`check`] has
/// accepted: no more ids than records, an op of 0 (alloc), 1 (free) or 2
/// (realloc), an id below the header's count, an alloc of an id not live,
/// a free or realloc of one that is, a free of size 0 and a realloc of a
/// positive size (what bench/traces/convert.py writes).
fn check_records(t: &[u8]) -> Result<(), String> {
    let ids = u32::from_le_bytes(t[12..HEADER].try_into().expect("4 bytes")) as usize;
    // Every id is allocated at least once in a trace convert.py writes:
    // more ids than records would only make the replayers' tables by id
    // (and [`footprint`]'s) larger than the file.
    let records = (t.len() - HEADER) / RECORD;
    if ids > records {
        return Err(format!(
            "an id count of {ids}, more than its {records} records"
        ));
    }
    let mut live = vec![false; ids];
    for (r, rec) in t[HEADER..].chunks_exact(RECORD).enumerate() {
        let w = u32::from_le_bytes(rec[..4].try_into().expect("4 bytes"));
        let size = u32::from_le_bytes(rec[4..].try_into().expect("4 bytes"));
        let (op, id) = (w >> 30, (w & 0x3fff_ffff) as usize);
        let fail = |what: String| Err(format!("record {r}: {what}"));
        let Some(was) = live.get_mut(id) else {
            return fail(format!("object {id}, but the header counts {ids} ids"));
        };
        match (op, *was) {
            (0, false) => *was = true,
            (1, true) if size == 0 => *was = false,
            (2, true) if size > 0 => {}
            (0, true) => return fail(format!("allocates object {id}, which is live")),
            (1, false) => return fail(format!("frees object {id}, which is not live")),
            (2, false) => return fail(format!("reallocates object {id}, which is not live")),
            (1, true) => return fail(format!("frees object {id} with size {size}, not 0")),
            (2, true) => return fail(format!("reallocates object {id} to 0 bytes")),
            _ => {
                return fail(format!(
                    "op {op} is none of 0 (alloc), 1 (free), 2 (realloc)"
                ));
            }
        }
    }
    Ok(())
}

/// Writes the trace `name` (see [`load`]) to `path`; returns its
/// [`Footprint`].
pub fn write(name: &str, quick: bool, path: &Path) -> Result<Footprint, String> {
    save(load(name, quick)?, path)
}

/// Writes the checked trace `t` to `path`; returns its [`Footprint`].
fn save(t: Vec<u8>, path: &Path) -> Result<Footprint, String> {
    let f = footprint(&t)?;
    std::fs::write(path, t).map_err(|e| format!("cannot write `{}`: {e}", path.display()))?;
    Ok(f)
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
            let records = check(&full).unwrap();
            assert!(records > 100_000, "{name}: {records} records");
            let quick = load(name, true).unwrap();
            assert_eq!(check(&quick).unwrap(), records / 20, "{name}");
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
        let records = (t.len() - HEADER) / RECORD;
        t.pop();
        assert_eq!(
            check(&t).unwrap_err(),
            format!("{records} records promised, {} bytes", t.len())
        );
        assert_eq!(check(b"TERNTRC2").unwrap_err(), "no TERNTRC1 header");
        assert_eq!(
            check(b"TERNTRC1").unwrap_err(),
            "a TERNTRC1 header of 8 bytes, not 16 (the record and id counts are missing)"
        );
        let mut t = trace(1 << 30, &[(0, 0, 8)]);
        assert_eq!(check(&t), Ok(1));
        t[12..HEADER].copy_from_slice(&((1u32 << 30) + 1).to_le_bytes());
        assert_eq!(
            check(&t).unwrap_err(),
            "an id count of 1073741825, past 2^30"
        );
    }

    /// A trace of `(op, id, size)` records over `ids` ids.
    fn trace(ids: u32, records: &[(u32, u32, u32)]) -> Vec<u8> {
        let mut t = b"TERNTRC1".to_vec();
        t.extend((records.len() as u32).to_le_bytes());
        t.extend(ids.to_le_bytes());
        for &(op, id, size) in records {
            t.extend((op << 30 | id).to_le_bytes());
            t.extend(size.to_le_bytes());
        }
        t
    }

    #[test]
    fn records_are_checked_against_the_live_objects() {
        let ok = [(0, 0, 16), (2, 0, 40), (0, 1, 0), (1, 0, 0), (0, 0, 8)];
        assert_eq!(check_records(&trace(2, &ok)), Ok(()));
        for (records, why) in [
            (
                vec![(0, 2, 8)],
                "record 0: object 2, but the header counts 2 ids",
            ),
            (
                vec![(0, 0, 8), (0, 0, 8)],
                "record 1: allocates object 0, which is live",
            ),
            (
                vec![(1, 1, 0)],
                "record 0: frees object 1, which is not live",
            ),
            (
                vec![(2, 0, 8)],
                "record 0: reallocates object 0, which is not live",
            ),
            (
                vec![(0, 0, 8), (1, 0, 8)],
                "record 1: frees object 0 with size 8, not 0",
            ),
            (
                vec![(0, 0, 8), (2, 0, 0)],
                "record 1: reallocates object 0 to 0 bytes",
            ),
            (
                vec![(3, 0, 8)],
                "record 0: op 3 is none of 0 (alloc), 1 (free), 2 (realloc)",
            ),
        ] {
            // Two records at least, for the two ids (the failing one comes first).
            let mut records = records;
            records.resize(records.len().max(2), (0, 1, 8));
            assert_eq!(check_records(&trace(2, &records)), Err(why.to_string()));
        }
        assert_eq!(
            check_records(&trace(3, &[(0, 0, 8), (0, 1, 8)])),
            Err("an id count of 3, more than its 2 records".to_string())
        );
    }

    #[test]
    fn a_replay_reserves_room_for_twice_its_peak() {
        const GIB: i64 = 1 << 30;
        // Peak: 16 + 40 live and the 48 a move of object 1 takes beside its 40.
        let small = [(0, 0, 9), (0, 1, 33), (2, 1, 41), (1, 0, 0), (1, 1, 0)];
        assert_eq!(
            footprint(&trace(2, &small)),
            Ok(Footprint {
                arena: GIB,
                builtin: GIB + 48 + (1 << 20)
            })
        );
        // Two objects of 4 GiB: 2 * 8 + 4 GiB, more than the largest arena.
        let big = [(0, 0, u32::MAX), (0, 1, u32::MAX), (1, 0, 0), (1, 1, 0)];
        assert_eq!(
            footprint(&trace(2, &big)),
            Ok(Footprint {
                arena: MAX_ARENA_BYTES,
                builtin: MAX_ARENA_BYTES
            })
        );
        // One of 4 GiB and one of 1 GiB: 2 * 5 + 4 = 14 GiB.
        let mid = [(0, 0, u32::MAX), (0, 1, 1 << 30), (1, 0, 0), (1, 1, 0)];
        assert_eq!(footprint(&trace(2, &mid)).map(|f| f.arena), Ok(14 * GIB));
        // Four live at once: 16 GiB, past the largest arena by 8 bytes.
        let huge: Vec<_> = (0..4).map(|id| (0, id, u32::MAX)).collect();
        assert_eq!(
            footprint(&trace(4, &huge)),
            Err(format!(
                "it keeps {} bytes live at once, more than a pool's largest arena ({} bytes)",
                16 * GIB,
                MAX_ARENA_BYTES
            ))
        );
        // 56 bytes under the largest arena: no room for the builtin side's
        // tables (it once passed the check and failed its replay).
        let edge = [
            (0, 0, u32::MAX),
            (0, 1, u32::MAX),
            (0, 2, u32::MAX),
            (0, 3, 4_294_967_231),
        ];
        assert_eq!(
            footprint(&trace(4, &edge)),
            Err(format!(
                "it keeps {} bytes live at once; with the builtin side's tables by object id ({} bytes) that is more than a pool's largest arena ({} bytes)",
                MAX_ARENA_BYTES - 56,
                96 + (1 << 20),
                MAX_ARENA_BYTES
            ))
        );
        let f = std::env::temp_dir().join(format!("tern-trace-huge-{}", std::process::id()));
        std::fs::write(&f, trace(4, &huge)).unwrap();
        assert!(
            load_file(&f, false)
                .unwrap_err()
                .starts_with("it keeps 17179869184 bytes")
        );
        std::fs::remove_file(&f).unwrap();
        // The recorded traces keep a few MB live: the default arena.
        for (name, _) in TRACES {
            let f = footprint(&load(name, false).unwrap()).unwrap();
            assert_eq!(f.arena, LIBRARY_ARENA_BYTES, "{name}");
            assert!(f.builtin < crate::pools::BUILTIN_POOL_BYTES, "{name}");
        }
    }

    #[test]
    fn a_trace_file_is_read_compressed_or_not() {
        let dir = std::env::temp_dir().join(format!("tern-trace-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = trace(1, &[(0, 0, 16), (1, 0, 0)]);
        let raw = dir.join("t.trace");
        std::fs::write(&raw, &t).unwrap();
        assert_eq!(load_file(&raw, false).unwrap(), t);
        let gz = dir.join("t.trace.gz");
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, &t).unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        assert_eq!(load_file(&gz, false).unwrap(), t);
        std::fs::write(&raw, &t[..t.len() - 1]).unwrap();
        assert_eq!(
            load_file(&raw, false).unwrap_err(),
            "2 records promised, 31 bytes"
        );
        assert_eq!(
            read_trace(&t[..], 31).unwrap_err(),
            "more than 31 bytes, the limit for a trace"
        );
        assert_eq!(read_trace(&t[..], 32).unwrap(), t);
        // A gzip file within the limit whose contents are not.
        let long = trace(1, &[(0, 0, 16), (1, 0, 0)].repeat(50));
        let limit = long.len() as u64 - 1;
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, &long).unwrap();
        let small = e.finish().unwrap();
        assert!((small.len() as u64) < limit);
        assert_eq!(
            read_trace(&small[..], limit).unwrap_err(),
            format!("more than {limit} bytes decompressed, the limit for a trace")
        );
        assert_eq!(read_trace(&small[..], limit + 1).unwrap(), long);
        // Cut short (its trailer's size word gone): where it broke.
        let e = read_trace(&small[..small.len() - 4], limit + 1).unwrap_err();
        assert_eq!(
            e,
            format!(
                "the gzip file breaks off after {} bytes decompressed ({} bytes compressed in all): \
                 unexpected end of file",
                long.len(),
                small.len() - 4
            )
        );
        // Its header only: nothing came out.
        let e = read_trace(&small[..10], limit + 1).unwrap_err();
        assert_eq!(
            e,
            "the gzip file breaks off after 0 bytes decompressed (10 bytes compressed in all): \
             incomplete deflate stream"
        );
        let e = load_file(&dir.join("none"), false).unwrap_err();
        assert!(e.starts_with("cannot read it: "), "{e}");
        // A (sparse) file larger than the limit is refused by its size,
        // before a byte is read.
        let sparse = dir.join("sparse.trace");
        std::fs::File::create(&sparse)
            .unwrap()
            .set_len(MAX_TRACE_BYTES + 1)
            .unwrap();
        assert_eq!(
            load_file(&sparse, false).unwrap_err(),
            format!(
                "more than {MAX_TRACE_BYTES} bytes ({}), the limit for a trace",
                MAX_TRACE_BYTES + 1
            )
        );
        std::fs::remove_file(&sparse).unwrap();
        // The text form, plain or gzip: the same records, checked the same.
        let txt = dir.join("t.txt");
        std::fs::write(&txt, "alloc 0x7f10 16\nfree 0x7f10\n").unwrap();
        assert_eq!(load_file(&txt, false).unwrap(), t);
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut e, b"a,x,16\nf,x\n").unwrap();
        std::fs::write(&gz, e.finish().unwrap()).unwrap();
        assert_eq!(load_file(&gz, false).unwrap(), t);
        // Two gzip members joined with `cat` are one file, as for `zcat`;
        // bytes after the last member are an error.
        let member = |text: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            std::io::Write::write_all(&mut e, text).unwrap();
            e.finish().unwrap()
        };
        let mut joined = member(b"alloc x 16\n");
        joined.extend(member(b"free x\n"));
        std::fs::write(&gz, &joined).unwrap();
        assert_eq!(load_file(&gz, false).unwrap(), t);
        joined.extend(member(b"free x\n"));
        std::fs::write(&gz, &joined).unwrap();
        assert_eq!(
            load_file(&gz, false).unwrap_err(),
            "line 3: frees object `x`, which is not live"
        );
        joined.truncate(joined.len() - member(b"free x\n").len());
        joined.extend(b"garbage");
        std::fs::write(&gz, &joined).unwrap();
        // Bytes after the last member: where they start, in what came out.
        let e = load_file(&gz, false).unwrap_err();
        assert_eq!(
            e,
            format!(
                "the gzip file breaks off after 18 bytes decompressed ({} bytes compressed in all): \
                 unexpected end of file",
                joined.len()
            )
        );
        std::fs::write(&txt, "alloc x 16\nfree x\nfree x\n").unwrap();
        assert_eq!(
            load_file(&txt, false).unwrap_err(),
            "line 3: frees object `x`, which is not live"
        );
        std::fs::write(&txt, b"TERNTRC2\xff").unwrap();
        assert_eq!(
            load_file(&txt, false).unwrap_err(),
            "neither a TERNTRC1 trace nor a text trace (byte 8 is not UTF-8)"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

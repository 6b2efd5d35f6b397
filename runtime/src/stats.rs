//! Pool statistics for measurements: the arena high-water mark of every kind
//! of pool a program used, written when the program ends normally to the
//! file named by `TERN_POOL_STATS` (nothing happens when it is unset).
//! `tern bench` reads it for its "Pool high-water mark" table.
//!
//! A pool's high-water mark is the highest end offset of any allocation it
//! ever held: how much of its arena the placement policy reached, whatever
//! was freed since. The file has one line per kind of pool that existed,
//! `KIND BYTES`, in this order:
//!
//! * `builtin`: the builtin pool behind `reusable[]T` (its boundary record
//!   keeps the mark, see `span_tree::extents`);
//! * `library`: the largest mark of any library pool (`slice_pool`), finished
//!   or still live at the end (from the boundary records too);
//! * `pure`: the largest mark a pool written in Tern (`slice_pool_pure`)
//!   reported when it released its memory
//!   (`crate::abi::stats::tern_stats_note_high_water`).

use std::sync::atomic::{AtomicI64, Ordering};

/// The largest mark reported by Tern pools; -1 while none reported.
static PURE: AtomicI64 = AtomicI64::new(-1);

/// Folds the mark a Tern pool reported (`tern_stats_note_high_water`).
pub(crate) fn note_pure(high_water: i64) {
    if high_water >= 0 {
        PURE.fetch_max(high_water, Ordering::Relaxed);
    }
}

/// The report's text (see the module docs).
pub fn report() -> String {
    let mut out = String::new();
    if let Some(b) = crate::builtin::high_water() {
        out.push_str(&format!("builtin {b}\n"));
    }
    let library = crate::span_tree::library::high_water();
    let pure = Some(PURE.load(Ordering::Relaxed)).filter(|m| *m >= 0);
    for (kind, mark) in [("library", library), ("pure", pure)] {
        if let Some(mark) = mark {
            out.push_str(&format!("{kind} {mark}\n"));
        }
    }
    out
}

/// Writes [`report`] to the file `TERN_POOL_STATS` names, if it is set.
/// The file is created, or replaced when it already holds a report (or
/// nothing); any other file is left as it is, with a warning: the variable
/// may name the program's own source by mistake. A write error is reported
/// on stderr too; the program's status is unchanged either way.
pub fn write_if_requested() {
    let Some(path) = std::env::var_os("TERN_POOL_STATS") else {
        return;
    };
    let path = std::path::Path::new(&path);
    if let Err(why) = write_report(path, &report()) {
        eprintln!(
            "warning: cannot write TERN_POOL_STATS file `{}`: {why}",
            path.display()
        );
    }
}

/// The longest file [`write_report`] reads to decide whether it is a report
/// (three lines of a kind and an `i64`: under 100 bytes).
const MAX_REPORT_BYTES: u64 = 4096;

/// Writes `text` to `path`, created if missing; an existing regular file only
/// when it [`is_report`] or is empty (a device or a pipe, `/dev/stderr`, is
/// written as it is: there is nothing in it to lose). What the file is, is
/// judged on the file opened, not on its name, so nothing can be swapped in
/// between. `Err` says why nothing was written.
fn write_report(path: &std::path::Path, text: &str) -> Result<(), String> {
    use std::io::{Read as _, Seek as _, Write as _};
    let err = |e: std::io::Error| e.to_string();
    // `O_EXCL`: a new file, never one through a link left at the name.
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
    {
        Ok(mut f) => return f.write_all(text.as_bytes()).map_err(err),
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e.to_string()),
        Err(_) => {}
    }
    // A name that was no link when checked is opened as none (a file
    // swapped for a link since is refused, not followed).
    let trusted_link = crate::output_names::refuse_planted_link(path)?;
    let nofollow = if trusted_link { 0 } else { libc::O_NOFOLLOW };
    let named = if trusted_link {
        std::fs::metadata(path)
    } else {
        std::fs::symlink_metadata(path)
    };
    // A FIFO (not the program's own stdout or stderr) is written only to a
    // reader that is there, opened write-only without waiting: opened
    // read-write, it took the report whether or not anything read it (it
    // went nowhere, without a word), and a reader waiting on it saw this
    // process's open, then its end, and nothing.
    if let Ok(m) = &named
        && is_fifo(m)
        && crate::output_names::descriptor_of(m).is_none()
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        let mut to = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK | nofollow)
            .open(path)
            .map_err(|e| match e.raw_os_error() {
                Some(libc::ENXIO) => "it is a FIFO that no process reads".to_string(),
                _ => e.to_string(),
            })?;
        if !is_fifo(&to.metadata().map_err(err)?) {
            return Err(REPLACED.to_string());
        }
        return to.write_all(text.as_bytes()).map_err(err);
    }
    let mut f = {
        use std::os::unix::fs::OpenOptionsExt as _;
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(nofollow)
            .open(path)
            .map_err(err)?
    };
    let meta = f.metadata().map_err(err)?;
    {
        use std::os::unix::fs::FileTypeExt as _;
        if meta.file_type().is_block_device() {
            return Err("it is a block device; left unchanged".to_string());
        }
        // The program's own stdout or stderr (`/dev/stdout` of a shell's
        // `>> log`): written through that descriptor, at its offset and in
        // its append mode, never emptied first.
        if let Some(fd) = crate::output_names::descriptor_of(&meta) {
            // SAFETY: fd 1 or 2 stays open for the process's life; the
            // `File` must not close it.
            let mut out = std::mem::ManuallyDrop::new(unsafe {
                <std::fs::File as std::os::fd::FromRawFd>::from_raw_fd(fd)
            });
            return out.write_all(text.as_bytes()).map_err(err);
        }
        // A FIFO swapped in since the name was looked at.
        if is_fifo(&meta) {
            return Err(REPLACED.to_string());
        }
    }
    if meta.is_file() {
        let mut old = Vec::new();
        (&mut f)
            .take(MAX_REPORT_BYTES + 1)
            .read_to_end(&mut old)
            .map_err(err)?;
        let ours =
            old.len() as u64 <= MAX_REPORT_BYTES && std::str::from_utf8(&old).is_ok_and(is_report);
        if !ours {
            return Err(
                "it exists and is not a pool statistics report; left unchanged".to_string(),
            );
        }
        f.set_len(0).map_err(err)?;
        f.rewind().map_err(err)?;
    }
    f.write_all(text.as_bytes()).map_err(err)
}

/// Why nothing was written when the file changed under the name.
const REPLACED: &str = "it was replaced while being written; left unchanged";

fn is_fifo(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::FileTypeExt as _;
    meta.file_type().is_fifo()
}

/// Whether `text` has the shape [`report`] writes: lines `KIND BYTES`, each
/// of the three kinds at most once and in that order, nothing else (the
/// empty report included); a log of several runs' reports is not one.
fn is_report(text: &str) -> bool {
    let kinds = ["builtin", "library", "pure"];
    let mut next = 0;
    text.lines().all(|line| {
        line.split_once(' ').is_some_and(|(kind, bytes)| {
            let Some(k) = kinds.iter().position(|&n| n == kind) else {
                return false;
            };
            let in_order = k >= next;
            next = k + 1;
            in_order && bytes.parse::<i64>().is_ok()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_report_or_an_empty_file_is_replaced() {
        let dir = std::env::temp_dir().join(format!("tern-stats-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("stats");
        let _ = std::fs::remove_file(&file);
        write_report(&file, "builtin 8\n").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "builtin 8\n");
        write_report(&file, "builtin 16\npure 24\n").unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "builtin 16\npure 24\n"
        );
        write_report(&file, "builtin 8\n").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "builtin 8\n");
        std::fs::write(&file, "").unwrap();
        write_report(&file, "pure 8\n").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "pure 8\n");
        // A log of several runs' reports is no report: kept.
        for other in [
            "fn main() {}\n",
            "builtin 8\nbuiltin eight\n",
            "heap 8\n",
            "builtin 1024\nbuiltin 2048\nlibrary 77\n",
            "pure 8\nbuiltin 8\n",
        ] {
            std::fs::write(&file, other).unwrap();
            assert_eq!(
                write_report(&file, "builtin 8\n").unwrap_err(),
                "it exists and is not a pool statistics report; left unchanged"
            );
            assert_eq!(std::fs::read_to_string(&file).unwrap(), other);
        }
        // A device is written as it is.
        write_report(std::path::Path::new("/dev/null"), "builtin 8\n").unwrap();
        // A link this user made is followed; whether another user's in a
        // shared folder would be is `refuse_planted_link`'s (not testable
        // without a second user).
        let link = dir.join("link");
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&file, &link).unwrap();
        std::fs::write(&file, "").unwrap();
        write_report(&link, "library 8\n").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "library 8\n");
        let big = "builtin 8\n".repeat(500);
        std::fs::write(&file, &big).unwrap();
        assert!(write_report(&file, "builtin 8\n").is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), big);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

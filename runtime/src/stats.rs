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
//! * `library`: the largest mark of any checked pool (`slice_pool`), finished
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
    if let Some(b) = crate::builtin::with_existing(|p| p.high_water()) {
        out.push_str(&format!("builtin {b}\n"));
    }
    let library = crate::span_tree::checked::high_water();
    let pure = Some(PURE.load(Ordering::Relaxed)).filter(|m| *m >= 0);
    for (kind, mark) in [("library", library), ("pure", pure)] {
        if let Some(mark) = mark {
            out.push_str(&format!("{kind} {mark}\n"));
        }
    }
    out
}

/// Writes [`report`] to the file `TERN_POOL_STATS` names, if it is set.
/// A write error is reported on stderr; the program's status is unchanged.
pub fn write_if_requested() {
    if let Some(path) = std::env::var_os("TERN_POOL_STATS")
        && let Err(e) = std::fs::write(&path, report())
    {
        eprintln!(
            "warning: cannot write TERN_POOL_STATS file `{}`: {e}",
            std::path::Path::new(&path).display()
        );
    }
}

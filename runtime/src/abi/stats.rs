//! Statistics a measurement asks the runtime to keep (see [`crate::stats`]).

/// A pool implemented in Tern (`slice_pool_pure`) reports its arena's
/// high-water mark in bytes (the highest end offset of any allocation it
/// held) when it releases its memory; the runtime keeps the largest for the
/// `TERN_POOL_STATS` report. Negative values are ignored.
#[unsafe(no_mangle)]
pub extern "C" fn tern_stats_note_high_water(bytes: i64) {
    crate::stats::note_pure(bytes);
}

//! The exit statuses a Tern program ends with besides its own: a leaf, so
//! the failure path and the output buffer, which both end processes, share
//! them without depending on each other.

/// Exit status of a Tern program that failed at run time.
pub const FAILURE_STATUS: i32 = 101;

/// Exit status of a process killed by `SIGPIPE`, as shells report it, for
/// the case where raising the signal itself fails.
pub const SIGPIPE_STATUS: i32 = 128 + 13;

//! The constants `stdlib/*.tern` mirror, gathered from the modules that
//! define them (layout, error codes, the boundary record, the sanitizer's
//! address mask), so one test can compare both sides. Apart so that those
//! modules do not depend on each other for it.

use super::{error, extents, layout};

/// Every constant the stdlib's Tern code mirrors, by the name it should carry
/// there (`const NAME: i64 = VALUE;`), so one test can compare the two sides.
pub const MIRRORED: &[(&str, i64)] = &[
    ("FANOUT", layout::FANOUT as i64),
    ("HEADER_WORDS", layout::HEADER_WORDS as i64),
    ("H_MAGIC", layout::H_MAGIC as i64),
    ("H_POOL_ID", layout::H_POOL_ID as i64),
    ("H_ROOT", layout::H_ROOT as i64),
    ("H_HEIGHT", layout::H_HEIGHT as i64),
    ("H_FREE_HEAD", layout::H_FREE_HEAD as i64),
    ("H_NODES_USED", layout::H_NODES_USED as i64),
    ("H_SPANS", layout::H_SPANS as i64),
    ("H_FREE_BYTES", layout::H_FREE_BYTES as i64),
    ("H_ARENA_BYTES", layout::H_ARENA_BYTES as i64),
    ("H_NODE_CAP", layout::H_NODE_CAP as i64),
    ("MAGIC", layout::MAGIC),
    ("NONE", layout::NONE),
    ("N_COUNT", layout::N_COUNT as i64),
    ("N_LEVEL", layout::N_LEVEL as i64),
    ("N_NEXT_FREE", layout::N_NEXT_FREE as i64),
    ("N_RESERVED", layout::N_RESERVED as i64),
    ("N_KEYS", layout::N_KEYS as i64),
    ("N_LENS", layout::N_LENS as i64),
    ("N_KIDS", layout::N_KIDS as i64),
    ("NODE_WORDS", layout::NODE_WORDS as i64),
    ("SENTINELS", layout::SENTINELS as i64),
    ("EMPTY_KEY", layout::EMPTY_KEY as i64),
    ("MIN_FILL", layout::MIN_FILL as i64),
    ("GRANULE", layout::GRANULE),
    ("MAX_ARENA_BYTES", layout::MAX_ARENA_BYTES),
    ("MAX_HEIGHT", layout::MAX_HEIGHT as i64),
    ("MUST_MOVE", error::MUST_MOVE),
    ("EXHAUSTED", error::EXHAUSTED),
    ("DOUBLE_FREE", error::DOUBLE_FREE),
    ("OUTSIDE_ARENA", error::OUTSIDE_ARENA),
    ("BAD_SIZE", error::BAD_SIZE),
    ("BAD_POOL", error::BAD_POOL),
    ("STALE_FREE", error::STALE_FREE),
    ("STALE_RESIZE", error::STALE_RESIZE),
    ("NODES_EXHAUSTED", error::NODES_EXHAUSTED),
    ("RESERVE_FAILED", error::RESERVE_FAILED),
    ("RESIZE_FREE_SPAN", error::RESIZE_FREE_SPAN),
    ("CORRUPT_OVERLAP", error::CORRUPT_OVERLAP),
    ("NOT_RESERVED", error::NOT_RESERVED),
    ("LEAKED", error::LEAKED),
    ("CORRUPT_HEADER_BASE", error::CORRUPT_HEADER_BASE),
    ("CORRUPT_NODE_BASE", error::CORRUPT_NODE_BASE),
    ("CORRUPT_FIELD_SPAN", error::CORRUPT_FIELD_SPAN),
    ("SMALL", extents::SMALL as i64),
    ("ADDR_MASK", crate::sanitize::ADDR_MASK),
];

//! The span tree's memory layout — the ONE place it is defined.
//!
//! Everything the tree keeps is a 64-bit word (`i64`), so the same layout can sit in
//! runtime memory (the builtin pool) or in program memory (the library's
//! `slice_pool`, which reads it through an `[]i64` view). `stdlib/slice_pool.tern`
//! mirrors the constants below; a test compares the two.
//!
//! # Header (`HEADER_WORDS` words, kept apart from the nodes)
//!
//! | word | const | meaning |
//! |---|---|---|
//! | 0 | [`H_MAGIC`] | [`MAGIC`] once initialised |
//! | 1 | [`H_POOL_ID`] | registry id of a checked pool (0 for an unchecked pool) |
//! | 2 | [`H_ROOT`] | node index of the root |
//! | 3 | [`H_HEIGHT`] | number of levels (1 = the root is a leaf) |
//! | 4 | [`H_FREE_HEAD`] | head of the stack of free nodes ([`NONE`] when empty) |
//! | 5 | [`H_NODES_USED`] | high-water mark: nodes `0..used` have been handed out |
//! | 6 | [`H_SPANS`] | number of free spans in the tree |
//! | 7 | [`H_FREE_BYTES`] | total bytes in free spans |
//! | 8 | [`H_ARENA_BYTES`] | arena size in bytes (informational; checked code uses the registry) |
//! | 9 | [`H_NODE_CAP`] | node capacity (informational; checked code uses the registry) |
//!
//! # Node (`node_words(F)` words, node `i` starts at word `i * node_words(F)`)
//!
//! | words | meaning in a leaf (level 0) | meaning in an internal node |
//! |---|---|---|
//! | [`N_COUNT`] | number of spans | number of children |
//! | [`N_LEVEL`] | 0 | height above the leaves (1, 2, ...) |
//! | [`N_NEXT_FREE`] | next node on the free stack while the node is free | same |
//! | [`N_RESERVED`] | 0 | 0 |
//! | `keys_at(F) ..+F` | span offsets, strictly increasing | smallest offset in each child's subtree |
//! | `lens_at(F) ..+F` | span lengths | largest span length in each child's subtree |
//! | `children_at(F) ..+F` | unused | child node indices |
//!
//! Per-child maxima are contiguous (`lens`) so the first child that can hold `n`
//! bytes is found by one tight scan.
//!
//! Slots past a node's count are **empty**: key `i64::MAX`, length 0 (children
//! unspecified). The node scans read all F slots of a node without
//! masking by the count (`super::scan`), and `slice_pool_pure` keeps the same
//! words, so the runtime's tree and the Tern one stay identical word for word.

/// The fanout the pools use (entries per node). Chosen by measurement: see
/// `docs/benchmarks.md` ("Fanout").
pub const FANOUT: usize = 32;

/// Header word: magic number, [`MAGIC`] once initialised.
pub const H_MAGIC: usize = 0;
/// Header word: registry id of a checked pool; 0 for an unchecked pool.
pub const H_POOL_ID: usize = 1;
/// Header word: node index of the root.
pub const H_ROOT: usize = 2;
/// Header word: number of tree levels (1 = the root is a leaf).
pub const H_HEIGHT: usize = 3;
/// Header word: head of the free-node stack, [`NONE`] when empty.
pub const H_FREE_HEAD: usize = 4;
/// Header word: nodes `0..H_NODES_USED` have been handed out at least once.
pub const H_NODES_USED: usize = 5;
/// Header word: number of free spans.
pub const H_SPANS: usize = 6;
/// Header word: total free bytes.
pub const H_FREE_BYTES: usize = 7;
/// Header word: arena size in bytes (informational for checked pools).
pub const H_ARENA_BYTES: usize = 8;
/// Header word: node capacity (informational for checked pools).
pub const H_NODE_CAP: usize = 9;
/// Number of words in a tree header.
pub const HEADER_WORDS: usize = 10;

/// Value of [`H_MAGIC`] in an initialised header ("TERNSPN1" in ASCII).
pub const MAGIC: i64 = 0x5445_524E_5350_4E31;
/// "No node" in index-valued words.
pub const NONE: i64 = -1;

/// Node word: number of entries.
pub const N_COUNT: usize = 0;
/// Node word: level (0 = leaf).
pub const N_LEVEL: usize = 1;
/// Node word: next node on the free stack while this node is free.
pub const N_NEXT_FREE: usize = 2;
/// Node word: reserved, 0.
pub const N_RESERVED: usize = 3;
/// First word of the key array (offsets).
pub const N_KEYS: usize = 4;

/// Word index of `keys[0]` in a node of fanout `f`.
pub const fn keys_at(_f: usize) -> usize {
    N_KEYS
}
/// Word index of `lens[0]` (span lengths / subtree maxima) in a node of fanout `f`.
pub const fn lens_at(f: usize) -> usize {
    N_KEYS + f
}
/// Word index of `children[0]` in a node of fanout `f`.
pub const fn children_at(f: usize) -> usize {
    N_KEYS + 2 * f
}
/// Words per node of fanout `f`: 4 bookkeeping words and three arrays of `f`,
/// rounded up to a multiple of 8 words (64 bytes, one cache line).
pub const fn node_words(f: usize) -> usize {
    (N_KEYS + 3 * f + 7) & !7
}
/// Minimum entries in a non-root node of fanout `f`; below it a node borrows from
/// or merges with a sibling.
pub const fn min_fill(f: usize) -> usize {
    f / 4
}
/// Deepest tree the code accepts. At fanout 32 (minimum fill 8) a tree this
/// tall holds at least 2 * 8^14 = 2^43 spans, beyond any arena; a header claiming
/// more is corrupt, and a (tiny-fanout, experimental) tree that would grow taller
/// gets an error, never an overflow. Kept small: every call zeroes a path of it.
pub const MAX_HEIGHT: usize = 16;

/// Span granularity: sizes round up to, and offsets are multiples of, 8 bytes.
pub const GRANULE: i64 = 8;

/// The worst-case number of free spans in an arena of `arena_bytes`: free and used
/// 8-byte granules alternating.
pub const fn max_spans(arena_bytes: i64) -> i64 {
    arena_bytes / 16 + 1
}

/// Nodes needed for the worst case of an arena of `arena_bytes` at fanout `f`:
/// every level at minimum fill, plus one spare per level for a split in flight.
pub const fn node_capacity(arena_bytes: i64, f: usize) -> i64 {
    let min = min_fill(f) as i64;
    let mut n = max_spans(arena_bytes);
    let mut total = 0;
    let mut levels = 0;
    loop {
        let nodes = (n + min - 1) / min;
        total += nodes + 1;
        levels += 1;
        if nodes <= 1 || levels >= MAX_HEIGHT as i64 {
            break;
        }
        n = nodes;
    }
    total + 2
}

/// Words of node array needed for an arena of `arena_bytes` at fanout `f`.
pub const fn node_array_words(arena_bytes: i64, f: usize) -> i64 {
    node_capacity(arena_bytes, f) * node_words(f) as i64
}

//! The span tree's memory layout — the ONE place it is defined.
//!
//! The header is a small record of 64-bit words kept apart from the nodes; the
//! nodes are arrays of 32-bit words ([`Word`] = `i32`), so the same layout can
//! sit in runtime memory (the builtin pool) or in program memory (the library's
//! `slice_pool`, which reads it through an `[]i32` view). Offsets and lengths in
//! nodes count 8-byte **granules**, which bounds an arena at
//! [`MAX_ARENA_BYTES`] (2^31 − 1 granules, 16 GiB less 8 bytes).
//! `stdlib/slice_pool.tern` and `stdlib/slice_pool_pure.tern` mirror the
//! constants below; a test compares them.
//!
//! # Header (`HEADER_WORDS` words of 64 bits, kept apart from the nodes)
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
//! # Node ([`NODE_WORDS`] = 128 words of 32 bits; node `i` starts at word `128 i`)
//!
//! | words | meaning in a leaf (level 0) | meaning in an internal node |
//! |---|---|---|
//! | [`N_COUNT`] | number of spans | number of children |
//! | [`N_LEVEL`] | 0 | height above the leaves (1, 2, ...) |
//! | [`N_NEXT_FREE`] | next node on the free stack while the node is free | same |
//! | 3..8 | 0 | 0 |
//! | [`N_KEYS`]` ..+32` | span offsets (granules), strictly increasing | smallest offset in each child's subtree |
//! | 40..48 | [`EMPTY_KEY`] (sentinels) | same |
//! | [`N_LENS`]` ..+32` | span lengths (granules) | largest span length in each child's subtree |
//! | 80..88 | 0 (sentinels) | same |
//! | [`N_KIDS`]` ..+32` | 0 | child node indices |
//! | 120..128 | 0 | 0 |
//!
//! Slots past a node's count are **empty**: key [`EMPTY_KEY`], length 0, child 0.
//! The node scans read all 32 slots of an array without masking by the count
//! (`super::scan`), and an entry shift reads one word past either end of an
//! array: the sentinel blocks make both reads land on the words an empty slot
//! holds. Per-child maxima are contiguous (`lens`) so the first child that can
//! hold a size is one 32-lane compare. `slice_pool_pure` keeps the same words,
//! so the runtime's tree and the Tern one stay identical word for word.

/// A node word.
pub type Word = i32;

/// The fanout (entries per node).
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

/// Value of [`H_MAGIC`] in an initialised header ("TERNSPN2" in ASCII: the
/// second layout, 32-bit node words).
pub const MAGIC: i64 = 0x5445_524E_5350_4E32;
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
/// First word of the key array (offsets in granules).
pub const N_KEYS: usize = 8;
/// First word of the length array (span lengths / subtree maxima, granules).
pub const N_LENS: usize = 48;
/// First word of the child array.
pub const N_KIDS: usize = 88;
/// Words per node: a power of two, so a node's first word is `index << 7`.
pub const NODE_WORDS: usize = 128;
/// `log2(NODE_WORDS)`.
pub const NODE_SHIFT: u32 = 7;
/// Sentinel words after each array (see the module docs).
pub const SENTINELS: usize = 8;

/// The key of an empty slot: above every offset an arena can have.
pub const EMPTY_KEY: Word = Word::MAX;

/// Minimum entries in a non-root node; below it a node borrows from or merges
/// with a sibling.
pub const MIN_FILL: usize = FANOUT / 4;
/// Deepest tree the code accepts. At fanout 32 (minimum fill 8) a tree this
/// tall holds at least 2 * 8^14 = 2^43 spans, beyond any arena; a header claiming
/// more is corrupt.
pub const MAX_HEIGHT: usize = 16;

/// Span granularity: sizes round up to, and offsets are multiples of, 8 bytes.
pub const GRANULE: i64 = 8;
/// `log2(GRANULE)`.
pub const GRANULE_SHIFT: u32 = 3;

/// Largest arena a tree accepts: every offset and length in granules fits a
/// node word below [`EMPTY_KEY`].
pub const MAX_ARENA_BYTES: i64 = (Word::MAX as i64) * GRANULE;

/// The worst-case number of free spans in an arena of `arena_bytes`: free and used
/// 8-byte granules alternating.
pub const fn max_spans(arena_bytes: i64) -> i64 {
    arena_bytes / 16 + 1
}

/// Nodes needed for the worst case of an arena of `arena_bytes`: every level
/// at minimum fill, plus one spare per level for a split in flight.
pub const fn node_capacity(arena_bytes: i64) -> i64 {
    let min = MIN_FILL as i64;
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

/// Words of node array needed for an arena of `arena_bytes`.
pub const fn node_array_words(arena_bytes: i64) -> i64 {
    node_capacity(arena_bytes) * NODE_WORDS as i64
}

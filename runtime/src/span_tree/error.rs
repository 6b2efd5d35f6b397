//! Error codes of the span tree and their messages.
//!
//! Every code is negative so it can share a return word with an offset (which is
//! never negative). Corruption codes carry the node index and the field:
//! `-(CORRUPT_NODE_BASE + node * CORRUPT_FIELD_SPAN + field)` and
//! `-(CORRUPT_HEADER_BASE + field)`.

use std::cell::Cell;

use super::layout;

/// `tern_span_resize` only: the span cannot grow in place; the caller must move it.
pub const MUST_MOVE: i64 = -1;
/// No free span is large enough (the arena is exhausted or too fragmented).
pub const EXHAUSTED: i64 = -2;
/// The freed span overlaps free space: a double free or an overlapping free.
pub const DOUBLE_FREE: i64 = -3;
/// The span lies (partly) outside the arena, or its offset is negative or not a multiple of 8.
pub const OUTSIDE_ARENA: i64 = -4;
/// A size is negative, zero where a span is required, or an old size does not match.
pub const BAD_SIZE: i64 = -5;
/// The header names no live checked pool, or the node array is not the registered one.
pub const BAD_POOL: i64 = -6;
/// The node array is full (only a corrupt tree can get here: it is reserved for the worst case).
pub const NODES_EXHAUSTED: i64 = -7;
/// Reserving memory from the OS failed.
pub const RESERVE_FAILED: i64 = -8;
/// Too many checked pools are alive at once.
pub const TOO_MANY_POOLS: i64 = -9;
/// A resized span overlaps free space (resizing a freed span).
pub const RESIZE_FREE_SPAN: i64 = -10;
/// An internal panic was caught at the FFI boundary (a bug; should never happen).
pub const INTERNAL: i64 = -11;
/// A freed span lies in allocated memory but is not exactly one live allocation
/// (a stale copy of a slice that has since shrunk, part of a span, a span freed
/// and reallocated at another size).
pub const STALE_FREE: i64 = -12;
/// A resized span lies in allocated memory but is not exactly one live allocation.
pub const STALE_RESIZE: i64 = -13;
/// `finish` of a header that does not describe its tree: a stale copy of the
/// pool's header (or a corrupt tree).
pub const STALE_POOL: i64 = -14;
/// A checked tree offered a span that overlaps a live allocation (its free
/// spans were overwritten); the boundary record refused it.
pub const CORRUPT_OVERLAP: i64 = -15;
/// `tern_mem_release` of a range that is not exactly one live reservation of
/// program memory (given back already: a pool finished through two copies).
pub const NOT_RESERVED: i64 = -16;
/// `finish` of a pool that still has slices allocated (the runtime's record,
/// or `slice_pool_pure`'s coverage map, says so): refused, nothing changes,
/// so the slices stay valid and their memory goes to no later pool.
pub const LEAKED: i64 = -17;
/// Base of "corrupt header word" codes: `-(CORRUPT_HEADER_BASE + field)`.
pub const CORRUPT_HEADER_BASE: i64 = 256;
/// Base of "corrupt node word" codes: `-(CORRUPT_NODE_BASE + node * CORRUPT_FIELD_SPAN + field)`.
pub const CORRUPT_NODE_BASE: i64 = 1 << 16;
/// Field multiplier inside corrupt-node codes (greater than any node's word count).
pub const CORRUPT_FIELD_SPAN: i64 = 1 << 12;

/// Code for "header word `field` is corrupt".
pub const fn corrupt_header(field: usize) -> i64 {
    -(CORRUPT_HEADER_BASE + field as i64)
}

/// Code for "word `field` of node `node` is corrupt". Node indices too large to
/// encode are clamped (they are corrupt anyway).
pub const fn corrupt_node(node: i64, field: usize) -> i64 {
    let node = if node < 0 || node > (i64::MAX - CORRUPT_NODE_BASE) / CORRUPT_FIELD_SPAN - 1 {
        (i64::MAX - CORRUPT_NODE_BASE) / CORRUPT_FIELD_SPAN - 1
    } else {
        node
    };
    -(CORRUPT_NODE_BASE + node * CORRUPT_FIELD_SPAN + field as i64)
}

/// Name of a header word, for messages.
fn header_field_name(field: i64) -> &'static str {
    match field as usize {
        layout::H_MAGIC => "magic",
        layout::H_POOL_ID => "pool id",
        layout::H_ROOT => "root",
        layout::H_HEIGHT => "height",
        layout::H_FREE_HEAD => "free-node stack head",
        layout::H_NODES_USED => "nodes used",
        layout::H_SPANS => "span count",
        layout::H_FREE_BYTES => "free bytes",
        layout::H_ARENA_BYTES => "arena bytes",
        layout::H_NODE_CAP => "node capacity",
        _ => "unknown word",
    }
}

/// Name of a node word, for messages.
fn node_field_name(field: i64) -> String {
    let f = layout::FANOUT as i64;
    let arrays = [
        ("key", layout::N_KEYS as i64),
        ("len", layout::N_LENS as i64),
        ("child", layout::N_KIDS as i64),
    ];
    match field {
        0 => "count".into(),
        1 => "level".into(),
        2 => "next free".into(),
        x => match arrays.iter().find(|(_, at)| (*at..*at + f).contains(&x)) {
            Some((name, at)) => format!("{name}[{}]", x - at),
            None => format!("word {x}"),
        },
    }
}

/// The message for an error code (what users see after `error: LOC: `).
pub fn message(code: i64) -> String {
    match code {
        MUST_MOVE => "span must move: no room to grow in place".into(),
        EXHAUSTED => "pool exhausted: no free span large enough".into(),
        DOUBLE_FREE => "double free: the span overlaps free space".into(),
        OUTSIDE_ARENA => "span outside the arena".into(),
        BAD_SIZE => "invalid span size".into(),
        BAD_POOL => "not a live pool: bad pool id or node array".into(),
        NODES_EXHAUSTED => "corrupt tree: node array exhausted".into(),
        RESERVE_FAILED => "memory reservation failed".into(),
        TOO_MANY_POOLS => "too many live pools".into(),
        RESIZE_FREE_SPAN => "resize of a span that overlaps free space (already freed?)".into(),
        INTERNAL => "internal runtime error".into(),
        STALE_FREE => "free of a stale slice: the span is not one live allocation".into(),
        STALE_RESIZE => "resize of a stale slice: the span is not one live allocation".into(),
        CORRUPT_OVERLAP => "corrupt tree: a free span it holds overlaps a live allocation".into(),
        LEAKED => "slices still allocated (leaked spans)".into(),
        NOT_RESERVED => "not a live reservation: the memory was given back already (a pool finished through a copy?)".into(),
        STALE_POOL => {
            "not the live pool: its header does not describe its tree (a stale copy of the pool?)"
                .into()
        }
        c if c <= -CORRUPT_NODE_BASE => {
            let v = -c - CORRUPT_NODE_BASE;
            let (node, field) = (v / CORRUPT_FIELD_SPAN, v % CORRUPT_FIELD_SPAN);
            format!(
                "corrupt tree: node {node}, field {} (word {field})",
                node_field_name(field)
            )
        }
        c if c <= -CORRUPT_HEADER_BASE => {
            let field = -c - CORRUPT_HEADER_BASE;
            format!(
                "corrupt tree: header field {} (word {field})",
                header_field_name(field)
            )
        }
        c if c >= 0 => format!("not an error (code {c})"),
        c => format!("unknown error code {c}"),
    }
}

/// The message for a stale-span code ([`STALE_FREE`], [`STALE_RESIZE`]) with the
/// details the record knows: the span the call named (`offset`, `claimed` bytes,
/// rounded) and the size of the live allocation that starts at `offset` (`actual`
/// bytes, 0 when none does). Other codes get [`message`].
pub fn stale_message(code: i64, offset: i64, claimed: i64, actual: i64) -> String {
    let op = match code {
        STALE_FREE => "free",
        STALE_RESIZE => "resize",
        _ => return message(code),
    };
    if actual > 0 {
        format!(
            "{op} of a stale slice: the span at offset {offset} is {actual} bytes, not {claimed}"
        )
    } else {
        format!("{op} of a stale slice: no live span starts at offset {offset}")
    }
}

thread_local! {
    /// The span (byte offset, claimed bytes rounded up to 8) a tree
    /// operation on this thread last refused as not one live allocation
    /// ([`note_refused`]).
    static REFUSED: Cell<(i64, i64)> = const { Cell::new((0, 0)) };
}

/// Notes the span (byte offset, claimed bytes rounded up to 8) the tree is
/// refusing with [`STALE_FREE`], [`STALE_RESIZE`] or an overlap code, for
/// the message the caller asks for next ([`last_refused`]): the library's
/// failure path then needs no copy of the span it passed, and its loops
/// keep no register for one across the call.
pub fn note_refused(offset: i64, claimed: i64) {
    REFUSED.with(|r| r.set((offset, claimed)));
}

/// The span [`note_refused`] noted last on this thread (`(0, 0)` before any).
pub fn last_refused() -> (i64, i64) {
    REFUSED.with(Cell::get)
}

/// The message for `code` as the builtin pool reports it, with the request size
/// where it helps (`pool exhausted: no free span of 64 bytes`): the size the
/// span needed, rounded up to 8 as every span is (a request of 1 byte
/// needs 8).
pub fn message_with_size(code: i64, bytes: i64) -> String {
    match code {
        EXHAUSTED => {
            let needed = bytes.checked_add(7).map_or(bytes, |b| b & !7);
            format!("pool exhausted: no free span of {needed} bytes")
        }
        _ => message(code),
    }
}

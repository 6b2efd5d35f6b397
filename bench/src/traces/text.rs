//! The text form of a trace (`--trace-file`): one operation a line, what a
//! user writes by hand or with a few lines of script from any allocation log,
//! turned into the `TERNTRC1` records every replayer reads.
//!
//! ```text
//! # comments run from `#` to the end of the line; blank lines are skipped
//! alloc  p1 24        # alloc ID SIZE   (also `a`, `malloc`)
//! realloc p1 100      # realloc ID SIZE (also `r`); size 0 frees, as C's realloc
//! free   p1           # free ID [SIZE]  (also `f`); a size, if given, is 0 or the object's
//! ```
//!
//! and, as an allocation log of a C program reads, `calloc ID [COUNT] SIZE`
//! (an alloc of COUNT × SIZE bytes), `realloc OLD NEW SIZE` (the object is
//! named NEW after it; from a null OLD it allocates NEW), and a free of a
//! null pointer (`0`, `0x0`, `(nil)`, `nil`, `null` when no live object has
//! that name), which does nothing; a realloc to a null NEW for a nonzero
//! size failed and leaves the object as it was.
//!
//! Fields are separated by spaces, tabs or commas (so `op,id,size` CSV reads
//! too); op names are case-insensitive. An id is any other token (a
//! number, a pointer such as `0x55d0c2a1e2a0`, a name) and names one object
//! from its allocation to its free: it can be allocated again after. Sizes
//! are whole numbers of bytes below 2^32 (the format's limit). The objects
//! get the dense ids `TERNTRC1` wants, each the smallest not live (so the id
//! count is the peak of live objects), as bench/traces/convert.py assigns
//! them. Nothing is guessed: an operation the replay could not perform (an
//! id allocated while live, a free or realloc of an id not live, a realloc
//! onto a live name, a free naming another size) is an error naming its line.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use super::{HEADER, MAX_IDS};

/// The three operations, by their `TERNTRC1` codes.
const ALLOC: u32 = 0;
const FREE: u32 = 1;
const REALLOC: u32 = 2;

/// An operation as a line names it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    Alloc,
    Free,
    Realloc,
}

/// A token as an error message shows it: control characters escaped (a
/// NUL, a stray escape sequence), and at most 40 characters of it.
fn shown(token: &str) -> String {
    let mut out: String = token
        .chars()
        .take(40)
        .flat_map(char::escape_debug)
        .collect();
    if token.chars().nth(40).is_some() {
        out.push_str("...");
    }
    out
}

/// How C logs print a null pointer: a free of one does nothing, a realloc
/// from one allocates (unless a trace names a live object so).
fn is_null(id: &str) -> bool {
    ["0", "0x0", "(nil)", "nil", "null"]
        .iter()
        .any(|n| id.eq_ignore_ascii_case(n))
}

/// The `TERNTRC1` trace that the text `src` describes, or an error naming
/// the line (counted from 1) that is not a record or not a legal operation.
pub fn parse(src: &str) -> Result<Vec<u8>, String> {
    let mut out = b"TERNTRC1".to_vec();
    out.resize(HEADER, 0);
    // Per live object: its dense id and its size.
    let mut live: HashMap<&str, (u32, u32)> = HashMap::new();
    let mut free_ids: BinaryHeap<Reverse<u32>> = BinaryHeap::new();
    let mut ids = 0u32;
    let mut records = 0u32;
    // A byte order mark, as an editor may write one, is not part of line 1.
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    for (n, line) in src.lines().enumerate() {
        let fail = |what: String| Err(format!("line {}: {what}", n + 1));
        let line = line.split('#').next().unwrap_or("");
        let fields: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|f| !f.is_empty())
            .collect();
        let Some((&op, args)) = fields.split_first() else {
            continue;
        };
        // A calloc is an alloc of its whole size (every side zero-fills).
        let calloc = op.eq_ignore_ascii_case("calloc");
        let op = match op.to_ascii_lowercase().as_str() {
            "alloc" | "a" | "malloc" | "calloc" => Op::Alloc,
            "free" | "f" => Op::Free,
            "realloc" | "r" => Op::Realloc,
            _ => {
                return fail(format!(
                    "unknown op `{}` (alloc, calloc, free or realloc)",
                    shown(op)
                ));
            }
        };
        let usage = match op {
            Op::Alloc if calloc => "calloc ID [COUNT] SIZE",
            Op::Alloc => "alloc ID SIZE",
            Op::Free => "free ID [SIZE]",
            Op::Realloc => "realloc ID [NEW_ID] SIZE",
        };
        let size = |text: &str| {
            text.parse::<u32>().map_err(|_| {
                format!(
                    "line {}: size `{}` is not a whole number of bytes below 2^32",
                    n + 1,
                    shown(text)
                )
            })
        };
        // Every line as (op, id, size, the id the object goes by after it).
        // A free's size, when it is not given, is 0: "the object's, whatever
        // it is", as in `TERNTRC1`.
        let (op, id, bytes, renamed) = match (op, args) {
            (Op::Free, [id]) => (Op::Free, *id, 0, *id),
            (_, [id, s]) => (op, *id, size(s)?, *id),
            (Op::Alloc, [id, count, s]) if calloc => {
                let total = u64::from(size(count)?) * u64::from(size(s)?);
                match u32::try_from(total) {
                    Ok(t) => (Op::Alloc, *id, t, *id),
                    Err(_) => return fail(format!("calloc of {total} bytes: not below 2^32")),
                }
            }
            // A failed realloc (`NULL` for a nonzero size) leaves the
            // object as it was.
            (Op::Realloc, [old, new, s])
                if is_null(new) && !live.contains_key(new) && size(s)? != 0 =>
            {
                if !live.contains_key(old) && !is_null(old) {
                    return fail(format!(
                        "reallocates object `{}`, which is not live",
                        shown(old)
                    ));
                }
                continue;
            }
            // A C log's realloc: the object moves from OLD to NEW (the same
            // when it grew in place); from a null pointer it is a malloc.
            (Op::Realloc, [old, new, s]) if is_null(old) && !live.contains_key(old) => {
                (Op::Alloc, *new, size(s)?, *new)
            }
            (Op::Realloc, [old, new, s]) => (Op::Realloc, *old, size(s)?, *new),
            _ => return fail(format!("expected `{usage}`")),
        };
        // A free of a null pointer does nothing, as in C.
        if op == Op::Free && is_null(id) && !live.contains_key(id) {
            continue;
        }
        if renamed != id && live.contains_key(renamed) {
            return fail(format!(
                "reallocates object `{}` to `{}`, which is live",
                shown(id),
                shown(renamed)
            ));
        }
        let (code, word, bytes) = match (op, live.get(id).copied()) {
            (Op::Alloc, None) => {
                let d = match free_ids.pop() {
                    Some(Reverse(d)) => d,
                    None if ids < MAX_IDS => {
                        ids += 1;
                        ids - 1
                    }
                    None => return fail("more than 2^30 objects live at once".to_string()),
                };
                live.insert(id, (d, bytes));
                (ALLOC, d, bytes)
            }
            (Op::Alloc, Some(_)) => {
                return fail(format!("allocates object `{}`, which is live", shown(id)));
            }
            (Op::Free, Some((_, held))) if bytes != 0 && bytes != held => {
                return fail(format!(
                    "frees object `{}` of {held} bytes with size {bytes}",
                    shown(id)
                ));
            }
            (Op::Realloc, Some((d, _))) if bytes != 0 => {
                live.remove(id);
                live.insert(renamed, (d, bytes));
                (REALLOC, d, bytes)
            }
            // A realloc to 0 bytes frees, as C's realloc does.
            (Op::Free | Op::Realloc, Some((d, _))) => {
                live.remove(id);
                free_ids.push(Reverse(d));
                (FREE, d, 0)
            }
            (Op::Free, None) => {
                return fail(format!("frees object `{}`, which is not live", shown(id)));
            }
            (Op::Realloc, None) => {
                return fail(format!(
                    "reallocates object `{}`, which is not live",
                    shown(id)
                ));
            }
        };
        records = match records.checked_add(1) {
            Some(r) => r,
            None => return fail("more than 2^32 - 1 records".to_string()),
        };
        out.extend((code << 30 | word).to_le_bytes());
        out.extend(bytes.to_le_bytes());
    }
    out[8..12].copy_from_slice(&records.to_le_bytes());
    out[12..HEADER].copy_from_slice(&ids.to_le_bytes());
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `(op, id, size)` of every record of a `TERNTRC1` trace, and its id count.
    fn records(t: &[u8]) -> (Vec<(u32, u32, u32)>, u32) {
        let word = |i: usize| u32::from_le_bytes(t[i..i + 4].try_into().unwrap());
        assert_eq!(&t[..8], b"TERNTRC1");
        let n = word(8) as usize;
        assert_eq!(t.len(), HEADER + 8 * n);
        let recs = (0..n)
            .map(|r| {
                let w = word(HEADER + 8 * r);
                (w >> 30, w & 0x3fff_ffff, word(HEADER + 8 * r + 4))
            })
            .collect();
        (recs, word(12))
    }

    #[test]
    fn every_spelling_becomes_the_records_with_dense_ids() {
        let src = "# a header comment\n\
                   alloc 0x55d0 24\n\
                   \n\
                   MALLOC p2 0   # a zero-size object\n\
                   a,third,8\n\
                   r 0x55d0 100\n\
                   free p2\n\
                   alloc  again\t16\n\
                   f third 8\n\
                   realloc 0x55d0 0\n\
                   Free again 0\n";
        let (recs, ids) = records(&parse(src).unwrap());
        assert_eq!(
            recs,
            [
                (ALLOC, 0, 24),
                (ALLOC, 1, 0),
                (ALLOC, 2, 8),
                (REALLOC, 0, 100),
                (FREE, 1, 0),
                // The smallest id not live: p2's.
                (ALLOC, 1, 16),
                (FREE, 2, 0),
                // realloc to 0 frees.
                (FREE, 0, 0),
                (FREE, 1, 0),
            ]
        );
        assert_eq!(ids, 3);
        // An id names one object at a time, and may be allocated again.
        let (recs, ids) = records(&parse("alloc x 8\nfree x\nalloc x 9\nfree x").unwrap());
        assert_eq!(
            recs,
            [(ALLOC, 0, 8), (FREE, 0, 0), (ALLOC, 0, 9), (FREE, 0, 0)]
        );
        assert_eq!(ids, 1);
        assert_eq!(records(&parse("# nothing\n").unwrap()), (vec![], 0));
    }

    #[test]
    fn a_c_log_reads_as_c_means_it() {
        // What an allocation log of a C program holds: calloc's two
        // arguments, realloc's old and new pointers, null pointers.
        let src = "malloc 0x10 24\n\
                   calloc 0x20 3 8\n\
                   calloc 0x30 5\n\
                   realloc 0x10 0x40 100   # moved: now named 0x40\n\
                   realloc 0x40 0x40 200   # grew in place\n\
                   realloc (nil) 0x50 7    # realloc(NULL, 7) is malloc(7)\n\
                   free (nil)              # free(NULL) does nothing\n\
                   free 0x0\n\
                   free 0x40\n\
                   realloc 0x20 0x0 0      # realloc to 0 frees\n\
                   free 0x30\n\
                   free 0x50\n";
        let (recs, ids) = records(&parse(src).unwrap());
        assert_eq!(
            recs,
            [
                (ALLOC, 0, 24),
                (ALLOC, 1, 24),
                (ALLOC, 2, 5),
                (REALLOC, 0, 100),
                (REALLOC, 0, 200),
                (ALLOC, 3, 7),
                (FREE, 0, 0),
                (FREE, 1, 0),
                (FREE, 2, 0),
                (FREE, 3, 0),
            ]
        );
        assert_eq!(ids, 4);
        // The old name is gone after a move; a live object named `0` is an
        // object like any other.
        assert_eq!(
            parse("alloc a 8\nrealloc a b 16\nfree a"),
            Err("line 3: frees object `a`, which is not live".to_string())
        );
        // A failed realloc (null for a nonzero size) leaves the object.
        let (recs, _) = records(
            &parse("alloc a 8\nrealloc a (nil) 1000000\nrealloc (nil) (nil) 9\nfree a").unwrap(),
        );
        assert_eq!(recs, [(ALLOC, 0, 8), (FREE, 0, 0)]);
        let (recs, _) = records(&parse("alloc 0 8\nrealloc 0 0 16\nfree 0\nfree 0").unwrap());
        assert_eq!(recs, [(ALLOC, 0, 8), (REALLOC, 0, 16), (FREE, 0, 0)]);
    }

    #[test]
    fn an_operation_the_replay_cannot_perform_names_its_line() {
        for (src, why) in [
            (
                "alloc x 8\nmove x 9",
                "line 2: unknown op `move` (alloc, calloc, free or realloc)",
            ),
            ("alloc x", "line 1: expected `alloc ID SIZE`"),
            ("free", "line 1: expected `free ID [SIZE]`"),
            (
                "alloc x 8\nrealloc x",
                "line 2: expected `realloc ID [NEW_ID] SIZE`",
            ),
            (
                "calloc x 1 2 3",
                "line 1: expected `calloc ID [COUNT] SIZE`",
            ),
            (
                "calloc x 65536 65536",
                "line 1: calloc of 4294967296 bytes: not below 2^32",
            ),
            (
                "alloc x 8\nalloc y 8\nrealloc x y 16",
                "line 3: reallocates object `x` to `y`, which is live",
            ),
            (
                "realloc x y 16",
                "line 1: reallocates object `x`, which is not live",
            ),
            (
                "alloc 0 8\nfree 0\nfree 0x1",
                "line 3: frees object `0x1`, which is not live",
            ),
            (
                "realloc a (nil) 8",
                "line 1: reallocates object `a`, which is not live",
            ),
            // A byte order mark is not part of line 1; other invisible
            // characters are shown escaped, and a long token cut.
            (
                "\u{feff}alloc x 8\nfree y",
                "line 2: frees object `y`, which is not live",
            ),
            (
                "\u{feff}\u{feff}alloc x 8",
                "line 1: unknown op `\\u{feff}alloc` (alloc, calloc, free or realloc)",
            ),
            (
                "free \0x\u{1b}[1m",
                "line 1: frees object `\\0x\\u{1b}[1m`, which is not live",
            ),
            (
                &format!("free {}", "p".repeat(1000)),
                &format!(
                    "line 1: frees object `{}...`, which is not live",
                    "p".repeat(40)
                ),
            ),
            ("alloc x 8 9", "line 1: expected `alloc ID SIZE`"),
            (
                "alloc x -8",
                "line 1: size `-8` is not a whole number of bytes below 2^32",
            ),
            (
                "alloc x 4294967296",
                "line 1: size `4294967296` is not a whole number of bytes below 2^32",
            ),
            (
                "alloc x 8\nalloc x 8",
                "line 2: allocates object `x`, which is live",
            ),
            (
                "alloc x 8\nfree y",
                "line 2: frees object `y`, which is not live",
            ),
            (
                "alloc x 8\nfree x\nfree x",
                "line 3: frees object `x`, which is not live",
            ),
            (
                "realloc x 8",
                "line 1: reallocates object `x`, which is not live",
            ),
            (
                "\n\nalloc x 8\nfree x 16",
                "line 4: frees object `x` of 8 bytes with size 16",
            ),
        ] {
            assert_eq!(parse(src), Err(why.to_string()), "{src:?}");
        }
    }
}

//! Differential placement tests: seeded random operation sequences are replayed
//! by a Tern program on builtin `reusable[]`, `slice_pool` and `slice_pool_pure`
//! side by side; the expected output comes from the runtime's reference model
//! (`tern_runtime::span_tree::model::Model`) for placements and error codes, from a
//! plain Rust model for contents, and from the runtime's tree code (`Tree<Unchecked>`
//! over Rust memory) for the exact words of the pools' headers and nodes. The
//! program runs in JIT and AOT at -O0, -O1 and -O2; all must print exactly the
//! expected lines.
//!
//! The sequences reach the program as an op stream on stdin (one program, compiled
//! once per mode and level, replays every batch: compiling a program per batch of
//! straight-line code cost minutes per compile). Per slot operation the program
//! prints the three offsets and the three content checksums of the slot it touched;
//! probes (tree-level calls that must fail) print the error codes of both library
//! variants; some operations print a hash of each library pool's header and node
//! words; at the end of a sequence every slot is reported and freed, the pools'
//! hashes printed and the pools finished (which reports leaks).
//!
//! The default is `DEFAULT_SEQUENCES` sequences; `TERN_DIFF_SEQUENCES=N` runs `N`
//! instead and `TERN_DIFF_SEED=S` changes the seed. The first batch also runs
//! under `--sanitize` (JIT and AOT at -O2), which must not change a line. A failing run keeps the
//! program and its inputs in the scratch directory named in the failure message.

mod pool_support;

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::sync::Mutex;
use std::time::Duration;

use pool_support::{
    MATRIX, Mode, Outcome, Rng, first_difference, run_with_timeout, run_with_timeout_input, scratch,
};
use tern_runtime::span_tree::error::MUST_MOVE;
use tern_runtime::span_tree::layout::{self, HEADER_WORDS, NODE_WORDS};
use tern_runtime::span_tree::model::Model;
use tern_runtime::span_tree::{Tree, Unchecked, round8};

const DEFAULT_SEQUENCES: usize = 240;
const SEQUENCES_PER_BATCH: usize = 40;
/// Arena of every library pool and of the builtin pool (`TERN_POOL_BYTES`).
const CAP: i64 = 4 << 20;
/// Slots per element type; slot `k` has type `TYPES[k % 4]` and index `k / 4`.
const PER_TYPE: usize = 1024;

/// Element types of the slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ty {
    U8,
    I32,
    I64,
    /// `[3]i32`: 12 bytes, so sizes are rarely multiples of 8.
    Tri,
}

/// The element value of zero-filled memory (for `[3]i32`, `tri(0)` is not all zero).
const ZERO: i64 = i64::MIN;

const TYPES: [Ty; 4] = [Ty::U8, Ty::I32, Ty::I64, Ty::Tri];

impl Ty {
    fn size(self) -> i64 {
        match self {
            Ty::U8 => 1,
            Ty::I32 => 4,
            Ty::I64 => 8,
            Ty::Tri => 12,
        }
    }
    fn tern(self) -> &'static str {
        match self {
            Ty::U8 => "u8",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::Tri => "[3]i32",
        }
    }
    fn tag(self) -> &'static str {
        match self {
            Ty::U8 => "u8",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::Tri => "tri",
        }
    }
    /// The components an element of value `v` stores (u8 zero-, i32 sign-extended);
    /// [`ZERO`] is the zero-filled element.
    fn components(self, v: i64) -> Vec<i64> {
        if v == ZERO {
            return vec![0; if self == Ty::Tri { 3 } else { 1 }];
        }
        match self {
            Ty::U8 => vec![v & 0xff],
            Ty::I32 => vec![v as i32 as i64],
            Ty::I64 => vec![v],
            Ty::Tri => vec![
                v as i32 as i64,
                v.wrapping_add(1) as i32 as i64,
                v.wrapping_mul(3) as i32 as i64,
            ],
        }
    }
    /// A random element value that is a valid literal of the type.
    fn random_value(self, r: &mut Rng) -> i64 {
        match self {
            Ty::U8 => r.below(256) as i64,
            Ty::I32 => r.below(4001) as i64 - 2000,
            Ty::I64 => r.next() as i64 >> (1 + r.below(60)),
            Ty::Tri => r.below(2001) as i64 - 1000,
        }
    }
}

/// Checksum of a slot's contents, as the Tern helpers compute it.
fn checksum(ty: Ty, elems: &[i64]) -> i64 {
    let mut h: i64 = 0;
    for &v in elems {
        for c in ty.components(v) {
            h = h.wrapping_mul(31).wrapping_add(c).wrapping_add(1);
        }
    }
    h
}

/// The runtime's tree code over Rust memory: the exact words a library pool must hold.
struct ReplayTree {
    hdr: Vec<i64>,
    nodes: Vec<i32>,
    tree: Tree<Unchecked>,
}

impl ReplayTree {
    fn new(arena: i64) -> Self {
        let cap = layout::node_capacity(arena);
        let mut hdr = vec![0i64; HEADER_WORDS];
        let mut nodes = vec![0i32; (cap as usize) * NODE_WORDS];
        // SAFETY: both buffers live as long as `tree` (they move with the struct,
        // but a Vec's heap buffer does not move) and nothing else touches them.
        let mut tree = unsafe { Tree::from_raw(hdr.as_mut_ptr(), nodes.as_mut_ptr(), cap, arena) };
        tree.init(0);
        ReplayTree { hdr, nodes, tree }
    }
    /// The hash the Tern helper `hash_pool` computes: header words except the pool
    /// id, then the node words of every node handed out so far.
    fn hash(&self) -> i64 {
        let mut h: i64 = 0;
        let mix = |h: i64, w: i64| (h ^ w).wrapping_mul(1_099_511_628_211);
        for (i, &w) in self.hdr.iter().enumerate() {
            if i != layout::H_POOL_ID {
                h = mix(h, w);
            }
        }
        let used = self.hdr[layout::H_NODES_USED] as usize;
        for &w in &self.nodes[..used * NODE_WORDS] {
            h = mix(h, w as i64);
        }
        h
    }
}

/// The reference state of one sequence: the model, the replayed tree, the slots.
struct Reference {
    model: Model,
    tree: ReplayTree,
    /// Per slot: (offset or -1, element values).
    slots: Vec<(i64, Vec<i64>)>,
}

impl Reference {
    /// `alloc_slice` of `bytes` on model and tree; they must agree.
    fn alloc(&mut self, bytes: i64) -> Result<i64, i64> {
        if round8(bytes) == 0 {
            return Ok(-1);
        }
        let m = self.model.alloc(bytes);
        let t = self.tree.tree.alloc(round8(bytes));
        assert_eq!(m, t, "model and runtime tree disagree on alloc({bytes})");
        m
    }
    fn free(&mut self, off: i64, bytes: i64) -> Result<(), i64> {
        let m = self.model.free(off, bytes);
        let t = self.tree.tree.free(off, round8(bytes));
        assert_eq!(
            m, t,
            "model and runtime tree disagree on free({off}, {bytes})"
        );
        m
    }
    /// `realloc_slice` as the library does it: in place, else alloc + free.
    fn resize(&mut self, off: i64, old: i64, new: i64) -> Result<i64, i64> {
        let (o, n) = (round8(old), round8(new));
        if o == 0 {
            return self.alloc(new);
        }
        if n == 0 {
            self.free(off, old)?;
            return Ok(-1);
        }
        let m = self.model.resize(off, old, new);
        let t = match self.tree.tree.resize(off, o, n) {
            Err(MUST_MOVE) => {
                let to = self.tree.tree.alloc(n)?;
                self.tree.tree.free(off, o)?;
                Ok(to)
            }
            r => r,
        };
        assert_eq!(
            m, t,
            "model and runtime tree disagree on resize({off}, {old}, {new})"
        );
        m
    }
}

// Opcodes of the op stream the replay program reads from stdin (i64 words, little endian).
const OP_END: i64 = 0;
const OP_BEGIN: i64 = 1;
const OP_ALLOC: i64 = 2;
const OP_FREE: i64 = 3;
const OP_RESIZE: i64 = 4;
const OP_APPEND: i64 = 5;
const OP_FILL: i64 = 6;
const OP_PROBE_FREE: i64 = 7;
const OP_PROBE_RESIZE: i64 = 8;
const OP_PROBE_ALLOC: i64 = 9;
const OP_HASH: i64 = 10;
const OP_FINISH: i64 = 11;

/// One generated sequence: its operation words and expected output lines.
struct Generated {
    ops: Vec<i64>,
    expect: Vec<String>,
    /// The largest tree height the sequence reached.
    max_height: i64,
    /// The error codes its probes expect.
    probe_codes: Vec<i64>,
}

impl Generated {
    /// The report after a slot operation: three offsets, three checksums.
    fn report(&mut self, off: i64, sum: i64) {
        for _ in 0..3 {
            self.expect.push(off.to_string());
        }
        for _ in 0..3 {
            self.expect.push(sum.to_string());
        }
    }
}

/// Generates sequence `index` of the run with `seed`.
fn generate(seed: u64, index: usize) -> Generated {
    let mut r = Rng(seed ^ (index as u64).wrapping_mul(0xA24B_AED4_963E_E407));
    // Sequence shapes: few slots (lots of in-place traffic), many slots (many free
    // spans: multi-level trees, splits and merges), short and long sequences.
    let long = r.below(16) == 0;
    let (active, ops, max_len) = if long {
        (
            4 * PER_TYPE,
            7000 + r.below(1000) as usize,
            [4u64, 12, 40][r.below(3) as usize],
        )
    } else {
        (
            [8usize, 24, 64, 128][r.below(4) as usize],
            10 + r.below(70) as usize,
            [4u64, 20, 80, 600][r.below(4) as usize],
        )
    };
    let mut st = Reference {
        model: Model::new(CAP),
        tree: ReplayTree::new(CAP),
        slots: vec![(-1, Vec::new()); 4 * PER_TYPE],
    };
    let mut g = Generated {
        ops: vec![OP_BEGIN, index as i64],
        expect: vec![format!("seq {index}")],
        max_height: 1,
        probe_codes: Vec::new(),
    };
    let mut done = 0;
    while done < ops {
        // Grow early, shrink late, so long sequences build up many spans.
        let late = done * 2 > ops;
        // Long sequences fill the slots in order, then only free (at random):
        // about 900 free spans at the peak (a three-level tree), then merges.
        let k = if long && !late {
            done % active
        } else {
            r.below(active as u64) as usize
        };
        let ty = TYPES[k % 4];
        let size = ty.size();
        let (off, len) = (st.slots[k].0, st.slots[k].1.len() as i64);
        let roll = r.below(100);
        if roll < 6 {
            // A probe: a tree-level call that must fail, on both library variants.
            let Some((op, args, code)) = probe(&mut r, &mut st) else {
                continue;
            };
            g.ops.push(op);
            g.ops.extend(args);
            g.expect.push(code.to_string());
            g.expect.push(code.to_string());
            g.probe_codes.push(code);
            done += 1;
            continue;
        }
        if roll < 10 && (!long || roll == 6) {
            g.ops.push(OP_HASH);
            let h = st.tree.hash();
            g.expect.push(h.to_string());
            g.expect.push(h.to_string());
            done += 1;
            continue;
        }
        if long && late && st.slots[k].0 == -1 {
            done += 1;
            continue;
        }
        if (86..90).contains(&roll) && !late && off != -1 {
            // A run of appends to one slice, nothing between them: after a
            // few, the library's appends are answered from its append
            // window (and the builtin's by generated code); hashes taken
            // inside the run read the node words while the window is open.
            for _ in 0..4 + r.below(40) {
                let v = ty.random_value(&mut r);
                let (off, len) = (st.slots[k].0, st.slots[k].1.len() as i64);
                let Ok(o) = st.resize(off, len * size, (len + 1) * size) else {
                    break;
                };
                st.slots[k].0 = o;
                st.slots[k].1.push(v);
                g.ops.extend([OP_APPEND, k as i64, v]);
                let sum = checksum(ty, &st.slots[k].1);
                g.report(st.slots[k].0, sum);
                if r.below(8) == 0 {
                    g.ops.push(OP_HASH);
                    let h = st.tree.hash();
                    g.expect.push(h.to_string());
                    g.expect.push(h.to_string());
                }
                done += 1;
            }
            g.max_height = g.max_height.max(st.tree.hdr[layout::H_HEIGHT]);
            continue;
        }
        let free_bias = if late { 40 } else { 12 };
        let empty = off == -1 && len == 0;
        let (op, arg) = if empty && (roll < 40 || (long && !late && roll < 95)) {
            // Fresh allocation of an empty slot.
            let n = r.below(max_len + 1) as i64;
            let Ok(o) = st.alloc(n * size) else { continue };
            st.slots[k] = (o, vec![ZERO; n as usize]);
            (OP_ALLOC, n)
        } else if (long && late) || (roll < 10 + free_bias && (!long || roll < 13)) {
            // Free (a no-op for a zero-byte slot), leaving the slot empty.
            if off != -1 {
                st.free(off, len * size).expect("free of a live slot");
            }
            st.slots[k] = (-1, Vec::new());
            (OP_FREE, 0)
        } else if roll < 70 {
            // Resize: shrink, grow a little (often in place), or to a random length.
            let n = match r.below(4) {
                0 => (len - 1 - r.below(3) as i64).max(0),
                1 => len + 1 + r.below(3) as i64,
                2 => 0,
                _ => r.below(max_len + 1) as i64,
            };
            let Ok(o) = st.resize(off, len * size, n * size) else {
                continue;
            };
            st.slots[k].0 = o;
            st.slots[k].1.resize(n as usize, ZERO);
            (OP_RESIZE, n)
        } else if roll < 90 {
            let v = ty.random_value(&mut r);
            let Ok(o) = st.resize(off, len * size, (len + 1) * size) else {
                continue;
            };
            st.slots[k].0 = o;
            st.slots[k].1.push(v);
            (OP_APPEND, v)
        } else {
            // Fill every element with a pattern (catches overlapping placements).
            let seed = r.below(1000) as i64;
            for (j, x) in st.slots[k].1.iter_mut().enumerate() {
                *x = seed + 7 * j as i64;
            }
            (OP_FILL, seed)
        };
        g.ops.extend([op, k as i64, arg]);
        let sum = checksum(ty, &st.slots[k].1);
        g.report(st.slots[k].0, sum);
        g.max_height = g.max_height.max(st.tree.hdr[layout::H_HEIGHT]);
        done += 1;
    }
    // The program then reports and frees every non-empty slot in slot order,
    // prints both pools' hashes (the pools must be whole again) and finishes them
    // (finish reports leaks).
    g.ops.push(OP_FINISH);
    for k in 0..4 * PER_TYPE {
        let ty = TYPES[k % 4];
        let (off, ref elems) = st.slots[k];
        if off == -1 && elems.is_empty() {
            continue;
        }
        let (sum, bytes) = (checksum(ty, elems), elems.len() as i64 * ty.size());
        g.report(off, sum);
        if off != -1 {
            st.free(off, bytes).expect("final free");
        }
    }
    assert_eq!(
        st.model.spans(),
        vec![(0, CAP)],
        "reference pool not whole at the end"
    );
    let h = st.tree.hash();
    g.expect.push(h.to_string());
    g.expect.push(h.to_string());
    g
}

/// A random tree-level call that must fail: `(opcode, args, expected code)`.
/// Computed on a clone of the model, so the reference state does not change
/// (a failing tree call changes nothing either).
fn probe(r: &mut Rng, st: &mut Reference) -> Option<(i64, Vec<i64>, i64)> {
    let spans = st.model.spans();
    let inside_free = |r: &mut Rng| -> Option<i64> {
        let &(o, l) = spans.get(r.below(spans.len().max(1) as u64) as usize)?;
        Some(o + 8 * r.below((l / 8) as u64) as i64)
    };
    let (op, args) = match r.below(7) {
        // Double free / overlapping free: a range starting inside free space.
        0 => (
            OP_PROBE_FREE,
            vec![inside_free(r)?, 8 * (1 + r.below(4) as i64)],
        ),
        // A live span freed with a size reaching past the arena.
        1 => {
            let live: Vec<i64> = st.slots.iter().filter(|s| s.0 >= 0).map(|s| s.0).collect();
            (
                OP_PROBE_FREE,
                vec![*live.get(r.below(live.len().max(1) as u64) as usize)?, CAP],
            )
        }
        2 => (
            OP_PROBE_FREE,
            vec![[CAP, 4, -8, CAP - 8][r.below(4) as usize], 16],
        ),
        3 => (OP_PROBE_FREE, vec![0, [0, -8][r.below(2) as usize]]),
        // Growing a span that is free space.
        4 => (OP_PROBE_RESIZE, vec![inside_free(r)?, 8, 16]),
        // Larger than any free span (or the arena), or no size at all.
        5 => {
            let largest = spans.iter().map(|s| s.1).max().unwrap_or(0);
            (
                OP_PROBE_ALLOC,
                vec![[largest + 8, CAP + 1, 0, -5][r.below(4) as usize]],
            )
        }
        _ => (OP_PROBE_RESIZE, vec![0, 8, -8]),
    };
    let mut m = st.model.clone();
    let expect = match op {
        OP_PROBE_FREE => m.free(args[0], args[1]).map(|()| 0),
        OP_PROBE_RESIZE => m.resize_in_place(args[0], args[1], args[2]),
        _ => m.alloc(args[0]),
    };
    match expect {
        Err(code) if code != MUST_MOVE => Some((op, args, code)),
        _ => None,
    }
}

/// The replay program: `tests/differential/replay.tern` with its `//@ each`
/// blocks repeated per library side and per element type and its
/// placeholders filled in.
fn replay_program() -> String {
    let sides = [("lib", "slice_pool"), ("pure", "slice_pool_pure")]
        .map(|(side, module)| vec![("SIDE", side.to_string()), ("MODULE", module.to_string())]);
    let types = TYPES.map(|ty| {
        let (sum_body, value) = match ty {
            Ty::Tri => (
                "for k in 0..3 { h = h * 31 + (xs[i][k] as i64) + 1; }".to_string(),
                "tri(v)".to_string(),
            ),
            _ => (
                "h = h * 31 + (xs[i] as i64) + 1;".to_string(),
                format!("v as {}", ty.tern()),
            ),
        };
        vec![
            ("T", ty.tern().to_string()),
            ("G", ty.tag().to_string()),
            ("SUM_BODY", sum_body),
            ("VALUE", value),
        ]
    });
    let mut globals = vec![
        ("PER_TYPE", PER_TYPE.to_string()),
        ("CAP", CAP.to_string()),
        ("NODE_WORDS", NODE_WORDS.to_string()),
    ];
    for (name, op) in [
        ("OP_BEGIN", OP_BEGIN),
        ("OP_ALLOC", OP_ALLOC),
        ("OP_FREE", OP_FREE),
        ("OP_RESIZE", OP_RESIZE),
        ("OP_APPEND", OP_APPEND),
        ("OP_FILL", OP_FILL),
        ("OP_PROBE_FREE", OP_PROBE_FREE),
        ("OP_PROBE_RESIZE", OP_PROBE_RESIZE),
        ("OP_PROBE_ALLOC", OP_PROBE_ALLOC),
        ("OP_HASH", OP_HASH),
        ("OP_FINISH", OP_FINISH),
    ] {
        globals.push((name, op.to_string()));
    }
    let mut out = String::new();
    let mut lines = include_str!("differential/replay.tern").lines();
    while let Some(line) = lines.next() {
        let Some(each) = line.strip_prefix("//@ each ") else {
            writeln!(out, "{}", fill(line, &globals)).unwrap();
            continue;
        };
        let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "//@ end").collect();
        let sets: &[Vec<(&str, String)>] = if each.starts_with("side:") {
            &sides
        } else {
            &types
        };
        for set in sets {
            for line in &block {
                writeln!(out, "{}", fill(&fill(line, set), &globals)).unwrap();
            }
        }
    }
    assert!(
        !out.contains('$'),
        "replay.tern: a placeholder left unfilled:\n{out}"
    );
    out
}

/// `line` with every `$NAME` that `vars` names replaced by its value (a
/// placeholder is a `$` and the longest run of capitals, digits and `_`).
fn fill(line: &str, vars: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let name_len = rest[at + 1..]
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len() - at - 1);
        let name = &rest[at + 1..at + 1 + name_len];
        match vars.iter().find(|(n, _)| *n == name) {
            Some((_, value)) => out.push_str(value),
            None => out.push_str(&rest[at..at + 1 + name_len]),
        }
        rest = &rest[at + 1 + name_len..];
    }
    out.push_str(rest);
    out
}

/// The op stream and expected output of sequences `range`.
fn batch(seed: u64, range: std::ops::Range<usize>) -> (Vec<u8>, Vec<String>) {
    let mut words = Vec::new();
    let mut expect = Vec::new();
    for i in range {
        let g = generate(seed, i);
        words.extend(g.ops);
        // The program prints a bare marker; the index is for reading failures.
        expect.push("seq".to_string());
        expect.extend(g.expect.into_iter().skip(1));
    }
    words.push(OP_END);
    expect.push("done".into());
    (words.iter().flat_map(|w| w.to_le_bytes()).collect(), expect)
}

fn sequences() -> usize {
    std::env::var("TERN_DIFF_SEQUENCES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_SEQUENCES)
}

fn seed() -> u64 {
    std::env::var("TERN_DIFF_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x7E57_5EED)
}

/// Which sequence an output line belongs to (counting `seq` markers).
fn sequence_of_line(expect: &[String], line: usize, first: usize) -> usize {
    first
        + expect[..line.min(expect.len())]
            .iter()
            .filter(|l| *l == "seq")
            .count()
            .saturating_sub(1)
}

/// Runs the replay program on every batch in every mode and level of
/// `matrix`, with the driver flags `flags`; returns the failures.
fn run_batches(
    total: usize,
    seed: u64,
    dir: &Path,
    matrix: &[(Mode, &'static str)],
    flags: &[&str],
) -> Vec<String> {
    let program = dir.join("replay.tern");
    std::fs::write(&program, replay_program()).expect("write replay program");
    let batches: Vec<std::ops::Range<usize>> = (0..total)
        .step_by(SEQUENCES_PER_BATCH)
        .map(|s| s..(s + SEQUENCES_PER_BATCH).min(total))
        .collect();
    let inputs: Vec<(std::ops::Range<usize>, std::path::PathBuf, Vec<String>)> = batches
        .into_iter()
        .map(|range| {
            let (bytes, expect) = batch(seed, range.clone());
            let input = dir.join(format!("ops_{}_{}.bin", range.start, range.end));
            std::fs::write(&input, bytes).expect("write op stream");
            (range, input, expect)
        })
        .collect();
    let queue = Mutex::new(matrix.to_vec());
    let failures = Mutex::new(Vec::new());
    let pool_bytes = CAP.to_string();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                loop {
                    let Some((mode, level)) = queue.lock().unwrap().pop() else {
                        break;
                    };
                    let env = [("TERN_POOL_BYTES", pool_bytes.as_str())];
                    let runs = run_replays(&program, (mode, level), flags, &env, dir, &inputs);
                    match runs {
                        Err(e) => failures
                            .lock()
                            .unwrap()
                            .push(format!("[{mode:?} {level}]: {e}")),
                        Ok(outcomes) => {
                            for ((range, input, expect), o) in inputs.iter().zip(outcomes) {
                                let what = format!(
                                    "[{mode:?} {level}] sequences {range:?} (input {})",
                                    input.display()
                                );
                                let mut problems = Vec::new();
                                if o.code != Some(0) {
                                    problems.push(format!(
                                        "status {:?} (signal {:?}, timed out {}), stderr: {}",
                                        o.code,
                                        o.signal,
                                        o.timed_out,
                                        o.stderr.trim_end()
                                    ));
                                }
                                if let Some((line, d)) = first_difference(&o.stdout, expect) {
                                    let seq = sequence_of_line(expect, line, range.start);
                                    problems.push(format!("sequence {seq}: {d}"));
                                }
                                if !problems.is_empty() {
                                    failures
                                        .lock()
                                        .unwrap()
                                        .push(format!("{what}: {}", problems.join("\n  ")));
                                }
                            }
                        }
                    }
                }
            });
        }
    });
    failures.into_inner().unwrap()
}

/// Compiles the replay program once for `mode`/`level` (with `flags`) and
/// runs it on every input.
fn run_replays(
    program: &Path,
    (mode, level): (Mode, &str),
    flags: &[&str],
    env: &[(&str, &str)],
    dir: &Path,
    inputs: &[(std::ops::Range<usize>, std::path::PathBuf, Vec<String>)],
) -> Result<Vec<Outcome>, String> {
    let exe = dir.join(format!("replay{level}{}", flags.concat()));
    if mode == Mode::Aot {
        let mut c = pool_support::tern();
        c.args(["build", level]);
        c.args(flags);
        c.args([program.to_str().unwrap(), "-o", exe.to_str().unwrap()]);
        let built = run_with_timeout(c, Duration::from_secs(600));
        if built.code != Some(0) {
            return Err(format!(
                "build failed ({:?}): {}",
                built.code,
                built.stderr.trim_end()
            ));
        }
    }
    let mut outcomes = Vec::new();
    for (_, input, _) in inputs {
        let mut c = match mode {
            Mode::Jit => {
                let mut c = pool_support::tern();
                c.args(["run", level]);
                c.args(flags);
                c.arg(program.to_str().unwrap());
                c
            }
            Mode::Aot => Command::new(&exe),
        };
        c.current_dir(pool_support::ROOT);
        for (k, v) in env {
            c.env(k, v);
        }
        outcomes.push(run_with_timeout_input(c, input, Duration::from_secs(600)));
    }
    Ok(outcomes)
}

#[test]
fn placements_and_contents_agree_with_the_model_in_every_mode() {
    let dir = scratch("differential");
    let total = sequences();
    let failures = run_batches(total, seed(), &dir, &MATRIX, &[]);
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        failures.is_empty(),
        "{} failing runs (program and inputs kept in {}):\n\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n\n")
    );
}

/// Under `--sanitize` placement does not change (no quarantine) and no
/// correct program is stopped: the first batch of sequences prints exactly
/// the same lines, JIT and AOT at -O2 (every access of the replay's slices,
/// and of `slice_pool`'s node array, goes through the sanitizer's check).
#[test]
fn placements_and_contents_are_the_same_under_sanitize() {
    let dir = scratch("differential-sanitize");
    let total = sequences().min(SEQUENCES_PER_BATCH);
    let matrix = [(Mode::Jit, "-O2"), (Mode::Aot, "-O2")];
    let failures = run_batches(total, seed(), &dir, &matrix, &["--sanitize"]);
    if failures.is_empty() {
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(
        failures.is_empty(),
        "{} failing runs (program and inputs kept in {}):\n\n{}",
        failures.len(),
        dir.display(),
        failures.join("\n\n")
    );
}

#[test]
fn generator_covers_multi_level_trees_and_every_probe() {
    // The default run must reach trees of height >= 3 (splits, merges, borrows)
    // and expect every error code the probes aim at; otherwise it tests little.
    let mut max_height = 0;
    let mut codes = std::collections::BTreeSet::new();
    for i in 0..DEFAULT_SEQUENCES {
        let g = generate(seed(), i);
        max_height = max_height.max(g.max_height);
        codes.extend(g.probe_codes);
    }
    assert!(
        max_height >= 3,
        "the default sequences only reach tree height {max_height}"
    );
    let want: std::collections::BTreeSet<i64> = [-2, -3, -4, -5, -10].into_iter().collect();
    assert_eq!(codes, want, "probe error codes");
}

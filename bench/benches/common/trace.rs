//! Replays of allocation traces recorded from real programs (`TERNTRC1`, see
//! bench/traces/README.md) on an allocator of the benches, touching every
//! allocation at both ends as `tern bench`'s Tern replayer does.

use super::Alloc;

/// One decoded operation: `(op, id, size)` with op 0 = alloc, 1 = free, 2 = realloc.
pub type Op = (u8, u32, u32);

/// A trace in memory.
pub struct Trace {
    pub ops: Vec<Op>,
    pub ids: usize,
    /// The arena a pool replaying it needs (`tern bench`'s: room for twice
    /// its peak of live bytes and its largest block, at least 1 GiB).
    pub arena: i64,
}

impl Trace {
    /// Reads a `TERNTRC1` file, gzip-compressed or not, checked record by
    /// record as `tern bench --trace-file` checks one
    /// (`tern_bench::traces::load_file`).
    pub fn load(path: &str) -> Result<Trace, String> {
        let b = tern_bench::traces::load_file(std::path::Path::new(path), false)
            .map_err(|e| format!("{path}: {e}"))?;
        let arena = tern_bench::traces::footprint(&b)
            .map_err(|e| format!("{path}: {e}"))?
            .arena;
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
        let (records, ids) = (u32_at(8) as usize, u32_at(12) as usize);
        let ops = (0..records)
            .map(|r| {
                let w = u32_at(16 + 8 * r);
                ((w >> 30) as u8, w & 0x3fff_ffff, u32_at(20 + 8 * r))
            })
            .collect();
        Ok(Trace { ops, ids, arena })
    }

    /// Replays the trace on `a` (with `dry`, keeps the books but allocates
    /// nothing: what a measurement subtracts). Returns a checksum of the
    /// bytes read back.
    #[inline(never)]
    pub fn replay<A: Alloc>(&self, a: &mut A, dry: bool) -> u64 {
        // (handle, size); size 0 owns no block.
        let mut objs = vec![(0usize, 0usize); self.ids];
        let mut sum = 0u64;
        for &(op, id, size) in &self.ops {
            let o = &mut objs[id as usize];
            let size = size as usize;
            match op {
                1 => {
                    if o.1 > 0 && !dry {
                        sum = fold(sum, a, o.0, o.1);
                        a.free(o.0, o.1);
                    }
                    *o = (0, 0);
                }
                _ => {
                    if !dry {
                        o.0 = match (op, o.1, size) {
                            (_, _, 0) => {
                                if o.1 > 0 {
                                    a.free(o.0, o.1);
                                }
                                0
                            }
                            (0, _, _) | (_, 0, _) => a.alloc(size),
                            _ => a.realloc(o.0, o.1, size),
                        };
                        if a.addr(o.0).is_null() {
                            eprintln!("the allocator could not allocate {size} bytes");
                            std::process::exit(1);
                        }
                        touch(a, o.0, size, id);
                    }
                    o.1 = size;
                }
            }
        }
        if !dry {
            for o in objs.iter().filter(|o| o.1 > 0) {
                sum = fold(sum, a, o.0, o.1);
                a.free(o.0, o.1);
            }
        }
        sum
    }
}

/// Writes the object's tag into both ends of its block.
#[inline(always)]
fn touch<A: Alloc>(a: &A, h: usize, n: usize, id: u32) {
    if n > 0 {
        let p = a.addr(h);
        // SAFETY: the block holds n bytes.
        unsafe {
            *p = id as u8;
            *p.add(n - 1) = (id >> 8) as u8;
        }
    }
}

/// Folds both ends of a block into the checksum.
#[inline(always)]
fn fold<A: Alloc>(sum: u64, a: &A, h: usize, n: usize) -> u64 {
    let p = a.addr(h);
    // SAFETY: the block holds n > 0 bytes.
    let (x, y) = unsafe { (*p as u64, *p.add(n - 1) as u64) };
    sum.wrapping_mul(31).wrapping_add(x * 257 + y)
}

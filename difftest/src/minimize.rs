//! Shrinking a failing program: drop items, drop statements (in chunks,
//! then one by one) and replace compound statements by one of their bodies,
//! keeping each change only while the program still fails the same way.
//! The caller's predicate decides what "fails" means (for the tester: it
//! still checks, and the same modes still disagree in the same way).

use std::collections::HashMap;

use crate::program::{Block, BlockPath, ItemKind, Program, Stmt};

/// What the minimizer did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Predicate calls (each distinct candidate is tried once).
    pub tries: usize,
    /// Changes kept.
    pub kept: usize,
}

/// Shrinks `program` while `still_fails` holds, calling it at most
/// `max_tries` times. `still_fails(program)` itself is assumed true.
pub fn minimize(
    program: &Program,
    still_fails: &mut dyn FnMut(&Program) -> bool,
    max_tries: usize,
) -> (Program, Stats) {
    let mut m = Minimizer {
        best: program.clone(),
        pred: still_fails,
        seen: HashMap::new(),
        stats: Stats::default(),
        max_tries,
    };
    loop {
        let before = m.best.size();
        m.reduce_items();
        m.reduce_blocks();
        m.unwrap_compounds();
        if m.best.size() >= before || m.out_of_tries() {
            break;
        }
    }
    (m.best, m.stats)
}

struct Minimizer<'a> {
    best: Program,
    pred: &'a mut dyn FnMut(&Program) -> bool,
    /// Rendered candidates already tried, and the answer.
    seen: HashMap<String, bool>,
    stats: Stats,
    max_tries: usize,
}

impl Minimizer<'_> {
    fn out_of_tries(&self) -> bool {
        self.stats.tries >= self.max_tries
    }

    /// Tries `cand`; keeps it when it still fails.
    fn attempt(&mut self, cand: Program) -> bool {
        let text = cand.render();
        if let Some(&r) = self.seen.get(&text) {
            if r {
                self.best = cand;
            }
            return r;
        }
        if self.out_of_tries() {
            return false;
        }
        self.stats.tries += 1;
        let r = (self.pred)(&cand);
        self.seen.insert(text, r);
        if r {
            self.best = cand;
            self.stats.kept += 1;
        }
        r
    }

    /// Drops removable items, in chunks of halving size.
    fn reduce_items(&mut self) {
        let removable = |p: &Program| -> Vec<usize> {
            (0..p.items.len()).filter(|&i| !p.items[i].fixed).collect()
        };
        let mut chunk = removable(&self.best).len().div_ceil(2).max(1);
        loop {
            let mut start = 0;
            while start < removable(&self.best).len() && !self.out_of_tries() {
                let idx = removable(&self.best);
                let drop: Vec<usize> = idx[start..(start + chunk).min(idx.len())].to_vec();
                let mut cand = self.best.clone();
                for &i in drop.iter().rev() {
                    cand.items.remove(i);
                }
                if !self.attempt(cand) {
                    start += chunk;
                }
            }
            if chunk == 1 || self.out_of_tries() {
                break;
            }
            chunk = chunk.div_ceil(2);
        }
    }

    /// Drops statements block by block, outer blocks first.
    fn reduce_blocks(&mut self) {
        let mut k = 0;
        while !self.out_of_tries() {
            let paths = self.best.block_paths();
            let Some(path) = paths.get(k).cloned() else {
                break;
            };
            self.reduce_block(&path);
            k += 1;
        }
    }

    fn reduce_block(&mut self, path: &BlockPath) {
        let removable = |p: &mut Program| -> Vec<usize> {
            p.block_mut(path).map_or(Vec::new(), |b| {
                (0..b.len()).filter(|&i| b[i].removable()).collect()
            })
        };
        let mut chunk = removable(&mut self.best).len().div_ceil(2).max(1);
        loop {
            let mut start = 0;
            while start < removable(&mut self.best).len() && !self.out_of_tries() {
                let idx = removable(&mut self.best);
                let drop: Vec<usize> = idx[start..(start + chunk).min(idx.len())].to_vec();
                let mut cand = self.best.clone();
                let block = cand.block_mut(path).expect("path from block_paths");
                for &i in drop.iter().rev() {
                    block.remove(i);
                }
                if !self.attempt(cand) {
                    start += chunk;
                }
            }
            if chunk == 1 || self.out_of_tries() {
                break;
            }
            chunk = chunk.div_ceil(2);
        }
    }

    /// Replaces loops and `if`s by the statements of one of their bodies.
    fn unwrap_compounds(&mut self) {
        let mut k = 0;
        while !self.out_of_tries() {
            let paths = self.best.block_paths();
            let Some(path) = paths.get(k).cloned() else {
                break;
            };
            let mut i = 0;
            while let Some(stmt) = self
                .best
                .block_mut(&path)
                .and_then(|block| block.get(i).cloned())
            {
                let mut replaced = false;
                for child in stmt.children().into_iter().cloned() {
                    let mut cand = self.best.clone();
                    splice(cand.block_mut(&path).expect("path exists"), i, child);
                    if self.attempt(cand) {
                        replaced = true;
                        break;
                    }
                }
                if !replaced {
                    i += 1;
                }
                if self.out_of_tries() {
                    break;
                }
            }
            k += 1;
        }
    }
}

/// Replaces statement `i` of `block` by the statements of `body`, dropping
/// pinned ones (a loop counter's increment means nothing outside its loop).
fn splice(block: &mut Block, i: usize, body: Block) {
    let body: Vec<Stmt> = body.into_iter().filter(Stmt::removable).collect();
    block.splice(i..=i, body);
}

/// The number of functions, statements and other items of `p` (for reports).
pub fn describe_size(p: &Program) -> String {
    let funcs = p
        .items
        .iter()
        .filter(|i| matches!(i.kind, ItemKind::Func { .. }))
        .count();
    format!(
        "{} items ({funcs} editable functions), size {}",
        p.items.len(),
        p.size()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Item;

    fn line(s: &str) -> Stmt {
        Stmt::line(s)
    }

    fn program() -> Program {
        let body = vec![
            line("var a = 1;"),
            line("var b = 2;"),
            Stmt::Loop {
                head: "for i in 0..3 {".into(),
                body: vec![line("a += i;"), line("print(a);"), line("b += 1;")],
            },
            Stmt::If {
                arms: vec![(
                    "a > b".into(),
                    vec![line("print(1);"), line("BUG(a);"), line("print(2);")],
                )],
                els: Some(vec![line("print(3);")]),
            },
            line("print(b);"),
        ];
        Program {
            comment: vec![],
            items: vec![
                Item {
                    kind: ItemKind::Text("const K: i64 = 1;".into()),
                    fixed: false,
                },
                Item {
                    kind: ItemKind::Text("fn helper() {}".into()),
                    fixed: false,
                },
                Item {
                    kind: ItemKind::Func {
                        head: "fn main() {".into(),
                        body,
                    },
                    fixed: true,
                },
            ],
        }
    }

    #[test]
    fn shrinks_to_what_the_predicate_needs() {
        // A synthetic "disagreement": the program still mentions BUG and
        // still declares `a`, which BUG reads.
        let mut calls = 0;
        let mut pred = |p: &Program| {
            calls += 1;
            let t = p.render();
            t.contains("BUG(a);") && t.contains("var a = 1;")
        };
        let (min, stats) = minimize(&program(), &mut pred, 1000);
        assert_eq!(
            min.render(),
            "fn main() {\n    var a = 1;\n    BUG(a);\n}\n"
        );
        assert_eq!(stats.tries, calls);
        assert!(stats.kept >= 3);
    }

    #[test]
    fn respects_pinned_statements_and_the_try_budget() {
        let mut p = program();
        if let ItemKind::Func { body, .. } = &mut p.items[2].kind {
            body.push(Stmt::pinned("KEEP;"));
        }
        let (min, _) = minimize(&p, &mut |p: &Program| p.render().contains("BUG"), 1000);
        assert!(min.render().contains("KEEP;"));
        let (limited, stats) = minimize(&p, &mut |p: &Program| p.render().contains("BUG"), 2);
        assert_eq!(stats.tries, 2);
        assert!(limited.size() < p.size());
    }

    #[test]
    fn a_predicate_that_never_holds_changes_nothing() {
        let p = program();
        let (min, stats) = minimize(&p, &mut |_: &Program| false, 1000);
        assert_eq!(min, p);
        assert_eq!(stats.kept, 0);
    }
}

//! A generated program as the minimizer sees it: items, and function bodies
//! as trees of statements, rendered to Tern source text. Expressions are
//! already text; what can be dropped or unwrapped is the structure.

use std::fmt::Write as _;

/// A whole program: its items in source order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The header comment (seed, intent), rendered first.
    pub comment: Vec<String>,
    /// Items in source order.
    pub items: Vec<Item>,
}

/// One top-level item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Item {
    /// What the item is.
    pub kind: ItemKind,
    /// Never removed by the minimizer (`main`).
    pub fixed: bool,
}

/// The two shapes of item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemKind {
    /// An item kept as text: `use`, `const`, `struct`, a helper function.
    Text(String),
    /// A function whose body the minimizer may edit: `head` is everything up
    /// to and including the opening `{`.
    Func {
        /// `fn name(params) -> T {`
        head: String,
        /// The body's statements.
        body: Block,
    },
}

/// A list of statements.
pub type Block = Vec<Stmt>;

/// One statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stmt {
    /// A simple statement (one line of text, `;` included).
    Line {
        /// The statement's text.
        text: String,
        /// Never removed by the minimizer (a loop counter's increment).
        pinned: bool,
    },
    /// A `for` or `while` loop: `head` ends with `{`.
    Loop {
        /// `for i in 0..3 {` or `while w < 4 {`
        head: String,
        /// The loop body.
        body: Block,
    },
    /// An `if` / `else if` / `else` chain.
    If {
        /// `(condition, body)` for the `if` and each `else if`.
        arms: Vec<(String, Block)>,
        /// The `else` body.
        els: Option<Block>,
    },
}

impl Stmt {
    /// A simple statement the minimizer may drop.
    pub fn line(text: impl Into<String>) -> Stmt {
        Stmt::Line {
            text: text.into(),
            pinned: false,
        }
    }

    /// A simple statement the minimizer keeps.
    pub fn pinned(text: impl Into<String>) -> Stmt {
        Stmt::Line {
            text: text.into(),
            pinned: true,
        }
    }

    /// The statement's nested blocks, in order (loop body; if arms, then else).
    pub fn children(&self) -> Vec<&Block> {
        match self {
            Stmt::Line { .. } => Vec::new(),
            Stmt::Loop { body, .. } => vec![body],
            Stmt::If { arms, els } => arms.iter().map(|(_, b)| b).chain(els.iter()).collect(),
        }
    }

    /// Mutable access to nested block `k` (numbered as in [`Stmt::children`]).
    pub fn child_mut(&mut self, k: usize) -> Option<&mut Block> {
        match self {
            Stmt::Line { .. } => None,
            Stmt::Loop { body, .. } => (k == 0).then_some(body),
            Stmt::If { arms, els } => {
                if k < arms.len() {
                    Some(&mut arms[k].1)
                } else if k == arms.len() {
                    els.as_mut()
                } else {
                    None
                }
            }
        }
    }

    /// Whether the minimizer may remove this statement.
    pub fn removable(&self) -> bool {
        !matches!(self, Stmt::Line { pinned: true, .. })
    }

    /// Number of statements in this statement's tree (itself included).
    pub fn size(&self) -> usize {
        1 + self
            .children()
            .iter()
            .map(|b| b.iter().map(Stmt::size).sum::<usize>())
            .sum::<usize>()
    }
}

impl Program {
    /// The Tern source text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for line in &self.comment {
            let _ = writeln!(out, "// {line}");
        }
        for item in &self.items {
            match &item.kind {
                ItemKind::Text(t) => {
                    out.push_str(t);
                    if !t.ends_with('\n') {
                        out.push('\n');
                    }
                }
                ItemKind::Func { head, body } => {
                    out.push_str(head);
                    out.push('\n');
                    render_block(&mut out, body, 1);
                    out.push_str("}\n");
                }
            }
        }
        out
    }

    /// Number of items and statements (the minimizer's measure of size).
    pub fn size(&self) -> usize {
        self.items
            .iter()
            .map(|i| match &i.kind {
                ItemKind::Text(_) => 1,
                ItemKind::Func { body, .. } => 1 + body.iter().map(Stmt::size).sum::<usize>(),
            })
            .sum()
    }

    /// The block at `path`, if it exists.
    pub fn block_mut(&mut self, path: &BlockPath) -> Option<&mut Block> {
        let ItemKind::Func { body, .. } = &mut self.items.get_mut(path.item)?.kind else {
            return None;
        };
        let mut block = body;
        for &(stmt, child) in &path.steps {
            block = block.get_mut(stmt)?.child_mut(child)?;
        }
        Some(block)
    }

    /// Every block of every function, outer blocks before the blocks inside them.
    pub fn block_paths(&self) -> Vec<BlockPath> {
        let mut out = Vec::new();
        for (i, item) in self.items.iter().enumerate() {
            if let ItemKind::Func { body, .. } = &item.kind {
                let root = BlockPath {
                    item: i,
                    steps: Vec::new(),
                };
                collect_paths(body, root, &mut out);
            }
        }
        out
    }
}

/// Where a block sits: the function's item index, then for each level the
/// statement index and the child block number (see [`Stmt::children`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockPath {
    /// Index of the function in `Program::items`.
    pub item: usize,
    /// `(statement index, child block number)` from the body inwards.
    pub steps: Vec<(usize, usize)>,
}

fn collect_paths(block: &Block, here: BlockPath, out: &mut Vec<BlockPath>) {
    out.push(here.clone());
    for (s, stmt) in block.iter().enumerate() {
        for (c, child) in stmt.children().into_iter().enumerate() {
            let mut p = here.clone();
            p.steps.push((s, c));
            collect_paths(child, p, out);
        }
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("    ");
    }
}

fn render_block(out: &mut String, block: &Block, depth: usize) {
    for stmt in block {
        match stmt {
            Stmt::Line { text, .. } => {
                indent(out, depth);
                out.push_str(text);
                out.push('\n');
            }
            Stmt::Loop { head, body } => {
                indent(out, depth);
                out.push_str(head);
                out.push('\n');
                render_block(out, body, depth + 1);
                indent(out, depth);
                out.push_str("}\n");
            }
            Stmt::If { arms, els } => {
                for (k, (cond, body)) in arms.iter().enumerate() {
                    indent(out, depth);
                    if k > 0 {
                        out.push_str("} else ");
                    }
                    let _ = writeln!(out, "if {cond} {{");
                    render_block(out, body, depth + 1);
                }
                if let Some(body) = els {
                    indent(out, depth);
                    out.push_str("} else {\n");
                    render_block(out, body, depth + 1);
                }
                indent(out, depth);
                out.push_str("}\n");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Program {
        Program {
            comment: vec!["sample".into()],
            items: vec![
                Item {
                    kind: ItemKind::Text("const K: i64 = 3;".into()),
                    fixed: false,
                },
                Item {
                    kind: ItemKind::Func {
                        head: "fn main() {".into(),
                        body: vec![
                            Stmt::line("var w = 0;"),
                            Stmt::Loop {
                                head: "while w < K {".into(),
                                body: vec![Stmt::pinned("w += 1;"), Stmt::line("print(w);")],
                            },
                            Stmt::If {
                                arms: vec![
                                    ("w > 1".into(), vec![Stmt::line("print(1);")]),
                                    ("w > 0".into(), vec![]),
                                ],
                                els: Some(vec![Stmt::line("print(3);")]),
                            },
                        ],
                    },
                    fixed: true,
                },
            ],
        }
    }

    #[test]
    fn renders_nested_blocks() {
        let text = sample().render();
        assert_eq!(
            text,
            "// sample\nconst K: i64 = 3;\nfn main() {\n    var w = 0;\n    while w < K {\n        \
             w += 1;\n        print(w);\n    }\n    if w > 1 {\n        print(1);\n    } else if w > 0 \
             {\n    } else {\n        print(3);\n    }\n}\n"
        );
    }

    #[test]
    fn block_paths_reach_every_block() {
        let mut p = sample();
        let paths = p.block_paths();
        assert_eq!(paths.len(), 5); // body, loop, two arms, else
        let last = paths.last().unwrap().clone();
        p.block_mut(&last).unwrap().clear();
        assert!(p.render().contains("} else {\n    }\n"));
        assert_eq!(p.size(), 2 + 1 + 2 + 1 + 1 + 1);
    }
}

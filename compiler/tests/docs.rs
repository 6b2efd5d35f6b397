//! Every ```tern block of docs/language.md and docs/stdlib.md compiles as
//! the page says:
//! plain blocks check cleanly, `tern,error` blocks produce exactly their
//! `// error:` lines, `tern,module=NAME` blocks become modules for the
//! blocks after them, `tern,ignore` blocks are skipped.

mod common;

use common::{TestLoader, root};
use tern_compiler::compile;

struct Block {
    info: String,
    line: usize,
    text: String,
}

fn blocks(md: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut current: Option<Block> = None;
    for (i, line) in md.lines().enumerate() {
        match &mut current {
            None => {
                if let Some(info) = line.strip_prefix("```")
                    && info.starts_with("tern")
                {
                    current = Some(Block {
                        info: info.trim().to_string(),
                        line: i + 1,
                        text: String::new(),
                    });
                }
            }
            Some(b) => {
                if line.trim_start() == "```" {
                    out.push(current.take().unwrap());
                } else {
                    b.text.push_str(line);
                    b.text.push('\n');
                }
            }
        }
    }
    assert!(current.is_none(), "unterminated code block");
    out
}

#[test]
fn every_example_in_the_language_reference_checks() {
    let counts = check_page("docs/language.md");
    // The page has examples of every kind; losing them silently would
    // make this test vacuous.
    assert!(
        counts.0 >= 8 && counts.1 >= 5 && counts.2 >= 1,
        "{counts:?}"
    );
}

#[test]
fn every_example_of_the_stdlib_page_checks() {
    let counts = check_page("docs/stdlib.md");
    assert!(counts.0 >= 4, "{counts:?}");
}

/// Checks every block of the page at `rel`; how many (plain, error,
/// module) blocks it had.
fn check_page(rel: &str) -> (usize, usize, usize) {
    let md = std::fs::read_to_string(root().join(rel)).unwrap();
    let mut loader = TestLoader::default();
    let mut counts = (0, 0, 0);
    for b in blocks(&md) {
        let name = format!("{rel}:{}", b.line);
        if b.info == "tern,ignore" {
            continue;
        }
        if let Some(module) = b.info.strip_prefix("tern,module=") {
            // A module must check when used: wrap it in a tiny program.
            let mut probe = TestLoader {
                memory: loader.memory.clone(),
            };
            probe.memory.insert(module.to_string(), b.text.clone());
            let user = format!("use {module};\nfn main() {{}}\n");
            if let Err(d) = compile(&name, &user, &probe) {
                panic!("{name}: module `{module}` does not check:\n{}", d.render());
            }
            loader.memory.insert(module.to_string(), b.text);
            counts.2 += 1;
            continue;
        }
        let result = compile(&name, &b.text, &loader);
        match b.info.as_str() {
            "tern" => {
                if let Err(d) = result {
                    panic!("{name}: example does not check:\n{}", d.render());
                }
                counts.0 += 1;
            }
            "tern,error" => {
                let expected: Vec<String> = b
                    .text
                    .lines()
                    .filter_map(|l| l.trim().strip_prefix("// error: "))
                    .map(str::to_string)
                    .collect();
                assert!(
                    !expected.is_empty(),
                    "{name}: error block without `// error:`"
                );
                let d = match result {
                    Ok(_) => panic!("{name}: expected errors, but it checks"),
                    Err(d) => d,
                };
                let actual: Vec<String> = d
                    .summaries()
                    .into_iter()
                    .map(|(_, l, c, m)| format!("{l}:{c}: {m}"))
                    .collect();
                assert_eq!(actual, expected, "{name}");
                counts.1 += 1;
            }
            other => panic!("{name}: unknown block kind `{other}`"),
        }
    }
    counts
}

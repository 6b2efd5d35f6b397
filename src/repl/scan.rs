//! A small token scanner for REPL input, enough to decide whether an input is
//! complete (brackets closed, no open string or comment), whether it is items
//! or statements, and where each item starts and ends. The front end still
//! parses everything; this only finds boundaries.

/// One token: what it is and its byte range in the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tok {
    pub kind: Kind,
    pub start: usize,
    pub end: usize,
}

/// Token kinds the REPL cares about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    Ident(String),
    Open(char),
    Close(char),
    Semi,
    Comma,
    Colon,
    /// String literal, numbers, operators: anything else.
    Other,
}

/// The tokens of `text` and whether a string or block comment is left open,
/// from the language's own lexer, reduced to the kinds the REPL looks at.
pub fn scan(text: &str) -> (Vec<Tok>, bool) {
    use tern_compiler::syntax::lexer::Tok as T;
    let (tokens, open) = tern_compiler::syntax::tokens(text);
    let toks = tokens
        .into_iter()
        .map(|t| {
            let (start, end) = (t.span.lo as usize, t.span.hi as usize);
            let src = &text[start..end];
            let kind = match t.tok {
                T::LParen => Kind::Open('('),
                T::LBracket => Kind::Open('['),
                T::LBrace => Kind::Open('{'),
                T::RParen => Kind::Close(')'),
                T::RBracket => Kind::Close(']'),
                T::RBrace => Kind::Close('}'),
                T::Semi => Kind::Semi,
                T::Comma => Kind::Comma,
                T::Colon => Kind::Colon,
                // Identifiers and keywords, by their text.
                _ if src.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => {
                    Kind::Ident(src.to_string())
                }
                _ => Kind::Other,
            };
            Tok { kind, start, end }
        })
        .collect();
    (toks, open)
}

/// Whether `text` still needs more lines: a bracket, string or block comment
/// is open. Excess closing brackets count as complete (the front end reports
/// them).
pub fn needs_more(text: &str) -> bool {
    let (toks, open) = scan(text);
    if open {
        return true;
    }
    let mut depth: i64 = 0;
    for t in &toks {
        match t.kind {
            Kind::Open(_) => depth += 1,
            Kind::Close(_) => depth -= 1,
            _ => {}
        }
    }
    depth > 0
}

/// Keywords that begin an item.
const ITEM_KEYWORDS: [&str; 5] = ["fn", "struct", "const", "use", "extern"];

/// Whether the input starts with an item keyword.
pub fn starts_with_item(toks: &[Tok]) -> bool {
    matches!(toks.first().map(|t| &t.kind), Some(Kind::Ident(k)) if ITEM_KEYWORDS.contains(&k.as_str()))
}

/// Whether a statement-or-expression input is statements: it starts with a
/// statement keyword or a block, or ends with `;`. Anything else (including
/// a struct literal, which ends with `}`) is an expression whose value the
/// REPL prints.
pub fn is_statements(text: &str, toks: &[Tok]) -> bool {
    let first = toks.first().map(|t| &t.kind);
    let keyword = matches!(first,
        Some(Kind::Ident(k)) if matches!(k.as_str(),
            "let" | "var" | "if" | "while" | "for" | "return" | "break" | "continue"));
    keyword || first == Some(&Kind::Open('{')) || text.trim_end().ends_with(';')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn incomplete_inputs_need_more() {
        assert!(needs_more("fn f() {"));
        assert!(needs_more("let s = \"abc"));
        assert!(needs_more("/* open"));
        assert!(!needs_more("fn f() { }"));
        assert!(!needs_more(")"));
        assert!(!needs_more("let s = \"{\";"));
    }

    #[test]
    fn statements_and_expressions() {
        let kind = |t: &str| is_statements(t, &scan(t).0);
        assert!(kind("let x = 1"));
        assert!(kind("x += 1;"));
        assert!(kind("for i in 0..3 { print(i); }"));
        assert!(!kind("Pair { a: 1 }"));
        assert!(!kind("f(1) + 2"));
    }
}

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

/// One top-level item of an input: the name it defines (the key under which
/// a later definition replaces it) and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemText {
    /// `f` for `fn f`, `struct f`, `const f`, `extern fn f`; `use m` for a use.
    pub key: String,
    /// The function name when the item is a function (for `:clif`).
    pub is_fn: bool,
    pub text: String,
}

/// Splits an input made of items into the items, or says what is not one.
pub fn split_items(text: &str) -> Result<Vec<ItemText>, String> {
    let (toks, _) = scan(text);
    let mut items = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let Kind::Ident(kw) = &toks[i].kind else {
            return Err(not_an_item(text, &toks[i]));
        };
        let name_at = |k: usize| match toks.get(k).map(|t| &t.kind) {
            Some(Kind::Ident(n)) => Ok(n.clone()),
            _ => Err(format!("expected a name after `{kw}`")),
        };
        let (key, is_fn) = match kw.as_str() {
            "fn" | "struct" | "const" => (name_at(i + 1)?, kw == "fn"),
            "use" => (format!("use {}", name_at(i + 1)?), false),
            "extern" => (name_at(i + 2)?, true),
            _ => return Err(not_an_item(text, &toks[i])),
        };
        // An item ends at a `;` outside brackets, or (except for `const`,
        // whose value may be a struct literal) at the `}` closing its body.
        let mut depth = 0i64;
        let mut j = i;
        let mut end = None;
        while j < toks.len() {
            match toks[j].kind {
                Kind::Open(_) => depth += 1,
                Kind::Close(c) => {
                    depth -= 1;
                    if depth == 0 && c == '}' && kw != "const" {
                        end = Some(j);
                        break;
                    }
                }
                Kind::Semi if depth == 0 => {
                    end = Some(j);
                    break;
                }
                _ => {}
            }
            j += 1;
        }
        let last = end.unwrap_or(toks.len() - 1);
        items.push(ItemText {
            key,
            is_fn,
            text: text[toks[i].start..toks[last].end].to_string(),
        });
        i = last + 1;
    }
    Ok(items)
}

fn not_an_item(text: &str, t: &Tok) -> String {
    format!(
        "expected an item (fn, struct, const, use, extern) here, found `{}`; \
         enter items and statements as separate inputs",
        &text[t.start..t.end]
    )
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

/// Parameters of the function item `text` (`fn name(a: T, ref b: U)`), as
/// (by_ref, type text); `None` when it is generic or cannot be read.
pub fn fn_params(text: &str) -> Option<Vec<(bool, String)>> {
    let (toks, _) = scan(text);
    let open = toks.iter().position(|t| t.kind == Kind::Open('('))?;
    if toks[..open]
        .iter()
        .any(|t| t.kind == Kind::Other && &text[t.start..t.end] == "<")
    {
        return None;
    }
    let mut params = Vec::new();
    let mut depth = 0i64;
    let mut cur_start = open + 1;
    for (k, t) in toks.iter().enumerate().skip(open) {
        match t.kind {
            Kind::Open(_) => depth += 1,
            Kind::Close(_) | Kind::Comma if depth == 1 => {
                if k > cur_start {
                    params.push(param(text, &toks[cur_start..k])?);
                }
                if t.kind != Kind::Comma {
                    return Some(params);
                }
                cur_start = k + 1;
                if let Kind::Close(_) = t.kind {
                    depth -= 1;
                }
            }
            Kind::Close(_) => depth -= 1,
            _ => {}
        }
    }
    None
}

fn param(text: &str, toks: &[Tok]) -> Option<(bool, String)> {
    let by_ref = matches!(&toks.first()?.kind, Kind::Ident(k) if k == "ref");
    let colon = toks.iter().position(|t| t.kind == Kind::Colon)?;
    let ty = toks.get(colon + 1)?;
    let last = toks.last()?;
    Some((by_ref, text[ty.start..last.end].to_string()))
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
    fn items_split_with_keys() {
        let items =
            split_items("fn f() -> i64 { return 1; } const P: Pair = Pair { a: 1 }; use m;")
                .unwrap();
        let keys: Vec<_> = items.iter().map(|i| i.key.as_str()).collect();
        assert_eq!(keys, ["f", "P", "use m"]);
        assert_eq!(items[1].text, "const P: Pair = Pair { a: 1 };");
        assert!(split_items("fn f() {} 1 + 2").is_err());
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

    #[test]
    fn params_of_functions() {
        assert_eq!(
            fn_params("fn f(a: [4]i64, ref b: Pair) -> i64 { }"),
            Some(vec![(false, "[4]i64".into()), (true, "Pair".into())])
        );
        assert_eq!(fn_params("fn g() {}"), Some(vec![]));
        assert_eq!(fn_params("fn h<T>(x: T) {}"), None);
    }
}

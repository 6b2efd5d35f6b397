//! The lexer: source text to tokens with byte spans. Errors are reported to
//! the sink and lexing continues, so a stray character costs one diagnostic.

use crate::diagnostics::{ErrorKind, Found, Sink};
use crate::source::{FileId, Span};

/// A token kind. Keywords are distinct kinds; builtin names (`len`, `print`,
/// ...) are ordinary identifiers resolved by the checker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// Integer literal; `None` when it does not fit in 64 bits (already reported).
    Int(Option<u64>),
    /// Byte literal `b'a'`: its value (a `u8`).
    Byte(u8),
    Str(String),
    Ident(String),
    // keywords
    Fn,
    Let,
    Var,
    Const,
    Struct,
    Extern,
    Use,
    If,
    Else,
    While,
    For,
    In,
    Break,
    Continue,
    Return,
    True,
    False,
    As,
    Ref,
    Reusable,
    Unsafe,
    // punctuation
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    Comma,
    Semi,
    Colon,
    ColonColon,
    Dot,
    DotDot,
    Arrow,
    Eq,
    EqEq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Amp,
    Pipe,
    Caret,
    Shl,
    Shr,
    AndAnd,
    OrOr,
    Bang,
    /// `op=`, carrying the operator token (`Plus` for `+=`, ...).
    OpAssign(Box<Tok>),
    /// A malformed token (already reported); the parser stays silent at it.
    Error,
    Eof,
}

impl Tok {
    /// A keyword that can only begin a statement (`let`, `if`, `return`,
    /// ...): what the parser resynchronises on and the REPL classifies by.
    pub fn begins_statement(&self) -> bool {
        matches!(
            self,
            Tok::Let
                | Tok::Var
                | Tok::If
                | Tok::While
                | Tok::For
                | Tok::Return
                | Tok::Break
                | Tok::Continue
        )
    }

    /// The token as the Y of "expected X, found Y".
    pub fn found(&self) -> Found {
        match self {
            Tok::Int(_) => Found::IntLiteral,
            Tok::Byte(_) => Found::ByteLiteral,
            Tok::Str(_) => Found::StrLiteral,
            Tok::Ident(n) => Found::Token(n.clone()),
            Tok::Eof => Found::EndOfFile,
            Tok::Error => Found::Invalid,
            other => Found::Token(other.text()),
        }
    }

    /// Source text of a keyword or punctuation token.
    pub fn text(&self) -> String {
        let s = match self {
            Tok::Fn => "fn",
            Tok::Let => "let",
            Tok::Var => "var",
            Tok::Const => "const",
            Tok::Struct => "struct",
            Tok::Extern => "extern",
            Tok::Use => "use",
            Tok::If => "if",
            Tok::Else => "else",
            Tok::While => "while",
            Tok::For => "for",
            Tok::In => "in",
            Tok::Break => "break",
            Tok::Continue => "continue",
            Tok::Return => "return",
            Tok::True => "true",
            Tok::False => "false",
            Tok::As => "as",
            Tok::Ref => "ref",
            Tok::Reusable => "reusable",
            Tok::Unsafe => "unsafe",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::Comma => ",",
            Tok::Semi => ";",
            Tok::Colon => ":",
            Tok::ColonColon => "::",
            Tok::Dot => ".",
            Tok::DotDot => "..",
            Tok::Arrow => "->",
            Tok::Eq => "=",
            Tok::EqEq => "==",
            Tok::Ne => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Amp => "&",
            Tok::Pipe => "|",
            Tok::Caret => "^",
            Tok::Shl => "<<",
            Tok::Shr => ">>",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Bang => "!",
            Tok::OpAssign(op) => return format!("{}=", op.text()),
            Tok::Int(_) | Tok::Byte(_) | Tok::Str(_) | Tok::Ident(_) | Tok::Eof | Tok::Error => {
                return self.found().to_string();
            }
        };
        s.to_string()
    }
}

/// The byte a one-character escape stands for (`n` of `\n`), in strings and
/// byte literals alike; `None` for any other character.
fn simple_escape(c: char) -> Option<u8> {
    Some(match c {
        'n' => b'\n',
        't' => b'\t',
        'r' => b'\r',
        '0' => 0,
        '\\' => b'\\',
        '\'' => b'\'',
        '"' => b'"',
        _ => return None,
    })
}

/// The value of the two hex digits `\x` is followed by at the start of
/// `rest` (`41` of `\x41`), if they are there.
fn hex_escape(rest: &str) -> Option<u8> {
    let digits = rest.get(..2)?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u8::from_str_radix(digits, 16).ok()
}

/// The byte literal whose text after `b'` is `rest`: its value and how many
/// bytes of `rest` it takes (through the closing `'`, or to the end of the
/// line when it is not closed).
fn byte_literal(rest: &str) -> (Result<u8, ErrorKind>, usize) {
    let mut chars = rest.char_indices();
    let (value, after) = match chars.next() {
        Some((_, '\\')) => match chars.next() {
            Some((k, 'x')) => match hex_escape(&rest[k + 1..]) {
                Some(v) => (Ok(v), k + 3),
                None => (Err(ErrorKind::BadHexEscape), k + 1),
            },
            Some((k, e)) => (
                simple_escape(e).ok_or(ErrorKind::UnknownEscape(e)),
                k + e.len_utf8(),
            ),
            None => (Err(ErrorKind::BadByteLiteral), 1),
        },
        Some((_, '\'' | '\n')) | None => (Err(ErrorKind::BadByteLiteral), 0),
        Some((_, ch)) if ch.is_ascii() => (Ok(ch as u8), 1),
        Some((_, ch)) => (Err(ErrorKind::BadByteLiteral), ch.len_utf8()),
    };
    if rest[after..].starts_with('\'') {
        (value, after + 1)
    } else {
        // Not closed: the error covers the line's rest up to a `'`.
        let line = rest[after..]
            .find(['\'', '\n'])
            .map_or(rest.len() - after, |n| n);
        let closes = rest[after + line..].starts_with('\'');
        (
            Err(ErrorKind::BadByteLiteral),
            after + line + usize::from(closes),
        )
    }
}

/// A token and where it is.
#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

fn keyword(s: &str) -> Option<Tok> {
    Some(match s {
        "fn" => Tok::Fn,
        "let" => Tok::Let,
        "var" => Tok::Var,
        "const" => Tok::Const,
        "struct" => Tok::Struct,
        "extern" => Tok::Extern,
        "use" => Tok::Use,
        "if" => Tok::If,
        "else" => Tok::Else,
        "while" => Tok::While,
        "for" => Tok::For,
        "in" => Tok::In,
        "break" => Tok::Break,
        "continue" => Tok::Continue,
        "return" => Tok::Return,
        "true" => Tok::True,
        "false" => Tok::False,
        "as" => Tok::As,
        "ref" => Tok::Ref,
        "reusable" => Tok::Reusable,
        "unsafe" => Tok::Unsafe,
        _ => return None,
    })
}

/// Split `text` into tokens; the list always ends with `Tok::Eof`.
pub(crate) fn lex(file: FileId, text: &str, sink: &mut Sink) -> Vec<Token> {
    lex_as(file, text, sink, false)
}

/// [`lex`]; with `generated`, `$` may begin and continue an identifier:
/// the names a host generates (`crate::session`) can then never clash with
/// a name a user wrote, since `$` is not part of the language.
pub(crate) fn lex_as(file: FileId, text: &str, sink: &mut Sink, generated: bool) -> Vec<Token> {
    let bytes = text.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || (generated && c == b'$');
    let mut toks = Vec::new();
    let mut i = 0usize;
    let span = |lo: usize, hi: usize| Span::new(file, lo as u32, hi as u32);
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        if c == b'/' && bytes.get(i + 1) == Some(&b'*') {
            // Block comments nest, as in Rust.
            let mut depth = 0usize;
            while i < bytes.len() {
                if bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            if depth != 0 {
                sink.error(ErrorKind::UnterminatedComment, span(start, start + 2));
            }
            continue;
        }
        // `b'a'`: a byte literal, escapes as in strings (and `\'`).
        if c == b'b' && bytes.get(i + 1) == Some(&b'\'') {
            let (tok, len) = byte_literal(&text[i + 2..]);
            let end = i + 2 + len;
            match tok {
                Ok(v) => toks.push(Token {
                    tok: Tok::Byte(v),
                    span: span(start, end),
                }),
                Err(kind) => {
                    sink.error(kind, span(start, end));
                    toks.push(Token {
                        tok: Tok::Error,
                        span: span(start, end),
                    });
                }
            }
            i = end;
            continue;
        }
        if c.is_ascii_alphabetic() || c == b'_' || (generated && c == b'$') {
            while i < bytes.len() && word(bytes[i]) {
                i += 1;
            }
            let word = &text[start..i];
            let tok = keyword(word).unwrap_or_else(|| Tok::Ident(word.to_string()));
            toks.push(Token {
                tok,
                span: span(start, i),
            });
            continue;
        }
        if c.is_ascii_digit() {
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            // `1.5`: a float literal (but `0..10` is a range).
            if bytes.get(i) == Some(&b'.') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
                i += 1;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                sink.error(
                    ErrorKind::FloatLiteral(text[start..i].to_string()),
                    span(start, i),
                );
                toks.push(Token {
                    tok: Tok::Error,
                    span: span(start, i),
                });
                continue;
            }
            let word = &text[start..i];
            let value = parse_int(word);
            let tok = match value {
                Ok(v) => Tok::Int(Some(v)),
                Err(kind) => {
                    sink.error(kind, span(start, i));
                    Tok::Int(None)
                }
            };
            toks.push(Token {
                tok,
                span: span(start, i),
            });
            continue;
        }
        // `'a'`: a character literal; it stands for its byte value so the
        // rest of the expression is still checked.
        if c == b'\'' {
            let rest = &text[i + 1..];
            let mut chars = rest.chars();
            let lit = match (chars.next(), chars.next(), chars.next()) {
                (Some('\\'), Some(e), Some('\'')) => Some((e, 4 + e.len_utf8() - 1, true)),
                (Some(ch), Some('\''), _) if ch != '\'' && ch != '\n' => {
                    Some((ch, 2 + ch.len_utf8(), false))
                }
                _ => None,
            };
            if let Some((ch, len, escaped)) = lit {
                let value = match (escaped, ch) {
                    (true, 'n') => Some(10),
                    (true, 't') => Some(9),
                    (true, 'r') => Some(13),
                    (true, '0') => Some(0),
                    (true, '\\' | '\'' | '"') | (false, _) if ch.is_ascii() => Some(ch as u64),
                    _ => None,
                };
                let shown = text[start..start + len].to_string();
                sink.error(
                    ErrorKind::CharLiteral(shown, value),
                    span(start, start + len),
                );
                toks.push(Token {
                    tok: value.map_or(Tok::Error, |v| Tok::Int(Some(v))),
                    span: span(start, start + len),
                });
                i = start + len;
                continue;
            }
        }
        if c == b'"' {
            i += 1;
            let mut s = String::new();
            let mut closed = false;
            while i < bytes.len() {
                let ch = text[i..].chars().next().unwrap_or('\0');
                match ch {
                    '"' => {
                        i += 1;
                        closed = true;
                        break;
                    }
                    '\n' => break,
                    '\\' => {
                        let esc = text[i + 1..].chars().next();
                        let esc_len = esc.map_or(0, char::len_utf8);
                        let mut len = 1 + if esc == Some('\n') { 0 } else { esc_len };
                        match esc {
                            Some(e) if let Some(b) = simple_escape(e) => s.push(b as char),
                            Some('x') => match hex_escape(&text[i + 2..]) {
                                Some(b) if b.is_ascii() => {
                                    s.push(b as char);
                                    len += 2;
                                }
                                Some(b) => {
                                    sink.error(ErrorKind::HexEscapeAboveAscii(b), span(i, i + 4));
                                    len += 2;
                                }
                                None => sink.error(ErrorKind::BadHexEscape, span(i, i + 2)),
                            },
                            Some(other) if other != '\n' => sink
                                .error(ErrorKind::UnknownEscape(other), span(i, i + 1 + esc_len)),
                            _ => {}
                        }
                        i += len;
                    }
                    // As in Rust: a line ending inside a literal is a
                    // mistake, and a lone one does not show.
                    '\r' => {
                        sink.error(ErrorKind::BareCarriageReturn, span(i, i + 1));
                        s.push(ch);
                        i += 1;
                    }
                    _ => {
                        s.push(ch);
                        i += ch.len_utf8();
                    }
                }
            }
            let tok = if closed {
                Tok::Str(s)
            } else {
                sink.error(ErrorKind::UnterminatedString, span(start, start + 1));
                Tok::Error
            };
            toks.push(Token {
                tok,
                span: span(start, i),
            });
            continue;
        }
        let next = bytes.get(i + 1).copied();
        let next2 = bytes.get(i + 2).copied();
        let (tok, len) = match (c, next) {
            (b':', Some(b':')) => (Tok::ColonColon, 2),
            (b'.', Some(b'.')) => (Tok::DotDot, 2),
            (b'-', Some(b'>')) => (Tok::Arrow, 2),
            (b'=', Some(b'=')) => (Tok::EqEq, 2),
            (b'!', Some(b'=')) => (Tok::Ne, 2),
            (b'<', Some(b'<')) if next2 == Some(b'=') => (Tok::OpAssign(Box::new(Tok::Shl)), 3),
            (b'>', Some(b'>')) if next2 == Some(b'=') => (Tok::OpAssign(Box::new(Tok::Shr)), 3),
            (b'<', Some(b'<')) => (Tok::Shl, 2),
            (b'>', Some(b'>')) => (Tok::Shr, 2),
            (b'<', Some(b'=')) => (Tok::Le, 2),
            (b'>', Some(b'=')) => (Tok::Ge, 2),
            (b'&', Some(b'&')) => (Tok::AndAnd, 2),
            (b'|', Some(b'|')) => (Tok::OrOr, 2),
            (b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^', Some(b'=')) => {
                (Tok::OpAssign(Box::new(single(c))), 2)
            }
            _ => match c {
                b'(' | b')' | b'{' | b'}' | b'[' | b']' | b',' | b';' | b':' | b'.' | b'='
                | b'<' | b'>' | b'+' | b'-' | b'*' | b'/' | b'%' | b'&' | b'|' | b'^' | b'!' => {
                    (single(c), 1)
                }
                _ => {
                    let ch = text[i..].chars().next().unwrap_or('\0');
                    sink.error(ErrorKind::UnexpectedChar(ch), span(i, i + ch.len_utf8()));
                    toks.push(Token {
                        tok: Tok::Error,
                        span: span(i, i + ch.len_utf8()),
                    });
                    i += ch.len_utf8();
                    continue;
                }
            },
        };
        i += len;
        toks.push(Token {
            tok,
            span: span(start, i),
        });
    }
    toks.push(Token {
        tok: Tok::Eof,
        span: span(bytes.len(), bytes.len()),
    });
    toks
}

fn single(c: u8) -> Tok {
    match c {
        b'(' => Tok::LParen,
        b')' => Tok::RParen,
        b'{' => Tok::LBrace,
        b'}' => Tok::RBrace,
        b'[' => Tok::LBracket,
        b']' => Tok::RBracket,
        b',' => Tok::Comma,
        b';' => Tok::Semi,
        b':' => Tok::Colon,
        b'.' => Tok::Dot,
        b'=' => Tok::Eq,
        b'<' => Tok::Lt,
        b'>' => Tok::Gt,
        b'+' => Tok::Plus,
        b'-' => Tok::Minus,
        b'*' => Tok::Star,
        b'/' => Tok::Slash,
        b'%' => Tok::Percent,
        b'&' => Tok::Amp,
        b'|' => Tok::Pipe,
        b'^' => Tok::Caret,
        _ => Tok::Bang,
    }
}

/// Decimal or `0x` hex digits with `_` separators, fitting in 64 bits.
fn parse_int(word: &str) -> Result<u64, ErrorKind> {
    let (digits, radix) = match word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
        Some(rest) => (rest, 16),
        None => (word, 10),
    };
    let mut value: u64 = 0;
    let mut any = false;
    for ch in digits.chars() {
        if ch == '_' {
            continue;
        }
        let d = ch
            .to_digit(radix)
            .ok_or_else(|| ErrorKind::MalformedInt(word.to_string()))?;
        any = true;
        value = value
            .checked_mul(radix as u64)
            .and_then(|v| v.checked_add(d as u64))
            .ok_or(ErrorKind::IntTooLarge)?;
    }
    if !any {
        return Err(ErrorKind::MalformedInt(word.to_string()));
    }
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> (Vec<Tok>, Vec<String>) {
        let mut sink = Sink::default();
        let toks = lex(0, src, &mut sink).into_iter().map(|t| t.tok).collect();
        let errors = sink
            .finish(std::sync::Arc::new(Default::default()))
            .list()
            .iter()
            .map(|d| d.kind.to_string())
            .collect();
        (toks, errors)
    }

    #[test]
    fn integer_literals() {
        assert_eq!(parse_int("1_000"), Ok(1000));
        assert_eq!(parse_int("0xff_ff"), Ok(0xffff));
        assert_eq!(parse_int("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            parse_int("18446744073709551616"),
            Err(ErrorKind::IntTooLarge)
        );
        assert_eq!(parse_int("0x"), Err(ErrorKind::MalformedInt("0x".into())));
        assert_eq!(
            parse_int("1_i64"),
            Err(ErrorKind::MalformedInt("1_i64".into()))
        );
    }

    #[test]
    fn operators_take_the_longest_match() {
        let (toks, errors) = kinds("a<<=b>>c..d::<e->f!=g&&h");
        assert!(errors.is_empty());
        let shown: Vec<String> = toks.iter().map(Tok::text).collect();
        assert_eq!(
            shown,
            [
                "`a`",
                "<<=",
                "`b`",
                ">>",
                "`c`",
                "..",
                "`d`",
                "::",
                "<",
                "`e`",
                "->",
                "`f`",
                "!=",
                "`g`",
                "&&",
                "`h`",
                "end of file"
            ]
        );
    }

    #[test]
    fn strings_comments_and_bad_characters() {
        let (toks, errors) = kinds("\"a\\n\\\"b\" /* x /* y */ z */ // c\n# \"open");
        assert_eq!(toks[0], Tok::Str("a\n\"b".into()));
        assert_eq!(toks[1], Tok::Error);
        assert_eq!(toks[2], Tok::Error);
        assert_eq!(toks[3], Tok::Eof);
        assert_eq!(
            errors,
            ["unexpected character `#`", "unterminated string literal"]
        );
    }
}

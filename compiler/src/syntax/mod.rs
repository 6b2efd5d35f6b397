//! Surface syntax: lexer, syntax tree, parser.

pub mod ast;
pub mod lexer;
pub mod parser;

use crate::diagnostics::Sink;
use crate::source::FileId;

/// Lex and parse one file, reporting syntax errors to `sink`.
pub(crate) fn parse_file(file: FileId, text: &str, sink: &mut Sink) -> ast::Module {
    let toks = lexer::lex(file, text, sink);
    parser::parse(toks, text, sink)
}

/// Parse `text` on its own (no modules, no checking): the syntax tree, or
/// the syntax errors. For tools and tests.
pub fn parse_text(file_name: &str, text: &str) -> Result<ast::Module, crate::Diagnostics> {
    let mut sources = crate::source::SourceMap::default();
    let file = sources.add(file_name.to_string(), text.to_string());
    let mut sink = Sink::default();
    let module = parse_file(file, text, &mut sink);
    if sink.is_empty() {
        Ok(module)
    } else {
        Err(sink.finish(std::sync::Arc::new(sources)))
    }
}

/// The tokens of `text` (without the final `Eof`), for tools that need to see
/// the language's tokens without parsing — the REPL finds input boundaries
/// with them — and whether a string literal or block comment is left open at
/// the end. Other lexical errors are left for the front end to report.
pub fn tokens(text: &str) -> (Vec<lexer::Token>, bool) {
    use crate::diagnostics::ErrorKind;
    let mut sink = Sink::default();
    let mut toks = lexer::lex(0, text, &mut sink);
    toks.retain(|t| t.tok != lexer::Tok::Eof);
    let diagnostics = sink.finish(std::sync::Arc::default());
    let open = diagnostics.list().iter().any(|d| {
        matches!(
            d.kind,
            ErrorKind::UnterminatedString | ErrorKind::UnterminatedComment
        )
    });
    (toks, open)
}

//! Recursive-descent parser with Pratt expression parsing (Rust precedence).
//! On a syntax error it reports once and skips to the next statement or
//! item boundary, so one mistake yields one diagnostic.

use super::ast::*;
use super::lexer::{Tok, Token};
use crate::diagnostics::{ErrorKind, Expected, Sink};
use crate::source::Span;

/// Deepest nesting of expressions, blocks and types the parser accepts
/// (parentheses, brackets, blocks, calls, prefix operators, types).
pub const MAX_NESTING: u32 = 128;

/// Chains do not nest: `a + b + c ...`, `x as T as U`, `a.b[i].c ...` and
/// `if ... else if ...` grow the tree one level per link however long they
/// are, and do not count against `MAX_NESTING`. The passes over the tree
/// recurse once per level, so the links on any one path from the root of an
/// item are bounded by this (the stack of `crate::STACK_SIZE` holds it with
/// room to spare in a debug build).
pub const MAX_CHAIN_LINKS: u32 = 100_000;

/// Marker: a syntax error was reported; the caller resynchronises.
struct Reported;
type PResult<T> = Result<T, Reported>;

/// Parse a whole file.
pub(crate) fn parse(toks: Vec<Token>, text: &str, sink: &mut Sink) -> Module {
    Parser::new(toks, text, sink).module()
}

/// Parses a whole file like [`parse`], with the byte range of each item
/// (from its first token to its last).
pub(crate) fn parse_with_ranges(
    toks: Vec<Token>,
    text: &str,
    sink: &mut Sink,
) -> Vec<(Item, Span)> {
    let mut p = Parser::new(toks, text, sink);
    let mut items = Vec::new();
    while *p.peek() != Tok::Eof {
        let start = p.span();
        let at = p.pos;
        match p.item() {
            Ok(item) => items.push((item, start.to(p.prev_span()))),
            Err(Reported) => p.sync_item(),
        }
        p.ensure_progress(at);
    }
    items
}

/// Parses statements up to the end of the text: a body without its braces
/// (the input of an incremental session, `crate::session`).
pub(crate) fn parse_stmts(toks: Vec<Token>, text: &str, sink: &mut Sink) -> Vec<Stmt> {
    let mut p = Parser::new(toks, text, sink);
    let mut stmts = Vec::new();
    while *p.peek() != Tok::Eof {
        let at = p.pos;
        match p.stmt() {
            Ok(s) => stmts.push(s),
            Err(Reported) => {
                p.sync_stmt();
                // A stray `}` would stop `sync_stmt` for good.
                if *p.peek() == Tok::RBrace {
                    p.error_expected(Expected::Statement);
                    p.bump();
                }
            }
        }
        // So would an item keyword (`1 fn` at a REPL prompt): `sync_stmt`
        // stops before one, and `stmt` reports it without taking it.
        p.ensure_progress(at);
    }
    stmts
}

/// Parses one expression that must span the whole text (`None` once an
/// error is reported).
pub(crate) fn parse_expr_only(toks: Vec<Token>, text: &str, sink: &mut Sink) -> Option<Expr> {
    let mut p = Parser::new(toks, text, sink);
    let e = p.expr().ok()?;
    if *p.peek() != Tok::Eof {
        p.error_expected(Expected::EndOfExpression);
        return None;
    }
    Some(e)
}

struct Parser<'s> {
    toks: Vec<Token>,
    /// The source text (to tell a token that starts its line).
    text: &'s str,
    /// Inside the body of a function that returns a value: the nesting
    /// depth of the body's statements (a last expression without `;` there
    /// is a newcomer's tail expression).
    tail_depth: Option<u32>,
    pos: usize,
    sink: &'s mut Sink,
    depth: u32,
    /// Most chain links on one path down the subtrees parsed since it was
    /// last reset (each chain resets it around its operands; see
    /// `MAX_CHAIN_LINKS`).
    links: u32,
    /// Inside an `if`/`while` condition or `for` head, where `Name {` opens
    /// the body, not a struct literal (Rust's rule).
    no_struct: bool,
}

/// Binding power of a binary operator token (higher binds tighter).
fn binop(t: &Tok) -> Option<(BinOp, u8)> {
    Some(match t {
        Tok::OrOr => (BinOp::Or, 1),
        Tok::AndAnd => (BinOp::And, 2),
        Tok::EqEq => (BinOp::Eq, 3),
        Tok::Ne => (BinOp::Ne, 3),
        Tok::Lt => (BinOp::Lt, 3),
        Tok::Le => (BinOp::Le, 3),
        Tok::Gt => (BinOp::Gt, 3),
        Tok::Ge => (BinOp::Ge, 3),
        Tok::Pipe => (BinOp::BitOr, 4),
        Tok::Caret => (BinOp::BitXor, 5),
        Tok::Amp => (BinOp::BitAnd, 6),
        Tok::Shl => (BinOp::Shl, 7),
        Tok::Shr => (BinOp::Shr, 7),
        Tok::Plus => (BinOp::Add, 8),
        Tok::Minus => (BinOp::Sub, 8),
        Tok::Star => (BinOp::Mul, 9),
        Tok::Slash => (BinOp::Div, 9),
        Tok::Percent => (BinOp::Rem, 9),
        _ => return None,
    })
}
const AS_BP: u8 = 10;

impl<'s> Parser<'s> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos].tok
    }
    fn new(toks: Vec<Token>, text: &'s str, sink: &'s mut Sink) -> Parser<'s> {
        Parser {
            toks,
            text,
            tail_depth: None,
            pos: 0,
            sink,
            depth: 0,
            links: 0,
            no_struct: false,
        }
    }
    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.pos].span
    }
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos].clone();
        if self.pos + 1 < self.toks.len() {
            self.pos += 1;
        }
        t
    }
    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }
    fn error_expected(&mut self, what: Expected) -> Reported {
        if *self.peek() == Tok::Error {
            // The lexer already reported this token.
            return Reported;
        }
        let found = self.peek().found();
        self.sink.error(
            ErrorKind::Expected {
                expected: what,
                found,
            },
            self.span(),
        );
        Reported
    }
    fn expect(&mut self, t: &Tok) -> PResult<Span> {
        if self.peek() == t {
            Ok(self.bump().span)
        } else {
            Err(self.error_expected(Expected::Token(t.text())))
        }
    }
    /// The `;` ending a statement. When it is missing but the next token
    /// plainly starts a statement (or closes the block), report it and go
    /// on as if it were there: `Ok`. Otherwise the caller resynchronises.
    /// The end of a statement that is not an expression's value: its `;`,
    /// which may go before a block's `}` as in Rust (`if c { x = 1 }`).
    fn end_stmt(&mut self) -> PResult<()> {
        if *self.peek() == Tok::RBrace {
            return Ok(());
        }
        self.semi()
    }

    fn semi(&mut self) -> PResult<()> {
        if self.eat(&Tok::Semi) {
            return Ok(());
        }
        if *self.peek() == Tok::Error {
            return Err(Reported);
        }
        // Point just after the statement, where the `;` belongs.
        let prev = self.prev_span();
        let found = self.peek().found();
        self.sink.error(
            ErrorKind::Expected {
                expected: Expected::Token(";".into()),
                found,
            },
            Span::new(prev.file, prev.hi, prev.hi),
        );
        let err = Reported;
        match self.peek() {
            t if t.begins_statement() => Ok(()),
            Tok::RBrace => Ok(()),
            _ => Err(err),
        }
    }

    /// Whether the current token starts in the first column of its line.
    fn starts_line(&self) -> bool {
        let lo = self.span().lo as usize;
        let before = self.text.get(..lo).unwrap_or("");
        before.rsplit('\n').next().is_none_or(str::is_empty)
    }

    /// After `..`: a stray `=` (`0..=10`) is reported with the exclusive
    /// form, and the bound parsed as written.
    fn inclusive_range(&mut self, end: &Expr, eq: Option<Span>) {
        if let Some(eq) = eq {
            let hint = match end.kind {
                ExprKind::Int(Some(n)) => n.checked_add(1).map(|n| n.to_string()),
                _ => None,
            };
            self.sink.error(ErrorKind::InclusiveRange(hint), eq);
        }
    }

    fn ident(&mut self) -> PResult<Ident> {
        match self.peek().clone() {
            Tok::Ident(name) => {
                let span = self.bump().span;
                Ok(Ident { name, span })
            }
            _ => Err(self.error_expected(Expected::Identifier)),
        }
    }
    fn enter(&mut self, extra: u32) -> PResult<()> {
        if self.depth + extra >= MAX_NESTING {
            self.sink.error(ErrorKind::NestingTooDeep, self.span());
            return Err(Reported);
        }
        Ok(())
    }

    /// Run `f` with the link count reset; returns its result and the most
    /// links on one path inside what it parsed.
    fn links_of<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> (T, u32) {
        let saved = std::mem::take(&mut self.links);
        let r = f(self);
        (r, std::mem::replace(&mut self.links, saved))
    }

    /// A chain whose deepest path now has `links` links: report it past the
    /// limit (at the link being added).
    fn chain_ok(&mut self, links: u32, at: Span) -> PResult<()> {
        if links > MAX_CHAIN_LINKS {
            self.sink
                .error(ErrorKind::ChainTooLong(MAX_CHAIN_LINKS), at);
            return Err(Reported);
        }
        Ok(())
    }

    // ---- items ----

    fn module(&mut self) -> Module {
        let mut items = Vec::new();
        let mut broken = Vec::new();
        while *self.peek() != Tok::Eof {
            let at = self.pos;
            let name = self.item_name_ahead();
            match self.item() {
                Ok(item) => items.push(item),
                Err(Reported) => {
                    broken.extend(name);
                    self.sync_item();
                }
            }
            self.ensure_progress(at);
        }
        Module { items, broken }
    }

    /// The name the item starting here declares, read ahead (`fn NAME`,
    /// `priv fn NAME`, `struct NAME`, `const NAME`, `extern fn NAME`).
    fn item_name_ahead(&self) -> Option<String> {
        let at = match (self.peek(), self.peek_at(1)) {
            (Tok::Ident(p), Tok::Fn) if p == "priv" => 2,
            (Tok::Extern, Tok::Fn) => 2,
            (Tok::Fn | Tok::Struct | Tok::Const, _) => 1,
            _ => return None,
        };
        match self.peek_at(at) {
            Tok::Ident(n) => Some(n.clone()),
            _ => None,
        }
    }

    /// Skips one token when nothing was taken since token `at`: a loop
    /// whose error recovery stops where it started would never end (its
    /// error has been reported).
    fn ensure_progress(&mut self, at: usize) {
        if self.pos == at && *self.peek() != Tok::Eof {
            self.bump();
        }
    }

    /// Skip to the next token that can start an item at brace depth 0.
    fn sync_item(&mut self) {
        let mut depth = 0i64;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Fn | Tok::Struct | Tok::Const | Tok::Use | Tok::Extern if depth <= 0 => {
                    return;
                }
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth <= 0 {
                        self.bump();
                        if depth == 0 {
                            return;
                        }
                        depth = 0;
                        continue;
                    }
                }
                _ => {}
            }
            self.bump();
        }
    }

    fn item(&mut self) -> PResult<Item> {
        match self.peek() {
            Tok::Use => {
                self.bump();
                let name = self.ident()?;
                self.expect(&Tok::Semi)?;
                Ok(Item::Use(name))
            }
            Tok::Const => {
                self.bump();
                let name = self.ident()?;
                // `const NAME = "text";`: a string constant has no type.
                let ty = if self.eat(&Tok::Colon) {
                    Some(self.ty()?)
                } else {
                    None
                };
                self.expect(&Tok::Eq)?;
                let value = self.expr()?;
                self.expect(&Tok::Semi)?;
                Ok(Item::Const(ConstItem { name, ty, value }))
            }
            Tok::Struct => {
                self.bump();
                let name = self.ident()?;
                let generics = self.generic_params()?;
                self.expect(&Tok::LBrace)?;
                let mut fields = Vec::new();
                while *self.peek() != Tok::RBrace {
                    // `priv` marks a private field; it is a keyword only
                    // here, before a field name (a field may be named `priv`).
                    let private = matches!(self.peek(), Tok::Ident(n) if n == "priv")
                        && matches!(self.peek_at(1), Tok::Ident(_));
                    if private {
                        self.bump();
                    }
                    let name = self.ident()?;
                    self.expect(&Tok::Colon)?;
                    let ty = self.ty()?;
                    fields.push(FieldDecl { private, name, ty });
                    if !self.eat(&Tok::Comma) {
                        break;
                    }
                }
                self.expect(&Tok::RBrace)?;
                Ok(Item::Struct(StructItem {
                    name,
                    generics,
                    fields,
                }))
            }
            Tok::Extern => {
                self.bump();
                self.expect(&Tok::Fn)?;
                let name = self.ident()?;
                let params = self.params()?;
                let ret = self.ret_type()?;
                self.expect(&Tok::Semi)?;
                Ok(Item::Extern(ExternItem { name, params, ret }))
            }
            // `priv fn`: a function private to its module (`priv` is a
            // keyword only here and before a field name).
            Tok::Ident(n) if n == "priv" && *self.peek_at(1) == Tok::Fn => {
                self.bump();
                self.fn_item(true)
            }
            Tok::Fn => self.fn_item(false),
            _ => Err(self.error_expected(Expected::Item)),
        }
    }

    /// `fn name<generics>(params) -> T { body }`, at its `fn`.
    fn fn_item(&mut self, private: bool) -> PResult<Item> {
        self.expect(&Tok::Fn)?;
        let name = self.ident()?;
        let generics = self.generic_params()?;
        let params = self.params()?;
        let ret = self.ret_type()?;
        let saved = self.tail_depth.replace(self.depth + 1);
        if ret.is_none() {
            self.tail_depth = None;
        }
        let body = self.block();
        self.tail_depth = saved;
        let body = body?;
        Ok(Item::Fn(FnItem {
            private,
            name,
            generics,
            params,
            ret,
            body,
        }))
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect(&Tok::LParen)?;
        let mut params = Vec::new();
        while *self.peek() != Tok::RParen {
            let by_ref = self.eat(&Tok::Ref);
            let name = self.ident()?;
            self.expect(&Tok::Colon)?;
            let ty = self.ty()?;
            params.push(Param { by_ref, name, ty });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        Ok(params)
    }

    fn ret_type(&mut self) -> PResult<Option<TypeExpr>> {
        if self.eat(&Tok::Arrow) {
            Ok(Some(self.ty()?))
        } else {
            Ok(None)
        }
    }

    // ---- types ----

    fn ty(&mut self) -> PResult<TypeExpr> {
        self.enter(0)?;
        self.depth += 1;
        let r = self.ty_inner();
        self.depth -= 1;
        r
    }

    fn ty_inner(&mut self) -> PResult<TypeExpr> {
        let start = self.span();
        match self.peek() {
            Tok::LBracket => {
                self.bump();
                if self.eat(&Tok::RBracket) {
                    let elem = self.ty()?;
                    let span = start.to(elem.span);
                    return Ok(TypeExpr {
                        kind: TypeExprKind::Slice(Box::new(elem)),
                        span,
                    });
                }
                let saved = std::mem::replace(&mut self.no_struct, false);
                let len = self.expr();
                self.no_struct = saved;
                let len = len?;
                self.expect(&Tok::RBracket)?;
                let elem = self.ty()?;
                let span = start.to(elem.span);
                Ok(TypeExpr {
                    kind: TypeExprKind::Array(Box::new(len), Box::new(elem)),
                    span,
                })
            }
            Tok::Reusable => {
                self.bump();
                self.expect(&Tok::LBracket)?;
                self.expect(&Tok::RBracket)?;
                let elem = self.ty()?;
                let span = start.to(elem.span);
                Ok(TypeExpr {
                    kind: TypeExprKind::Reusable(Box::new(elem)),
                    span,
                })
            }
            Tok::Ident(_) => {
                let path = self.path()?;
                // A primitive takes no arguments: `x as i64 < y` compares.
                let primitive = matches!(
                    path.segments.as_slice(),
                    [one] if ["i64", "i32", "u8", "u64", "bool"].contains(&one.name.as_str())
                );
                let mut args = Vec::new();
                if !primitive && self.eat(&Tok::Lt) {
                    args = self.type_arg_list()?;
                }
                Ok(TypeExpr {
                    span: path.span.to(self.prev_span()),
                    kind: TypeExprKind::Path(path, args),
                })
            }
            _ => Err(self.error_expected(Expected::Type)),
        }
    }

    /// `<T, U>` after a function or struct name, or nothing.
    fn generic_params(&mut self) -> PResult<Vec<Ident>> {
        let mut generics = Vec::new();
        if self.eat(&Tok::Lt) {
            loop {
                generics.push(self.ident()?);
                if !self.eat(&Tok::Comma) || *self.peek() == Tok::Gt {
                    break;
                }
            }
            self.expect(&Tok::Gt)?;
        }
        Ok(generics)
    }

    /// `a` or `a::b` (stops before `::<`).
    fn path(&mut self) -> PResult<Path> {
        let first = match self.peek() {
            Tok::Reusable | Tok::Unsafe => {
                let t = self.bump();
                Ident {
                    name: t.tok.text(),
                    span: t.span,
                }
            }
            _ => self.ident()?,
        };
        let mut span = first.span;
        let mut segments = vec![first];
        while *self.peek() == Tok::ColonColon && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            let seg = self.ident()?;
            span = span.to(seg.span);
            segments.push(seg);
        }
        Ok(Path { segments, span })
    }

    /// `::<T, U>` after a path, if present.
    fn type_args(&mut self) -> PResult<Vec<TypeExpr>> {
        if *self.peek() == Tok::ColonColon && *self.peek_at(1) == Tok::Lt {
            self.bump();
            self.bump();
            return self.type_arg_list();
        }
        Ok(Vec::new())
    }

    /// After `<`: `T, U>`. A closing `>>` (`Vec<Vec<i64>>`) or `>=` is split,
    /// its first `>` closing this list.
    fn type_arg_list(&mut self) -> PResult<Vec<TypeExpr>> {
        let mut args = Vec::new();
        while !matches!(self.peek(), Tok::Gt | Tok::Shr | Tok::Ge) {
            args.push(self.ty()?);
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.close_angle()?;
        Ok(args)
    }

    /// Consumes one `>`, splitting `>>` and `>=` (the rest stays next).
    fn close_angle(&mut self) -> PResult<()> {
        let rest = match self.peek() {
            Tok::Shr => Tok::Gt,
            Tok::Ge => Tok::Eq,
            _ => {
                self.expect(&Tok::Gt)?;
                return Ok(());
            }
        };
        let t = &mut self.toks[self.pos];
        t.tok = rest;
        t.span.lo += 1;
        Ok(())
    }

    // ---- statements ----

    fn block(&mut self) -> PResult<Block> {
        self.enter(0)?;
        let open = self.expect(&Tok::LBrace)?;
        self.depth += 1;
        let saved = std::mem::replace(&mut self.no_struct, false);
        let mut stmts = Vec::new();
        loop {
            // `fn` indented inside a body: a nested function (parsed for its
            // own errors, then dropped). At the start of a line it more
            // likely begins the next item after a block left open.
            if *self.peek() == Tok::Fn && !self.starts_line() {
                let name = match self.peek_at(1) {
                    Tok::Ident(n) => n.clone(),
                    _ => String::new(),
                };
                let at = self.toks[(self.pos + 1).min(self.toks.len() - 1)].span;
                self.sink.error(ErrorKind::NestedFn(name), at);
                let saved_tail = self.tail_depth.take();
                if self.item().is_err() {
                    self.sync_stmt();
                }
                self.tail_depth = saved_tail;
                continue;
            }
            match self.peek() {
                Tok::RBrace => break,
                // An item keyword cannot start a statement: the block was
                // left open and the next item begins here.
                Tok::Eof | Tok::Fn | Tok::Struct | Tok::Extern | Tok::Use => {
                    self.sink.error(ErrorKind::UnclosedBrace, open);
                    self.depth -= 1;
                    self.no_struct = saved;
                    // Keep what was parsed: its errors are worth reporting.
                    return Ok(Block {
                        stmts,
                        span: open.to(self.span()),
                    });
                }
                _ => {}
            }
            let (start, returns) = (self.span(), *self.peek() == Tok::Return);
            match self.stmt() {
                Ok(s) => stmts.push(s),
                Err(Reported) => {
                    self.sync_stmt();
                    // A `return` whose value failed to parse still returns:
                    // dropped, it would add "must return a value on every
                    // path" to the error already reported.
                    if returns {
                        let span = start.to(self.prev_span());
                        let value = Expr {
                            kind: ExprKind::Error,
                            span,
                        };
                        stmts.push(Stmt {
                            kind: StmtKind::Return(Some(value)),
                            span,
                        });
                    }
                }
            }
        }
        let close = self.bump().span;
        self.depth -= 1;
        self.no_struct = saved;
        Ok(Block {
            stmts,
            span: open.to(close),
        })
    }

    /// Skip past the next `;` at this nesting level, or stop before the `}`
    /// that closes the enclosing block.
    fn sync_stmt(&mut self) {
        let mut depth = 0i64;
        loop {
            match self.peek() {
                Tok::Eof => return,
                Tok::Semi if depth == 0 => {
                    self.bump();
                    return;
                }
                Tok::LBrace | Tok::LParen | Tok::LBracket => depth += 1,
                Tok::RParen | Tok::RBracket => depth = (depth - 1).max(0),
                Tok::RBrace => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.bump();
                        // A block-like statement ended here.
                        return;
                    }
                }
                Tok::Fn | Tok::Struct | Tok::Extern | Tok::Use if depth == 0 => return,
                _ => {}
            }
            self.bump();
        }
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let start = self.span();
        let kind = match self.peek() {
            Tok::Ident(n) if n == "loop" && *self.peek_at(1) == Tok::LBrace => {
                let at = self.bump().span;
                self.sink.error(ErrorKind::LoopKeyword, at);
                let body = self.block()?;
                StmtKind::While {
                    cond: Expr {
                        kind: ExprKind::Bool(true),
                        span: at,
                    },
                    body,
                }
            }
            // A `const` here is read as the `let` it could be, after its
            // error, so the function's uses of it do not cascade.
            Tok::Let | Tok::Var | Tok::Const => {
                let keyword = self.bump();
                let mutable = keyword.tok == Tok::Var;
                let name = self.ident()?;
                if keyword.tok == Tok::Const {
                    self.sink
                        .error(ErrorKind::ConstInBody(name.name.clone()), keyword.span);
                }
                let ty = if self.eat(&Tok::Colon) {
                    Some(self.ty()?)
                } else {
                    None
                };
                self.expect(&Tok::Eq)?;
                // A binding whose initialiser is broken is still declared
                // (with an error value), so later uses do not cascade.
                let init = match self.expr() {
                    Ok(e) => {
                        if self.semi().is_err() {
                            self.sync_stmt();
                        }
                        e
                    }
                    Err(Reported) => {
                        self.sync_stmt();
                        Expr {
                            kind: ExprKind::Error,
                            span: name.span,
                        }
                    }
                };
                StmtKind::Let {
                    mutable,
                    name,
                    ty,
                    init,
                }
            }
            Tok::If => return self.if_stmt(),
            Tok::While => {
                self.bump();
                let cond = self.cond_expr()?;
                let body = self.block()?;
                StmtKind::While { cond, body }
            }
            Tok::For => {
                self.bump();
                let first = self.ident()?;
                let second = if self.eat(&Tok::Comma) {
                    Some(self.ident()?)
                } else {
                    None
                };
                self.expect(&Tok::In)?;
                let start_e = self.cond_expr()?;
                if *self.peek() != Tok::DotDot || second.is_some() {
                    // `for x in xs` / `for i, x in xs`: a sequence.
                    let (index, var) = match second {
                        Some(var) => (Some(first), var),
                        None => (None, first),
                    };
                    let body = self.block()?;
                    return Ok(Stmt {
                        span: start.to(self.prev_span()),
                        kind: StmtKind::ForEach {
                            index,
                            var,
                            seq: start_e,
                            body,
                        },
                    });
                }
                let var = first;
                let dots = self.expect(&Tok::DotDot)?;
                let eq = (*self.peek() == Tok::Eq).then(|| dots.to(self.bump().span));
                let end = self.cond_expr()?;
                self.inclusive_range(&end, eq);
                let body = self.block()?;
                StmtKind::For {
                    var,
                    start: start_e,
                    end,
                    body,
                }
            }
            Tok::Break => {
                self.bump();
                self.end_stmt()?;
                StmtKind::Break
            }
            Tok::Continue => {
                self.bump();
                self.end_stmt()?;
                StmtKind::Continue
            }
            Tok::Return => {
                self.bump();
                let value = if matches!(self.peek(), Tok::Semi | Tok::RBrace) {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.end_stmt()?;
                StmtKind::Return(value)
            }
            _ => {
                let e = self.expr()?;
                match self.peek().clone() {
                    Tok::Eq => {
                        self.bump();
                        let value = self.expr()?;
                        self.end_stmt()?;
                        StmtKind::Assign { place: e, value }
                    }
                    Tok::OpAssign(op) => {
                        self.bump();
                        let (op, _) = binop(&op).unwrap_or((BinOp::Add, 0));
                        let value = self.expr()?;
                        self.end_stmt()?;
                        StmtKind::CompoundAssign {
                            place: e,
                            op,
                            value,
                        }
                    }
                    // `fn f() -> i64 { 5 }`, as in Rust: the last expression
                    // of a function body with a result type is its value
                    // (a `panic(..)` there has none: it ends the body).
                    Tok::RBrace if self.tail_depth == Some(self.depth) && !is_panic(&e) => {
                        StmtKind::Return(Some(e))
                    }
                    // Elsewhere the `;` before a `}` may go, as in Rust after
                    // a call: `if c { print(x) }`.
                    Tok::RBrace => StmtKind::Expr(e),
                    _ => {
                        self.semi()?;
                        StmtKind::Expr(e)
                    }
                }
            }
        };
        Ok(Stmt {
            kind,
            span: start.to(self.prev_span()),
        })
    }

    /// `if c { } else if c { } ... else { }`: the arms are parsed in a loop
    /// (a chain, not nesting) and nested into `else` blocks afterwards.
    fn if_stmt(&mut self) -> PResult<Stmt> {
        self.enter(0)?;
        // (start of the arm's `if`, condition, body, links inside the arm)
        let mut arms: Vec<(Span, Expr, Block)> = Vec::new();
        let mut chain = 0u32;
        let mut else_ = None;
        let outer = std::mem::take(&mut self.links);
        let r = loop {
            let start = match self.expect(&Tok::If) {
                Ok(s) => s,
                Err(e) => break Err(e),
            };
            let (arm, inner) = self.links_of(|p| {
                let cond = p.cond_expr()?;
                let then = p.block()?;
                Ok((cond, then))
            });
            let (cond, then) = match arm {
                Ok(a) => a,
                Err(e) => break Err(e),
            };
            // Arm i sits under i - 1 links.
            chain = chain.max(arms.len() as u32 + inner);
            arms.push((start, cond, then));
            if self.chain_ok(chain.max(arms.len() as u32), start).is_err() {
                // Keep the arms so far; the rest of the chain is skipped,
                // and an `else` that returns an error value stands in for it
                // so nothing after it is reported again (a missing return).
                while self.eat(&Tok::Else) {
                    self.skip_to_brace();
                    self.skip_braces();
                }
                let stand_in = Stmt {
                    kind: StmtKind::Return(Some(Expr {
                        kind: ExprKind::Error,
                        span: start,
                    })),
                    span: start,
                };
                else_ = Some(Block {
                    stmts: vec![stand_in],
                    span: start,
                });
                break Ok(());
            }
            if !self.eat(&Tok::Else) {
                break Ok(());
            }
            if *self.peek() != Tok::If {
                let (b, inner) = self.links_of(|p| p.block());
                match b {
                    Ok(b) => {
                        chain = chain.max(arms.len() as u32 + inner);
                        else_ = Some(b);
                        break Ok(());
                    }
                    Err(e) => break Err(e),
                }
            }
        };
        self.links = outer.max(chain);
        r?;
        let end = self.prev_span();
        let mut stmt = None;
        while let Some((start, cond, then)) = arms.pop() {
            let else_block = match stmt.take() {
                Some(nested @ Stmt { span, .. }) => Some(Block {
                    span,
                    stmts: vec![nested],
                }),
                None => else_.take(),
            };
            stmt = Some(Stmt {
                kind: StmtKind::If {
                    cond,
                    then,
                    else_: else_block,
                },
                span: start.to(end),
            });
        }
        stmt.ok_or_else(|| self.error_expected(Expected::Token("if".into())))
    }

    /// An expression where a struct literal may not start (`if`/`while`/`for`).
    fn cond_expr(&mut self) -> PResult<Expr> {
        let saved = std::mem::replace(&mut self.no_struct, true);
        let e = self.expr();
        self.no_struct = saved;
        let e = e?;
        // `if x == S { a: 1 } {` : report the Rust rule rather than a puzzle.
        if *self.peek() == Tok::LBrace
            && matches!(self.peek_at(1), Tok::Ident(_))
            && *self.peek_at(2) == Tok::Colon
        {
            self.sink
                .error(ErrorKind::StructLitInCondition, self.prev_span());
            // Skip the literal, the rest of the head, the body and any
            // `else` parts: the whole statement is lost, reported once.
            self.skip_braces();
            self.skip_to_brace();
            self.skip_braces();
            while self.eat(&Tok::Else) {
                self.skip_to_brace();
                self.skip_braces();
            }
            return Err(Reported);
        }
        Ok(e)
    }

    /// Skip tokens up to the next `{` (stopping at `;`, `}` and the end).
    fn skip_to_brace(&mut self) {
        while !matches!(
            self.peek(),
            Tok::LBrace | Tok::Semi | Tok::RBrace | Tok::Eof
        ) {
            self.bump();
        }
    }

    /// At `{`: skip to just past its matching `}`.
    fn skip_braces(&mut self) {
        if *self.peek() != Tok::LBrace {
            return;
        }
        let mut depth = 0usize;
        loop {
            match self.bump().tok {
                Tok::LBrace => depth += 1,
                Tok::RBrace => {
                    depth -= 1;
                    if depth == 0 {
                        return;
                    }
                }
                Tok::Eof => return,
                _ => {}
            }
        }
    }

    // ---- expressions ----

    /// Parse a full expression.
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.expr_bp(0)
    }

    fn expr_bp(&mut self, min_bp: u8) -> PResult<Expr> {
        self.enter(0)?;
        self.depth += 1;
        let r = self.expr_bp_inner(min_bp);
        self.depth -= 1;
        r
    }

    fn expr_bp_inner(&mut self, min_bp: u8) -> PResult<Expr> {
        let outer = std::mem::take(&mut self.links);
        let r = self.chain_links(min_bp);
        self.links = outer.max(self.links);
        r
    }

    /// A left-deep chain (`a + b + c ...`, `x as T`): built in a loop, one
    /// level per link, counted against `MAX_CHAIN_LINKS` (not nesting).
    /// Leaves in `self.links` the most links on one path through it.
    fn chain_links(&mut self, min_bp: u8) -> PResult<Expr> {
        let mut lhs = self.unary()?;
        // Most links on a path from the chain's current root.
        let mut chain = std::mem::take(&mut self.links);
        let mut last_cmp = false;
        loop {
            let tok = self.peek().clone();
            if tok == Tok::As {
                if AS_BP < min_bp {
                    break;
                }
                let at = self.bump().span;
                let (ty, inner) = self.links_of(|p| p.ty());
                let ty = ty?;
                chain = (chain + 1).max(inner + 1);
                self.links = chain;
                self.chain_ok(chain, at)?;
                let span = lhs.span.to(ty.span);
                lhs = Expr {
                    kind: ExprKind::Cast(Box::new(lhs), ty),
                    span,
                };
                continue;
            }
            let Some((op, bp)) = binop(&tok) else { break };
            if bp < min_bp {
                break;
            }
            if op.is_comparison() && last_cmp {
                self.sink.error(ErrorKind::ChainedComparison, self.span());
                return Err(Reported);
            }
            let at = self.bump().span;
            let (rhs, inner) = self.links_of(|p| p.expr_bp(bp + 1));
            let rhs = rhs?;
            chain = (chain + 1).max(inner + 1);
            self.links = chain;
            self.chain_ok(chain, at)?;
            last_cmp = op.is_comparison();
            let span = lhs.span.to(rhs.span);
            lhs = Expr {
                kind: ExprKind::Binary(op, Box::new(lhs), Box::new(rhs)),
                span,
            };
        }
        self.links = chain;
        Ok(lhs)
    }

    fn unary(&mut self) -> PResult<Expr> {
        let op = match self.peek() {
            Tok::Minus => UnOp::Neg,
            Tok::Bang => UnOp::Not,
            _ => return self.postfix(),
        };
        let start = self.bump().span;
        self.enter(0)?;
        self.depth += 1;
        let operand = self.unary();
        self.depth -= 1;
        let operand = operand?;
        let span = start.to(operand.span);
        Ok(Expr {
            kind: ExprKind::Unary(op, Box::new(operand)),
            span,
        })
    }

    fn postfix(&mut self) -> PResult<Expr> {
        let outer = std::mem::take(&mut self.links);
        let r = self.postfix_links();
        self.links = outer.max(self.links);
        r
    }

    /// `e.f[i].g ...`: a chain like `chain_links`.
    fn postfix_links(&mut self) -> PResult<Expr> {
        let mut e = self.primary()?;
        let mut chain = std::mem::take(&mut self.links);
        loop {
            match self.peek() {
                Tok::Dot => {
                    let at = self.bump().span;
                    chain += 1;
                    self.links = chain;
                    self.chain_ok(chain, at)?;
                    let field = self.ident()?;
                    // `xs.len()`: there are no methods.
                    if *self.peek() == Tok::LParen {
                        self.sink
                            .error(ErrorKind::MethodCall(field.name.clone()), field.span);
                        self.bump();
                        self.call_args()?;
                        let span = e.span.to(self.prev_span());
                        e = Expr {
                            kind: ExprKind::Error,
                            span,
                        };
                        continue;
                    }
                    let span = e.span.to(field.span);
                    e = Expr {
                        kind: ExprKind::Field(Box::new(e), field),
                        span,
                    };
                }
                Tok::LBracket => {
                    let at = self.bump().span;
                    let saved = std::mem::replace(&mut self.no_struct, false);
                    self.depth += 1;
                    let (r, inner) = self.links_of(|p| p.index_tail(e));
                    self.depth -= 1;
                    self.no_struct = saved;
                    e = r?;
                    chain = (chain + 1).max(inner + 1);
                    self.links = chain;
                    self.chain_ok(chain, at)?;
                }
                _ => {
                    self.links = chain;
                    return Ok(e);
                }
            }
        }
    }

    /// After `base[`: an index `i]` or a range `lo..hi]` with optional bounds.
    fn index_tail(&mut self, base: Expr) -> PResult<Expr> {
        let lo = if *self.peek() == Tok::DotDot {
            None
        } else {
            let i = self.expr()?;
            if *self.peek() != Tok::DotDot {
                let close = self.expect(&Tok::RBracket)?;
                let span = base.span.to(close);
                return Ok(Expr {
                    kind: ExprKind::Index(Box::new(base), Box::new(i)),
                    span,
                });
            }
            Some(Box::new(i))
        };
        let dots = self.expect(&Tok::DotDot)?;
        let eq = (*self.peek() == Tok::Eq).then(|| dots.to(self.bump().span));
        let hi = if *self.peek() == Tok::RBracket {
            None
        } else {
            let hi = self.expr()?;
            self.inclusive_range(&hi, eq);
            Some(Box::new(hi))
        };
        let close = self.expect(&Tok::RBracket)?;
        let span = base.span.to(close);
        Ok(Expr {
            kind: ExprKind::SliceRange {
                base: Box::new(base),
                lo,
                hi,
            },
            span,
        })
    }

    fn primary(&mut self) -> PResult<Expr> {
        let start = self.span();
        let kind = match self.peek().clone() {
            Tok::Int(v) => {
                self.bump();
                ExprKind::Int(v)
            }
            Tok::Byte(b) => {
                self.bump();
                ExprKind::Byte(b)
            }
            Tok::True | Tok::False => ExprKind::Bool(self.bump().tok == Tok::True),
            Tok::Str(s) => {
                self.bump();
                ExprKind::Str(s)
            }
            Tok::LParen => {
                self.bump();
                let saved = std::mem::replace(&mut self.no_struct, false);
                let inner = self.expr();
                self.no_struct = saved;
                let inner = inner?;
                let close = self.expect(&Tok::RParen)?;
                return Ok(Expr {
                    kind: ExprKind::Paren(Box::new(inner)),
                    span: start.to(close),
                });
            }
            Tok::LBracket => {
                self.bump();
                let saved = std::mem::replace(&mut self.no_struct, false);
                let r = self.array_tail();
                self.no_struct = saved;
                let kind = r?;
                return Ok(Expr {
                    kind,
                    span: start.to(self.prev_span()),
                });
            }
            Tok::Ident(_) | Tok::Reusable | Tok::Unsafe => return self.path_expr(),
            _ => return Err(self.error_expected(Expected::Expression)),
        };
        Ok(Expr { kind, span: start })
    }

    /// After `[`: `]`, `e; n]` or `a, b, c]`.
    fn array_tail(&mut self) -> PResult<ExprKind> {
        if self.eat(&Tok::RBracket) {
            return Ok(ExprKind::ArrayLit(Vec::new()));
        }
        let first = self.expr()?;
        if self.eat(&Tok::Semi) {
            let count = self.expr()?;
            self.expect(&Tok::RBracket)?;
            return Ok(ExprKind::ArrayRepeat(Box::new(first), Box::new(count)));
        }
        let mut elems = vec![first];
        while self.eat(&Tok::Comma) {
            if *self.peek() == Tok::RBracket {
                break;
            }
            elems.push(self.expr()?);
        }
        self.expect(&Tok::RBracket)?;
        Ok(ExprKind::ArrayLit(elems))
    }

    fn path_expr(&mut self) -> PResult<Expr> {
        let path = self.path()?;
        let type_args = self.type_args()?;
        match self.peek() {
            Tok::LParen => {
                self.bump();
                let saved = std::mem::replace(&mut self.no_struct, false);
                let args = self.call_args();
                self.no_struct = saved;
                let args = args?;
                let span = path.span.to(self.prev_span());
                Ok(Expr {
                    kind: ExprKind::Call {
                        callee: path,
                        type_args,
                        args,
                    },
                    span,
                })
            }
            Tok::LBrace if !self.no_struct => {
                self.bump();
                let saved = std::mem::replace(&mut self.no_struct, false);
                let fields = self.struct_fields();
                self.no_struct = saved;
                let fields = fields?;
                let span = path.span.to(self.prev_span());
                Ok(Expr {
                    kind: ExprKind::StructLit {
                        name: path,
                        type_args,
                        fields,
                    },
                    span,
                })
            }
            _ => {
                let span = path.span.to(self.prev_span());
                Ok(Expr {
                    kind: ExprKind::Path(path, type_args),
                    span,
                })
            }
        }
    }

    fn call_args(&mut self) -> PResult<Vec<Arg>> {
        let mut args = Vec::new();
        while *self.peek() != Tok::RParen {
            let start = self.span();
            let by_ref = self.eat(&Tok::Ref);
            let expr = self.expr()?;
            let span = start.to(expr.span);
            args.push(Arg { by_ref, expr, span });
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RParen)?;
        Ok(args)
    }

    fn struct_fields(&mut self) -> PResult<Vec<(Ident, Expr)>> {
        let mut fields = Vec::new();
        while *self.peek() != Tok::RBrace {
            let name = self.ident()?;
            self.expect(&Tok::Colon)?;
            let value = self.expr()?;
            fields.push((name, value));
            if !self.eat(&Tok::Comma) {
                break;
            }
        }
        self.expect(&Tok::RBrace)?;
        Ok(fields)
    }
}

/// Whether `e` is a call of `panic`, which has no value.
fn is_panic(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call { callee, .. }
        if callee.segments.len() == 1 && callee.segments[0].name == "panic")
}

//! A readable text form of a `tir::Program`, for snapshot tests and for
//! looking at what the backend receives. Every expression shows its type.

use crate::tir::*;
use std::fmt::Write;

/// The whole program as text.
pub fn dump(p: &Program) -> String {
    let mut out = String::new();
    for s in &p.structs {
        let _ = writeln!(
            out,
            "struct {} (size {}, align {})",
            s.name, s.layout.size, s.layout.align
        );
        for f in &s.fields {
            let _ = writeln!(out, "  {}: {} @{}", f.name, ty(p, &f.ty), f.offset);
        }
    }
    for e in &p.externs {
        let params: Vec<String> = e
            .params
            .iter()
            .map(|(t, r)| format!("{}{}", if *r { "ref " } else { "" }, ty(p, t)))
            .collect();
        let _ = writeln!(
            out,
            "extern {}({}) -> {}",
            e.name,
            params.join(", "),
            ty(p, &e.ret)
        );
    }
    for (i, f) in p.functions.iter().enumerate() {
        let main = if p.main.0 as usize == i {
            " (main)"
        } else {
            ""
        };
        let params: Vec<String> = f
            .params
            .iter()
            .map(|q| {
                let l = &f.locals[q.local.0 as usize];
                format!(
                    "{}{}#{}: {}",
                    if q.by_ref { "ref " } else { "" },
                    l.name,
                    q.local.0,
                    ty(p, &l.ty)
                )
            })
            .collect();
        let _ = writeln!(
            out,
            "fn #{i} {}({}) -> {}{main}",
            f.name,
            params.join(", "),
            ty(p, &f.ret)
        );
        block(p, f, &f.body, 1, &mut out);
    }
    out
}

/// A type as written (`Program::type_name`); `()` and `str`, which a program
/// cannot write, as `Type`'s own `Display`.
fn ty(p: &Program, t: &Type) -> String {
    p.type_name(t).unwrap_or_else(|| t.to_string())
}

fn block(p: &Program, f: &Function, b: &Block, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    for s in &b.stmts {
        match s {
            Stmt::Let { local, init } => {
                let l = &f.locals[local.0 as usize];
                let kw = if l.mutable { "var" } else { "let" };
                let _ = writeln!(
                    out,
                    "{pad}{kw} {}#{} = {}",
                    l.name,
                    local.0,
                    expr(p, f, init)
                );
            }
            Stmt::Assign { place, value } => {
                let _ = writeln!(out, "{pad}{} = {}", expr(p, f, place), expr(p, f, value));
            }
            Stmt::CompoundAssign { place, op, value } => {
                let _ = writeln!(
                    out,
                    "{pad}{} {:?}= {}",
                    expr(p, f, place),
                    op,
                    expr(p, f, value)
                );
            }
            Stmt::Expr(e) => {
                let _ = writeln!(out, "{pad}{}", expr(p, f, e));
            }
            Stmt::If { cond, then, else_ } => {
                let _ = writeln!(out, "{pad}if {}", expr(p, f, cond));
                block(p, f, then, depth + 1, out);
                if let Some(e) = else_ {
                    let _ = writeln!(out, "{pad}else");
                    block(p, f, e, depth + 1, out);
                }
            }
            Stmt::While { cond, body } => {
                let _ = writeln!(out, "{pad}while {}", expr(p, f, cond));
                block(p, f, body, depth + 1, out);
            }
            Stmt::For {
                var,
                start,
                end,
                body,
            } => {
                let l = &f.locals[var.0 as usize];
                let _ = writeln!(
                    out,
                    "{pad}for {}#{} in {}..{}",
                    l.name,
                    var.0,
                    expr(p, f, start),
                    expr(p, f, end)
                );
                block(p, f, body, depth + 1, out);
            }
            Stmt::ForEach {
                index,
                var,
                seq,
                body,
            } => {
                let name =
                    |id: &crate::tir::LocalId| format!("{}#{}", f.locals[id.0 as usize].name, id.0);
                let index = index.map_or(String::new(), |i| format!("{}, ", name(&i)));
                let _ = writeln!(out, "{pad}for {index}{} in {}", name(var), expr(p, f, seq));
                block(p, f, body, depth + 1, out);
            }
            Stmt::Block(b) => {
                let _ = writeln!(out, "{pad}block");
                block(p, f, b, depth + 1, out);
            }
            Stmt::Break => {
                let _ = writeln!(out, "{pad}break");
            }
            Stmt::Continue => {
                let _ = writeln!(out, "{pad}continue");
            }
            Stmt::Return(v) => {
                let v = v
                    .as_ref()
                    .map_or(String::new(), |e| format!(" {}", expr(p, f, e)));
                let _ = writeln!(out, "{pad}return{v}");
            }
        }
    }
}

fn args(p: &Program, f: &Function, a: &[Arg]) -> String {
    a.iter()
        .map(|a| match a {
            Arg::Value(e) => expr(p, f, e),
            Arg::Ref(e) => format!("ref {}", expr(p, f, e)),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn list(p: &Program, f: &Function, es: &[Expr]) -> String {
    es.iter()
        .map(|e| expr(p, f, e))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `(form: type)`, with the line:col of the expression.
fn expr(p: &Program, f: &Function, e: &Expr) -> String {
    let body = match &e.kind {
        ExprKind::Int(v) => v.to_string(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Str(s) => format!("{s:?}"),
        ExprKind::Local(id) => format!("{}#{}", f.locals[id.0 as usize].name, id.0),
        ExprKind::Field(b, i) => {
            let name = match &b.ty {
                Type::Struct(s) => p.struct_def(*s).fields[*i as usize].name.clone(),
                _ => i.to_string(),
            };
            format!("{}.{name}", expr(p, f, b))
        }
        ExprKind::Index(b, i) => format!("{}[{}]", expr(p, f, b), expr(p, f, i)),
        ExprKind::SliceRange { base, lo, hi } => format!(
            "{}[{}..{}]",
            expr(p, f, base),
            lo.as_ref().map_or(String::new(), |x| expr(p, f, x)),
            hi.as_ref().map_or(String::new(), |x| expr(p, f, x))
        ),
        ExprKind::Unary(op, x) => format!("{op:?} {}", expr(p, f, x)),
        ExprKind::Binary(op, a, b) => format!("{} {op:?} {}", expr(p, f, a), expr(p, f, b)),
        ExprKind::Cast(x) => format!("{} as", expr(p, f, x)),
        ExprKind::Call { func, args: a } => {
            format!("{}({})", p.function(*func).name, args(p, f, a))
        }
        ExprKind::CallExtern { func, args: a } => {
            format!(
                "extern {}({})",
                p.externs[func.0 as usize].name,
                args(p, f, a)
            )
        }
        ExprKind::StructLit { id, fields } => {
            format!("{} {{ {} }}", p.struct_def(*id).name, list(p, f, fields))
        }
        ExprKind::ArrayRepeat { value, count } => format!("[{}; {count}]", expr(p, f, value)),
        ExprKind::ArrayLit(es) => format!("[{}]", list(p, f, es)),
        ExprKind::Bytes(b) => format!("{:?}", String::from_utf8_lossy(b)),
        ExprKind::Text { local, bytes } => format!(
            "{:?} in {}#{}",
            String::from_utf8_lossy(bytes),
            f.locals[local.0 as usize].name,
            local.0
        ),
        ExprKind::Len(x) => format!("len {}", expr(p, f, x)),
        ExprKind::Builtin(b, a) => format!("{b:?}({})", list(p, f, a)),
    };
    format!("({body}: {} @{}:{})", ty(p, &e.ty), e.loc.line, e.loc.col)
}

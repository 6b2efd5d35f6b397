//! The runtime errors a program may be meant to end in: which one
//! ([`ErrorKind`]), the message it must print, and the statements that end
//! `main` in it.

use super::types::INTS;
use super::{Gen, Intent, MODULES, Out};
use crate::program::Stmt;

/// The runtime errors a program may be meant to end in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    IndexLoop,
    IndexNegative,
    IndexSlice,
    IndexReusable,
    IndexInFunction,
    SliceRange,
    SliceInverted,
    DivZero,
    Panic,
    PanicDetail,
    Assert,
    ReusableDoubleFree,
    ReusableNegative,
    ReusableResizeNegative,
    ReusableTooLarge,
    ReusableResizeTooLarge,
    ReusableExhausted,
    ReusableAppendOverflow,
    PoolDoubleFree(usize),
    PoolLeak(usize),
    PoolNegative(usize),
    PoolExhausted(usize),
    PoolCapacity(usize),
    PoolReallocFreed(usize),
}

const BUILTIN_ERRORS: [ErrorKind; 18] = [
    ErrorKind::IndexLoop,
    ErrorKind::IndexNegative,
    ErrorKind::IndexSlice,
    ErrorKind::IndexReusable,
    ErrorKind::IndexInFunction,
    ErrorKind::SliceRange,
    ErrorKind::SliceInverted,
    ErrorKind::DivZero,
    ErrorKind::Panic,
    ErrorKind::PanicDetail,
    ErrorKind::Assert,
    ErrorKind::ReusableDoubleFree,
    ErrorKind::ReusableNegative,
    ErrorKind::ReusableResizeNegative,
    ErrorKind::ReusableTooLarge,
    ErrorKind::ReusableResizeTooLarge,
    ErrorKind::ReusableExhausted,
    ErrorKind::ReusableAppendOverflow,
];
impl Gen {
    /// Chooses what the program is meant to do.
    pub(super) fn pick_intent(&mut self) -> Intent {
        if !self.rng.chance(1, 4) {
            return Intent::Exit;
        }
        let kind = if self.rng.chance(1, 5) {
            let m = self.rng.index(2);
            self.pool_modules[m] = true;
            match self.rng.index(6) {
                0 => ErrorKind::PoolDoubleFree(m),
                1 => ErrorKind::PoolLeak(m),
                2 => ErrorKind::PoolNegative(m),
                3 => ErrorKind::PoolExhausted(m),
                4 => ErrorKind::PoolCapacity(m),
                _ => ErrorKind::PoolReallocFreed(m),
            }
        } else {
            *self.rng.pick(&BUILTIN_ERRORS)
        };
        self.error_kind = Some(kind);
        let (name, fragment) = describe(kind);
        let sanitized = matches!(
            kind,
            ErrorKind::ReusableDoubleFree
                | ErrorKind::PoolDoubleFree(_)
                | ErrorKind::PoolReallocFreed(_)
        )
        .then_some("use of a freed slice");
        Intent::Error {
            kind: name,
            fragment,
            sanitized,
        }
    }

    /// The statements ending `main` in the intended error.
    pub(super) fn error_snippet(&mut self, out: &mut Out, kind: ErrorKind) {
        let t = self.rng.pick(&INTS).clone();
        let ts = t.src(&self.structs);
        let e = self.fresh("e");
        let n = self.rng.range(1, 5);
        let fill = self.scalar_typed(&t, 1).text;
        let arr = format!("var {e}: [{n}]{ts} = [{fill}; {n}];");
        match kind {
            ErrorKind::IndexLoop => {
                out.push(Stmt::line(arr));
                let i = self.fresh("i");
                out.push(Stmt::Loop {
                    head: format!("for {i} in 0..{} {{", n + 1 + self.rng.range(0, 2)),
                    body: vec![
                        Stmt::line(format!("h = mix(h, {e}[{i}] as i64);")),
                        Stmt::line("print(h);"),
                    ],
                });
            }
            ErrorKind::IndexNegative => {
                out.push(Stmt::line(arr));
                out.push(Stmt::line(format!("let k{e} = (h - h) - 1 - (h & 3);")));
                out.push(Stmt::line(format!("print({e}[k{e}]);")));
            }
            ErrorKind::IndexSlice => {
                out.push(Stmt::line(arr));
                out.push(Stmt::line(format!("let s{e} = {e}[1..];")));
                out.push(Stmt::line(format!("print(s{e}[len(s{e}) + (h & 1)]);")));
            }
            ErrorKind::IndexReusable => {
                out.push(Stmt::line(format!(
                    "var r{e} = reusable::alloc::<{ts}>({n});"
                )));
                out.push(Stmt::line(format!(
                    "r{e} = reusable::append(r{e}, {fill});"
                )));
                out.push(Stmt::line(format!("print(r{e}[{n}]);")));
                out.push(Stmt::line(format!("print(r{e}[len(r{e}) + (h & 1)]);")));
            }
            ErrorKind::IndexInFunction => {
                let f = self.fresh("oob");
                self.text_item(format!(
                    "fn {f}(s: []{ts}, i: i64) -> {ts} {{\n    var t = s[0];\n    for j in 0..i + 1 {{\n        t = s[j];\n    }}\n    return t;\n}}"
                ));
                out.push(Stmt::line(arr));
                out.push(Stmt::line(format!("print({f}({e}[..], {}));", n - 1)));
                out.push(Stmt::line(format!("print({f}({e}[..], {n}));")));
            }
            ErrorKind::SliceRange => {
                out.push(Stmt::line(arr));
                out.push(Stmt::line(format!(
                    "let s{e} = {e}[1..{} + (h & 1)];",
                    n + 1
                )));
                out.push(Stmt::line(format!("print(len(s{e}));")));
            }
            ErrorKind::SliceInverted => {
                out.push(Stmt::line(arr));
                out.push(Stmt::line(format!("let lo{e} = {n} - (h & 0);")));
                out.push(Stmt::line(format!("let s{e} = {e}[lo{e}..{}];", n - 1)));
                out.push(Stmt::line(format!("print(len(s{e}));")));
            }
            ErrorKind::DivZero => {
                let a = self.scalar_typed(&t, 2).text;
                out.push(Stmt::line(format!("var z{e}: {ts} = {a};")));
                out.push(Stmt::line(format!("z{e} -= z{e};")));
                let x = self.scalar_typed(&t, 2).text;
                match self.rng.index(4) {
                    0 => out.push(Stmt::line(format!("print({x} / z{e});"))),
                    1 => out.push(Stmt::line(format!("print({x} % z{e});"))),
                    2 => {
                        out.push(Stmt::line(format!("var y{e}: {ts} = {x};")));
                        out.push(Stmt::line(format!("y{e} /= z{e};")));
                        out.push(Stmt::line(format!("print(y{e});")));
                    }
                    _ => {
                        out.push(Stmt::line(format!("var y{e}: {ts} = {x};")));
                        out.push(Stmt::line(format!("y{e} %= z{e};")));
                        out.push(Stmt::line(format!("print(y{e});")));
                    }
                }
            }
            ErrorKind::Panic => {
                if self.rng.chance(1, 2) {
                    out.push(Stmt::line(format!("panic(\"boom {e}\");")));
                } else {
                    out.push(Stmt::If {
                        arms: vec![(
                            "h == h".into(),
                            vec![Stmt::line(format!("panic(\"boom {e}\");"))],
                        )],
                        els: None,
                    });
                }
            }
            ErrorKind::PanicDetail => {
                out.push(Stmt::line(format!(
                    "let m{e}: [5]u8 = [104, 101, 108, 108, 111];"
                )));
                out.push(Stmt::line(format!("panic(\"detail: \", m{e}[..]);")));
            }
            ErrorKind::Assert => {
                out.push(Stmt::line("assert(h == h, \"holds\");"));
                out.push(Stmt::line(format!("assert(h != h, \"fails {e}\");")));
            }
            ErrorKind::ReusableDoubleFree => {
                out.push(Stmt::line(format!(
                    "let d{e} = reusable::alloc::<{ts}>({n});"
                )));
                out.push(Stmt::line(format!("print(reusable::offset(d{e}) >= 0);")));
                out.push(Stmt::line(format!("reusable::free(d{e});")));
                out.push(Stmt::line(format!("reusable::free(d{e});")));
            }
            ErrorKind::ReusableNegative => {
                out.push(Stmt::line(format!(
                    "let d{e} = reusable::alloc::<{ts}>((h - h) - {n});"
                )));
                out.push(Stmt::line(format!("print(len(d{e}));")));
            }
            ErrorKind::ReusableResizeNegative => {
                out.push(Stmt::line(format!(
                    "var d{e} = reusable::alloc::<{ts}>({n});"
                )));
                out.push(Stmt::line(format!(
                    "d{e} = reusable::resize(d{e}, (h - h) - 1);"
                )));
                out.push(Stmt::line(format!("print(len(d{e}));")));
            }
            ErrorKind::ReusableTooLarge => {
                out.push(Stmt::line(format!(
                    "let d{e} = reusable::alloc::<i64>((1 << 61) + 1 + (h & 1));"
                )));
                out.push(Stmt::line(format!("print(len(d{e}));")));
            }
            ErrorKind::ReusableResizeTooLarge => {
                out.push(Stmt::line(format!(
                    "var d{e} = reusable::alloc::<[2]i64>(1);"
                )));
                out.push(Stmt::line(format!(
                    "d{e} = reusable::resize(d{e}, (1 << 59) + (h & 1));"
                )));
                out.push(Stmt::line(format!("print(len(d{e}));")));
            }
            ErrorKind::ReusableExhausted => {
                out.push(Stmt::line(format!(
                    "let d{e} = reusable::alloc::<i64>((1 << 40) + (h & 7));"
                )));
                out.push(Stmt::line(format!("print(len(d{e}));")));
            }
            ErrorKind::ReusableAppendOverflow => {
                out.push(Stmt::line(format!(
                    "var d{e} = reusable::alloc::<[0]i64>(9223372036854775807);"
                )));
                out.push(Stmt::line(format!("print(len(d{e}));")));
                out.push(Stmt::line(format!(
                    "d{e} = reusable::append(d{e}, [0; 0]);"
                )));
                out.push(Stmt::line(format!("print(len(d{e}));")));
            }
            ErrorKind::PoolDoubleFree(m)
            | ErrorKind::PoolLeak(m)
            | ErrorKind::PoolNegative(m)
            | ErrorKind::PoolExhausted(m)
            | ErrorKind::PoolCapacity(m)
            | ErrorKind::PoolReallocFreed(m) => {
                let module = MODULES[m];
                let p = format!("pp{e}");
                if kind == ErrorKind::PoolCapacity(m) {
                    out.push(Stmt::line(format!("var {p} = {module}::new((h - h) * 8);")));
                    out.push(Stmt::line(format!("print({p}.capacity);")));
                    return;
                }
                out.push(Stmt::line(format!("var {p} = {module}::new(4096);")));
                out.push(Stmt::line(format!(
                    "var s{e} = {module}::alloc_slice::<{ts}>(ref {p}, {n});"
                )));
                out.push(Stmt::line(format!(
                    "print({module}::offset_of(ref {p}, s{e}));"
                )));
                match kind {
                    ErrorKind::PoolDoubleFree(_) => {
                        out.push(Stmt::line(format!("{module}::free_slice(ref {p}, s{e});")));
                        out.push(Stmt::line(format!("{module}::free_slice(ref {p}, s{e});")));
                    }
                    ErrorKind::PoolLeak(_) => {
                        out.push(Stmt::line(format!("{module}::finish(ref {p});")));
                    }
                    ErrorKind::PoolNegative(_) => {
                        out.push(Stmt::line(format!(
                            "s{e} = {module}::realloc_slice(ref {p}, s{e}, (h - h) - 2);"
                        )));
                    }
                    ErrorKind::PoolExhausted(_) => {
                        out.push(Stmt::line(format!(
                            "let big{e} = {module}::alloc_slice::<i64>(ref {p}, 600 + (h & 1));"
                        )));
                        out.push(Stmt::line(format!("print(len(big{e}));")));
                    }
                    _ => {
                        out.push(Stmt::line(format!("{module}::free_slice(ref {p}, s{e});")));
                        out.push(Stmt::line(format!(
                            "s{e} = {module}::realloc_slice(ref {p}, s{e}, {});",
                            n + 40
                        )));
                    }
                }
                out.push(Stmt::line("print(h);"));
            }
        }
    }
}

fn describe(kind: ErrorKind) -> (&'static str, String) {
    let pool = |m: usize, what: &str| format!("{}::{what}", MODULES[m]);
    match kind {
        ErrorKind::IndexLoop => (
            "index out of bounds in a loop",
            "index out of bounds".into(),
        ),
        ErrorKind::IndexNegative => ("negative index", "index out of bounds: index -".into()),
        ErrorKind::IndexSlice => (
            "index out of bounds of a slice",
            "index out of bounds".into(),
        ),
        ErrorKind::IndexReusable => (
            "index out of bounds of a reusable slice",
            "index out of bounds".into(),
        ),
        ErrorKind::IndexInFunction => (
            "index out of bounds in a callee",
            "index out of bounds".into(),
        ),
        ErrorKind::SliceRange => ("slice range past the end", "slice out of bounds".into()),
        ErrorKind::SliceInverted => ("inverted slice range", "slice out of bounds".into()),
        ErrorKind::DivZero => ("division by zero", "division by zero".into()),
        ErrorKind::Panic => ("panic", "panic: boom".into()),
        ErrorKind::PanicDetail => ("panic with detail", "panic: detail: hello".into()),
        ErrorKind::Assert => ("failed assert", "assertion failed: fails".into()),
        ErrorKind::ReusableDoubleFree => ("reusable double free", "double free".into()),
        ErrorKind::ReusableNegative => (
            "reusable::alloc of a negative length",
            "reusable::alloc: negative length".into(),
        ),
        ErrorKind::ReusableResizeNegative => (
            "reusable::resize to a negative length",
            "reusable::resize: negative length".into(),
        ),
        ErrorKind::ReusableTooLarge => (
            "reusable::alloc too large",
            "is too large for 8-byte elements".into(),
        ),
        ErrorKind::ReusableResizeTooLarge => (
            "reusable::resize too large",
            "is too large for 16-byte elements".into(),
        ),
        ErrorKind::ReusableExhausted => ("builtin pool exhausted", "pool exhausted".into()),
        ErrorKind::ReusableAppendOverflow => (
            "reusable::append length overflow",
            "reusable::append: the length is already 9223372036854775807, the largest".into(),
        ),
        ErrorKind::PoolDoubleFree(m) => (
            "library pool double free",
            pool(m, "free_slice: double free"),
        ),
        ErrorKind::PoolLeak(m) => (
            "library pool leak at finish",
            pool(m, "finish: slices still allocated"),
        ),
        ErrorKind::PoolNegative(m) => (
            "library pool negative length",
            pool(m, "realloc_slice: negative length"),
        ),
        ErrorKind::PoolExhausted(m) => (
            "library pool exhausted",
            pool(m, "alloc_slice: pool exhausted"),
        ),
        ErrorKind::PoolCapacity(m) => (
            "library pool bad capacity",
            pool(m, "new: capacity must be"),
        ),
        ErrorKind::PoolReallocFreed(m) => (
            "library pool realloc of a freed slice",
            pool(
                m,
                "realloc_slice: resize of a span that overlaps free space",
            ),
        ),
    }
}

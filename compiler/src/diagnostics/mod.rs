//! Diagnostics as data (kind, primary span, labels, notes) and their one
//! renderer. The header line is ours (`file:line:col: error: message`, the
//! format every tool of the project greps for); the source snippet under it is
//! drawn by `annotate-snippets`.

pub mod messages;
pub mod style;

use crate::source::{SourceMap, Span};
use annotate_snippets::{Level, Renderer, Snippet};
pub use messages::{ErrorKind, Expected, Found, LabelKind, NoteKind};
use std::collections::HashSet;
use std::sync::Arc;

/// Longest source excerpt handed to the snippet renderer, in bytes.
const MAX_SNIPPET: usize = 2000;
/// Bytes of context either side of an error on an over-long line.
const WINDOW: usize = 60;
/// Longest source line drawn without annotate-snippets (which folds longer
/// lines its own way).
const FAST_WIDTH: usize = 2 * WINDOW + 8;

fn floor_char(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// A secondary span with its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub kind: LabelKind,
}

/// One error: what, where, and any extra spans and notes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub kind: ErrorKind,
    pub span: Span,
    pub labels: Vec<Label>,
    pub notes: Vec<NoteKind>,
}

impl Diagnostic {
    /// An error of `kind` at `span`, without labels or notes.
    pub fn new(kind: ErrorKind, span: Span) -> Diagnostic {
        Diagnostic {
            kind,
            span,
            labels: Vec::new(),
            notes: Vec::new(),
        }
    }
    /// Add a secondary span.
    pub fn label(mut self, span: Span, kind: LabelKind) -> Diagnostic {
        self.labels.push(Label { span, kind });
        self
    }
    /// Add a note.
    pub fn note(mut self, note: NoteKind) -> Diagnostic {
        self.notes.push(note);
        self
    }
}

/// The most diagnostics one run keeps; past them it only counts. A file of
/// 64 MiB of stray characters would otherwise keep tens of millions, tens of
/// GB with their text.
pub const MAX_DIAGNOSTICS: usize = 1000;

/// Collects diagnostics during a run; drops exact repeats (same kind at the
/// same span), which a generic body or a shared subexpression could produce.
#[derive(Default)]
pub(crate) struct Sink {
    list: Vec<Diagnostic>,
    seen: HashSet<(Span, String)>,
    /// Diagnostics past [`MAX_DIAGNOSTICS`], counted, not kept (repeats
    /// among them included).
    omitted: usize,
}

impl Sink {
    pub(crate) fn push(&mut self, d: Diagnostic) {
        if self.list.len() >= MAX_DIAGNOSTICS {
            self.omitted += 1;
            return;
        }
        if self.seen.insert((d.span, d.kind.to_string())) {
            self.list.push(d);
        }
    }
    pub(crate) fn error(&mut self, kind: ErrorKind, span: Span) {
        self.push(Diagnostic::new(kind, span));
    }
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    /// Number of diagnostics kept so far.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }
    /// Adds `note()` to every diagnostic kept since the first `start`.
    pub(crate) fn note_since(&mut self, start: usize, note: impl Fn() -> NoteKind) {
        for d in self.list.iter_mut().skip(start) {
            d.notes.push(note());
        }
    }
    /// The diagnostics so far.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Diagnostic> + '_ {
        self.list.iter()
    }
    /// Replaces each diagnostic by `f` of it (a host's parts say an error
    /// about generated code in its user's terms: `crate::session`).
    pub(crate) fn rewrite(&mut self, f: impl Fn(Diagnostic) -> Diagnostic) {
        self.list = std::mem::take(&mut self.list).into_iter().map(f).collect();
    }
    pub(crate) fn finish(self, sources: Arc<SourceMap>) -> Diagnostics {
        let mut list = self.list;
        // Source order: by file (root first, modules in load order), then offset.
        list.sort_by_key(|d| (d.span.file, d.span.lo));
        Diagnostics {
            list,
            sources,
            omitted: self.omitted,
        }
    }
}

/// All errors of a run, as data, in source order, with the sources needed to
/// render them.
#[derive(Clone, Debug)]
pub struct Diagnostics {
    list: Vec<Diagnostic>,
    sources: Arc<SourceMap>,
    /// Errors past [`MAX_DIAGNOSTICS`]: counted, not kept.
    omitted: usize,
}

impl Diagnostics {
    /// Number of errors (those past [`MAX_DIAGNOSTICS`] included).
    pub fn len(&self) -> usize {
        self.list.len() + self.omitted
    }
    /// True when there are no errors (never the case for a returned `Err`).
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
    /// The diagnostics as data.
    pub fn list(&self) -> &[Diagnostic] {
        &self.list
    }

    /// (file display name, line, col, message) of each, for tests.
    pub fn summaries(&self) -> Vec<(String, u32, u32, String)> {
        self.list
            .iter()
            .map(|d| {
                let file = self.sources.file(d.span.file);
                let (line, col) = file.line_col(d.span.lo);
                (file.name.clone(), line, col, d.kind.to_string())
            })
            .collect()
    }

    /// Every diagnostic as `file:line:col: error: message`, then the source
    /// line with a caret under the span (and any labels), then the notes.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for d in &self.list {
            out.push_str(&self.render_one(d));
        }
        if self.omitted > 0 {
            out.push_str(&format!(
                "error: {} more errors not shown (only the first {MAX_DIAGNOSTICS} are kept)\n",
                self.omitted
            ));
        }
        out
    }

    fn render_one(&self, d: &Diagnostic) -> String {
        let file = self.sources.file(d.span.file);
        let (line, col) = file.line_col(d.span.lo);
        let message = d.kind.to_string();
        let mut out = format!("{}:{line}:{col}: error: {message}\n", file.name);
        let labels: Vec<(Span, String)> = d
            .labels
            .iter()
            .filter(|l| l.span.file == d.span.file)
            .map(|l| (l.span, l.kind.to_string()))
            .collect();
        // A label on the error's own span is the caret's text (drawn apart,
        // its underline would hide the caret).
        let (own, labels): (Vec<_>, Vec<_>) = labels.into_iter().partition(|(s, _)| *s == d.span);
        let notes: Vec<String> = d.notes.iter().map(|n| n.to_string()).collect();
        // Hand the renderer only the lines the spans touch (it is linear in
        // what it is given, and files can be large).
        let all = file.text.as_str();
        let mut first_line = line;
        let mut last_line = file.line_col(d.span.hi).0;
        for (span, _) in &labels {
            first_line = first_line.min(file.line_col(span.lo).0);
            last_line = last_line.max(file.line_col(span.hi).0);
        }
        let mut labels = labels;
        if file.line_range(last_line).1 - file.line_range(first_line).0 > MAX_SNIPPET {
            // Labels far away from the error: show the error's line alone.
            labels.clear();
            first_line = line;
            last_line = line;
        }
        let (mut start, mut end) = (file.line_range(first_line).0, file.line_range(last_line).1);
        if end - start > MAX_SNIPPET {
            // One huge line: show a window around the error.
            let lo = (d.span.lo as usize).clamp(start, end);
            let hi = (d.span.hi as usize).clamp(lo, end);
            start = floor_char(all, lo.saturating_sub(WINDOW).max(start));
            end = floor_char(all, (hi + WINDOW).min(end).max(lo));
            labels.retain(|(s, _)| s.lo as usize >= start && s.hi as usize <= end);
        }
        let text = shown_source(&all[start..end]);
        let text = text.as_str();
        if labels.is_empty()
            && own.is_empty()
            && notes.is_empty()
            && first_line == last_line
            && text.is_ascii()
            && text.len() <= FAST_WIDTH
        {
            // The common case, drawn here exactly as annotate-snippets
            // would (it costs microseconds per error, and a file can have
            // a hundred thousand).
            let lo = (d.span.lo as usize).clamp(start, end) - start;
            let hi = (d.span.hi as usize).clamp(lo + start, end) - start;
            let number = first_line.to_string();
            let gutter = " ".repeat(number.len());
            let carets = "^".repeat((hi - lo).max(1));
            out.push_str(format!("{number} | {text}").trim_end());
            out.push('\n');
            out.push_str(&format!("{gutter} | {}{carets}\n", " ".repeat(lo)));
            return out;
        }
        let clamp = |s: Span| {
            let lo = (s.lo as usize).clamp(start, end) - start;
            let hi = (s.hi as usize).clamp(lo + start, end) - start;
            lo..hi
        };
        let mut snippet = Snippet::source(text)
            .line_start(first_line as usize)
            .fold(true)
            .annotation(match own.first() {
                Some((_, text)) => Level::Error.span(clamp(d.span)).label(text),
                None => Level::Error.span(clamp(d.span)),
            });
        for (span, text) in &labels {
            // `Warning` draws a plain `-` underline with the bare label text.
            snippet = snippet.annotation(Level::Warning.span(clamp(*span)).label(text));
        }
        // The title line annotate-snippets draws is replaced by our header.
        let mut message = Level::Error.title("").snippet(snippet);
        for n in &notes {
            message = message.footer(Level::Note.title(n));
        }
        let drawn = Renderer::plain().render(message).to_string();
        let mut lines: Vec<&str> = drawn.lines().skip(1).map(str::trim_end).collect();
        // Drop the gutter-only lines that frame the snippet.
        while lines.last().is_some_and(|l| l.trim() == "|") {
            lines.pop();
        }
        while lines.first().is_some_and(|l| l.trim() == "|") {
            lines.remove(0);
        }
        for l in lines {
            out.push_str(l);
            out.push('\n');
        }
        out
    }
}

impl std::fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

/// Source text as a snippet shows it, byte for byte the same length so
/// every offset keeps its column and the caret lines up: a tab becomes one
/// space, and any other ASCII control character but a line's end (`\n`,
/// `\r\n`) becomes `?`, so a source line cannot drive the terminal
/// (an escape sequence, a lone carriage return).
fn shown_source(text: &str) -> String {
    let bytes = text.as_bytes();
    text.char_indices()
        .map(|(i, c)| match c {
            '\t' => ' ',
            '\n' => c,
            // A line's end, also when the snippet stops right before `\n`.
            '\r' if matches!(bytes.get(i + 1), Some(b'\n') | None) => c,
            c if c.is_ascii_control() => '?',
            c => c,
        })
        .collect()
}

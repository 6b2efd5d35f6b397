//! Source files and byte spans. Spans are byte ranges into one file's text;
//! line/column are computed only when a diagnostic is rendered or a `tir::Loc`
//! is produced, so the lexer and parser stay cheap.

/// Index of a file in the run's `SourceMap` (also `tir::Loc::file`).
pub type FileId = u32;

/// A byte range `[lo, hi)` in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    /// A span in `file` covering `[lo, hi)`.
    pub fn new(file: FileId, lo: u32, hi: u32) -> Span {
        Span { file, lo, hi }
    }
    /// The smallest span covering both (they must be in the same file).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// One loaded source file with its line index.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// Display name used in diagnostics (`file:line:col`).
    pub name: String,
    pub text: String,
    /// Byte offset of the start of each line.
    line_starts: Vec<u32>,
}

impl SourceFile {
    /// Index the lines of `text`.
    pub fn new(name: String, text: String) -> SourceFile {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i as u32 + 1);
            }
        }
        SourceFile {
            name,
            text,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of byte offset `pos`.
    pub fn line_col(&self, pos: u32) -> (u32, u32) {
        let pos = pos.min(self.text.len() as u32);
        let line = match self.line_starts.binary_search(&pos) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let start = self.line_starts[line] as usize;
        let mut end = pos as usize;
        while !self.text.is_char_boundary(end) {
            end -= 1;
        }
        let col = self.text[start..end].chars().count() as u32 + 1;
        (line as u32 + 1, col)
    }

    /// Byte range of the 1-based line `line` without its newline.
    pub fn line_range(&self, line: u32) -> (usize, usize) {
        let i = (line.max(1) - 1) as usize;
        let start = self.line_starts[i.min(self.line_starts.len() - 1)] as usize;
        let end = self.text[start..]
            .find('\n')
            .map_or(self.text.len(), |n| start + n);
        (start, end)
    }
}

/// All files of one compilation; `FileId` indexes it. File 0 is the root.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
}

impl SourceMap {
    /// Add a file and return its id.
    pub fn add(&mut self, name: String, text: String) -> FileId {
        self.files.push(SourceFile::new(name, text));
        (self.files.len() - 1) as FileId
    }
    /// The file with id `id`.
    pub fn file(&self, id: FileId) -> &SourceFile {
        &self.files[id as usize]
    }
}

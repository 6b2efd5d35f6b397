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
    /// A standard-library module (the loader says so: [`crate::Loader::is_library`]).
    pub library: bool,
    /// Byte offset of the start of each line.
    line_starts: Vec<u32>,
    /// For a file that is not all ASCII: the number of characters before
    /// each multiple of `CHUNK` bytes, so a column is counted over at most
    /// one chunk, however long the line. Empty for an ASCII file, whose
    /// columns are byte offsets.
    chars_before_chunk: Vec<u32>,
}

/// Bytes per entry of `SourceFile::chars_before_chunk`.
const CHUNK: usize = 256;

/// A byte that starts a character (not a UTF-8 continuation byte).
fn starts_char(b: u8) -> bool {
    b & 0xC0 != 0x80
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
        let mut chars_before_chunk = Vec::new();
        if !text.is_ascii() {
            let mut count = 0u32;
            for chunk in text.as_bytes().chunks(CHUNK) {
                chars_before_chunk.push(count);
                count += chunk.iter().filter(|&&b| starts_char(b)).count() as u32;
            }
        }
        SourceFile {
            name,
            library: false,
            text,
            line_starts,
            chars_before_chunk,
        }
    }

    /// Number of characters before byte offset `pos` (a char boundary).
    fn chars_before(&self, pos: usize) -> usize {
        if self.chars_before_chunk.is_empty() {
            return pos;
        }
        let chunk = pos / CHUNK;
        let from = chunk * CHUNK;
        self.chars_before_chunk[chunk] as usize
            + self.text.as_bytes()[from..pos]
                .iter()
                .filter(|&&b| starts_char(b))
                .count()
    }

    /// 1-based line and column (in characters) of byte offset `pos`, in
    /// time independent of the length of the line.
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
        let col = (self.chars_before(end) - self.chars_before(start)) as u32 + 1;
        (line as u32 + 1, col)
    }

    /// Byte range of the 1-based line `line` without its newline.
    pub fn line_range(&self, line: u32) -> (usize, usize) {
        let i = ((line.max(1) - 1) as usize).min(self.line_starts.len() - 1);
        let start = self.line_starts[i] as usize;
        let end = match self.line_starts.get(i + 1) {
            Some(&next) => next as usize - 1,
            None => self.text.len(),
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The column by the definition: characters from the line start.
    fn naive(text: &str, pos: usize) -> (u32, u32) {
        let mut end = pos.min(text.len());
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &text[..end];
        let line = before.matches('\n').count() as u32 + 1;
        let start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, text[start..end].chars().count() as u32 + 1)
    }

    #[test]
    fn columns_count_characters_on_long_mixed_lines() {
        let mut text = String::new();
        for i in 0..2000 {
            text.push_str(match i % 5 {
                0 => "é",
                1 => "ab",
                2 => "→",
                3 => "\n",
                _ => "𝄞x",
            });
        }
        let file = SourceFile::new("t".into(), text.clone());
        for pos in 0..=text.len() + 2 {
            assert_eq!(file.line_col(pos as u32), naive(&text, pos), "at {pos}");
        }
        let ascii = "abc\ndef\n\nxyz".to_string();
        let file = SourceFile::new("a".into(), ascii.clone());
        for pos in 0..=ascii.len() {
            assert_eq!(file.line_col(pos as u32), naive(&ascii, pos), "at {pos}");
        }
        assert_eq!(file.line_range(1), (0, 3));
        assert_eq!(file.line_range(3), (8, 8));
        assert_eq!(file.line_range(4), (9, 12));
    }
}

//! Module loading for the front end: `use NAME;` finds `NAME.tern` beside
//! the importing file, else the stdlib module `NAME` — from `TERN_STDLIB=DIR`
//! when set (development), otherwise the copy embedded in the binary.

use std::io::Read as _;
use std::path::{Path, PathBuf};

use tern_compiler::source::SourceFile;
use tern_compiler::{Loaded, Loader, MAX_SOURCE_BYTES};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/stdlib.rs"));
}

/// File-system loader with the stdlib fallback.
pub struct FsLoader {
    stdlib_dir: Option<PathBuf>,
}

impl FsLoader {
    /// Reads `TERN_STDLIB` once.
    pub fn from_env() -> FsLoader {
        FsLoader {
            stdlib_dir: crate::config::stdlib_dir(),
        }
    }

    /// Every stdlib module `use` can reach: `(name, source)`, from
    /// `TERN_STDLIB` when set, else the embedded copies.
    pub fn stdlib_sources(&self) -> Vec<(String, String)> {
        let Some(dir) = &self.stdlib_dir else {
            return embedded::STDLIB
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect();
        };
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if let (Some("tern"), Some(name)) = (
                path.extension().and_then(|e| e.to_str()),
                path.file_stem().and_then(|s| s.to_str()),
            ) && let Ok(text) = read_source(&path)
            {
                out.push((name.to_string(), text));
            }
        }
        out
    }

    /// The standard library's module `name`: from `TERN_STDLIB` when set,
    /// else the embedded copy (shown as `stdlib/NAME.tern`).
    fn stdlib_module(&self, name: &str) -> Loaded {
        let file = format!("{name}.tern");
        if let Some(dir) = &self.stdlib_dir {
            return load_file(&dir.join(&file));
        }
        match embedded::STDLIB.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => Loaded::Source(format!("stdlib/{file}"), (*text).to_string()),
            None => Loaded::NotFound,
        }
    }
}

impl Loader for FsLoader {
    fn load(&self, name: &str, from: &str) -> Loaded {
        // Module names are identifiers; refuse anything that could walk the
        // file system.
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Loaded::NotFound;
        }
        let file = format!("{name}.tern");
        // The standard library's own `use`s find the standard library, never
        // a file of the program's folder (or of a `stdlib/` folder where
        // `tern` runs, which an embedded module's name would point into).
        if self.is_library(from) {
            return self.stdlib_module(name);
        }
        let beside = match Path::new(from).parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.join(&file),
            _ => PathBuf::from(&file),
        };
        // A program's file is never shown as an embedded module is
        // (`stdlib/NAME.tern`, for a program run as `stdlib/main.tern`): the
        // display is what tells the standard library's files apart
        // (`is_library`) and one module's file from another's.
        let beside = if self.stdlib_dir.is_none() && beside == Path::new("stdlib").join(&file) {
            Path::new(".").join(beside)
        } else {
            beside
        };
        // A file that exists but is not UTF-8 is reported as such, not
        // passed over for the stdlib.
        match load_file(&beside) {
            Loaded::NotFound => {}
            found => return found,
        }
        self.stdlib_module(name)
    }

    fn stdlib_dir(&self) -> Option<(String, bool)> {
        let dir = self.stdlib_dir.as_ref()?;
        Some((dir.display().to_string(), dir.is_dir()))
    }

    /// The stdlib's modules are the ones `load` found in the stdlib
    /// directory, or the embedded copies it names `stdlib/NAME.tern`.
    fn is_library(&self, display: &str) -> bool {
        let path = Path::new(display);
        match &self.stdlib_dir {
            Some(dir) => path.parent() == Some(dir.as_path()),
            None => {
                path.parent() == Some(Path::new("stdlib"))
                    && path
                        .file_stem()
                        .is_some_and(|stem| embedded::STDLIB.iter().any(|(n, _)| stem == *n))
            }
        }
    }
}

/// Why a source file could not be read.
#[derive(Debug)]
pub enum SourceError {
    Io(std::io::Error),
    /// Not UTF-8: the file's bytes and the offset of the first that is not
    /// (what precedes it is valid).
    NotUtf8 {
        bytes: Vec<u8>,
        at: usize,
    },
    /// Longer than [`MAX_SOURCE_BYTES`], or a file that never ends.
    TooLarge,
}

impl SourceError {
    /// The driver's message for the file shown as `file` (uncoloured: one
    /// line, or a compile error's lines for a file that is not UTF-8).
    pub fn message(&self, file: &str) -> String {
        match self {
            SourceError::Io(e) => format!("error: cannot read `{file}`: {e}"),
            // A compile error like any other: `file:line:col: error: ...`,
            // the line and a caret.
            SourceError::NotUtf8 { bytes, at } => tern_compiler::file_not_utf8(file, bytes, *at)
                .render()
                .trim_end()
                .to_string(),
            SourceError::TooLarge => format!(
                "error: cannot read `{file}`: it is larger than {} MiB, the limit of a source file",
                MAX_SOURCE_BYTES >> 20
            ),
        }
    }
}

/// The UTF-8 byte order mark, dropped from the start of a source file.
const BOM: &str = "\u{feff}";

/// Reads a source file, at most [`MAX_SOURCE_BYTES`] of it: one byte more
/// is refused, so `/dev/zero` or a FIFO that never ends costs 64 MiB once
/// and an error, not the machine's memory. A leading byte order mark is
/// dropped.
pub fn read_source(path: &Path) -> Result<String, SourceError> {
    let file = std::fs::File::open(path).map_err(|e| {
        use std::os::unix::fs::FileTypeExt as _;
        // (Opening a socket says `No such device or address`.)
        if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
            return SourceError::Io(std::io::Error::other("it is a socket, not a file"));
        }
        SourceError::Io(e)
    })?;
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(SourceError::Io)?;
    if bytes.len() as u64 > MAX_SOURCE_BYTES {
        return Err(SourceError::TooLarge);
    }
    // A byte order mark some editors write first is not part of the text
    // (columns on line 1 count from what follows it).
    let bytes = match bytes.strip_prefix(BOM.as_bytes()) {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    String::from_utf8(bytes).map_err(|e| SourceError::NotUtf8 {
        at: e.utf8_error().valid_up_to(),
        bytes: e.into_bytes(),
    })
}

/// Where the first byte of `e`'s input that is not UTF-8 lies: its line and
/// column, placed as every diagnostic places an offset
/// (`SourceFile::line_col`), and the byte itself.
pub fn first_bad_byte(e: &std::string::FromUtf8Error) -> (usize, usize, u8) {
    let at = e.utf8_error().valid_up_to();
    let bytes = e.as_bytes();
    // What precedes the bad byte is valid UTF-8.
    let before = std::str::from_utf8(&bytes[..at]).unwrap_or_default();
    let (line, col) = SourceFile::new(String::new(), before.to_string()).line_col(at as u32);
    (line as usize, col as usize, bytes[at])
}

/// Why the file `meta` describes is no source to read, when it is not: a
/// FIFO or a socket (opening a FIFO waits for a writer for good) or a
/// directory. A device is read as a file, at most `MAX_SOURCE_BYTES` of
/// it. (The entry file is read whatever it is: `tern run <(gen)`.)
pub fn not_a_source(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt as _;
    let kind = meta.file_type();
    if kind.is_dir() {
        Some("it is a directory")
    } else if kind.is_fifo() || kind.is_socket() {
        Some("it is a pipe or a socket, not a file")
    } else {
        None
    }
}

/// A module's file as the front end's loader answer: one that is
/// [`not_a_source`], or that cannot be read, is reported, not passed over
/// for the stdlib.
fn load_file(path: &Path) -> Loaded {
    let display = path.display().to_string();
    match std::fs::metadata(path) {
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            return Loaded::NotFound;
        }
        Err(e) => return Loaded::Unreadable(display, e.to_string()),
        Ok(m) => {
            if let Some(why) = not_a_source(&m) {
                return Loaded::Unreadable(display, why.to_string());
            }
        }
    }
    match read_source(path) {
        Ok(text) => Loaded::Source(display, text),
        Err(SourceError::NotUtf8 { .. }) => Loaded::NotUtf8(display),
        Err(SourceError::TooLarge) => Loaded::TooLarge(display),
        Err(SourceError::Io(e)) => Loaded::Unreadable(display, e.to_string()),
    }
}

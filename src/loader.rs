//! Module loading for the front end: `use NAME;` finds `NAME.tern` beside
//! the importing file, else the stdlib module `NAME` — from `TERN_STDLIB=DIR`
//! when set (development), otherwise the copy embedded in the binary.

use std::path::{Path, PathBuf};

use tern_compiler::{Loaded, Loader};

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
}

impl FsLoader {
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
            ) && let Ok(text) = std::fs::read_to_string(&path)
            {
                out.push((name.to_string(), text));
            }
        }
        out
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
        let beside = match Path::new(from).parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.join(&file),
            _ => PathBuf::from(&file),
        };
        // A file that exists but is not UTF-8 is reported as such, not
        // passed over for the stdlib.
        match Loaded::from_bytes(beside.display().to_string(), std::fs::read(&beside)) {
            Loaded::NotFound => {}
            found => return found,
        }
        if let Some(dir) = &self.stdlib_dir {
            let path = dir.join(&file);
            return Loaded::from_bytes(path.display().to_string(), std::fs::read(&path));
        }
        match embedded::STDLIB.iter().find(|(n, _)| *n == name) {
            Some((_, text)) => Loaded::Source(format!("stdlib/{file}"), (*text).to_string()),
            None => Loaded::NotFound,
        }
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

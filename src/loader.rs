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
}

//! Shared test support: a loader over the repository's files, plus an
//! in-memory overlay for tests that build modules on the fly.

#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tern_compiler::{Loaded, Loader};

/// The workspace root (display names are relative to it, as when the
/// driver runs from there).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// `use NAME;` resolves to, in order: an in-memory module, `NAME.tern`
/// beside the importing file, `tests/errors/modules/NAME.tern` (test
/// helpers), `stdlib/NAME.tern`.
#[derive(Default)]
pub struct TestLoader {
    pub memory: HashMap<String, String>,
}

impl TestLoader {
    pub fn with(modules: &[(&str, &str)]) -> TestLoader {
        TestLoader {
            memory: modules
                .iter()
                .map(|(n, t)| (n.to_string(), t.to_string()))
                .collect(),
        }
    }
}

impl Loader for TestLoader {
    fn load(&self, name: &str, from: &str) -> Loaded {
        if let Some(text) = self.memory.get(name) {
            return Loaded::Source(format!("{name}.tern"), text.clone());
        }
        let file = format!("{name}.tern");
        let beside = Path::new(from).with_file_name(&file);
        let candidates = [
            beside,
            Path::new("tests/errors/modules").join(&file),
            Path::new("stdlib").join(&file),
        ];
        for rel in candidates {
            match Loaded::from_bytes(rel.display().to_string(), std::fs::read(root().join(&rel))) {
                Loaded::NotFound => {}
                found => return found,
            }
        }
        Loaded::NotFound
    }

    /// The repository's `stdlib/` is the standard library (the stale-operand
    /// rule trusts its pool operations).
    fn is_library(&self, display: &str) -> bool {
        display.starts_with("stdlib/")
    }
}

/// Every `*.tern` file directly in `dir` (relative to the root), sorted.
pub fn tern_files(dir: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(root().join(dir)) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.ends_with(".tern") {
                out.push(format!("{dir}/{name}"));
            }
        }
    }
    out.sort();
    out
}

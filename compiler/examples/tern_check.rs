//! `cargo run -p tern-compiler --example tern_check -- FILE [--time]`: run the
//! front end on FILE (modules beside it, else in `stdlib/`), print the
//! diagnostics or a summary of the program; with `--time`, the elapsed time.

use std::path::{Path, PathBuf};
use std::time::Instant;
use tern_compiler::{Loaded, Loader, compile};

struct FsLoader {
    stdlib: PathBuf,
}

impl Loader for FsLoader {
    fn load(&self, name: &str, from: &str) -> Loaded {
        let beside = Path::new(from).with_file_name(format!("{name}.tern"));
        let lib = self.stdlib.join(format!("{name}.tern"));
        for p in [beside, lib] {
            match Loaded::from_bytes(p.display().to_string(), std::fs::read(&p)) {
                Loaded::NotFound => {}
                found => return found,
            }
        }
        Loaded::NotFound
    }
    fn is_library(&self, display: &str) -> bool {
        Path::new(display).starts_with(&self.stdlib)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(file) = args.iter().find(|a| !a.starts_with("--")) else {
        eprintln!("usage: tern_check FILE [--time]");
        std::process::exit(2);
    };
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{file}: {e}");
            std::process::exit(2);
        }
    };
    let loader = FsLoader {
        stdlib: Path::new(env!("CARGO_MANIFEST_DIR")).join("../stdlib"),
    };
    let start = Instant::now();
    let result = compile(file, &text, &loader);
    let elapsed = start.elapsed();
    match result {
        Ok(p) => println!(
            "ok: {} functions, {} structs, {} externs",
            p.functions.len(),
            p.structs.len(),
            p.externs.len()
        ),
        Err(d) => {
            eprint!("{}", d.render());
            if !args.iter().any(|a| a == "--time") {
                std::process::exit(1);
            }
        }
    }
    if args.iter().any(|a| a == "--time") {
        println!("front end: {:.2} ms", elapsed.as_secs_f64() * 1e3);
    }
}

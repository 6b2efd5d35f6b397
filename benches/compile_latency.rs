//! Compile latency (not execution): the front end alone, and front end plus
//! Cranelift (JIT, ready to run) at -O0 and -O2, for every `examples/*.tern`
//! and for each stdlib module (`use NAME; fn main() {}`: the whole module
//! through the front end, what `main` reaches through Cranelift).
//!
//! `cargo bench --bench compile_latency`; figures are in docs/backend.md.

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use tern_codegen::{OptLevel, Options, compile_jit};
use tern_compiler::{Loaded, Loader};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Modules beside the importing file, else `stdlib/` of this repository.
struct RepoLoader;

impl Loader for RepoLoader {
    fn load(&self, name: &str, from: &str) -> Loaded {
        let beside = Path::new(from)
            .parent()
            .unwrap_or(Path::new("."))
            .join(format!("{name}.tern"));
        let stdlib = Path::new(ROOT).join("stdlib").join(format!("{name}.tern"));
        [beside, stdlib]
            .into_iter()
            .map(|p| Loaded::from_bytes(p.display().to_string(), std::fs::read(&p)))
            .find(|l| *l != Loaded::NotFound)
            .unwrap_or(Loaded::NotFound)
    }
    fn is_library(&self, display: &str) -> bool {
        Path::new(display).starts_with(Path::new(ROOT).join("stdlib"))
    }
}

fn inputs() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let list = |dir: &str| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join(dir))
            .map(|r| {
                r.flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "tern"))
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    };
    for path in list("examples") {
        let name = format!("examples/{}", path.file_name().unwrap().to_string_lossy());
        let text = std::fs::read_to_string(&path).unwrap();
        out.push((name.clone(), path.display().to_string(), text));
    }
    for path in list("stdlib") {
        let module = path.file_stem().unwrap().to_string_lossy().into_owned();
        let file = Path::new(ROOT).join("stdlib").join("__bench_main.tern");
        out.push((
            format!("stdlib/{module}"),
            file.display().to_string(),
            format!("use {module};\nfn main() {{}}\n"),
        ));
    }
    out
}

fn bench(c: &mut Criterion) {
    let symbols = tern_runtime::abi::symbols();
    for (name, file, text) in inputs() {
        let program = match tern_compiler::compile(&file, &text, &RepoLoader) {
            Ok(p) => p,
            Err(d) => {
                eprintln!("skipping {name}: does not compile:\n{}", d.render());
                continue;
            }
        };
        let mut group = c.benchmark_group(name);
        group.bench_function("front end", |b| {
            b.iter(|| {
                tern_compiler::compile(&file, &text, &RepoLoader)
                    .ok()
                    .unwrap()
            })
        });
        for level in [OptLevel::O0, OptLevel::O2] {
            let mut opts = Options::new(level);
            opts.verify = false;
            group.bench_function(format!("front end + cranelift {level:?}"), |b| {
                b.iter(|| {
                    let p = tern_compiler::compile(&file, &text, &RepoLoader)
                        .ok()
                        .unwrap();
                    compile_jit(&p, &opts, &symbols).ok().unwrap()
                })
            });
        }
        drop(program);
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(std::time::Duration::from_secs(2)).warm_up_time(std::time::Duration::from_millis(500));
    targets = bench
}
criterion_main!(benches);

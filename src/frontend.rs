//! Running the front end for the driver's commands: read the file, compile,
//! and turn failures into the driver's exit statuses.

use std::time::{Duration, Instant};

use tern_compiler::tir::Program;

use crate::Failure;
use crate::loader::FsLoader;

/// The source text of the program's file `file`, or the error `tern`
/// reports when it cannot be read (`cannot read `F`: ...`, or not UTF-8).
pub fn read_input(file: &str) -> Result<String, Failure> {
    crate::loader::read_source(std::path::Path::new(file)).map_err(|e| {
        let mut message = e.message(file);
        if matches!(e, crate::loader::SourceError::NotUtf8 { .. }) {
            // A compile error like any other, coloured as they are.
            message = colored(format!(
                "{message}\nerror: could not compile `{file}`: 1 error"
            ));
        }
        Failure::new(1, message)
    })
}

/// Reads and compiles `file`; on failure the diagnostics and a closing
/// `error: could not compile `FILE`: N errors` line (status 1), or a
/// missing-file error (status 1). Returns the program and the
/// time the front end took (reading excluded).
pub fn compile_file(file: &str) -> Result<(Program, Duration), Failure> {
    let text = read_input(file)?;
    let loader = FsLoader::from_env();
    let start = Instant::now();
    let result = tern_compiler::compile(file, &text, &loader);
    let elapsed = start.elapsed();
    match result {
        Ok(program) => Ok((program, elapsed)),
        Err(diags) => {
            let n = diags.len();
            let plural = if n == 1 { "" } else { "s" };
            let text = format!(
                "{}\nerror: could not compile `{file}`: {n} error{plural}",
                diags.render().trim_end()
            );
            Err(Failure::new(1, colored(text)))
        }
    }
}

/// Diagnostics text as stderr should show it: coloured on a terminal (see
/// `config::color_stderr`), plain otherwise.
pub fn colored(text: String) -> String {
    if crate::config::color_stderr() {
        tern_compiler::diagnostics::style::styled(&text)
    } else {
        text
    }
}

//! Errors of the backend. The front end has already rejected every user
//! error, so these are either environment problems (a missing runtime
//! symbol, the C compiler failing) or internal limits.

use std::fmt;

/// Anything that stops code generation, linking or JIT finalization.
#[derive(Debug)]
pub enum CodegenError {
    /// Cranelift rejected a function or declaration; `context` names it.
    Cranelift { context: String, message: String },
    /// A runtime function (or the runtime's one data symbol,
    /// `tern_abi::reusable_fast`) the program needs has no address in the
    /// table the driver supplied (JIT only).
    MissingRuntimeSymbol(String),
    /// A value the backend cannot represent (e.g. a stack value over 4 GiB).
    Unsupported(String),
    /// Linking the executable failed (message says what and why).
    Link(String),
}

impl fmt::Display for CodegenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodegenError::Cranelift { context, message } => {
                write!(f, "code generation failed in {context}: {message}")
            }
            CodegenError::MissingRuntimeSymbol(name) => {
                let what = if name == tern_abi::reusable_fast::SYMBOL {
                    "runtime data symbol"
                } else {
                    "runtime function"
                };
                write!(
                    f,
                    "{what} `{name}` is not available in this build of the runtime"
                )
            }
            CodegenError::Unsupported(what) => write!(f, "unsupported: {what}"),
            CodegenError::Link(msg) => write!(f, "linking failed: {msg}"),
        }
    }
}

impl std::error::Error for CodegenError {}

impl CodegenError {
    pub(crate) fn cranelift(context: impl Into<String>, err: impl fmt::Display) -> Self {
        CodegenError::Cranelift {
            context: context.into(),
            message: err.to_string(),
        }
    }
}

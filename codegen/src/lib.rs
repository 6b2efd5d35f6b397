//! Tern's backend: `tern_compiler::tir::Program` to Cranelift IR, JIT and AOT.

//! Tern's front end: source text to a typed, monomorphized program
//! (`tir::Program`). This crate never imports Cranelift and does no IO of its
//! own: sources come in through a loader the driver supplies.

pub mod tir;

//! `tern-difftest`: differential testing of the whole Tern compiler.
//!
//! Random well-typed, terminating programs ([`generator`]) run through every mode
//! of the `tern` driver — JIT at each `-O` level, AOT builds, and the
//! reference interpreter when enabled ([`runner`]); any difference in
//! stdout, stderr or exit status between modes, or between the modes and
//! what the program was generated to do, is a disagreement. A disagreeing
//! program is shrunk ([`minimize`]) and kept. [`batch`] runs a whole
//! campaign in parallel; the binary (`src/main.rs`) is its command line.
//!
//! Module map: `rng` (seeded random numbers), `program` (the program tree
//! and its rendering), `generator` (the generator), `runner` (running the modes,
//! comparing outcomes), `minimize` (the minimizer), `batch` (campaigns,
//! reports, kept files), `tern_bin` (finding or building the driver).

#![warn(missing_docs)]

pub mod batch;
pub mod generator;
pub mod minimize;
pub mod program;
pub mod rng;
pub mod runner;
pub mod tern_bin;

//! Tern's memory runtime. See `docs/runtime-abi.md` for the extern ABI.

pub mod abi;

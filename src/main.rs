//! The `tern` driver.
fn main() {}

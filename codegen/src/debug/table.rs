//! The backtrace table: the bytes of the runtime's
//! `tern_runtime::backtrace::table` layout (documented there; this crate
//! does not depend on the runtime, so the layout is written out here and a
//! test of the driver runs the two together).

use std::collections::HashMap;

use cranelift_module::FuncId;
use tern_compiler::tir::Program;

use super::DebugInfo;

const MAGIC: u32 = u32::from_le_bytes(*b"TRNB");
const VERSION: u32 = 3;
const HEADER: usize = 48;
const FUNC: usize = 32;
const CALL: usize = 16;
const SITE: usize = 20;

/// A table's bytes and its code addresses: at each offset, an 8-byte
/// absolute relocation to a function's address plus an offset.
pub struct Table {
    pub bytes: Vec<u8>,
    pub relocs: Vec<(u32, FuncId, u32)>,
}

/// Interned NUL-terminated strings.
#[derive(Default)]
struct Strings {
    bytes: Vec<u8>,
    at: HashMap<String, u32>,
}

impl Strings {
    fn get(&mut self, s: &str) -> u32 {
        if let Some(&off) = self.at.get(s) {
            return off;
        }
        let off = self.bytes.len() as u32;
        self.bytes.extend_from_slice(s.as_bytes());
        self.bytes.push(0);
        self.at.insert(s.to_string(), off);
        off
    }
}

fn put(out: &mut Vec<u8>, words: &[u32]) {
    for w in words {
        out.extend_from_slice(&w.to_le_bytes());
    }
}

fn align8(out: &mut Vec<u8>) {
    while !out.len().is_multiple_of(8) {
        out.push(0);
    }
}

/// The table of `info`'s functions.
pub fn build(program: &Program, info: &DebugInfo) -> Table {
    let mut strings = Strings::default();
    let name = |i: u32| program.functions[i as usize].name.as_str();
    let ncalls: usize = info.funcs.iter().map(|f| f.calls.len()).sum();
    let nchain: usize = info
        .funcs
        .iter()
        .flat_map(|f| &f.calls)
        .map(|(_, c)| c.len())
        .sum();
    let funcs_at = HEADER;
    let calls_at = funcs_at + FUNC * info.funcs.len();
    // The calls' sites, then one per function: its declaration.
    let nsites = info.sites.len() + info.funcs.len();
    let sites_at = (calls_at + CALL * ncalls).next_multiple_of(8);
    let chain_at = (sites_at + SITE * nsites).next_multiple_of(8);
    let strings_at = (chain_at + 4 * nchain).next_multiple_of(8);

    let mut out = Vec::with_capacity(strings_at);
    put(
        &mut out,
        &[
            MAGIC,
            VERSION,
            info.funcs.len() as u32,
            funcs_at as u32,
            ncalls as u32,
            calls_at as u32,
            nsites as u32,
            sites_at as u32,
            nchain as u32,
            chain_at as u32,
            strings_at as u32,
            0,
        ],
    );
    let mut relocs = Vec::new();
    let mut first_call = 0u32;
    for (k, f) in info.funcs.iter().enumerate() {
        relocs.push((out.len() as u32, f.id, 0));
        relocs.push((out.len() as u32 + 8, f.id, f.size));
        out.extend_from_slice(&[0; 16]);
        let n = f.calls.len() as u32;
        let decl = (info.sites.len() + k + 1) as u32;
        put(&mut out, &[strings.get(name(f.index)), first_call, n, decl]);
        first_call += n;
    }
    let mut chain_start = 0u32;
    for f in &info.funcs {
        for (ret, chain) in &f.calls {
            relocs.push((out.len() as u32, f.id, *ret));
            out.extend_from_slice(&[0; 8]);
            put(&mut out, &[chain_start, chain.len() as u32]);
            chain_start += chain.len() as u32;
        }
    }
    align8(&mut out);
    let declarations = info
        .funcs
        .iter()
        .map(|f| (f.index, program.functions[f.index as usize].loc));
    for (func, loc) in info
        .sites
        .iter()
        .map(|s| (s.func, s.loc))
        .chain(declarations)
    {
        let file = program
            .files
            .get(loc.file as usize)
            .map_or("<unknown>", String::as_str);
        let library = program.is_library(loc.file);
        put(
            &mut out,
            &[
                strings.get(name(func)),
                strings.get(file),
                loc.line,
                loc.col,
                library as u32,
            ],
        );
    }
    align8(&mut out);
    for f in &info.funcs {
        for (_, chain) in &f.calls {
            put(&mut out, chain);
        }
    }
    align8(&mut out);
    debug_assert_eq!(out.len(), strings_at);
    out.extend_from_slice(&strings.bytes);
    Table { bytes: out, relocs }
}

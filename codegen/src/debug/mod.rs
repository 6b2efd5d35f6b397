//! What the backend records for debugging, and the two products made of it:
//! the backtrace table every program carries ([`table`], read by the
//! runtime's `backtrace` module) and, for objects, DWARF ([`dwarf`]).
//!
//! Recording: every call instruction the translator emits (Tern calls,
//! externs, runtime calls) carries one Cranelift debug tag, the index of a
//! *site* (the calling Tern function and the location it is at). Cranelift's
//! inliner prepends the tags of the call it inlines to the tags of the
//! inlined calls, so after compilation each return address has the whole
//! chain of Tern frames it stands for, outermost first. Every expression also
//! sets the instruction's source location (an index into [`DebugInfo::locs`])
//! for the DWARF line table.

pub mod dwarf;
pub mod table;

use std::collections::HashMap;

use cranelift_codegen::CompiledCode;
use cranelift_codegen::ir::{DebugTag, SourceLoc};
use cranelift_module::FuncId;
use tern_compiler::tir::Loc;

/// A Tern-level call site: the function making it and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    /// Index of the function in `tir::Program::functions`.
    pub func: u32,
    pub loc: Loc,
}

/// One compiled Tern function.
#[derive(Clone, Debug)]
pub struct FuncDebug {
    pub id: FuncId,
    /// Index in `tir::Program::functions`.
    pub index: u32,
    /// Length of the machine code.
    pub size: u32,
    /// Each call's return-address offset and its site chain (outermost first).
    pub calls: Vec<(u32, Vec<u32>)>,
    /// Line rows: code offset and location, in address order.
    pub rows: Vec<(u32, Loc)>,
}

/// Debugging facts of one translation.
#[derive(Default, Debug)]
pub struct DebugInfo {
    /// Sites, indexed by the value of their debug tag.
    pub sites: Vec<Site>,
    site_ids: HashMap<Site, u32>,
    /// Locations, indexed by the value of their `SourceLoc`.
    pub locs: Vec<Loc>,
    loc_ids: HashMap<Loc, u32>,
    /// Every compiled Tern function, in definition order.
    pub funcs: Vec<FuncDebug>,
}

impl DebugInfo {
    /// The debug tag of a call made by function `func` at `loc`.
    pub fn tag(&mut self, func: u32, loc: Loc) -> DebugTag {
        let site = Site { func, loc };
        let next = self.sites.len() as u32;
        let id = *self.site_ids.entry(site).or_insert(next);
        if id == next {
            self.sites.push(site);
        }
        DebugTag::User(id)
    }

    /// The source location of code at `loc`.
    pub fn srcloc(&mut self, loc: Loc) -> SourceLoc {
        let next = self.locs.len() as u32;
        let id = *self.loc_ids.entry(loc).or_insert(next);
        if id == next {
            self.locs.push(loc);
        }
        SourceLoc::new(id)
    }

    /// Every compiled function with its Tern display name.
    pub fn named<'a>(
        &'a self,
        program: &'a tern_compiler::tir::Program,
    ) -> impl Iterator<Item = (&'a str, &'a FuncDebug)> + 'a {
        self.funcs
            .iter()
            .map(|f| (program.functions[f.index as usize].name.as_str(), f))
    }

    /// Records function `index` (module id `id`) as Cranelift compiled it.
    pub fn record(&mut self, id: FuncId, index: u32, code: &CompiledCode) {
        let buffer = &code.buffer;
        let calls = buffer
            .debug_tags()
            .map(|list| {
                let chain = list
                    .tags
                    .iter()
                    .filter_map(|t| match t {
                        // Not a call site: the slow part's call in a
                        // partially inlined function's wrapper.
                        _ if *t == crate::partial_inline::SLOW_PART => None,
                        DebugTag::User(site) => Some(*site),
                        DebugTag::StackSlot(_) => None,
                    })
                    .collect();
                (list.offset, chain)
            })
            .collect::<Vec<_>>();
        let mut calls = calls;
        calls.sort_by_key(|(ret, _)| *ret);
        let mut rows: Vec<(u32, Loc)> = Vec::new();
        for s in buffer.get_srclocs_sorted() {
            if s.loc.is_default() {
                continue;
            }
            let loc = self.locs[s.loc.bits() as usize];
            if rows.last().is_none_or(|&(_, last)| last != loc) {
                rows.push((s.start, loc));
            }
        }
        self.funcs.push(FuncDebug {
            id,
            index,
            size: buffer.data().len() as u32,
            calls,
            rows,
        });
    }
}

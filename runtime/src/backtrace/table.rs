//! The table a compiled program hands the runtime so a native stack can be
//! named: its functions' code ranges, and for every call instruction the
//! (possibly inlined) Tern frames it stands for. `tern-codegen` writes it as
//! one data object whose only relocations are code addresses (function
//! starts and ends, return addresses: so the table stays right when the
//! code is reassembled from `--emit asm`, where instruction sizes may
//! change); this module reads it.
//!
//! Layout (little-endian `u32`s unless noted; offsets are from the table's
//! start; every section is 8-byte aligned):
//!
//! | at | what |
//! |---|---|
//! | 0 | header: [`MAGIC`], [`VERSION`], then the counts and offsets of [`Header`] |
//! | `funcs` | `nfuncs` × [`FuncEntry`] (32 bytes) |
//! | `calls` | `ncalls` × [`CallEntry`] (16 bytes), each function's sorted by `ret` |
//! | `sites` | `nsites` × [`SiteEntry`] (20 bytes) |
//! | `chain` | `nchain` × `u32` site indices, each call's outermost first |
//! | `strings` | NUL-terminated UTF-8 |

use std::ffi::{CStr, c_char};
use std::sync::Mutex;

use super::Frame;

/// First word of a table: `TRNB`.
pub const MAGIC: u32 = u32::from_le_bytes(*b"TRNB");
/// Layout version this runtime reads.
pub const VERSION: u32 = 3;

/// The table's header.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: u32,
    /// [`VERSION`].
    pub version: u32,
    /// Number of functions.
    pub nfuncs: u32,
    /// Offset of the functions.
    pub funcs: u32,
    /// Number of call entries.
    pub ncalls: u32,
    /// Offset of the call entries.
    pub calls: u32,
    /// Number of sites.
    pub nsites: u32,
    /// Offset of the sites.
    pub sites: u32,
    /// Number of chain entries.
    pub nchain: u32,
    /// Offset of the chain.
    pub chain: u32,
    /// Offset of the strings.
    pub strings: u32,
    /// Zero (keeps the header a multiple of 8 bytes).
    pub reserved: u32,
}

/// One compiled Tern function.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct FuncEntry {
    /// Address of its first instruction (relocated at load time).
    pub start: u64,
    /// Address just past its code (relocated).
    pub end: u64,
    /// Its display name (offset into the strings).
    pub name: u32,
    /// Index of its first call entry.
    pub first_call: u32,
    /// Number of its call entries.
    pub ncalls: u32,
    /// One more than the index of the site of its declaration (the
    /// `fn`'s location), 0 when the table has none: where a stack
    /// overflow is placed when the frame that did not fit is that of the
    /// function the program entered Tern code by (`main`), which no Tern
    /// call made.
    pub decl: u32,
}

/// One call instruction of a function.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CallEntry {
    /// The call's return address (relocated).
    pub ret: u64,
    /// Index of its first chain entry.
    pub chain_start: u32,
    /// Number of chain entries: 1, plus one per level of inlining.
    pub chain_len: u32,
}

/// A Tern-level call site: a function and a location in it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SiteEntry {
    /// The function's display name (offset into the strings).
    pub name: u32,
    /// The file's display name (offset into the strings).
    pub file: u32,
    /// Line, 1-based.
    pub line: u32,
    /// Column, 1-based.
    pub col: u32,
    /// 1 if the function is standard-library code.
    pub library: u32,
}

/// A registered table (its address; tables are read-only and live as long
/// as their program's code).
struct Registered(usize);

static TABLES: Mutex<Vec<Registered>> = Mutex::new(Vec::new());

/// Makes `table`'s functions known to backtraces.
///
/// # Safety
/// `table` points to a table in the layout above that stays valid (with the
/// code it describes) until [`unregister`] is called with it, or forever.
pub unsafe fn register(table: *const u8) {
    // SAFETY: the caller's contract: `table` starts with a header.
    let header = unsafe { &*(table as *const Header) };
    let ok = header.magic == MAGIC && header.version == VERSION;
    if ok {
        lock().push(Registered(table as usize));
    }
}

/// Forgets `table` (before its program's code is freed).
pub fn unregister(table: *const u8) {
    lock().retain(|t| t.0 != table as usize);
}

fn lock() -> std::sync::MutexGuard<'static, Vec<Registered>> {
    TABLES.lock().unwrap_or_else(|e| e.into_inner())
}

/// A view of one registered table.
#[derive(Clone, Copy)]
struct View(*const u8);

impl View {
    fn header(self) -> Header {
        // SAFETY: registered tables are valid (the `register` contract).
        unsafe { *(self.0 as *const Header) }
    }
    fn at<T: Copy>(self, off: u32, i: u32) -> T {
        // SAFETY: as above; indices are below the header's counts.
        unsafe { *(self.0.add(off as usize + i as usize * size_of::<T>()) as *const T) }
    }
    fn string(self, off: u32) -> String {
        let start = self.header().strings + off;
        // SAFETY: as above; strings are NUL-terminated.
        unsafe { CStr::from_ptr(self.0.add(start as usize) as *const c_char) }
            .to_string_lossy()
            .into_owned()
    }
    /// The frame site `i` names.
    fn site_frame(self, i: u32) -> Frame {
        let site: SiteEntry = self.at(self.header().sites, i);
        Frame {
            name: self.string(site.name),
            loc: format!("{}:{}:{}", self.string(site.file), site.line, site.col),
            library: site.library != 0,
        }
    }
    fn function_at(self, pc: usize) -> Option<FuncEntry> {
        let h = self.header();
        (0..h.nfuncs)
            .map(|i| self.at::<FuncEntry>(h.funcs, i))
            .find(|f| pc >= f.start as usize && pc < f.end as usize)
    }
}

/// A Tern function containing `pc`, among the registered tables.
pub fn is_tern_code(pc: usize) -> bool {
    lock()
        .iter()
        .any(|t| View(t.0 as *const u8).function_at(pc).is_some())
}

/// The first instruction of the Tern function containing `pc`, if one
/// does. Does not wait for the registry's lock (`None` when it is taken):
/// the fault handler asks it.
pub fn function_start(pc: usize) -> Option<usize> {
    let tables = TABLES.try_lock().ok()?;
    tables
        .iter()
        .find_map(|t| View(t.0 as *const u8).function_at(pc))
        .map(|f| f.start as usize)
}

/// The frame of the Tern function containing `pc` placed at its
/// declaration, if the table names one. Does not wait for the registry's
/// lock (`None` when it is taken): the fault handler asks it.
pub fn declaration_frame(pc: usize) -> Option<Frame> {
    let tables = TABLES.try_lock().ok()?;
    tables.iter().find_map(|t| {
        let view = View(t.0 as *const u8);
        let f = view.function_at(pc)?;
        (f.decl != 0).then(|| view.site_frame(f.decl - 1))
    })
}

/// Whether no thread reads or changes the tables right now: the fault
/// handler asks before it walks a stack, since a fault taken while this
/// thread held them would otherwise wait for itself.
pub fn is_free() -> bool {
    !matches!(TABLES.try_lock(), Err(std::sync::TryLockError::WouldBlock))
}

/// The frames the return address `ret` stands for, innermost first
/// (several when calls were inlined); `None` if `ret` is not in Tern code.
/// A return address in Tern code that is not a known call still yields its
/// function's frame, without a location.
pub fn frames_at(ret: usize) -> Option<Vec<Frame>> {
    let tables = lock();
    for t in tables.iter() {
        let view = View(t.0 as *const u8);
        // `ret - 1`: the call instruction, which `ret` may be just past the
        // end of when the call is the function's last instruction.
        let Some(f) = view.function_at(ret - 1) else {
            continue;
        };
        let h = view.header();
        let call = (f.first_call..f.first_call + f.ncalls)
            .map(|i| view.at::<CallEntry>(h.calls, i))
            .find(|c| c.ret as usize == ret);
        let Some(call) = call else {
            return Some(vec![Frame {
                name: view.string(f.name),
                loc: "?".into(),
                library: false,
            }]);
        };
        let frames = (0..call.chain_len)
            .rev()
            .map(|k| view.site_frame(view.at::<u32>(h.chain, call.chain_start + k)))
            .collect();
        return Some(frames);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_sizes_match_the_documented_layout() {
        assert_eq!(size_of::<Header>(), 48);
        assert_eq!(size_of::<FuncEntry>(), 32);
        assert_eq!(size_of::<CallEntry>(), 16);
        assert_eq!(size_of::<SiteEntry>(), 20);
    }
}

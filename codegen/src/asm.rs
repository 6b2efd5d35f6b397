//! `--emit asm`: the object file printed as GNU assembler source that
//! `cc -c` assembles back into an equivalent object.
//!
//! The printer works on the finished object, not on Cranelift's internal
//! listing, so what it prints is what the linker gets: every section, every
//! symbol, every relocation. Code is disassembled with Capstone (Intel
//! syntax) and made symbolic where the bytes alone would not reassemble:
//! * an operand covered by a relocation names its symbol (`call
//!   "tern.f"@PLT`, `[rip + tern_span_free@GOTPCREL]`);
//! * a branch inside the function, or a RIP-relative load of a constant
//!   Cranelift placed after the code, goes to a local label, so the
//!   assembler may choose other encodings without breaking the targets;
//! * the constants at the end of a function stay bytes (`.byte`), aligned as
//!   they were.
//!
//! Data sections are bytes with their relocations as `.quad` / `.long` of
//! the target; a code address inside a function (the backtrace table's
//! return addresses and function ends) becomes a label there. Line
//! information is `.file`/`.loc` directives, from which the assembler builds
//! `.debug_line` for the new layout (the object's own DWARF sections would
//! describe the old one, so they are left out).
//!
//! Only x86-64 ELF objects are printed; other targets get an error.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use capstone::Capstone;
use capstone::arch::BuildsCapstone;
use capstone::arch::BuildsCapstoneSyntax;
use capstone::arch::x86::{ArchMode, ArchSyntax};
use object::elf;
use object::{
    Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget, SectionIndex,
    SectionKind, SymbolKind,
};

use crate::CodegenError;

/// A Tern source position: file, line, column.
pub type Position = (String, u32, u32);

/// Tern source positions by function symbol: code offset and position, in
/// address order (from the translation's line rows).
pub type LineNotes = HashMap<String, Vec<(u32, Position)>>;

fn unsupported(what: impl std::fmt::Display) -> CodegenError {
    CodegenError::Unsupported(format!("--emit asm: {what}"))
}

/// A symbol name as the assembler accepts it (quoted unless plain).
fn sym(name: &str) -> String {
    if !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.' || c == '$')
        && !name.starts_with(|c: char| c.is_ascii_digit())
    {
        name.to_string()
    } else {
        format!("\"{}\"", name.replace('\\', "\\\\").replace('"', "\\\""))
    }
}

/// `+ 5`, `- 3` or nothing.
fn plus(addend: i64) -> String {
    match addend {
        0 => String::new(),
        a if a > 0 => format!(" + {a}"),
        a => format!(" - {}", a.unsigned_abs()),
    }
}

/// Label of a section's start (relocations against section symbols).
fn section_label(index: SectionIndex) -> String {
    format!(".Ltern_sec{}", index.0)
}

/// Label of an offset inside the text section.
fn text_label(offset: u64) -> String {
    format!(".Ltern_{offset:x}")
}

/// One relocation, resolved to what the assembler should write.
#[derive(Clone, Debug)]
struct Reloc {
    offset: u64,
    r_type: u32,
    target: String,
    addend: i64,
    /// For a target in the text section: its offset there.
    in_text: Option<u64>,
}

/// Prints the object `bytes` as assembly.
pub fn print(bytes: &[u8], notes: &LineNotes) -> Result<String, CodegenError> {
    let file = object::File::parse(bytes).map_err(|e| unsupported(format!("object: {e}")))?;
    if file.architecture() != object::Architecture::X86_64
        || file.format() != object::BinaryFormat::Elf
    {
        return Err(unsupported("only x86-64 ELF objects can be printed"));
    }
    let cs = Capstone::new()
        .x86()
        .mode(ArchMode::Mode64)
        .syntax(ArchSyntax::Intel)
        .build()
        .map_err(|e| unsupported(format!("disassembler: {e}")))?;

    // Relocations of every section first: code addresses named from data
    // need labels in the text.
    let text_index = file
        .sections()
        .find(|s| s.kind() == SectionKind::Text)
        .map(|s| s.index());
    let mut relocs_of: HashMap<SectionIndex, Vec<Reloc>> = HashMap::new();
    let mut code_labels = BTreeSet::new();
    for section in file.sections() {
        let mut relocs = Vec::new();
        for (offset, r) in section.relocations() {
            let RelocationFlags::Elf { r_type } = r.flags() else {
                return Err(unsupported("relocation without an ELF type"));
            };
            let (target, base) = match r.target() {
                RelocationTarget::Symbol(i) => {
                    let s = file.symbol_by_index(i).map_err(unsupported)?;
                    match (s.kind(), s.section_index()) {
                        (SymbolKind::Section, Some(sec)) => (section_label(sec), Some((sec, 0))),
                        (_, sec) => (
                            sym(s.name().map_err(unsupported)?),
                            sec.map(|sec| (sec, s.address())),
                        ),
                    }
                }
                RelocationTarget::Section(sec) => (section_label(sec), Some((sec, 0))),
                _ => return Err(unsupported("relocation to an absolute address")),
            };
            let in_text = match base {
                Some((sec, at)) if Some(sec) == text_index => {
                    Some(at.wrapping_add_signed(r.addend()))
                }
                _ => None,
            };
            if section.kind() != SectionKind::Text
                && r.addend() != 0
                && let Some(at) = in_text
            {
                code_labels.insert(at);
            }
            relocs.push(Reloc {
                offset,
                r_type,
                target,
                addend: r.addend(),
                in_text,
            });
        }
        relocs.sort_by_key(|r| r.offset);
        relocs_of.insert(section.index(), relocs);
    }

    let mut out = String::from("# Generated by tern build --emit asm; assemble with `cc -c`.\n");
    out.push_str("\t.intel_syntax noprefix\n");
    let mut files = Files::default();
    for section in file.sections() {
        let name = section.name().map_err(unsupported)?;
        let (flags, kind) = match section.kind() {
            // Whatever kind the object reader gives it: without it the
            // linker makes the stack executable.
            _ if name == ".note.GNU-stack" => ("", "@progbits"),
            SectionKind::Text => ("ax", "@progbits"),
            SectionKind::Data => ("aw", "@progbits"),
            SectionKind::ReadOnlyData | SectionKind::ReadOnlyString => ("a", "@progbits"),
            SectionKind::ReadOnlyDataWithRel => ("aw", "@progbits"),
            SectionKind::UninitializedData => ("aw", "@nobits"),
            SectionKind::Note if name == ".note.GNU-stack" => ("", "@progbits"),
            // Debug sections are rebuilt from `.loc` (see the module docs);
            // symbol and relocation tables by the assembler.
            _ => continue,
        };
        let data = section.data().map_err(unsupported)?;
        let _ = writeln!(out, "\n\t.section {name},\"{flags}\",{kind}");
        let align = section.align().max(1);
        if align > 1 {
            let _ = writeln!(out, "\t.p2align {}", align.trailing_zeros());
        }
        let _ = writeln!(out, "{}:", section_label(section.index()));
        let relocs = &relocs_of[&section.index()];
        // Symbols defined in this section, by offset.
        let mut symbols: Vec<_> = file
            .symbols()
            .filter(|s| s.section_index() == Some(section.index()))
            .filter(|s| matches!(s.kind(), SymbolKind::Text | SymbolKind::Data))
            .collect();
        symbols.sort_by_key(|s| s.address());
        if kind == "@nobits" {
            for s in &symbols {
                let n = sym(s.name().unwrap_or(""));
                let _ = writeln!(out, "{n}:\n\t.zero {}", s.size());
            }
            continue;
        }
        if section.kind() == SectionKind::Text {
            let text = Text {
                cs: &cs,
                data,
                relocs,
                notes,
                code_labels: &code_labels,
            };
            text.print(&mut out, &symbols, &mut files)?;
        } else {
            let mut at = 0u64;
            for s in &symbols {
                print_bytes(&mut out, data, relocs, &mut at, s.address())?;
                declare(&mut out, s, "@object")?;
                let _ = writeln!(out, "\t.size {}, {}", sym(s.name().unwrap_or("")), s.size());
            }
            print_bytes(&mut out, data, relocs, &mut at, data.len() as u64)?;
        }
    }
    Ok(out)
}

/// `.globl`/`.type` and the label of symbol `s`.
fn declare(out: &mut String, s: &object::Symbol<'_, '_>, kind: &str) -> Result<(), CodegenError> {
    let n = sym(s.name().map_err(unsupported)?);
    if s.is_global() {
        let _ = writeln!(out, "\t.globl {n}");
    }
    let _ = writeln!(out, "\t.type {n},{kind}\n{n}:");
    Ok(())
}

/// The `.file` numbers given so far.
#[derive(Default)]
struct Files(HashMap<String, usize>);

impl Files {
    /// The number of `name`, declaring it on first use.
    fn number(&mut self, out: &mut String, name: &str) -> usize {
        let next = self.0.len() + 1;
        *self.0.entry(name.to_string()).or_insert_with(|| {
            let _ = writeln!(out, "\t.file {next} \"{}\"", name.replace('"', "\\\""));
            next
        })
    }
}

/// Bytes `*at..end` of a data section, with relocated words written as
/// expressions.
fn print_bytes(
    out: &mut String,
    data: &[u8],
    relocs: &[Reloc],
    at: &mut u64,
    end: u64,
) -> Result<(), CodegenError> {
    let mut run: Vec<u8> = Vec::new();
    let flush = |out: &mut String, run: &mut Vec<u8>| {
        for chunk in run.chunks(16) {
            let list: Vec<String> = chunk.iter().map(|b| format!("0x{b:02x}")).collect();
            let _ = writeln!(out, "\t.byte {}", list.join(","));
        }
        run.clear();
    };
    while *at < end {
        if let Some(r) = relocs.iter().find(|r| r.offset == *at) {
            flush(out, &mut run);
            let (directive, size, pcrel) = match r.r_type {
                elf::R_X86_64_64 => (".quad", 8, false),
                elf::R_X86_64_32 | elf::R_X86_64_32S => (".long", 4, false),
                elf::R_X86_64_PC32 => (".long", 4, true),
                elf::R_X86_64_PC64 => (".quad", 8, true),
                t => return Err(unsupported(format!("data relocation type {t}"))),
            };
            let pc = if pcrel { " - ." } else { "" };
            // A code address inside a function: the label there.
            let target = match r.in_text {
                Some(at) if r.addend != 0 => text_label(at),
                _ => format!("{}{}", r.target, plus(r.addend)),
            };
            let _ = writeln!(out, "\t{directive} {target}{pc}");
            *at += size;
            continue;
        }
        run.push(data[*at as usize]);
        *at += 1;
    }
    flush(out, &mut run);
    Ok(())
}

/// Whether `mnemonic` is a branch or call with a code-address operand.
fn is_branch(mnemonic: &str) -> bool {
    mnemonic.starts_with('j') || mnemonic == "call" || mnemonic.starts_with("loop")
}

/// The `[rip ...]` operand of `op`, as a byte range and its displacement.
fn rip_operand(op: &str) -> Option<(usize, usize, i64)> {
    let start = op.find("[rip")?;
    let end = start + op[start..].find(']')? + 1;
    let inner = op[start + 4..end - 1].trim();
    // Capstone prints a displacement below 10 in decimal (`[rip + 9]`),
    // which must become a label too: the assembler may encode the code
    // between here and the target at another length.
    let disp = if inner.is_empty() {
        0
    } else if let Some(n) = inner.strip_prefix("+ ") {
        parse_imm(n)? as i64
    } else if let Some(n) = inner.strip_prefix("- ") {
        -(parse_imm(n)? as i64)
    } else {
        return None;
    };
    Some((start, end, disp))
}

/// The text section and what printing it needs.
struct Text<'a> {
    cs: &'a Capstone,
    data: &'a [u8],
    relocs: &'a [Reloc],
    notes: &'a LineNotes,
    /// Offsets data refers to (they get labels).
    code_labels: &'a BTreeSet<u64>,
}

impl Text<'_> {
    /// Each function disassembled, its constants as bytes.
    fn print(
        &self,
        out: &mut String,
        symbols: &[object::Symbol<'_, '_>],
        files: &mut Files,
    ) -> Result<(), CodegenError> {
        let data = self.data;
        for (k, s) in symbols.iter().enumerate() {
            let start = s.address();
            let end = symbols
                .get(k + 1)
                .map_or(data.len() as u64, |n| n.address())
                .max(start + s.size());
            let name = s.name().map_err(unsupported)?;
            // Cranelift aligns every function to 16 bytes.
            let _ = writeln!(out, "\n\t.p2align 4");
            declare(out, s, "@function")?;
            self.function(out, name, start, end, files)?;
            if self.code_labels.contains(&end) {
                let _ = writeln!(out, "{}:", text_label(end));
            }
            let _ = writeln!(out, "\t.size {0}, . - {0}", sym(name));
        }
        Ok(())
    }

    /// One function: bytes `start..end` of the text.
    fn function(
        &self,
        out: &mut String,
        name: &str,
        start: u64,
        end: u64,
        files: &mut Files,
    ) -> Result<(), CodegenError> {
        let (data, relocs) = (self.data, self.relocs);
        let code = &data[start as usize..end as usize];
        // Pass 1: instructions up to the first constant referenced (the
        // constants follow all of a function's code), and the labels needed.
        // (A label at `start` is the previous function's end, printed there.)
        let mut labels: BTreeSet<u64> = self.code_labels.range(start + 1..end).copied().collect();
        let mut data_start = end;
        let mut insns = Vec::new();
        let decoded = self
            .cs
            .disasm_all(code, start)
            .map_err(|e| unsupported(format!("disassembly of {name}: {e}")))?;
        for insn in decoded.iter() {
            let (addr, len) = (insn.address(), insn.len() as u64);
            if addr >= data_start {
                break;
            }
            let mnemonic = insn.mnemonic().unwrap_or("").to_string();
            let op = insn.op_str().unwrap_or("").to_string();
            let reloc = relocs
                .iter()
                .find(|r| r.offset >= addr && r.offset < addr + len);
            if reloc.is_none() {
                if is_branch(&mnemonic)
                    && let Some(t) = hex_target(&op)
                    && (start..end).contains(&t)
                {
                    labels.insert(t);
                } else if let Some((_, _, disp)) = rip_operand(&op) {
                    let t = (addr + len).wrapping_add_signed(disp);
                    if (start..end).contains(&t) {
                        labels.insert(t);
                        data_start = data_start.min(t);
                    }
                }
            }
            insns.push((addr, len, mnemonic, op, reloc.cloned()));
        }
        // Pass 2: print.
        let lines = self.notes.get(name).map(Vec::as_slice).unwrap_or(&[]);
        let mut next_line = 0;
        let mut code_end = start;
        for (addr, len, mnemonic, op, reloc) in insns {
            if addr + len > data_start {
                break;
            }
            if labels.contains(&addr) {
                let _ = writeln!(out, "{}:", text_label(addr));
            }
            while next_line < lines.len() && u64::from(lines[next_line].0) + start <= addr {
                let (file, line, col) = &lines[next_line].1;
                let n = files.number(out, file);
                let _ = writeln!(out, "\t.loc {n} {line} {col}\t# {file}:{line}:{col}");
                next_line += 1;
            }
            let op = symbolic(&mnemonic, &op, addr, len, reloc.as_ref(), start..end)?;
            let _ = writeln!(out, "\t{mnemonic} {op}");
            code_end = addr + len;
        }
        // The constants (and any bytes the code did not cover).
        if code_end < end {
            let rel = data_start - start;
            if data_start < end && rel > 0 {
                let _ = writeln!(out, "\t.p2align {}", rel.trailing_zeros().min(5));
            }
            let mut pos = code_end;
            if data_start > code_end && data_start < end {
                print_bytes(out, data, relocs, &mut pos, data_start)?;
            }
            for &l in labels.range(pos..end) {
                print_bytes(out, data, relocs, &mut pos, l)?;
                let _ = writeln!(out, "{}:", text_label(l));
            }
            print_bytes(out, data, relocs, &mut pos, end)?;
        }
        Ok(())
    }
}

/// An immediate or displacement as Capstone prints it (`0x33`, `5`).
fn parse_imm(s: &str) -> Option<u64> {
    match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// The address operand of a direct branch (`0x1c`).
fn hex_target(op: &str) -> Option<u64> {
    match op.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        // Capstone prints targets below 10 in decimal, without `0x` (a
        // backward jump to the start of the text section's first function).
        None if op.len() == 1 => op.parse().ok(),
        None => None,
    }
}

/// The operand text of one instruction with relocations and local targets
/// made symbolic.
fn symbolic(
    mnemonic: &str,
    op: &str,
    addr: u64,
    len: u64,
    reloc: Option<&Reloc>,
    function: std::ops::Range<u64>,
) -> Result<String, CodegenError> {
    let end = addr + len;
    if let Some(r) = reloc {
        // What the assembler subtracts for a PC-relative field: the distance
        // from the field to the end of the instruction.
        let tail = (end - r.offset) as i64;
        let target = &r.target;
        return match r.r_type {
            elf::R_X86_64_PLT32 | elf::R_X86_64_PC32 if is_branch(mnemonic) => {
                let at = if r.r_type == elf::R_X86_64_PLT32 {
                    "@PLT"
                } else {
                    ""
                };
                Ok(format!("{target}{}{at}", plus(r.addend + tail)))
            }
            elf::R_X86_64_PC32
            | elf::R_X86_64_GOTPCREL
            | elf::R_X86_64_GOTPCRELX
            | elf::R_X86_64_REX_GOTPCRELX => {
                let (s, e, _) = rip_operand(op)
                    .ok_or_else(|| unsupported(format!("relocated `{mnemonic} {op}`")))?;
                let got = if r.r_type == elf::R_X86_64_PC32 {
                    ""
                } else {
                    "@GOTPCREL"
                };
                Ok(format!(
                    "{}[rip + {target}{}{got}]{}",
                    &op[..s],
                    plus(r.addend + tail),
                    &op[e..]
                ))
            }
            elf::R_X86_64_64 if mnemonic == "movabs" => {
                let reg = op.split(',').next().unwrap_or("");
                Ok(format!("{reg}, offset {target}{}", plus(r.addend)))
            }
            t => Err(unsupported(format!(
                "relocation type {t} in `{mnemonic} {op}`"
            ))),
        };
    }
    if is_branch(mnemonic)
        && let Some(t) = hex_target(op)
        && function.contains(&t)
    {
        return Ok(text_label(t));
    }
    if let Some((s, e, disp)) = rip_operand(op) {
        let t = end.wrapping_add_signed(disp);
        if function.contains(&t) {
            return Ok(format!("{}[rip + {}]{}", &op[..s], text_label(t), &op[e..]));
        }
    }
    Ok(op.to_string())
}

#[cfg(test)]
mod tests {
    use super::{hex_target, rip_operand};

    #[test]
    fn branch_targets_parse_in_both_of_capstones_spellings() {
        assert_eq!(hex_target("0x3f"), Some(0x3f));
        assert_eq!(hex_target("9"), Some(9));
        assert_eq!(hex_target("rax"), None);
        assert_eq!(hex_target("qword ptr [rip + 0x10]"), None);
    }

    #[test]
    fn rip_displacements_parse_in_both_of_capstones_spellings() {
        assert_eq!(rip_operand("rcx, [rip + 9]"), Some((5, 14, 9)));
        assert_eq!(
            rip_operand("rax, qword ptr [rip + 0x10]"),
            Some((15, 27, 16))
        );
        assert_eq!(
            rip_operand("rax, qword ptr [rip - 0x10]"),
            Some((15, 27, -16))
        );
        assert_eq!(rip_operand("rax, qword ptr [rax + 8]"), None);
    }
}

//! DWARF for objects: a `.debug_line` program mapping every Tern function's
//! machine code to `file:line:column`, and `.debug_info` with one compile
//! unit holding a subprogram per function (name, address range, declaring
//! line), so `addr2line`, gdb (`break prog.tern:7`, `bt`), valgrind and perf
//! name Tern lines. Written with gimli's writer; addresses are relocations
//! against the functions' symbols and section offsets relocations against
//! the sections, since the linker places and concatenates them.

use std::collections::HashMap;

use cranelift_codegen::gimli::write::{
    Address, AttributeValue, DwarfUnit, EndianVec, LineProgram, LineString, Range, RangeList,
    Sections, Writer,
};
use cranelift_codegen::gimli::{self, Encoding, Format, LineEncoding, RunTimeEndian, SectionId};
use cranelift_object::ObjectProduct;
use cranelift_object::object::write::{Relocation, SymbolId};
use cranelift_object::object::{RelocationEncoding, RelocationFlags, RelocationKind, SectionKind};
use tern_compiler::tir::{FuncId, Program};

use super::DebugInfo;
use crate::CodegenError;

/// DWARF has no language code for Tern; C's tells debuggers to expect
/// C-like names and line-based stepping, which is what Tern code offers.
const LANGUAGE: gimli::DwLang = gimli::DW_LANG_C99;

/// Where a relocation points.
#[derive(Clone, Copy, Debug)]
enum Target {
    /// The function `DebugInfo::funcs[i]`.
    Function(usize),
    /// The start of a DWARF section.
    Section(SectionId),
}

#[derive(Clone, Debug)]
struct Reloc {
    offset: usize,
    size: u8,
    target: Target,
    addend: i64,
}

/// A section's bytes and the relocations in them.
#[derive(Clone)]
struct WriterRelocate {
    writer: EndianVec<RunTimeEndian>,
    relocs: Vec<Reloc>,
}

impl Writer for WriterRelocate {
    type Endian = RunTimeEndian;

    fn endian(&self) -> RunTimeEndian {
        self.writer.endian()
    }
    fn len(&self) -> usize {
        self.writer.len()
    }
    fn write(&mut self, bytes: &[u8]) -> gimli::write::Result<()> {
        self.writer.write(bytes)
    }
    fn write_at(&mut self, offset: usize, bytes: &[u8]) -> gimli::write::Result<()> {
        self.writer.write_at(offset, bytes)
    }
    fn write_address(&mut self, address: Address, size: u8) -> gimli::write::Result<()> {
        match address {
            Address::Constant(value) => self.write_udata(value, size),
            Address::Symbol { symbol, addend } => {
                self.relocs.push(Reloc {
                    offset: self.len(),
                    size,
                    target: Target::Function(symbol),
                    addend,
                });
                self.write_udata(0, size)
            }
        }
    }
    fn write_offset(
        &mut self,
        value: usize,
        section: SectionId,
        size: u8,
    ) -> gimli::write::Result<()> {
        let offset = self.len();
        self.write_offset_at(offset, value, section, size)?;
        Ok(())
    }
    fn write_offset_at(
        &mut self,
        offset: usize,
        value: usize,
        section: SectionId,
        size: u8,
    ) -> gimli::write::Result<()> {
        self.relocs.push(Reloc {
            offset,
            size,
            target: Target::Section(section),
            addend: value as i64,
        });
        if offset == self.len() {
            self.write_udata(0, size)
        } else {
            self.write_udata_at(offset, 0, size)
        }
    }
}

/// The line program's id of file `file` (added on first use).
fn file_id(
    dwarf: &mut DwarfUnit,
    ids: &mut HashMap<u32, gimli::write::FileId>,
    program: &Program,
    file: u32,
) -> gimli::write::FileId {
    *ids.entry(file).or_insert_with(|| {
        let name = program
            .files
            .get(file as usize)
            .cloned()
            .unwrap_or_default();
        let dir = dwarf.unit.line_program.default_directory();
        dwarf
            .unit
            .line_program
            .add_file(LineString::String(name.into_bytes()), dir, None)
    })
}

/// Adds the DWARF sections describing `info`'s functions to `product`.
/// `comp_dir` is the directory relative file names are resolved against.
pub fn write(
    product: &mut ObjectProduct,
    program: &Program,
    info: &DebugInfo,
    comp_dir: &str,
) -> Result<(), CodegenError> {
    let encoding = Encoding {
        format: Format::Dwarf32,
        version: 4,
        address_size: 8,
    };
    let main_file = program
        .files
        .get(program.function(program.main).loc.file as usize)
        .cloned()
        .unwrap_or_default();
    let mut dwarf = DwarfUnit::new(encoding);
    dwarf.unit.line_program = LineProgram::new(
        encoding,
        LineEncoding::default(),
        LineString::String(comp_dir.as_bytes().to_vec()),
        None,
        LineString::String(main_file.as_bytes().to_vec()),
        None,
    );
    let mut files = HashMap::new();
    let mut ranges = Vec::new();
    let mut subprograms = Vec::new();
    for (i, f) in info.funcs.iter().enumerate() {
        let start = Address::Symbol {
            symbol: i,
            addend: 0,
        };
        ranges.push(Range::StartLength {
            begin: start,
            length: u64::from(f.size),
        });
        let func = program.function(FuncId(f.index));
        let decl_file = file_id(&mut dwarf, &mut files, program, func.loc.file);
        dwarf.unit.line_program.begin_sequence(Some(start));
        // The prologue belongs to the function's declaration line.
        let prologue = (f.rows.first().is_none_or(|&(at, _)| at > 0)).then_some((0, func.loc));
        for &(offset, loc) in prologue.iter().chain(&f.rows) {
            let file = file_id(&mut dwarf, &mut files, program, loc.file);
            let row = dwarf.unit.line_program.row();
            row.address_offset = u64::from(offset);
            row.file = file;
            row.line = u64::from(loc.line);
            row.column = u64::from(loc.col);
            dwarf.unit.line_program.generate_row();
        }
        dwarf.unit.line_program.end_sequence(u64::from(f.size));
        subprograms.push((func.name.clone(), start, f.size, decl_file, func.loc.line));
    }

    let root = dwarf.unit.root();
    let ranges = dwarf.unit.ranges.add(RangeList(ranges));
    let unit = dwarf.unit.get_mut(root);
    unit.set(
        gimli::DW_AT_producer,
        AttributeValue::String(format!("tern {}", env!("CARGO_PKG_VERSION")).into_bytes()),
    );
    unit.set(gimli::DW_AT_language, AttributeValue::Language(LANGUAGE));
    unit.set(
        gimli::DW_AT_name,
        AttributeValue::String(main_file.into_bytes()),
    );
    unit.set(
        gimli::DW_AT_comp_dir,
        AttributeValue::String(comp_dir.as_bytes().to_vec()),
    );
    unit.set(
        gimli::DW_AT_low_pc,
        AttributeValue::Address(Address::Constant(0)),
    );
    unit.set(gimli::DW_AT_ranges, AttributeValue::RangeListRef(ranges));
    for (name, start, size, file, line) in subprograms {
        let id = dwarf.unit.add(root, gimli::DW_TAG_subprogram);
        let die = dwarf.unit.get_mut(id);
        die.set(gimli::DW_AT_name, AttributeValue::String(name.into_bytes()));
        die.set(gimli::DW_AT_low_pc, AttributeValue::Address(start));
        die.set(gimli::DW_AT_high_pc, AttributeValue::Udata(u64::from(size)));
        die.set(
            gimli::DW_AT_decl_file,
            AttributeValue::FileIndex(Some(file)),
        );
        die.set(
            gimli::DW_AT_decl_line,
            AttributeValue::Udata(u64::from(line)),
        );
        die.set(gimli::DW_AT_external, AttributeValue::Flag(true));
    }

    let mut sections = Sections::new(WriterRelocate {
        writer: EndianVec::new(RunTimeEndian::Little),
        relocs: Vec::new(),
    });
    dwarf
        .write(&mut sections)
        .map_err(|e| CodegenError::cranelift("DWARF", e))?;

    // Every non-empty section first (relocations may point at any), then
    // the relocations.
    let object = &mut product.object;
    let mut section_ids = HashMap::new();
    let mut contents = Vec::new();
    sections
        .for_each(|id, w| {
            if !w.writer.slice().is_empty() {
                let section = object.add_section(
                    Vec::new(),
                    id.name().as_bytes().to_vec(),
                    SectionKind::Debug,
                );
                object.set_section_data(section, w.writer.slice().to_vec(), 1);
                section_ids.insert(id, section);
                contents.push((section, w.relocs.clone()));
            }
            Ok::<(), gimli::write::Error>(())
        })
        .map_err(|e| CodegenError::cranelift("DWARF", e))?;
    for (section, relocs) in contents {
        for r in relocs {
            let symbol: SymbolId = match r.target {
                Target::Function(i) => product.functions[info.funcs[i].id]
                    .map(|(s, _)| s)
                    .ok_or_else(|| CodegenError::Unsupported("DWARF: undefined function".into()))?,
                Target::Section(id) => match section_ids.get(&id) {
                    Some(&s) => product.object.section_symbol(s),
                    None => continue,
                },
            };
            product
                .object
                .add_relocation(
                    section,
                    Relocation {
                        offset: r.offset as u64,
                        symbol,
                        addend: r.addend,
                        flags: RelocationFlags::Generic {
                            kind: RelocationKind::Absolute,
                            encoding: RelocationEncoding::Generic,
                            size: r.size * 8,
                        },
                    },
                )
                .map_err(|e| CodegenError::cranelift("DWARF relocation", e))?;
        }
    }
    Ok(())
}

//! How the REPL shows values and types: scalars as `print` shows them,
//! arrays and structs by their contents, slices by type and length (their
//! elements live in memory the REPL cannot vouch for: a slice may outlive
//! the span it views).

use tern_compiler::tir::{Program, Type};

/// Elements of an array shown before the rest is summarised.
const MAX_ELEMENTS: u64 = 32;

/// The value of type `ty` stored at `ptr`.
///
/// # Safety
/// `ptr` points to a readable, initialised value of `ty` laid out as
/// `p.layout(ty)` says.
pub unsafe fn format_value(p: &Program, ty: &Type, ptr: *const u8) -> String {
    // SAFETY: every read is within the value the caller vouches for.
    unsafe {
        match ty {
            Type::I64 => ptr.cast::<i64>().read_unaligned().to_string(),
            Type::I32 => ptr.cast::<i32>().read_unaligned().to_string(),
            Type::U8 => ptr.read().to_string(),
            Type::U64 => ptr.cast::<u64>().read_unaligned().to_string(),
            Type::Bool => (ptr.read() != 0).to_string(),
            Type::Unit | Type::Str => "()".into(),
            Type::Slice(_) | Type::Reusable(_) => {
                let len = ptr.add(8).cast::<i64>().read_unaligned();
                format!("<{} len {len}>", p.type_name(ty).unwrap_or_default())
            }
            Type::Array(e, n) => {
                let size = p.layout(e).size as usize;
                let shown = (*n).min(MAX_ELEMENTS) as usize;
                let mut parts: Vec<String> = (0..shown)
                    .map(|i| format_value(p, e, ptr.add(i * size)))
                    .collect();
                if *n > MAX_ELEMENTS {
                    parts.push(format!("... ({n} elements)"));
                }
                format!("[{}]", parts.join(", "))
            }
            Type::Struct(id) => {
                let def = p.struct_def(*id);
                let fields: Vec<String> = def
                    .fields
                    .iter()
                    .map(|f| {
                        let v = format_value(p, &f.ty, ptr.add(f.offset as usize));
                        format!("{}: {v}", f.name)
                    })
                    .collect();
                if fields.is_empty() {
                    format!("{} {{}}", def.name)
                } else {
                    format!("{} {{ {} }}", def.name, fields.join(", "))
                }
            }
        }
    }
}

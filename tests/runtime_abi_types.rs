//! The backend's table of runtime functions (`tern_codegen::runtime_fns`)
//! against the runtime's `extern "C"` definitions, by type: a parameter or
//! result declared with another type in one of them would be a silent ABI
//! mismatch (the backend never imports the runtime crate, so the compiler
//! cannot see it). The definitions are read from `runtime/src/abi/*.rs`.

use std::collections::BTreeMap;
use std::path::Path;

use tern_codegen::runtime_fns::{AbiTy, RUNTIME_FNS};

/// A Rust parameter or result type at the C boundary, as the table spells it.
fn abi_type(rust: &str) -> Result<AbiTy, String> {
    let t = rust.trim();
    Ok(match t {
        // A 64-bit integer is one register whatever its signedness.
        "i64" | "u64" => AbiTy::I64,
        "i32" => AbiTy::I32,
        "u8" => AbiTy::U8,
        _ if t.starts_with("*const") || t.starts_with("*mut") || t.starts_with("extern") => {
            AbiTy::Ptr
        }
        _ => return Err(format!("no ABI type for `{t}`")),
    })
}

/// `(params, result)` of every `#[no_mangle]` `extern "C" fn tern_*` in the
/// runtime's ABI sources; a diverging (`-> !`) or unit function has no
/// result.
fn definitions() -> BTreeMap<String, (Vec<AbiTy>, Option<AbiTy>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("runtime/src/abi");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("abi dir").flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("readable");
        let mut rest = text.as_str();
        while let Some(at) = rest.find("extern \"C\" fn tern_") {
            let sig = &rest[at + "extern \"C\" fn ".len()..];
            let open = sig.find('(').expect("parameter list");
            let name = sig[..open].to_string();
            // The parameter list ends at the `)` that closes it.
            let mut depth = 0;
            let close = sig
                .char_indices()
                .skip(open)
                .find(|&(_, c)| {
                    depth += match c {
                        '(' => 1,
                        ')' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .expect("closed")
                .0;
            let params: Vec<AbiTy> = sig[open + 1..close]
                .split(',')
                .filter(|p| !p.trim().is_empty())
                .map(|p| {
                    let ty = p.split_once(':').expect("name: type").1;
                    abi_type(ty).unwrap_or_else(|e| panic!("{name}: {e}"))
                })
                .collect();
            let after = sig[close + 1..].trim_start();
            let ret = match after.strip_prefix("->") {
                Some(r) => {
                    let r = r.split('{').next().expect("body").trim();
                    if r == "!" {
                        None
                    } else {
                        Some(abi_type(r).unwrap_or_else(|e| panic!("{name}: {e}")))
                    }
                }
                None => None,
            };
            out.insert(name, (params, ret));
            rest = &sig[close..];
        }
    }
    out
}

#[test]
fn the_backend_calls_each_runtime_function_with_its_own_types() {
    let defs = definitions();
    assert!(
        defs.len() >= RUNTIME_FNS.len(),
        "read {} definitions",
        defs.len()
    );
    for f in RUNTIME_FNS {
        let Some((params, ret)) = defs.get(f.name) else {
            panic!(
                "`{}` is in the backend's table but not defined by the runtime",
                f.name
            );
        };
        assert_eq!(params.as_slice(), f.params, "parameters of `{}`", f.name);
        assert_eq!(*ret, f.ret, "result of `{}`", f.name);
    }
}

#[test]
fn the_reader_understands_the_signatures_it_must() {
    assert_eq!(abi_type("*const c_char"), Ok(AbiTy::Ptr));
    assert_eq!(abi_type(" i64 "), Ok(AbiTy::I64));
    assert!(abi_type("f64").is_err());
    let defs = definitions();
    assert_eq!(
        defs["tern_reusable_resize"],
        (
            vec![AbiTy::Ptr, AbiTy::I64, AbiTy::I64, AbiTy::Ptr],
            Some(AbiTy::Ptr)
        )
    );
    assert_eq!(defs["tern_div_zero"], (vec![AbiTy::Ptr], None));
}

/// docs/runtime-abi.md documents exactly the functions of the ABI's table:
/// every `tern_*` name in the first column of its tables is an entry, and
/// every entry is there.
#[test]
fn the_abi_page_lists_exactly_the_table() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/runtime-abi.md"))
            .expect("docs/runtime-abi.md");
    let mut documented: Vec<String> = page
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split('|').next())
        .flat_map(|cell| {
            cell.split('`')
                .map(|w| w.split('(').next().unwrap_or("").trim().to_string())
                .filter(|w| w.starts_with("tern_"))
                .collect::<Vec<_>>()
        })
        .collect();
    documented.sort();
    documented.dedup();
    let mut table: Vec<String> = RUNTIME_FNS.iter().map(|f| f.name.to_string()).collect();
    table.sort();
    assert_eq!(documented, table);
}

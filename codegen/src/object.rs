//! Ahead-of-time compilation to a relocatable, position-independent object
//! (`tern build`). The object defines the C `main`, which hands the Tern
//! entry to the runtime's `tern_rt_main`.

use cranelift_codegen::ir::{AbiParam, InstBuilder, Signature, UserFuncName, types};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{Linkage, Module, default_libcall_names};
use cranelift_object::{ObjectBuilder, ObjectModule};
use tern_compiler::tir::Program;

use crate::isa::host_isa;
use crate::lower::{callee_legend, function_symbol, translate};
use crate::runtime_fns::Rt;
use crate::{CodegenError, Listing, Options};

/// The object file and any listings asked for.
pub struct ObjectOutput {
    /// The object file's bytes (ELF/Mach-O/COFF of the host).
    pub bytes: Vec<u8>,
    pub listing: Listing,
}

/// Compiles `program` to an object file defining `main`.
pub fn compile_object(program: &Program, opts: &Options) -> Result<ObjectOutput, CodegenError> {
    let isa = host_isa(opts, true)?;
    let builder = ObjectBuilder::new(isa, "tern_program", default_libcall_names())
        .map_err(|e| CodegenError::cranelift("object builder", e))?;
    let mut module = ObjectModule::new(builder);
    let mut tr = translate(&mut module, program, opts)?;

    // int main(int argc, char **argv) {
    //     tern_rt_args(argc, argv);
    //     tern_rt_debug_table(tern.debug_table);
    //     return tern_rt_main(tern.entry);
    // }
    let cc = module.isa().default_call_conv();
    let mut sig = Signature::new(cc);
    sig.params.push(AbiParam::new(types::I32));
    sig.params.push(AbiParam::new(types::I64));
    sig.returns.push(AbiParam::new(types::I32));
    let main_id = module
        .declare_function("main", Linkage::Export, &sig)
        .map_err(|e| CodegenError::cranelift("main", e))?;
    let rt_main = tr.runtime_func(&mut module, Rt::RtMain)?;
    let rt_table = tr.runtime_func(&mut module, Rt::DebugTable)?;
    let rt_args = tr.runtime_func(&mut module, Rt::RtArgs)?;
    let table = tr.debug_table.expect("translate defines the table");
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let block = b.create_block();
        b.append_block_params_for_function_params(block);
        b.switch_to_block(block);
        let (argc, argv) = (b.block_params(block)[0], b.block_params(block)[1]);
        let rt_args = module.declare_func_in_func(rt_args, b.func);
        b.ins().call(rt_args, &[argc, argv]);
        let table = module.declare_data_in_func(table, b.func);
        let table = b.ins().symbol_value(types::I64, table);
        let rt_table = module.declare_func_in_func(rt_table, b.func);
        b.ins().call(rt_table, &[table]);
        let entry = module.declare_func_in_func(tr.entry, b.func);
        let entry_addr = b.ins().func_addr(types::I64, entry);
        let rt_main = module.declare_func_in_func(rt_main, b.func);
        let call = b.ins().call(rt_main, &[entry_addr]);
        let status = b.inst_results(call)[0];
        b.ins().return_(&[status]);
        b.seal_all_blocks();
        b.finalize(module.isa().frontend_config());
    }
    if opts.emit_clif {
        ctx.func.name = UserFuncName::testcase("main");
        tr.listing
            .clif
            .push_str(&format!("; fn <C main>\n{}\n", ctx.func.display()));
        ctx.func.name = UserFuncName::default();
        tr.listing.clif.insert_str(0, &callee_legend(&module));
    }
    module
        .define_function(main_id, &mut ctx)
        .map_err(|e| CodegenError::cranelift("main", e))?;
    let mut product = module.finish();
    crate::debug::dwarf::write(&mut product, program, &tr.debug, &opts.comp_dir)?;
    let bytes = product
        .emit()
        .map_err(|e| CodegenError::cranelift("object emission", e))?;
    if opts.emit_asm {
        let notes = tr
            .debug
            .named(program)
            .map(|(name, f)| {
                let rows = f.rows.iter().map(|&(at, loc)| {
                    let file = program
                        .files
                        .get(loc.file as usize)
                        .cloned()
                        .unwrap_or_default();
                    (at, (file, loc.line, loc.col))
                });
                (function_symbol(name), rows.collect())
            })
            .collect();
        tr.listing.asm = crate::asm::print(&bytes, &notes)?;
    }
    Ok(ObjectOutput {
        bytes,
        listing: tr.listing,
    })
}

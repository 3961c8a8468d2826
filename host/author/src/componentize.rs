//! A core WebAssembly module made a component, as `wasm-tools strip` and
//! `wasm-tools component new --adapt` would, without either tool.
//!
//! Rust built for `wasm32-wasip1` and C built for `wasm32-wasi` are core
//! modules that carry their WIT world in a `component-type` custom section
//! (wit-bindgen's generators put it there) and import WASI preview1. The preview1 adapter
//! of the wasmtime this host runs (reactor flavour: a provider has no `main`)
//! turns those imports into WASI 0.2; debug sections are dropped first, since
//! nobody reads them inside a sandbox and they can be most of the file.

use anyhow::Context as _;
use wasi_preview1_component_adapter_provider::{
    WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME, WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
};
use wasmparser::{Parser, Payload};

/// Whether `bytes` is a core module (not a component, not something else).
pub(crate) fn is_core_module(bytes: &[u8]) -> bool {
    matches!(
        Parser::new(0).parse(bytes, true),
        Ok(wasmparser::Chunk::Parsed {
            payload: Payload::Version {
                encoding: wasmparser::Encoding::Module,
                ..
            },
            ..
        })
    )
}

/// The component made from the core module `core`.
pub(crate) fn componentize(core: &[u8]) -> anyhow::Result<Vec<u8>> {
    let stripped = strip_debug(core).context("the core module is not valid WebAssembly")?;
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(&stripped)
        .context("the core module carries no WIT world (was it built with wit-bindgen?)")?
        .adapter(
            WASI_SNAPSHOT_PREVIEW1_ADAPTER_NAME,
            WASI_SNAPSHOT_PREVIEW1_REACTOR_ADAPTER,
        )
        .context("the WASI preview1 adapter does not fit this module")?
        .encode()
        .context("cannot make a component of the core module")
}

/// `core` without its debug information and name section: every other
/// section (the `component-type` ones wit-component reads among them) is
/// kept byte for byte.
fn strip_debug(core: &[u8]) -> anyhow::Result<Vec<u8>> {
    let mut module = wasm_encoder::Module::new();
    for payload in Parser::new(0).parse_all(core) {
        let payload = payload?;
        if let Payload::CustomSection(custom) = &payload {
            let name = custom.name();
            if name.starts_with(".debug") || name == "name" || name == "sourceMappingURL" {
                continue;
            }
        }
        if let Some((id, range)) = payload.as_section() {
            module.section(&wasm_encoder::RawSection {
                id,
                data: &core[range],
            });
        }
    }
    Ok(module.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strip_keeps_code_and_drops_debug_sections() {
        let mut module = wasm_encoder::Module::new();
        module.section(&wasm_encoder::CustomSection {
            name: ".debug_info".into(),
            data: vec![1; 1000].into(),
        });
        module.section(&wasm_encoder::CustomSection {
            name: "component-type:x".into(),
            data: vec![2; 10].into(),
        });
        let bytes = module.finish();
        let stripped = strip_debug(&bytes).unwrap();
        let names: Vec<String> = Parser::new(0)
            .parse_all(&stripped)
            .filter_map(|p| match p.unwrap() {
                Payload::CustomSection(c) => Some(c.name().to_owned()),
                _ => None,
            })
            .collect();
        assert_eq!(names, ["component-type:x"]);
        assert!(is_core_module(&stripped));
    }

    #[test]
    fn bytes_that_are_not_a_module_get_a_clear_error() {
        let err = format!("{:#}", componentize(b"\0asm\x01\0\0\0garbage").unwrap_err());
        assert!(err.contains("not valid WebAssembly"), "{err}");
        assert!(!is_core_module(b"not wasm"));
        // A module with no world becomes a component that exports nothing,
        // which `build` then refuses (runtime::inspect_component).
        let empty = componentize(&wasm_encoder::Module::new().finish()).unwrap();
        assert!(!is_core_module(&empty));
    }
}

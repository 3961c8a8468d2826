//! TypeScript declarations of the provider API, generated from our WIT.
//!
//! `guest-sdk/js/azd-provisioning.d.ts` (shipped as `lib/azd-provisioning.d.ts`
//! by `new js` and `new ts`) is written by this generator; the test below fails
//! when the file no longer matches the WIT, and `AZD_WASM_HOST_REGENERATE=1`
//! rewrites it. The JavaScript helpers' JSDoc types import it, so a TypeScript
//! provider is checked against the WIT itself.
//!
//! The mapping is the one ComponentizeJS (jco's bindings) uses at run time:
//! records are objects with camelCase keys, enums are their case names,
//! variants `{ tag, val }`, `option<T>` is `T | undefined`, `list<u8>` a
//! `Uint8Array`, 64-bit integers `bigint`, and a function returning
//! `result<T, E>` returns `T` or throws `E`. The WIT record `error` is named
//! `ProviderError` here, so that it does not hide JavaScript's own `Error`.

use std::fmt::Write as _;

use wit_parser::{Function, Resolve, Type, TypeDefKind, TypeId};

/// The interfaces whose types are declared, in this order.
const INTERFACES: [&str; 5] = [
    "azd:provisioning/types@0.1.0",
    "azd:provisioning/log@0.1.0",
    "azd:provisioning/prompt@0.2.0",
    "azd:credentials/credentials@0.1.0",
    "azd:provisioning/provider@0.1.0",
];

/// The exported interface, declared as `Provider`.
const PROVIDER: &str = "azd:provisioning/provider@0.1.0";

/// `kebab-case` as `UpperCamelCase` (`lower` false) or `lowerCamelCase`.
fn camel(name: &str, lower: bool) -> String {
    let mut out = String::new();
    for (i, part) in name.split('-').enumerate() {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            if i == 0 && lower {
                out.push(first);
            } else {
                out.extend(first.to_uppercase());
            }
            out.extend(chars);
        }
    }
    out
}

/// A named type's TypeScript name.
fn type_name(name: &str) -> String {
    if name == "error" {
        "ProviderError".to_owned()
    } else {
        camel(name, false)
    }
}

fn docs(out: &mut String, indent: &str, docs: Option<&str>) {
    let Some(text) = docs.map(str::trim).filter(|t| !t.is_empty()) else {
        return;
    };
    if !text.contains('\n') {
        let _ = writeln!(out, "{indent}/** {} */", text.replace("*/", "*\\/"));
        return;
    }
    let _ = writeln!(out, "{indent}/**");
    for line in text.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            let _ = writeln!(out, "{indent} *");
        } else {
            let _ = writeln!(out, "{indent} * {}", line.replace("*/", "*\\/"));
        }
    }
    let _ = writeln!(out, "{indent} */");
}

/// The TypeScript of a WIT type used in a position (a field, a parameter).
fn ts(resolve: &Resolve, ty: &Type) -> String {
    match ty {
        Type::Bool => "boolean".into(),
        Type::U8 | Type::U16 | Type::U32 | Type::S8 | Type::S16 | Type::S32 => "number".into(),
        Type::F32 | Type::F64 => "number".into(),
        Type::U64 | Type::S64 => "bigint".into(),
        Type::Char | Type::String => "string".into(),
        Type::ErrorContext => "unknown".into(),
        Type::Id(id) => match &resolve.types[*id].name {
            Some(name) => type_name(name),
            None => anonymous(resolve, *id),
        },
    }
}

/// An anonymous type (`list<…>`, `option<…>`, `tuple<…>`, `result<…>`).
fn anonymous(resolve: &Resolve, id: TypeId) -> String {
    match &resolve.types[id].kind {
        TypeDefKind::List(Type::U8) => "Uint8Array".into(),
        TypeDefKind::List(inner) | TypeDefKind::FixedLengthList(inner, _) => {
            let inner = ts(resolve, inner);
            if inner.contains(" | ") {
                format!("({inner})[]")
            } else {
                format!("{inner}[]")
            }
        }
        TypeDefKind::Option(inner) => format!("{} | undefined", ts(resolve, inner)),
        TypeDefKind::Tuple(t) => {
            let items: Vec<String> = t.types.iter().map(|t| ts(resolve, t)).collect();
            format!("[{}]", items.join(", "))
        }
        TypeDefKind::Result(r) => {
            let side = |t: &Option<Type>| t.as_ref().map_or("undefined".into(), |t| ts(resolve, t));
            format!(
                "{{ tag: \"ok\", val: {} }} | {{ tag: \"err\", val: {} }}",
                side(&r.ok),
                side(&r.err)
            )
        }
        TypeDefKind::Map(k, v) => format!("[{}, {}][]", ts(resolve, k), ts(resolve, v)),
        TypeDefKind::Type(t) => ts(resolve, t),
        _ => "unknown".into(),
    }
}

/// One named type's declaration.
fn declare(out: &mut String, resolve: &Resolve, id: TypeId) {
    let def = &resolve.types[id];
    let Some(name) = &def.name else { return };
    // A `use` of another interface's type is declared where it is defined.
    if let TypeDefKind::Type(Type::Id(_)) = def.kind {
        return;
    }
    docs(out, "", def.docs.contents.as_deref());
    let name = type_name(name);
    match &def.kind {
        TypeDefKind::Record(record) => {
            let _ = writeln!(out, "export interface {name} {{");
            for field in &record.fields {
                docs(out, "  ", field.docs.contents.as_deref());
                let _ = writeln!(
                    out,
                    "  {}: {};",
                    camel(&field.name, true),
                    ts(resolve, &field.ty)
                );
            }
            let _ = writeln!(out, "}}");
        }
        TypeDefKind::Enum(e) => {
            let cases: Vec<String> = e.cases.iter().map(|c| format!("\"{}\"", c.name)).collect();
            let _ = writeln!(out, "export type {name} = {};", cases.join(" | "));
        }
        TypeDefKind::Variant(v) => {
            let cases: Vec<String> = v
                .cases
                .iter()
                .map(|c| match &c.ty {
                    Some(t) => format!("{{ tag: \"{}\", val: {} }}", c.name, ts(resolve, t)),
                    None => format!("{{ tag: \"{}\" }}", c.name),
                })
                .collect();
            let _ = writeln!(out, "export type {name} =\n  | {};", cases.join("\n  | "));
        }
        _ => {
            let _ = writeln!(out, "export type {name} = {};", anonymous(resolve, id));
        }
    }
    out.push('\n');
}

/// One exported function as a `Provider` method: its result, or a promise of
/// it (ComponentizeJS awaits an async method); an error result is thrown.
fn method(out: &mut String, resolve: &Resolve, function: &Function) {
    docs(out, "  ", function.docs.contents.as_deref());
    let params: Vec<String> = function
        .params
        .iter()
        .map(|p| format!("{}: {}", camel(&p.name, true), ts(resolve, &p.ty)))
        .collect();
    let value = match function.result {
        Some(Type::Id(id)) => match &resolve.types[id].kind {
            TypeDefKind::Result(r) if resolve.types[id].name.is_none() => {
                r.ok.as_ref().map_or("void".into(), |t| ts(resolve, t))
            }
            _ => ts(resolve, &Type::Id(id)),
        },
        Some(t) => ts(resolve, &t),
        None => "void".into(),
    };
    let _ = writeln!(
        out,
        "  {}({}): Answer<{value}>;",
        camel(&function.name, true),
        params.join(", ")
    );
}

/// The declarations of `resolve`'s provider API.
pub(crate) fn declarations(resolve: &Resolve) -> anyhow::Result<String> {
    let mut out = String::from(
        "// Generated by azd-wasm-host from the WIT package (host/author/src/typescript_tests.rs). Do not edit.\n\
         //\n\
         // The provider API's types as ComponentizeJS passes them: records are objects with\n\
         // camelCase keys, enums their case names, variants { tag, val }, option<T> is\n\
         // T | undefined; a method returns its value (or a promise of it) or throws a\n\
         // ProviderError (WIT's `error`).\n\n\
         /** A method's answer: its value, or (ComponentizeJS) a promise of it. */\n\
         export type Answer<V> = V | Promise<V>;\n\n",
    );
    for wanted in INTERFACES {
        let (_, interface) = resolve
            .interfaces
            .iter()
            .find(|(id, _)| resolve.id_of(*id).as_deref() == Some(wanted))
            .ok_or_else(|| anyhow::anyhow!("the WIT has no interface {wanted}"))?;
        let _ = writeln!(out, "// --- {wanted}\n");
        for id in interface.types.values() {
            declare(&mut out, resolve, *id);
        }
        if wanted == PROVIDER {
            docs(&mut out, "", interface.docs.contents.as_deref());
            out.push_str("export interface Provider {\n");
            for function in interface.functions.values() {
                method(&mut out, resolve, function);
            }
            out.push_str("}\n");
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_componentize_js() {
        assert_eq!(camel("provisioning-options", false), "ProvisioningOptions");
        assert_eq!(camel("env-var-mapping", true), "envVarMapping");
        assert_eq!(type_name("error"), "ProviderError");
    }

    /// `guest-sdk/js/azd-provisioning.d.ts` is what the generator writes for
    /// the repository's WIT today.
    #[test]
    fn the_typescript_declarations_match_the_wit() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut resolve = Resolve::default();
        resolve.push_dir(root.join("wit")).unwrap();
        let text = declarations(&resolve).unwrap();
        assert!(
            text.contains("export interface ProvisioningOptions {"),
            "{text}"
        );
        assert!(
            text.contains("  plannedOutputs(): Answer<PlannedOutput[]>;"),
            "{text}"
        );
        assert!(text.contains("skippedReason: SkippedReason;"), "{text}");
        let path = root.join("guest-sdk/js/azd-provisioning.d.ts");
        if std::env::var_os("AZD_WASM_HOST_REGENERATE").is_some_and(|v| v == "1") {
            std::fs::write(&path, &text).unwrap();
        }
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == text,
            "guest-sdk/js/azd-provisioning.d.ts is stale: run AZD_WASM_HOST_REGENERATE=1 cargo test -p azd-wasm-host-author the_typescript_declarations"
        );
    }
}

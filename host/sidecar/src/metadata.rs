//! `<binary> metadata`: azd's metadata for the extension, on stdout.
//!
//! azd 1.31 runs it at `azd extension install` for an extension with the
//! `metadata` capability (within 10 s; exit 0, the JSON document on stdout),
//! checks that the document's `id` is the extension's, and caches it as
//! `metadata.json` in the extension's folder. `package` writes the document
//! beside the binary ([`AZD_METADATA_FILE`]: the provider's config schema and
//! the environment variables its policy grants); this prints it, once it has
//! checked that it is such a document.

use std::io::Write as _;
use std::path::Path;

use anyhow::{Context as _, bail};
use azd_wasm_host_manifest::package::AZD_METADATA_FILE;

/// The largest document printed (a config schema is at most 1 MiB).
const MAX_METADATA_BYTES: u64 = 4 << 20;

/// Prints the metadata beside this executable on stdout.
pub fn print_metadata() -> anyhow::Result<()> {
    let exe = std::env::current_exe().context("cannot locate this executable")?;
    let doc = read_metadata(
        &exe.parent()
            .unwrap_or(Path::new("."))
            .join(AZD_METADATA_FILE),
    )?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(doc.as_bytes())?;
    stdout.write_all(b"\n")?;
    stdout.flush()?;
    Ok(())
}

/// The metadata document at `path`, checked to be one azd reads (a JSON
/// object with `schemaVersion` and `id`), as compact JSON.
fn read_metadata(path: &Path) -> anyhow::Result<String> {
    let repackage = "package the provider again (`azd-wasm-host package` writes it)";
    let size = std::fs::metadata(path)
        .with_context(|| format!("no extension metadata at {}: {repackage}", path.display()))?
        .len();
    if size > MAX_METADATA_BYTES {
        bail!(
            "{} holds {size} bytes, more than the {MAX_METADATA_BYTES} extension metadata may have",
            path.display()
        );
    }
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    let doc: serde_json::Value = serde_json::from_slice(&text)
        .with_context(|| format!("{} is not JSON: {repackage}", path.display()))?;
    let is_string = |key: &str| doc.get(key).is_some_and(serde_json::Value::is_string);
    if !(is_string("schemaVersion") && is_string("id")) {
        bail!(
            "{} is not azd's extension metadata (no `schemaVersion` and `id`): {repackage}",
            path.display()
        );
    }
    Ok(doc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_azd_metadata_is_printed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(AZD_METADATA_FILE);
        let e = format!("{:#}", read_metadata(&path).unwrap_err());
        assert!(
            e.contains("no extension metadata") && e.contains("azd-wasm-host package"),
            "{e}"
        );
        std::fs::write(
            &path,
            "{ \"schemaVersion\": \"1.0\",\n \"id\": \"local.x\", \"commands\": [] }",
        )
        .unwrap();
        assert_eq!(
            read_metadata(&path).unwrap(),
            r#"{"commands":[],"id":"local.x","schemaVersion":"1.0"}"#
        );
        for bad in ["{ \"id\": \"local.x\" }", "[]", "not json"] {
            std::fs::write(&path, bad).unwrap();
            let e = format!("{:#}", read_metadata(&path).unwrap_err());
            assert!(
                e.contains(AZD_METADATA_FILE) && e.contains("package"),
                "{bad}: {e}"
            );
        }
    }
}

//! What can be wrong with a provider manifest ([`ManifestError`]) and with the
//! config schema it names ([`ConfigSchemaError`]). Each message names the file
//! and, where one is at fault, the field; an I/O failure is kept as the source.

use std::path::PathBuf;

/// Why a provider manifest cannot be read or is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestError {
    /// The manifest file could not be read.
    #[error("cannot read provider manifest {}", path.display())]
    Read {
        /// The manifest.
        path: PathBuf,
        /// What reading it answered.
        source: std::io::Error,
    },
    /// Its text holds what no manifest may (a control or invisible character).
    #[error("provider manifest {}: {why}", path.display())]
    Text {
        /// The manifest.
        path: PathBuf,
        /// What was found, and where.
        why: String,
    },
    /// It is not TOML, or not a manifest's shape.
    #[error("invalid provider manifest {}: {why}", path.display())]
    Shape {
        /// The manifest.
        path: PathBuf,
        /// The TOML reader's words.
        why: String,
    },
    /// One of its fields is refused.
    #[error("provider manifest {}: `{field}` {why}", path.display())]
    Field {
        /// The manifest.
        path: PathBuf,
        /// The field, as the manifest spells it (`name`, `policy`, `[config] schema`).
        field: &'static str,
        /// Why.
        why: String,
    },
    /// The config schema it names is refused.
    #[error(transparent)]
    ConfigSchema(#[from] ConfigSchemaError),
    /// The provider name given on the command line is refused.
    #[error("the provider name given: {why}")]
    GivenName {
        /// Why.
        why: String,
    },
    /// A bare component's file name is not a provider name.
    #[error("the provider name of {}: {why}", component.display())]
    ComponentName {
        /// The component.
        component: PathBuf,
        /// Why.
        why: String,
    },
    /// A bare component's path has no file name to name the provider after.
    #[error("cannot derive a provider name from {}: pass --provider-name", component.display())]
    NoName {
        /// The component.
        component: PathBuf,
    },
}

/// Why the config schema a manifest names (`[config] schema`) is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigSchemaError {
    /// The file could not be read.
    #[error("{at}: cannot read it")]
    Read {
        /// The manifest and the schema it names.
        at: SchemaAt,
        /// What reading it answered.
        source: std::io::Error,
    },
    /// The file is larger than a config schema may be.
    #[error("{at}: {size} bytes, more than the {limit} a config schema may have")]
    TooLarge {
        /// The manifest and the schema it names.
        at: SchemaAt,
        /// Its size.
        size: u64,
        /// The most a config schema may have (`MAX_SCHEMA_BYTES`).
        limit: u64,
    },
    /// The file is not JSON.
    #[error("{at}: not JSON ({why})")]
    NotJson {
        /// The manifest and the schema it names.
        at: SchemaAt,
        /// The JSON reader's words.
        why: String,
    },
    /// The document is not a JSON Schema this host can use.
    #[error("{at}: not a valid JSON Schema: {why}")]
    NotSchema {
        /// The manifest and the schema it names.
        at: SchemaAt,
        /// The validator's words.
        why: String,
    },
}

/// A config schema, and the manifest that names it: what every [`ConfigSchemaError`] is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaAt {
    /// The manifest.
    pub manifest: PathBuf,
    /// The schema file (`[config] schema`), resolved against the manifest's folder.
    pub schema: PathBuf,
}

impl std::fmt::Display for SchemaAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "provider manifest {}: `[config] schema` {}",
            self.manifest.display(),
            self.schema.display()
        )
    }
}

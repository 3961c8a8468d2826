//! `keygen` and `trust`: the keys providers are signed with, the keys whose
//! providers this user runs, and the keys that may sign the list of the
//! author's tool's sidecars ([`azd_wasm_host_trust::TrustDir`]).

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use azd_wasm_host_trust::{KeyPair, PublicKey, TrustDir};

/// What a key is trusted for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Purpose {
    /// Providers it signs run here (`trusted-keys/`).
    #[value(alias = "provider")]
    Providers,
    /// It may sign the list of the author's tool's sidecars, which `package`
    /// ships (`tool-keys/`): for a tool built without a release key.
    Tool,
}

/// `trust`'s actions.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum TrustAction {
    /// Run the providers KEY signs (a `PUBLIC KEY` PEM file: a `.pub` from
    /// `keygen`, or a cosign.pub); with `--for tool`, let KEY sign the tool's
    /// sidecars instead.
    Add {
        /// The public key file.
        key: PathBuf,
        /// The name it is kept under (default: its id).
        #[arg(long)]
        name: Option<String>,
        /// What KEY is trusted for: `providers` (what it signs runs here) or
        /// `tool` (it may sign the list of sidecars the author's tool ships,
        /// when the tool was built without a release key); never both at once.
        #[arg(long = "for", value_enum, default_value_t = Purpose::Providers)]
        purpose: Purpose,
    },
    /// The trusted keys (for providers, and for the tool), and whether
    /// unsigned providers run.
    List,
    /// Stop trusting a key: its id (or the start of it) or its name.
    Remove {
        /// The key's id or name, as `trust list` shows them.
        key: String,
        /// What it is trusted for: `providers` or `tool`.
        #[arg(long = "for", value_enum, default_value_t = Purpose::Providers)]
        purpose: Purpose,
    },
}

/// `keygen [--out KEY]`: a new ECDSA P-256 signing key. Without `--out` it is
/// your default signing key (what `package` signs with), and its public half
/// is trusted on this machine.
pub(crate) fn keygen(out: Option<PathBuf>) -> anyhow::Result<()> {
    let trust = TrustDir::from_env()?;
    let key = KeyPair::generate()?;
    let path = out.clone().unwrap_or_else(|| trust.default_key());
    azd_wasm_host_trust::write_key(&path, &key)?;
    let public = path.with_extension("pub");
    println!("signing key: {} (keep it secret)", path.display());
    println!(
        "public key:  {} (id {})",
        public.display(),
        key.public().short_id()
    );
    if out.is_none() {
        let file = trust.trust(&key.public(), Some("signing"))?;
        println!("trusted on this machine: {}", file.display());
    }
    println!(
        "Those who install your providers trust it with: azd-wasm-host trust add {}",
        public.display()
    );
    Ok(())
}

/// `trust add|list|remove`.
pub(crate) fn trust(action: TrustAction) -> anyhow::Result<()> {
    let trust = TrustDir::from_env()?;
    match action {
        TrustAction::Add { key, name, purpose } => {
            trust_add(&trust, &key, name.as_deref(), purpose)
        }
        TrustAction::List => {
            trust_list(&trust);
            Ok(())
        }
        TrustAction::Remove { key, purpose } => trust_remove(&trust, &key, purpose),
    }
}

fn trust_add(
    trust: &TrustDir,
    key: &std::path::Path,
    name: Option<&str>,
    purpose: Purpose,
) -> anyhow::Result<()> {
    let text =
        std::fs::read_to_string(key).with_context(|| format!("cannot read {}", key.display()))?;
    let public = PublicKey::from_pem(&text)
        .with_context(|| format!("{} is not a public key", key.display()))?;
    match purpose {
        Purpose::Providers => {
            let file = trust.trust(&public, name)?;
            println!("trusted key {}: {}", public.short_id(), file.display());
        }
        Purpose::Tool => {
            let file = trust.trust_for_tool(&public, name)?;
            println!(
                "trusted key {} for the tool's sidecars: {}",
                public.short_id(),
                file.display()
            );
        }
    }
    Ok(())
}

fn trust_list(trust: &TrustDir) {
    let keys = trust.trusted_keys();
    println!("trust folder: {}", trust.root().display());
    if keys.is_empty() {
        println!("no trusted keys");
    }
    for (file, key) in keys {
        println!("{}  {}", key.short_id(), file.display());
    }
    let tool = trust.tool_keys();
    if !tool.is_empty() {
        println!("keys trusted for the tool's sidecars:");
    }
    for (file, key) in tool {
        println!("{}  {}", key.short_id(), file.display());
    }
    println!(
        "unsigned providers: {}",
        if trust.allows_unsigned() {
            "allowed"
        } else {
            "refused"
        }
    );
}

fn trust_remove(trust: &TrustDir, key: &str, purpose: Purpose) -> anyhow::Result<()> {
    let keys = match purpose {
        Purpose::Providers => trust.trusted_keys(),
        Purpose::Tool => trust.tool_keys(),
    };
    let found: Vec<_> = keys
        .into_iter()
        .filter(|(file, k)| {
            k.id().starts_with(key) || file.file_stem().is_some_and(|s| s.to_string_lossy() == key)
        })
        .collect();
    match found.as_slice() {
        [(file, k)] => {
            std::fs::remove_file(file)
                .with_context(|| format!("cannot remove {}", file.display()))?;
            println!("no longer trusted: {} ({})", k.short_id(), file.display());
            Ok(())
        }
        [] => anyhow::bail!(
            "no key trusted for {} is {key:?} (see `azd-wasm-host trust list`)",
            match purpose {
                Purpose::Providers => "providers",
                Purpose::Tool => "the tool",
            }
        ),
        _ => anyhow::bail!("{key:?} names {} keys; give more of the id", found.len()),
    }
}

/// `sign-sidecars DIR --version V [--key KEY]`: writes the release's signed
/// list of the sidecars in DIR ([`azd_wasm_host_trust::sign_sidecars`]).
pub(crate) fn sign_sidecars(dir: &Path, version: &str, key: Option<&Path>) -> anyhow::Result<()> {
    let key = match key {
        Some(path) => azd_wasm_host_trust::read_key(path)?,
        None => TrustDir::from_env()?.default_signing_key()?.0,
    };
    let bundle = azd_wasm_host_trust::sign_sidecars(dir, version, &key)?;
    let file = dir.join(azd_wasm_host_trust::SIDECARS_BUNDLE_FILE);
    std::fs::write(&file, bundle).with_context(|| format!("cannot write {}", file.display()))?;
    println!("{}", file.display());
    eprintln!(
        "signed the sidecars in {} as release {version} with key {}",
        dir.display(),
        key.public().short_id()
    );
    Ok(())
}

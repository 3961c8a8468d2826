//! The command lines of the author's commands (`new`, `build`, `c-bindings`, `package`,
//! `publish`, `pull`) as clap reads them, each made into the author crate's options.

use std::path::PathBuf;
use std::sync::LazyLock;

use azd_wasm_host_author::{self as author, Language};
use clap::builder::PossibleValue;

/// Arguments of `build`.
#[derive(Debug, clap::Args)]
pub(crate) struct BuildArgs {
    /// The provider manifest (default: `provider.toml` in the current folder).
    pub manifest: Option<PathBuf>,
}

impl BuildArgs {
    /// What the author crate does with them.
    pub(crate) fn options(&self) -> author::BuildOptions {
        author::BuildOptions {
            manifest: self.manifest.clone(),
        }
    }
}

/// Arguments of the hidden `c-bindings` command.
#[derive(Debug, clap::Args)]
pub(crate) struct CBindingsArgs {
    /// The WIT package: a folder (its `deps/` beside it) or a file.
    pub wit: PathBuf,
    /// The world to write bindings for.
    #[arg(long, default_value = author::WORLD_NAME)]
    pub world: String,
    /// WIT features to turn on (`@unstable(feature = …)`), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub features: Vec<String>,
    /// Where to write them (made if missing).
    #[arg(long, value_name = "DIR")]
    pub out_dir: PathBuf,
}

impl CBindingsArgs {
    /// What the author crate does with them.
    pub(crate) fn options(&self) -> author::CBindingsOptions {
        author::CBindingsOptions {
            wit: self.wit.clone(),
            world: self.world.clone(),
            features: self.features.clone(),
            out_dir: self.out_dir.clone(),
        }
    }
}

/// Arguments of `new`.
#[derive(Debug, clap::Args)]
pub(crate) struct NewArgs {
    /// The provider's language.
    #[arg(value_enum)]
    pub language: LanguageArg,
    /// The provider's name (`infra.provider` in azure.yaml): lower-case letters,
    /// digits and inner hyphens, starting with a letter.
    pub name: String,
    /// The folder to create (default: NAME in the current folder). It must not
    /// exist yet, or be empty.
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// The azd extension id `package` ships it as (default: `local.NAME`).
    #[arg(long)]
    pub extension_id: Option<String>,
}

impl NewArgs {
    /// What the author crate does with them.
    pub(crate) fn options(&self) -> author::NewOptions {
        author::NewOptions {
            language: self.language.0,
            name: self.name.clone(),
            dir: self.dir.clone(),
            extension_id: self.extension_id.clone(),
        }
    }
}

/// Arguments of `package`.
#[derive(Debug, clap::Args)]
pub(crate) struct PackageArgs {
    /// The provider manifest (default: `provider.toml` in the current folder).
    pub manifest: Option<PathBuf>,
    /// The extension manifest (default: `extension.yaml` beside the provider manifest).
    #[arg(long)]
    pub extension: Option<PathBuf>,
    /// Where the source is written (default: `dist/` beside the provider manifest).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The URL the archive will be published under (a folder); default: the
    /// archive's absolute path, for a local `file` source.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Ship this binary, the development host with its compilers, for this
    /// machine only, and no precompiled code: the first start compiles the
    /// component (by default each archive ships the sidecar, which carries no
    /// compiler, with the component precompiled for its platform).
    #[arg(long, conflicts_with_all = ["hosts", "hosts_from"])]
    pub no_precompile: bool,
    /// Also (or instead of this binary) ship the host build BINARY for
    /// PLATFORM (`windows/amd64`, `darwin/arm64`, ...); repeatable.
    #[arg(long = "host", value_name = "PLATFORM=BINARY")]
    pub hosts: Vec<String>,
    /// Ship every host build in DIR, laid out as `scripts/release.sh` writes
    /// them: `DIR/<os>-<arch>/azd-wasm-host[.exe]`.
    #[arg(long, value_name = "DIR")]
    pub hosts_from: Option<PathBuf>,
    #[command(flatten)]
    pub signing: SigningArgs,
}

/// How `package`, `publish` and `watch --package` sign.
#[derive(Debug, Clone, clap::Args)]
pub(crate) struct SigningArgs {
    /// Sign with KEY (a PKCS#8 PEM ECDSA P-256 key, as `keygen` writes);
    /// default: your signing key (made on first use, and trusted on this machine).
    #[arg(long, value_name = "KEY", conflicts_with = "unsigned")]
    pub sign: Option<PathBuf>,
    /// Do not sign: where it is installed it runs only if unsigned providers are allowed.
    #[arg(long)]
    pub unsigned: bool,
    /// Sign with your key even a provider whose own signature did not verify
    /// (or that `pull` kept unverified): whoever trusts your key will run it.
    #[arg(long, conflicts_with = "unsigned")]
    pub resign: bool,
}

impl SigningArgs {
    /// What the author crate does with them.
    pub(crate) fn options(&self) -> author::Signing {
        author::Signing {
            key: self.sign.clone(),
            unsigned: self.unsigned,
            resign: self.resign,
        }
    }
}

impl PackageArgs {
    /// What the author crate does with them.
    pub(crate) fn options(&self) -> author::PackageOptions {
        author::PackageOptions {
            manifest: self.manifest.clone(),
            extension: self.extension.clone(),
            out: self.out.clone(),
            base_url: self.base_url.clone(),
            no_precompile: self.no_precompile,
            hosts: self.hosts.clone(),
            hosts_from: self.hosts_from.clone(),
            signing: self.signing.options(),
        }
    }
}

/// Arguments of `publish`.
#[derive(Debug, clap::Args)]
pub(crate) struct PublishArgs {
    /// Where: `oci://REGISTRY/NAME:TAG`.
    pub reference: String,
    /// The provider manifest (default: `provider.toml` in the current folder).
    pub manifest: Option<PathBuf>,
    /// The extension manifest, for the version (default: `extension.yaml` beside the provider manifest).
    #[arg(long)]
    pub extension: Option<PathBuf>,
    #[command(flatten)]
    pub signing: SigningArgs,
    /// Registry user (the password in AZD_WASM_HOST_REGISTRY_PASSWORD); default: anonymous.
    #[arg(long)]
    pub user: Option<String>,
}

impl PublishArgs {
    /// What the author crate does with them.
    pub(crate) fn options(&self) -> author::PublishOptions {
        author::PublishOptions {
            reference: self.reference.clone(),
            manifest: self.manifest.clone(),
            extension: self.extension.clone(),
            signing: self.signing.options(),
            user: self.user.clone(),
        }
    }
}

/// Arguments of `pull`.
#[derive(Debug, clap::Args)]
pub(crate) struct PullArgs {
    /// What: `oci://REGISTRY/NAME:TAG` or `oci://REGISTRY/NAME@sha256:DIGEST`.
    pub reference: String,
    /// The folder to lay the provider out in (default: the artifact's name,
    /// in the current folder); it must not exist yet, or be empty.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Then package it (an azd extension source in OUT/dist, with its signature).
    #[arg(long)]
    pub package: bool,
    /// With --package: sign it with your key even if its own signature did
    /// not verify (it was kept because unsigned providers are allowed).
    #[arg(long, requires = "package")]
    pub resign: bool,
    /// Registry user (the password in AZD_WASM_HOST_REGISTRY_PASSWORD); default: anonymous.
    #[arg(long)]
    pub user: Option<String>,
}

impl PullArgs {
    /// What the author crate does with them.
    pub(crate) fn options(&self) -> author::PullOptions {
        author::PullOptions {
            reference: self.reference.clone(),
            out: self.out.clone(),
            package: self.package,
            resign: self.resign,
            user: self.user.clone(),
        }
    }
}

/// A provider's language on the command line (`new LANGUAGE NAME`), as the author crate
/// names and describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LanguageArg(pub Language);

impl clap::ValueEnum for LanguageArg {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: LazyLock<Vec<LanguageArg>> =
            LazyLock::new(|| Language::ALL.map(LanguageArg).to_vec());
        &ALL
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name()).help(self.0.summary()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args as _, ValueEnum as _};

    /// A document of the repository.
    fn doc(path: &str) -> String {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        std::fs::read_to_string(root.join(path)).unwrap()
    }

    /// `new` takes every language the author crate knows, by its name.
    #[test]
    fn new_takes_every_language_by_the_author_crates_name() {
        let names: Vec<String> = LanguageArg::value_variants()
            .iter()
            .map(|l| l.to_possible_value().unwrap().get_name().to_owned())
            .collect();
        let expected: Vec<&str> = Language::ALL.iter().map(|l| l.name()).collect();
        assert_eq!(names, expected);
    }

    /// The docs show `new`'s flags as its command line has them
    /// (`azd-wasm-host new js todo   # or: new ts|rust|… NAME [--dir DIR] […]`).
    #[test]
    fn the_docs_show_new_s_flags_as_the_command_line_has_them() {
        let flags: Vec<String> = NewArgs::augment_args(clap::Command::new("new"))
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        assert!(!flags.is_empty());
        for path in ["README.md", "docs/authoring.md", "docs/commands.md"] {
            let text = doc(path);
            let line = text
                .lines()
                .find(|l| l.starts_with("azd-wasm-host new "))
                .unwrap_or_else(|| panic!("{path} shows no `azd-wasm-host new`"));
            let (_, or) = line.split_once("# or: new ").expect("the other languages");
            let (_, rest) = or.split_once(' ').unwrap_or((or, ""));
            let shown: Vec<&str> = rest
                .split(['[', ']', ' '])
                .filter(|w| w.starts_with("--"))
                .collect();
            assert_eq!(shown, flags, "{path}: {line}");
        }
    }
}

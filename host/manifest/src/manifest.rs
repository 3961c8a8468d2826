//! [`Manifest`]: `provider.toml` read and checked, the component it names
//! resolved, its config schema loaded.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::config_schema::ConfigSchema;
use super::error::ManifestError;
use super::paths::portable_path;
use super::policy::Policy;
use super::strings;

/// A parsed and checked provider manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    /// The provider name registered with azd (`infra.provider` in `azure.yaml`).
    pub name: String,
    /// Absolute (or manifest-relative, resolved) path of the component.
    pub component: PathBuf,
    /// What the sandbox grants.
    pub policy: Policy,
    /// The manifest file, when the provider came from one (not a bare `.wasm`).
    pub source: Option<PathBuf>,
    /// The JSON Schema of azure.yaml's `infra.config` (`[config] schema`),
    /// read and compiled; Initialize checks azd's config against it.
    pub config_schema: Option<ConfigSchema>,
}

/// `[config]`: what the provider says of its `infra.config`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    /// The schema file, relative to the manifest.
    schema: Option<PathBuf>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    name: String,
    component: PathBuf,
    #[serde(default)]
    policy: Policy,
    #[serde(default)]
    config: Option<RawConfig>,
    /// How `azd-wasm-host build` makes the component: read by the author's
    /// toolchain, never by the runtime.
    #[serde(default)]
    #[allow(dead_code, reason = "accepted here, read by the author's toolchain")]
    build: Option<toml::Value>,
}

impl RawManifest {
    /// Parses manifest text and checks what it says by itself (nothing it
    /// names is looked at); `path` names the file in errors.
    fn read(text: &str, path: &Path) -> Result<Self, ManifestError> {
        strings::check(text).map_err(|why| ManifestError::Text {
            path: path.to_path_buf(),
            why,
        })?;
        let raw: Self = toml::from_str(text).map_err(|e| ManifestError::Shape {
            path: path.to_path_buf(),
            why: e.to_string(),
        })?;
        let field = field_error(path);
        if raw.name.trim().is_empty() {
            return Err(field("name", "must not be empty".to_owned()));
        }
        if raw.component.as_os_str().is_empty() {
            return Err(field("component", "must not be empty".to_owned()));
        }
        raw.policy.check().map_err(|why| field("policy", why))?;
        Ok(raw)
    }
}

/// The error of a refused field of the manifest at `path`.
fn field_error(path: &Path) -> impl Fn(&'static str, String) -> ManifestError + '_ {
    move |field, why| ManifestError::Field {
        path: path.to_path_buf(),
        field,
        why,
    }
}

impl Manifest {
    /// The policy of manifest text, checked, without reading the files it
    /// names (its component, its config schema): what a consent record kept
    /// is read so, whatever the provider's folder holds now.
    pub fn policy_of(text: &str, path: &Path) -> Result<Policy, ManifestError> {
        Ok(RawManifest::read(text, path)?.policy)
    }

    /// Reads and checks a manifest file.
    pub fn load(path: &Path) -> Result<Self, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses manifest text; `path` names the file in errors and anchors the
    /// relative component path.
    pub fn parse(text: &str, path: &Path) -> Result<Self, ManifestError> {
        let raw = RawManifest::read(text, path)?;
        let field = field_error(path);
        let base = path.parent().unwrap_or(Path::new("."));
        let component = raw
            .component
            .to_str()
            .map_or(Ok(raw.component.clone()), portable_path)
            .map_err(|why| field("component", why))?;
        let config_schema = match raw.config.and_then(|c| c.schema) {
            Some(schema) => {
                let rel = schema
                    .to_str()
                    .map_or(Ok(schema.clone()), portable_path)
                    .map_err(|why| field("[config] schema", why))?;
                let outside = rel.components().any(|c| {
                    !matches!(
                        c,
                        std::path::Component::Normal(_) | std::path::Component::CurDir
                    )
                });
                if outside || rel.as_os_str().is_empty() {
                    return Err(field(
                        "[config] schema",
                        format!(
                            "`{}` must name a file inside the provider's folder (it ships and is signed with the manifest)",
                            schema.display()
                        ),
                    ));
                }
                let rel: PathBuf = rel
                    .components()
                    .filter(|c| !matches!(c, std::path::Component::CurDir))
                    .collect();
                Some(ConfigSchema::load(&base.join(rel), path)?)
            }
            None => None,
        };
        Ok(Self {
            name: raw.name,
            component: base.join(component),
            policy: raw.policy,
            source: Some(path.to_path_buf()),
            config_schema,
        })
    }

    /// The provider at `path` and its name: a `.wasm` path is a bare component
    /// ([`Manifest::for_component`]), anything else a manifest file. `name`,
    /// when given and not blank, overrides the name either way. This is the one
    /// place a provider's name is decided (`listen`, `check` and `run` use it).
    pub fn resolve(path: &Path, name: Option<&str>) -> Result<Self, ManifestError> {
        let is_wasm = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("wasm"));
        if is_wasm {
            return Self::for_component(path, name);
        }
        let mut m = Self::load(path)?;
        if let Some(name) = name.filter(|n| !n.trim().is_empty()) {
            strings::check_field("name", name).map_err(|why| ManifestError::GivenName { why })?;
            name.clone_into(&mut m.name);
        }
        Ok(m)
    }

    /// A manifest for a bare component: name from `name` or the file stem,
    /// deny-all policy with default limits.
    pub fn for_component(component: &Path, name: Option<&str>) -> Result<Self, ManifestError> {
        let name = match name {
            Some(n) if !n.trim().is_empty() => n.to_owned(),
            _ => component
                .file_stem()
                .and_then(|s| s.to_str())
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .ok_or_else(|| ManifestError::NoName {
                    component: component.to_path_buf(),
                })?,
        };
        strings::check_field("name", &name).map_err(|why| ManifestError::ComponentName {
            component: component.to_path_buf(),
            why,
        })?;
        Ok(Self {
            name,
            component: component.to_path_buf(),
            policy: Policy::default(),
            source: None,
            config_schema: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{DEFAULT_CALL_TIMEOUT_SECS, DEFAULT_MEMORY_MB, RESERVED_ENV};
    use crate::{FsAccess, FsGrant, GrantLocation};

    fn parse(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse(text, Path::new("/p/provider.toml"))
    }

    #[test]
    fn full_manifest_parses() {
        let m = parse(
            r#"
name = "localfiles"
component = "build/localfiles.wasm"
[policy]
fs = [ { path = ".", access = "read" }, { path = ".azure/{env}", access = "read-write" } ]
env = ["AZD_ENVIRONMENT"]
network = ["example.com:443", "[::1]:8080"]
memory_mb = 64
call_timeout_secs = 5
"#,
        )
        .unwrap();
        assert_eq!(m.name, "localfiles");
        assert_eq!(m.component, Path::new("/p/build/localfiles.wasm"));
        assert_eq!(m.policy.fs[1].access, FsAccess::ReadWrite);
        assert_eq!(m.policy.memory_mb, 64);
        assert!(!m.policy.is_deny_all());
    }

    #[test]
    fn defaults_deny_all() {
        let m = parse("name = \"x\"\ncomponent = \"x.wasm\"\n").unwrap();
        assert!(m.policy.is_deny_all());
        assert_eq!(m.policy.memory_mb, DEFAULT_MEMORY_MB);
        assert_eq!(m.policy.call_timeout_secs, DEFAULT_CALL_TIMEOUT_SECS);
    }

    #[test]
    fn errors_name_the_file_and_field() {
        let e = format!("{:#}", parse("name = \"x\"\n").unwrap_err());
        assert!(
            e.contains("/p/provider.toml") && e.contains("component"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nfs = [{ path = \".\", access = \"write\" }]\n")
                .unwrap_err()
        );
        assert!(e.contains("write") && e.contains("line 4"), "{e}");
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nnetwork = [\"example.com\"]\n")
                .unwrap_err()
        );
        assert!(e.contains("network") && e.contains("port"), "{e}");
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nmemory_mb = 0\n").unwrap_err()
        );
        assert!(e.contains("memory_mb"), "{e}");
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\nextra = 1\n").unwrap_err()
        );
        assert!(e.contains("extra"), "{e}");
    }

    #[test]
    fn timeouts_take_fractions_and_integers() {
        let policy = |body: &str| {
            parse(&format!(
                "name = \"x\"\ncomponent = \"c\"\n[policy]\n{body}\n"
            ))
        };
        let m = policy("call_timeout_secs = 0.25").unwrap();
        assert_eq!(
            m.policy.call_timeout(),
            std::time::Duration::from_millis(250)
        );
        assert_eq!(
            policy("call_timeout_secs = 30")
                .unwrap()
                .policy
                .call_timeout_secs,
            30.0
        );
        for bad in ["0", "-1", "0.0001", "nan", "inf", "1e9"] {
            let e = format!(
                "{:#}",
                policy(&format!("call_timeout_secs = {bad}")).unwrap_err()
            );
            assert!(e.contains("call_timeout_secs"), "{bad}: {e}");
        }
    }

    #[test]
    fn grants_stay_inside_the_project_unless_the_manifest_consents() {
        let grant = |path: &str, outside: bool| FsGrant {
            path: path.into(),
            access: FsAccess::Read,
            outside_project: outside,
        };
        let inside = |p: &str| GrantLocation::Inside(PathBuf::from(p));
        assert_eq!(grant(".", false).locate(None).unwrap(), inside(""));
        assert_eq!(
            grant("a/./b/../c", false).locate(None).unwrap(),
            inside("a/c")
        );
        assert_eq!(
            grant(".azure/{env}", false).locate(Some("dev")).unwrap(),
            inside(".azure/dev")
        );
        for outside in ["/etc", "..", "../x", "a/../../x"] {
            let e = grant(outside, false).locate(None).unwrap_err();
            assert!(e.contains("outside_project = true"), "{outside}: {e}");
            assert_eq!(
                grant(outside, true).locate(None).unwrap(),
                GrantLocation::Outside(PathBuf::from(outside))
            );
        }
        let e = grant("inside", true).locate(None).unwrap_err();
        assert!(e.contains("lies inside the project"), "{e}");
        assert!(grant(".azure/{env}", false).locate(None).is_err());
        let e = format!(
            "{:#}",
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nfs = [{ path = \"/etc\", access = \"read\" }]\n")
                .unwrap_err()
        );
        assert!(e.contains("outside the project"), "{e}");
    }

    #[test]
    fn manifest_paths_read_the_same_on_every_platform() {
        let grant = |path: &str, outside: bool| FsGrant {
            path: path.into(),
            access: FsAccess::Read,
            outside_project: outside,
        };
        let inside = |p: &str| GrantLocation::Inside(PathBuf::from(p));
        // Backslashes separate names, as on Windows, and still cannot climb out.
        assert_eq!(
            grant(".azure\\{env}", false).locate(Some("dev")).unwrap(),
            inside(".azure/dev")
        );
        assert_eq!(
            grant("a\\.\\b\\..\\c", false).locate(None).unwrap(),
            inside("a/c")
        );
        for climbs in ["..\\x", "a\\..\\..\\x", "\\etc"] {
            let e = grant(climbs, false).locate(None).unwrap_err();
            assert!(e.contains("outside_project = true"), "{climbs}: {e}");
        }
        // A drive with no folder on it is refused everywhere.
        let e = grant("C:data", true).locate(None).unwrap_err();
        assert!(e.contains("names a drive without a folder"), "{e}");
        for windows in [
            "C:\\Users\\me",
            "c:/data",
            "\\\\server\\share\\x",
            "//server/share",
        ] {
            let got = grant(windows, true).locate(None);
            if cfg!(windows) {
                assert!(
                    matches!(got, Ok(GrantLocation::Outside(_))),
                    "{windows}: {got:?}"
                );
            } else {
                let e = got.unwrap_err();
                assert!(e.contains("is a Windows path"), "{windows}: {e}");
            }
            // Never inside the project, on any platform.
            assert!(grant(windows, false).locate(None).is_err(), "{windows}");
        }
        let m = parse("name = \"x\"\ncomponent = \"build\\\\x.wasm\"\n").unwrap();
        assert_eq!(m.component, Path::new("/p/build/x.wasm"));
    }

    #[test]
    fn credentials_can_never_be_granted() {
        for name in RESERVED_ENV {
            let text = format!(
                "name = \"x\"\ncomponent = \"c\"\n[policy]\nenv = [\"{}\"]\n",
                name.to_lowercase()
            );
            let e = format!("{:#}", parse(&text).unwrap_err());
            assert!(
                e.contains(name) && e.contains("can never be granted"),
                "{e}"
            );
        }
        assert!(
            parse("name = \"x\"\ncomponent = \"c\"\n[policy]\nenv = [\"AZURE_SUBSCRIPTION_ID\"]\n")
                .is_ok()
        );
    }

    #[test]
    fn a_config_schema_is_read_beside_the_manifest_and_stays_inside_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let manifest = dir.path().join("provider.toml");
        std::fs::create_dir_all(dir.path().join("schemas")).unwrap();
        std::fs::write(
            dir.path().join("schemas/config.json"),
            r#"{ "type": "object", "required": ["name"] }"#,
        )
        .unwrap();
        let text = |schema: &str| {
            format!("name = \"x\"\ncomponent = \"c.wasm\"\n[config]\nschema = \"{schema}\"\n")
        };
        for spelled in [
            "schemas/config.json",
            "./schemas/config.json",
            "schemas\\\\config.json",
        ] {
            let m = Manifest::parse(&text(spelled), &manifest).unwrap();
            let schema = m.config_schema.expect("a schema");
            assert_eq!(
                schema.path,
                dir.path().join("schemas/config.json"),
                "{spelled}"
            );
            assert_eq!(schema.document["required"][0], "name");
        }
        assert!(
            parse("name = \"x\"\ncomponent = \"c\"\n")
                .unwrap()
                .config_schema
                .is_none()
        );
        for outside in [
            "../config.json",
            "/etc/config.json",
            "schemas/../../c.json",
            "",
        ] {
            let e = format!(
                "{:#}",
                Manifest::parse(&text(outside), &manifest).unwrap_err()
            );
            assert!(
                e.contains("[config] schema") && e.contains("inside the provider's folder"),
                "{outside}: {e}"
            );
        }
        let e = format!(
            "{:#}",
            Manifest::parse(&text("absent.json"), &manifest).unwrap_err()
        );
        assert!(
            e.contains("absent.json") && e.contains("cannot read"),
            "{e}"
        );
        let e = format!(
            "{:#}",
            Manifest::parse(
                "name = \"x\"\ncomponent = \"c\"\n[config]\nshema = \"s.json\"\n",
                &manifest
            )
            .unwrap_err()
        );
        assert!(e.contains("shema"), "{e}");
    }

    #[test]
    fn bare_component_uses_the_stem() {
        let m = Manifest::for_component(Path::new("/a/b/demo.wasm"), None).unwrap();
        assert_eq!(m.name, "demo");
        assert!(m.policy.is_deny_all());
        let m = Manifest::for_component(Path::new("/a/b/demo.wasm"), Some("other")).unwrap();
        assert_eq!(m.name, "other");
    }
}

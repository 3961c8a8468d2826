//! The azd environment `run` plays in, chosen as azd chooses it, and its
//! `.azure/<env>/.env` (read and written by [`DotEnv`]).
//!
//! The name comes from `-e`, else `AZURE_ENV_NAME`, else `.azure/config.json`'s
//! `defaultEnvironment`; a project with no environment at all gets `dev`. A
//! project that has environments but no default is refused with their names
//! (azd would ask which). Every name is checked with azd's rule. A command that
//! changes things (`provision`, `down`) creates a missing environment as
//! `azd env new` does, and makes it the default when it is the only one; the
//! others (`preview`, `state`, `parameters`) create nothing until they write to
//! `.env` (`state` saves the outputs), and then create it the same way.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use azd_wasm_host_core::EnvironmentName;
use azd_wasm_host_sim::SimEnvironment;

use super::dotenv::DotEnv;
use super::session::EnvOverlay;

/// The environment variable azd reads a default `-e` from.
const ENV_NAME_VARIABLE: &str = "AZURE_ENV_NAME";

/// The name used when a project has no environment yet.
const FIRST_NAME: &str = "dev";

/// An environment of the project: its name, folder and `.env` as it was read.
pub struct Environment {
    pub(crate) name: EnvironmentName,
    dir: PathBuf,
    dotenv: DotEnv,
    /// Makes a new environment without a note on stderr.
    quiet: bool,
}

impl Environment {
    /// Chooses the environment by azd's rules (`flag` is `-e`) and reads its
    /// `.env`; `create` makes it when missing.
    pub fn open(project: &Path, flag: Option<&str>, create: bool) -> anyhow::Result<Self> {
        Self::open_seeing(project, flag, &EnvOverlay::default(), create, false)
    }

    /// [`Self::open`], reading `AZURE_ENV_NAME` through `vars`; `quiet`: a new
    /// environment is made without a note on stderr.
    pub(crate) fn open_seeing(
        project: &Path,
        flag: Option<&str>,
        vars: &EnvOverlay,
        create: bool,
        quiet: bool,
    ) -> anyhow::Result<Self> {
        let azure = project.join(".azure");
        let name = choose(&azure, flag, vars.var(ENV_NAME_VARIABLE))?;
        let dir = azure.join(name.as_str());
        if create && !dir.is_dir() {
            create_environment(&azure, &name, quiet)?;
        }
        let dotenv = DotEnv::load(&dir.join(".env"))?;
        Ok(Self {
            name,
            dir,
            dotenv,
            quiet,
        })
    }

    /// The environment as the simulated azd serves it.
    pub(crate) fn served(&self) -> SimEnvironment {
        SimEnvironment {
            name: self.name.as_str().to_owned(),
            values: self.dotenv.values(),
        }
    }

    /// Writes `set` and removes `removed` in `.env`, changing nothing else in
    /// the file (read again, in case it changed while the command ran).
    pub fn save<'a>(
        &self,
        set: impl IntoIterator<Item = (&'a str, &'a str)>,
        removed: impl IntoIterator<Item = &'a str>,
    ) -> anyhow::Result<()> {
        let path = self.dir.join(".env");
        let mut dotenv = DotEnv::load(&path)?;
        let before = dotenv.render();
        let mut unwritable = Vec::new();
        for (k, v) in set {
            if let Err(e) = dotenv.set(k, v) {
                unwritable.push(e.to_string());
            }
        }
        for k in removed {
            if let Err(e) = dotenv.remove(k) {
                unwritable.push(e.to_string());
            }
        }
        if dotenv.render() != before {
            // A command that creates nothing up front (`state` saving the outputs, as
            // `azd env refresh` does) makes the environment whole when it first writes
            // to it, default included: a bare `.env` folder would leave the project
            // with an environment and no default, which the next command refuses.
            if !self.dir.is_dir() {
                let azure = self.dir.parent().unwrap_or(&self.dir);
                create_environment(azure, &self.name, self.quiet)?;
            }
            dotenv.save(&path)?;
        }
        if !unwritable.is_empty() {
            anyhow::bail!(
                "{} (the value is in the output above)",
                unwritable.join("; ")
            );
        }
        Ok(())
    }
}

/// The name azd would use: `-e`, `AZURE_ENV_NAME`, the project's default, or
/// `dev` for a project without environments.
fn choose(
    azure: &Path,
    flag: Option<&str>,
    variable: Option<String>,
) -> anyhow::Result<EnvironmentName> {
    if let Some(name) = flag {
        return Ok(EnvironmentName::parse(name)?);
    }
    if let Some(name) = variable.filter(|v| !v.is_empty()) {
        return EnvironmentName::parse(&name)
            .with_context(|| format!("{ENV_NAME_VARIABLE} names an invalid environment"));
    }
    let config = azure.join("config.json");
    if let Some(name) = default_environment(&config)? {
        return EnvironmentName::parse(&name)
            .with_context(|| format!("{} names an invalid default", config.display()));
    }
    let existing = environments(azure)?;
    if existing.is_empty() {
        return Ok(EnvironmentName::parse(FIRST_NAME)?);
    }
    anyhow::bail!(
        "the project has environments ({}) but no default in {}: choose one with -e NAME \
         (or set {ENV_NAME_VARIABLE})",
        existing.join(", "),
        config.display()
    )
}

/// `defaultEnvironment` of `.azure/config.json`, when the file and the key exist.
fn default_environment(config: &Path) -> anyhow::Result<Option<String>> {
    let text = match std::fs::read_to_string(config) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("reading {}", config.display())),
    };
    let json: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("reading {}", config.display()))?;
    Ok(json
        .get("defaultEnvironment")
        .and_then(serde_json::Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_owned))
}

/// The environments the project has: folders of `.azure` with a valid name.
fn environments(azure: &Path) -> anyhow::Result<Vec<String>> {
    let entries = match std::fs::read_dir(azure) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("reading {}", azure.display())),
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| EnvironmentName::parse(n).is_ok())
        .collect();
    names.sort();
    Ok(names)
}

/// Makes `.azure/<name>/` as `azd env new` does; the new environment becomes
/// the default when it is the project's only one (azd's rule).
fn create_environment(azure: &Path, name: &EnvironmentName, quiet: bool) -> anyhow::Result<()> {
    let dir = azure.join(name.as_str());
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let config = azure.join("config.json");
    if environments(azure)?.len() == 1 {
        let mut json = match std::fs::read_to_string(&config) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("reading {}", config.display()))?,
            Err(_) => serde_json::json!({ "version": 1 }),
        };
        if let Some(object) = json.as_object_mut() {
            object.insert("defaultEnvironment".into(), name.as_str().into());
        }
        std::fs::write(&config, format!("{json}\n"))
            .with_context(|| format!("writing {}", config.display()))?;
        if !quiet {
            eprintln!("New environment '{name}' created and set as default.");
        }
    } else if !quiet {
        eprintln!("New environment '{name}' created (the default is unchanged).");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn project() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let azure = tmp.path().join(".azure");
        (tmp, azure)
    }

    fn chosen(azure: &Path, flag: Option<&str>, var: Option<&str>) -> String {
        choose(azure, flag, var.map(str::to_owned))
            .map(|n| n.as_str().to_owned())
            .unwrap_or_else(|e| format!("error: {e:#}"))
    }

    #[test]
    fn the_name_comes_from_the_flag_then_the_variable_then_the_default() {
        let (_tmp, azure) = project();
        assert_eq!(chosen(&azure, None, None), "dev", "no environment yet");
        std::fs::create_dir_all(azure.join("prod")).unwrap();
        std::fs::create_dir_all(azure.join("test")).unwrap();
        let e = chosen(&azure, None, None);
        assert!(e.contains("prod, test") && e.contains("-e"), "{e}");
        std::fs::write(
            azure.join("config.json"),
            r#"{"version":1,"defaultEnvironment":"prod"}"#,
        )
        .unwrap();
        assert_eq!(chosen(&azure, None, None), "prod");
        assert_eq!(
            chosen(&azure, None, Some("")),
            "prod",
            "an empty variable is unset"
        );
        assert_eq!(chosen(&azure, None, Some("test")), "test");
        assert_eq!(chosen(&azure, Some("other"), Some("test")), "other");
    }

    #[test]
    fn a_name_azd_refuses_is_refused_wherever_it_comes_from() {
        let (_tmp, azure) = project();
        for bad in ["my env", "x:y", "a\nb", "..", ""] {
            assert!(
                chosen(&azure, Some(bad), None).starts_with("error"),
                "{bad:?}"
            );
        }
        assert!(chosen(&azure, None, Some("../up")).contains("AZURE_ENV_NAME"));
        std::fs::create_dir_all(&azure).unwrap();
        std::fs::write(azure.join("config.json"), r#"{"defaultEnvironment":"a b"}"#).unwrap();
        assert!(chosen(&azure, None, None).contains("config.json"));
    }

    #[test]
    fn the_first_write_to_an_environment_not_yet_made_makes_it_the_default() {
        let (tmp, azure) = project();
        // `state` opens without creating; nothing is written until it saves.
        let env = Environment::open(tmp.path(), None, false).unwrap();
        assert!(!azure.exists(), "opening created something");
        env.save([("OUT", "1")], []).unwrap();
        assert!(azure.join("dev/.env").is_file());
        assert_eq!(
            default_environment(&azure.join("config.json"))
                .unwrap()
                .as_deref(),
            Some("dev")
        );
        // The next command finds it as the default.
        assert_eq!(chosen(&azure, None, None), "dev");
    }

    #[test]
    fn a_new_environment_is_the_default_only_when_it_is_the_only_one() {
        let (tmp, azure) = project();
        let first = Environment::open(tmp.path(), Some("one"), true).unwrap();
        assert_eq!(first.name.as_str(), "one");
        let config = azure.join("config.json");
        assert_eq!(
            default_environment(&config).unwrap().as_deref(),
            Some("one")
        );
        Environment::open(tmp.path(), Some("two"), true).unwrap();
        assert!(azure.join("two").is_dir());
        assert_eq!(
            default_environment(&config).unwrap().as_deref(),
            Some("one")
        );
        // Commands that change nothing create nothing.
        Environment::open(tmp.path(), Some("three"), false).unwrap();
        assert!(!azure.join("three").exists());
    }

    #[test]
    fn saving_touches_only_the_keys_that_changed() {
        let (tmp, azure) = project();
        std::fs::create_dir_all(azure.join("dev")).unwrap();
        let path = azure.join("dev/.env");
        std::fs::write(&path, "# mine\nexport KEEP=x\nOLD=1\n").unwrap();
        let env = Environment::open(tmp.path(), Some("dev"), true).unwrap();
        assert_eq!(env.served().values["KEEP"], "x");
        env.save([("NEW", "v")], ["OLD"]).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "# mine\nexport KEEP=x\nNEW=\"v\"\n"
        );
        let e = env.save([("BAD", " x\\")], []).unwrap_err();
        assert!(e.to_string().contains("BAD"), "{e}");
    }
}

//! The environment a process of ours keeps when azd started it.
//!
//! azd starts an extension (`listen`, and the author's tool as `azd wasm …`)
//! with its own environment plus every value of the project's azd
//! environment (`.azure/<env>/.env`). Those values are the project's, and a
//! provider writes them through its outputs: left alone, they would choose
//! the trust folder (`AZD_CONFIG_DIR`), whether unsigned code runs
//! (`AZD_WASM_HOST_ALLOW_UNSIGNED`), and which programs run (`CARGO`,
//! `AZD_WASM_HOST_AZD`, `PATH`-like variables of the programs we start).
//!
//! So, first thing in `main` and only when azd started the process
//! (`AZD_SERVER` is set), [`settle`] changes the process environment, before
//! anything reads it and before any child inherits it:
//!
//! 1. **azd's config folder is where azd installed us.** An installed
//!    extension's binary sits in `<azd config>/extensions/<id>/`; that
//!    `<azd config>` becomes `AZD_CONFIG_DIR`, whatever the variable said.
//! 2. **What the project's environment supplied is ignored.** A variable that
//!    steers (`azd_wasm_host_core::steering`: azd's and our own settings,
//!    credentials, programs, locations) and that a `.env` of the project
//!    (the folder with `azure.yaml` at or above the working folder) sets is
//!    removed: azd's `.env` value is what the process got.
//! 3. **The tool** (every command but `listen`) also ignores this tool's own
//!    trust-root and program variables (`AZD_WASM_HOST_*`, `CARGO`, `AZD`,
//!    and `AZD_CONFIG_DIR` where 1 found nothing), wherever they came from,
//!    and drops azd's `AZD_SERVER`/`AZD_ACCESS_TOKEN`: it serves none of
//!    azd's requests, and the programs it runs must not inherit azd's token.
//!
//! `--trust-env NAME` keeps `NAME` as it is (the tool's commands). Every
//! variable ignored is a warning: on stderr for the tool (the user's
//! terminal under `azd wasm`), in the log for `listen` ([`log_notes`]).
//! A process azd did not start is left as it is.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use azd_wasm_host_core::steering;

/// What the process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `listen`: azd's provisioning provider.
    Listen,
    /// Any other command: the author's tool, or `approve`/`metadata`.
    Tool,
}

/// The variable azd sets on every process it starts as an extension.
const AZD_SERVER: &str = "AZD_SERVER";
/// azd's token for that process.
const AZD_ACCESS_TOKEN: &str = "AZD_ACCESS_TOKEN";
/// azd's config folder.
const AZD_CONFIG_DIR: &str = "AZD_CONFIG_DIR";
/// Programs the tool runs, named by variables that are not ours.
const TOOL_PROGRAMS: [&str; 2] = ["CARGO", "AZD"];
/// The most of a `.env` read to learn its names.
const DOTENV_MAX: u64 = 4 << 20;

/// What [`settle`] changes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Variables to remove, each with the warning that says why (none for
    /// azd's own server and token, which the tool drops silently).
    pub(crate) remove: Vec<(String, Option<String>)>,
    /// Variables to set, each with its warning, if any.
    pub(crate) set: Vec<(String, OsString, Option<String>)>,
    /// Warnings about several variables at once.
    pub(crate) notes: Vec<String>,
}

impl Plan {
    fn notes(&self) -> Vec<String> {
        self.remove
            .iter()
            .filter_map(|(_, note)| note.clone())
            .chain(self.set.iter().filter_map(|(_, _, note)| note.clone()))
            .chain(self.notes.iter().cloned())
            .collect()
    }
}

/// The warnings of [`settle`], kept for `listen`'s log (set once).
static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Settles the process environment as the module says, when azd started
/// the process. For the tool, prints each warning on stderr; for `listen`,
/// keeps them for [`log_notes`].
///
/// # Safety
///
/// Changes the process environment: call it first thing in `main`, before
/// any other thread of the process exists (nothing else reads or writes the
/// environment while it runs).
#[allow(
    unsafe_code,
    reason = "std::env::set_var and remove_var are unsafe while other threads may read the environment; the caller settles it before any exists"
)]
pub unsafe fn settle(role: Role, trusted: &[String]) {
    let vars: BTreeMap<String, OsString> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v)))
        .collect();
    let cwd = std::env::current_dir().ok();
    let plan = plan(
        &vars,
        azd_wasm_host_core::files::exe_dir().as_deref(),
        cwd.as_deref(),
        role,
        trusted,
    );
    for (name, _) in &plan.remove {
        // SAFETY: the caller promises no other thread exists yet.
        unsafe { std::env::remove_var(name) };
    }
    for (name, value, _) in &plan.set {
        // SAFETY: as above.
        unsafe { std::env::set_var(name, value) };
    }
    let notes = plan.notes();
    match role {
        Role::Tool => {
            for note in &notes {
                eprintln!("azd-wasm-host: warning: {note}");
            }
        }
        Role::Listen => {
            if let Ok(mut kept) = NOTES.lock() {
                *kept = notes;
            }
        }
    }
}

/// Writes [`settle`]'s warnings into the log (`listen`, once logging is up).
pub fn log_notes() {
    let notes = NOTES.lock().map(|mut n| std::mem::take(&mut *n));
    for note in notes.unwrap_or_default() {
        tracing::warn!("{note}");
    }
}

/// What settling changes, from the variables, the binary's folder and the
/// working folder.
pub(crate) fn plan(
    vars: &BTreeMap<String, OsString>,
    exe_dir: Option<&Path>,
    cwd: Option<&Path>,
    role: Role,
    trusted: &[String],
) -> Plan {
    let mut plan = Plan::default();
    if vars.get(AZD_SERVER).is_none_or(|v| v.is_empty()) {
        return plan;
    }
    let trusts = |name: &str| trusted.iter().any(|t| t.eq_ignore_ascii_case(name));
    let config = exe_dir.and_then(installed_config_dir);
    if let Some(config) = &config
        && !trusts(AZD_CONFIG_DIR)
    {
        let note = vars
            .get(AZD_CONFIG_DIR)
            .filter(|v| !same_dir(Path::new(v), config))
            .map(|v| {
                format!(
                    "AZD_CONFIG_DIR={} is ignored: azd installed this extension under {}, which is azd's config folder{}",
                    Path::new(v).display(),
                    config.display(),
                    trust_hint(role, AZD_CONFIG_DIR)
                )
            });
        plan.set
            .push((AZD_CONFIG_DIR.to_owned(), config.clone().into(), note));
    }
    let project = cwd.map(project_env_names).unwrap_or_default();
    let mut tool_settings = Vec::new();
    for name in vars.keys() {
        if name == AZD_SERVER || name == AZD_ACCESS_TOKEN || trusts(name) {
            continue;
        }
        if name == AZD_CONFIG_DIR && config.is_some() {
            continue;
        }
        let supplied = project.contains(&name.to_ascii_uppercase());
        if supplied && steering::steering(name).is_some() {
            plan.remove.push((
                name.clone(),
                Some(format!(
                    "{name} is ignored: the project's azd environment (.azure/<env>/.env) sets it, and there a provider's outputs could have put it{}",
                    trust_hint(role, name)
                )),
            ));
        } else if role == Role::Tool && is_tool_setting(name) {
            plan.remove.push((name.clone(), None));
            tool_settings.push(name.as_str());
        }
    }
    // One line for all of the tool's own settings, however many the shell has.
    if let Some(first) = tool_settings.first() {
        let (verb, pronoun) = if tool_settings.len() == 1 {
            ("is", "it picks")
        } else {
            ("are", "they pick")
        };
        plan.notes.push(format!(
            "{} {verb} ignored under azd: {pronoun} a program or the trust folder of this tool, and azd passes the project's environment values to the tools it runs{}",
            tool_settings.join(", "),
            trust_hint(role, first)
        ));
    }
    if role == Role::Tool {
        for name in [AZD_SERVER, AZD_ACCESS_TOKEN] {
            if vars.contains_key(name) {
                plan.remove.push((name.to_owned(), None));
            }
        }
    }
    plan
}

/// The tool's own trust-root and program variables.
fn is_tool_setting(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    upper.starts_with("AZD_WASM_HOST_")
        || upper == AZD_CONFIG_DIR
        || TOOL_PROGRAMS.contains(&upper.as_str())
}

fn trust_hint(role: Role, name: &str) -> String {
    match role {
        Role::Tool => format!(" (to use it, name it: --trust-env {name})"),
        Role::Listen => String::new(),
    }
}

/// `<azd config>` when `exe_dir` is `<azd config>/extensions/<id>`, as azd
/// lays an installed extension out.
fn installed_config_dir(exe_dir: &Path) -> Option<PathBuf> {
    let extensions = exe_dir.parent()?;
    (extensions.file_name()? == "extensions").then(|| extensions.parent().map(Path::to_path_buf))?
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b
        || matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

/// The names (upper case) that any `.env` of the azd project around `cwd`
/// sets: the project is the nearest folder at or above `cwd` with
/// `azure.yaml`; its environments are `.azure/*/.env`.
fn project_env_names(cwd: &Path) -> BTreeSet<String> {
    let Some(project) = cwd
        .ancestors()
        .find(|d| d.join("azure.yaml").is_file() || d.join("azure.yml").is_file())
    else {
        return BTreeSet::new();
    };
    let Ok(envs) = std::fs::read_dir(project.join(".azure")) else {
        return BTreeSet::new();
    };
    envs.filter_map(Result::ok)
        .filter_map(|env| read_bounded(&env.path().join(".env")))
        .flat_map(|text| dotenv_names(&text))
        .collect()
}

fn read_bounded(path: &Path) -> Option<String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    let mut bytes = Vec::new();
    file.take(DOTENV_MAX).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The names a `.env` text sets (upper case), read loosely: any line's
/// leading word before `=` or `:` (after an optional `export`). Loose on
/// purpose: a name read here that is not really set only means a variable
/// is ignored, never that one is kept.
fn dotenv_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let line = line.trim_start();
            let line = line.strip_prefix("export ").unwrap_or(line).trim_start();
            let end = line.find(['=', ':'])?;
            let name = line[..end].trim();
            (!name.is_empty() && !name.starts_with('#')).then(|| name.to_ascii_uppercase())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> BTreeMap<String, OsString> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), OsString::from(v)))
            .collect()
    }

    fn removed(got: &Plan) -> Vec<&str> {
        got.remove.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// A project whose `.env` (as a provider's outputs would leave it) sets
    /// variables that steer.
    fn project_with_env(dotenv: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("azure.yaml"), "name: p\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".azure/dev")).unwrap();
        std::fs::write(dir.path().join(".azure/dev/.env"), dotenv).unwrap();
        std::fs::create_dir_all(dir.path().join("src/deep")).unwrap();
        dir
    }

    #[test]
    fn a_process_azd_did_not_start_is_left_alone() {
        let project = project_with_env("CARGO=/tmp/evil\n");
        let env = vars(&[
            ("CARGO", "/tmp/evil"),
            ("AZD_WASM_HOST_ALLOW_UNSIGNED", "true"),
        ]);
        let got = plan(&env, None, Some(project.path()), Role::Tool, &[]);
        assert_eq!(got, Plan::default());
    }

    #[test]
    fn what_the_projects_environment_supplied_is_ignored_by_listen() {
        let project = project_with_env(
            "AZD_WASM_HOST_ALLOW_UNSIGNED=\"true\"\nexport LD_PRELOAD=/tmp/x.so\nGREETING=hi\nAZURE_STORAGE_ACCOUNT_NAME=a\n",
        );
        let env = vars(&[
            ("AZD_SERVER", "127.0.0.1:1"),
            ("AZD_ACCESS_TOKEN", "t"),
            ("AZD_WASM_HOST_ALLOW_UNSIGNED", "true"),
            ("LD_PRELOAD", "/tmp/x.so"),
            ("GREETING", "hi"),
            ("AZURE_STORAGE_ACCOUNT_NAME", "a"),
            // The user's own, from the shell: the project does not set it.
            ("AZD_WASM_HOST_CACHE_DIR", "/home/u/cache"),
        ]);
        let cwd = project.path().join("src/deep");
        let got = plan(&env, None, Some(&cwd), Role::Listen, &[]);
        assert_eq!(
            removed(&got),
            ["AZD_WASM_HOST_ALLOW_UNSIGNED", "LD_PRELOAD"]
        );
        assert!(got.set.is_empty());
        assert!(
            got.notes().iter().all(|n| n.contains(".azure/<env>/.env")),
            "{:?}",
            got.notes()
        );
    }

    #[test]
    fn the_tool_under_azd_ignores_its_own_settings_unless_trusted() {
        let env = vars(&[
            ("AZD_SERVER", "127.0.0.1:1"),
            ("AZD_ACCESS_TOKEN", "t"),
            ("AZD_CONFIG_DIR", "/tmp/evil-config"),
            ("AZD_WASM_HOST_ALLOW_UNSIGNED", "true"),
            ("CARGO", "/tmp/evil-cargo"),
            ("azd", "/tmp/evil-azd"),
            ("AZD_WASM_HOST_CACHE_DIR", "/tmp/c"),
            ("GOFLAGS", "-mod=mod"),
            ("HOME", "/home/u"),
        ]);
        let dir = tempfile::tempdir().unwrap();
        let plan1 = plan(&env, None, Some(dir.path()), Role::Tool, &["CARGO".into()]);
        assert_eq!(
            removed(&plan1),
            [
                "AZD_CONFIG_DIR",
                "AZD_WASM_HOST_ALLOW_UNSIGNED",
                "AZD_WASM_HOST_CACHE_DIR",
                "azd",
                "AZD_SERVER",
                "AZD_ACCESS_TOKEN"
            ]
        );
        let notes = plan1.notes();
        assert!(notes.iter().all(|n| n.contains("--trust-env")), "{notes:?}");
        // The tool's own settings share one line, whatever their number.
        let shared: Vec<_> = notes.iter().filter(|n| n.contains("are ignored")).collect();
        assert_eq!(shared.len(), 1, "{notes:?}");
        assert!(
            shared[0].starts_with(
                "AZD_CONFIG_DIR, AZD_WASM_HOST_ALLOW_UNSIGNED, AZD_WASM_HOST_CACHE_DIR, azd are"
            ),
            "{notes:?}"
        );
        // The user's GOFLAGS and HOME are not the tool's settings and the
        // project did not set them: kept. `listen` keeps the tool's too.
        let plan2 = plan(&env, None, Some(dir.path()), Role::Listen, &[]);
        assert!(plan2.remove.is_empty(), "{:?}", plan2.remove);
    }

    #[test]
    fn azds_config_folder_is_where_azd_installed_the_extension() {
        let config = tempfile::tempdir().unwrap();
        let ext = config.path().join("extensions").join("local.todo");
        std::fs::create_dir_all(&ext).unwrap();
        let env = vars(&[
            ("AZD_SERVER", "127.0.0.1:1"),
            ("AZD_CONFIG_DIR", "/tmp/evil"),
        ]);
        for role in [Role::Listen, Role::Tool] {
            let got = plan(&env, Some(&ext), None, role, &[]);
            assert_eq!(got.set.len(), 1, "{role:?}");
            let (name, value, note) = &got.set[0];
            assert_eq!(name, AZD_CONFIG_DIR);
            assert_eq!(Path::new(value), config.path());
            assert!(note.as_deref().unwrap().contains("/tmp/evil"), "{note:?}");
            assert!(!removed(&got).contains(&AZD_CONFIG_DIR), "{role:?}");
        }
        // The same folder named by the variable: set, without a warning.
        let same = vars(&[
            ("AZD_SERVER", "127.0.0.1:1"),
            ("AZD_CONFIG_DIR", config.path().to_str().unwrap()),
        ]);
        let got = plan(&same, Some(&ext), None, Role::Tool, &[]);
        assert_eq!(got.notes(), Vec::<String>::new());
        // Trusted by flag: left as it is.
        let got = plan(
            &env,
            Some(&ext),
            None,
            Role::Tool,
            &["azd_config_dir".into()],
        );
        assert!(got.set.is_empty() && got.remove.iter().all(|(n, _)| n != AZD_CONFIG_DIR));
    }

    #[test]
    fn dotenv_names_are_read_loosely() {
        assert_eq!(
            dotenv_names("# c\nA=1\n  export B = 2\nC: 3\n\nnot a line\nd=\"x=y\"\n"),
            ["A", "B", "C", "D"]
        );
    }
}

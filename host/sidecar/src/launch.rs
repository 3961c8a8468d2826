//! The environment a process of ours keeps when azd started it.
//!
//! azd starts an extension (`listen`, and the author's tool as `azd wasm …`)
//! with its own environment plus every value of the project's azd
//! environment (`.azure/<env>/.env`). Those values are the project's, and a
//! provider writes them through its outputs: left alone, they would choose
//! the trust folder (`AZD_CONFIG_DIR`), whether unsigned code runs
//! (`AZD_WASM_HOST_ALLOW_UNSIGNED`), and which programs run and what they
//! load (`CARGO`, `NODE_OPTIONS`, `CC_wasm32_wasip2`, …: more names than any
//! list holds).
//!
//! So, first thing in `main`, before clap reads any argument's environment
//! fallback ([`arguments`] reads the command line with none), and only when
//! azd started the process (`AZD_SERVER` is set), [`settle`] changes the
//! process environment, before anything reads it and before any child
//! inherits it:
//!
//! 1. **azd's config folder is where azd installed us.** An installed
//!    extension's binary sits in `<azd config>/extensions/<id>/`; that
//!    `<azd config>` becomes `AZD_CONFIG_DIR`, whatever the variable said.
//! 2. **The tool** (every command but `listen`) keeps **no** variable that a
//!    `.env` of the project sets (the project is the folder with
//!    `azure.yaml` at or above the working folder; every `.azure/*/.env` is
//!    read whole, by the workspace's one `.env` reader,
//!    `azd_wasm_host_core::dotenv`, as azd reads it): by construction, not
//!    by list, so nothing the project's environment holds reaches the tool or
//!    what it runs. It also ignores its own trust-root and program variables
//!    (`AZD_WASM_HOST_*`, `CARGO`, `AZD`, and `AZD_CONFIG_DIR` where 1 found
//!    nothing) wherever they came from, and drops azd's
//!    `AZD_SERVER`/`AZD_ACCESS_TOKEN`: it serves none of azd's requests, and
//!    the programs it runs must not inherit azd's token.
//! 3. **`listen`** keeps the project's values a provider's grants may name
//!    (a provider reading its own earlier outputs), but not one that steers
//!    (`azd_wasm_host_core::steering`: azd's and our own settings,
//!    credentials, programs, locations): the list is the second wall here,
//!    behind the grammar that keeps a provider from writing such a name.
//!
//! `--trust-env NAME` keeps `NAME` as it is (the tool's commands). Every
//! variable ignored is named in a warning: on stderr for the tool (the
//! user's terminal under `azd wasm`, one line), in the log for `listen`
//! ([`log_notes`]). A process azd did not start is left as it is.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use azd_wasm_host_core::steering;
use azd_wasm_host_trust::ceiling::POLICY_ENV;

mod arguments;

pub use arguments::{Role, arguments};

/// The variable azd sets on every process it starts as an extension.
const AZD_SERVER: &str = "AZD_SERVER";
/// azd's token for that process.
const AZD_ACCESS_TOKEN: &str = "AZD_ACCESS_TOKEN";
/// azd's config folder.
const AZD_CONFIG_DIR: &str = "AZD_CONFIG_DIR";
/// Programs the tool runs, named by variables that are not ours.
const TOOL_PROGRAMS: [&str; 2] = ["CARGO", "AZD"];
/// The most names a warning lists (the rest are counted).
const NAMES_SHOWN: usize = 12;

/// What [`settle`] changes.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    /// Variables to remove, each with the warning that says why (none for
    /// azd's own server and token, which the tool drops silently).
    pub(crate) remove: Vec<(String, Option<String>)>,
    /// Variables to set, each with its warning, if any.
    pub(crate) set: Vec<(String, OsString, Option<String>)>,
    /// Variables whose names are not UTF-8 to remove (the project's `.env`
    /// set them: godotenv takes bytes as they come).
    pub(crate) remove_other: Vec<OsString>,
    /// Warnings about several variables at once.
    pub(crate) notes: Vec<String>,
    /// Whether a `.env` of the project names one more provider policy
    /// ([`POLICY_ENV`]): a project may not choose the ceiling it is held to,
    /// and removing the variable would loosen it, so every provider is
    /// refused instead ([`project_sets_policy`]).
    pub(crate) project_sets_policy: bool,
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

/// [`Plan::project_sets_policy`] of this process's [`settle`].
static PROJECT_SETS_POLICY: AtomicBool = AtomicBool::new(false);

/// Whether a `.env` of the project azd started this process in names one
/// more provider policy ([`POLICY_ENV`]).
pub fn project_sets_policy() -> bool {
    PROJECT_SETS_POLICY.load(Ordering::Relaxed)
}

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
    let mut vars: BTreeMap<String, OsString> = BTreeMap::new();
    let mut other = Vec::new();
    for (name, value) in std::env::vars_os() {
        match name.into_string() {
            Ok(name) => drop(vars.insert(name, value)),
            Err(name) => other.push(name),
        }
    }
    let cwd = std::env::current_dir().ok();
    let mut plan = plan(
        &vars,
        azd_wasm_host_core::files::exe_dir().as_deref(),
        cwd.as_deref(),
        role,
        trusted,
    );
    let under_azd = vars.get(AZD_SERVER).is_some_and(|v| !v.is_empty());
    if let (true, Some(cwd)) = (under_azd, cwd.as_deref()) {
        plan.remove_other = others_supplied(&other, cwd, role);
    }
    if !plan.remove_other.is_empty() {
        plan.notes.push(format!(
            "{} variables whose names are not UTF-8 are ignored under azd: the project's azd environment (.azure/<env>/.env) sets them",
            plan.remove_other.len()
        ));
    }
    for (name, _) in &plan.remove {
        // SAFETY: the caller promises no other thread exists yet.
        unsafe { std::env::remove_var(name) };
    }
    for name in &plan.remove_other {
        // SAFETY: as above.
        unsafe { std::env::remove_var(name) };
    }
    for (name, value, _) in &plan.set {
        // SAFETY: as above.
        unsafe { std::env::set_var(name, value) };
    }
    PROJECT_SETS_POLICY.store(plan.project_sets_policy, Ordering::Relaxed);
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
    let trusts = |name: &str| trusted.iter().any(|t| env_key(t) == env_key(name));
    let config = exe_dir.and_then(installed_config_dir);
    if let Some(config) = &config
        && !trusts(AZD_CONFIG_DIR)
    {
        plan.set.push(installed_config(vars, config, role));
    }
    let project = cwd.map(project_env_names).unwrap_or_default();
    plan.project_sets_policy = project.contains(&env_key(POLICY_ENV));
    let mut tool_settings = Vec::new();
    let mut from_project = Vec::new();
    for name in vars.keys() {
        if name == AZD_SERVER || name == AZD_ACCESS_TOKEN || trusts(name) {
            continue;
        }
        if name == AZD_CONFIG_DIR && config.is_some() {
            continue;
        }
        let supplied = project.contains(&env_key(name));
        match role {
            Role::Tool if supplied => {
                plan.remove.push((name.clone(), None));
                from_project.push(name.as_str());
            }
            Role::Listen if supplied && steering::steering(name).is_some() => {
                let note = format!(
                    "{} is ignored: the project's azd environment (.azure/<env>/.env) sets it, and there a provider's outputs could have put it",
                    shown_name(name)
                );
                plan.remove.push((name.clone(), Some(note)));
            }
            Role::Tool if is_tool_setting(name) => {
                plan.remove.push((name.clone(), None));
                tool_settings.push(name.as_str());
            }
            _ => {}
        }
    }
    plan.notes
        .extend(grouped_notes(&from_project, &tool_settings, role));
    if role == Role::Tool {
        for name in [AZD_SERVER, AZD_ACCESS_TOKEN] {
            if vars.contains_key(name) {
                plan.remove.push((name.to_owned(), None));
            }
        }
    }
    plan
}

/// One line for what the project's environment supplied, however much, and one for all of the
/// tool's own settings, however many the shell has.
fn grouped_notes(from_project: &[&str], tool_settings: &[&str], role: Role) -> Vec<String> {
    let project_note = grouped_note(
        from_project,
        "set by the project's azd environment (.azure/<env>/.env), whose values never reach this tool or the programs it runs",
        role,
    );
    let settings_note = grouped_note(
        tool_settings,
        "settings of this tool, which pick a program or its trust folder (azd passes the project's environment values to the tools it runs)",
        role,
    );
    project_note.into_iter().chain(settings_note).collect()
}

/// `names` for a warning: `A is`, `A, B are`, or the first few and how many more.
fn listed(names: &[&str]) -> String {
    let shown: Vec<String> = names.iter().map(|n| shown_name(n)).collect();
    let names: Vec<&str> = shown.iter().map(String::as_str).collect();
    match names.as_slice() {
        [one] => format!("{one} is"),
        _ if names.len() <= NAMES_SHOWN => format!("{} are", names.join(", ")),
        _ => format!(
            "{} and {} more variables are",
            names[..NAMES_SHOWN].join(", "),
            names.len() - NAMES_SHOWN
        ),
    }
}

/// A variable's name for a warning: as it is when it is a plain name, else
/// quoted and escaped (a `.env` name may hold any character but `=`).
fn shown_name(name: &str) -> String {
    if azd_wasm_host_core::dotenv::is_variable_name(name) {
        name.to_owned()
    } else {
        azd_wasm_host_core::text::quote(name)
    }
}

/// How the platform compares environment variable names: exactly, but on
/// Windows, where `Path` is `PATH`.
fn env_key(name: &str) -> String {
    if cfg!(windows) {
        name.to_ascii_uppercase()
    } else {
        name.to_owned()
    }
}

/// `AZD_CONFIG_DIR` set to `config`, the folder azd installed the extension
/// under, with a warning when the variable said otherwise.
fn installed_config(
    vars: &BTreeMap<String, OsString>,
    config: &Path,
    role: Role,
) -> (String, OsString, Option<String>) {
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
    (
        AZD_CONFIG_DIR.to_owned(),
        config.as_os_str().to_owned(),
        note,
    )
}

/// One warning line for every variable of `names`, ignored because `why`.
fn grouped_note(names: &[&str], why: &str, role: Role) -> Option<String> {
    let first = names.first()?;
    Some(format!(
        "{} ignored under azd: {why}{}",
        listed(names),
        trust_hint(role, first)
    ))
}

/// The tool's own trust-root and program variables (not [`POLICY_ENV`],
/// which can only add a ceiling: dropping it would loosen one).
fn is_tool_setting(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    (upper.starts_with(azd_wasm_host_core::settings::PREFIX) && upper != POLICY_ENV)
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

/// The names ([`env_key`]) that any `.env` of the azd project around `cwd`
/// sets, each file read whole as azd reads it: the project is the nearest
/// folder at or above `cwd` with `azure.yaml`; its environments are
/// `.azure/*/.env`. A file azd could not read sets the names godotenv had
/// read before the error.
fn project_env_names(cwd: &Path) -> BTreeSet<String> {
    project_env_files(cwd)
        .iter()
        .flat_map(|bytes| azd_wasm_host_core::dotenv::names(bytes).0)
        .map(|name| env_key(&name))
        .collect()
}

/// The bytes of every `.azure/*/.env` of the project around `cwd`.
fn project_env_files(cwd: &Path) -> Vec<Vec<u8>> {
    let Some(project) = cwd
        .ancestors()
        .find(|d| d.join("azure.yaml").is_file() || d.join("azure.yml").is_file())
    else {
        return Vec::new();
    };
    let Ok(envs) = std::fs::read_dir(project.join(".azure")) else {
        return Vec::new();
    };
    envs.filter_map(Result::ok)
        .filter_map(|env| read_regular(&env.path().join(".env")))
        .collect()
}

/// The variables of `names` (whose names are not UTF-8) that the tool must
/// not keep: those a `.env` of the project around `cwd` sets, byte for byte
/// (on Unix; elsewhere a name that is not Unicode cannot come from azd).
fn others_supplied(names: &[OsString], cwd: &Path, role: Role) -> Vec<OsString> {
    if role != Role::Tool || names.is_empty() {
        return Vec::new();
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt as _;
        let supplied: BTreeSet<Vec<u8>> = project_env_files(cwd)
            .iter()
            .flat_map(|bytes| azd_wasm_host_core::dotenv::name_bytes(bytes).0)
            .collect();
        names
            .iter()
            .filter(|n| supplied.contains(n.as_bytes()))
            .cloned()
            .collect()
    }
    #[cfg(not(unix))]
    {
        let _ = cwd;
        Vec::new()
    }
}

/// The bytes of `path` when it is a regular file (a link to one included, as
/// azd follows it; never a device or a pipe: a pipe is not even opened, since
/// opening one waits for a writer).
fn read_regular(path: &Path) -> Option<Vec<u8>> {
    use std::io::Read as _;
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut file = std::fs::File::open(path).ok()?;
    if !file.metadata().ok()?.is_file() {
        return None;
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(bytes)
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

    /// A ceiling named in the shell is kept by the tool (it can only
    /// tighten); one the project's `.env` names is noted, for every provider
    /// to be refused, in both roles.
    #[test]
    fn a_ceiling_the_shell_names_is_kept_and_one_the_project_names_refuses() {
        let shell = vars(&[
            ("AZD_SERVER", "127.0.0.1:1"),
            ("AZD_WASM_HOST_POLICY", "/ci/strict.toml"),
        ]);
        let dir = tempfile::tempdir().unwrap();
        for role in [Role::Tool, Role::Listen] {
            let got = plan(&shell, None, Some(dir.path()), role, &[]);
            assert!(!removed(&got).contains(&POLICY_ENV), "{role:?}");
            assert!(!got.project_sets_policy, "{role:?}");
        }
        let project = project_with_env("AZD_WASM_HOST_POLICY=/tmp/lax.toml\n");
        for role in [Role::Tool, Role::Listen] {
            let got = plan(&shell, None, Some(project.path()), role, &[]);
            assert!(got.project_sets_policy, "{role:?}");
            // Not in this process's environment: still noted.
            let bare = vars(&[("AZD_SERVER", "127.0.0.1:1")]);
            let got = plan(&bare, None, Some(project.path()), role, &[]);
            assert!(got.project_sets_policy, "{role:?}");
        }
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
        // Trusted by flag: left as it is. The flag names the variable as the
        // platform compares names (case ignored on Windows only).
        let got = plan(
            &env,
            Some(&ext),
            None,
            Role::Tool,
            &["AZD_CONFIG_DIR".into()],
        );
        assert!(got.set.is_empty() && got.remove.iter().all(|(n, _)| n != AZD_CONFIG_DIR));
        let other_case = plan(
            &env,
            Some(&ext),
            None,
            Role::Tool,
            &["azd_config_dir".into()],
        );
        assert_eq!(other_case.set.is_empty(), cfg!(windows));
    }

    #[test]
    fn the_tool_keeps_nothing_the_projects_environment_sets() {
        // Names a list would miss, in the shapes a loose reader would miss
        // (`export` and a tab, a lone CR, a statement after a closing quote,
        // a statement past 4 MiB), beside ordinary ones.
        let mut dotenv = concat!(
            "GREETING=\"hi\"\n",
            "CC_wasm32_wasip2=/tmp/evil-cc\n",
            "export\tRUSTFLAGS=-Clinker=/tmp/x\n",
            "A=1\rSSL_CERT_FILE=/tmp/ca.pem\n",
            "B=\"1\" NODE_OPTIONS=--require=/tmp/x.js\n",
            "BIG=\"",
        )
        .to_owned();
        dotenv.push_str(&"x".repeat(5 << 20));
        dotenv.push_str("\"\nWASI_SYSROOT=/tmp/sysroot\n");
        let project = project_with_env(&dotenv);
        let mut pairs = vec![("AZD_SERVER", "127.0.0.1:1"), ("AZD_ACCESS_TOKEN", "t")];
        let supplied = [
            "GREETING",
            "CC_wasm32_wasip2",
            "RUSTFLAGS",
            "A",
            "SSL_CERT_FILE",
            "B",
            "NODE_OPTIONS",
            "WASI_SYSROOT",
        ];
        pairs.extend(supplied.iter().map(|n| (*n, "from .env")));
        // The user's own, which the project does not set.
        pairs.extend([
            ("HOME", "/home/u"),
            ("PATH", "/usr/bin"),
            ("GOFLAGS", "-mod=mod"),
        ]);
        let env = vars(&pairs);
        let cwd = project.path().join("src/deep");

        let got = plan(&env, None, Some(&cwd), Role::Tool, &["GREETING".into()]);
        let mut gone = removed(&got);
        gone.sort_unstable();
        let mut want: Vec<&str> = supplied[1..].to_vec();
        want.extend(["AZD_ACCESS_TOKEN", "AZD_SERVER"]);
        want.sort_unstable();
        assert_eq!(gone, want);
        let notes = got.notes();
        assert_eq!(notes.len(), 1, "one line: {notes:?}");
        assert!(
            notes[0].contains("WASI_SYSROOT") && notes[0].contains("--trust-env"),
            "{notes:?}"
        );

        // `listen` keeps what a grant may name, never what steers.
        let got = plan(&env, None, Some(&cwd), Role::Listen, &[]);
        let mut gone = removed(&got);
        gone.sort_unstable();
        assert_eq!(
            gone,
            [
                "CC_wasm32_wasip2",
                "NODE_OPTIONS",
                "RUSTFLAGS",
                "SSL_CERT_FILE",
                "WASI_SYSROOT"
            ]
        );
    }

    /// godotenv takes a key's bytes as they come: a name that is not UTF-8
    /// the project's `.env` sets is no more the tool's than any other.
    #[cfg(unix)]
    #[test]
    fn a_name_that_is_not_utf8_the_project_sets_is_not_kept_either() {
        use std::os::unix::ffi::OsStringExt as _;
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("azure.yaml"), "name: p\n").unwrap();
        std::fs::create_dir_all(dir.path().join(".azure/dev")).unwrap();
        std::fs::write(dir.path().join(".azure/dev/.env"), b"\xc3\xc0=1\nOK=2\n").unwrap();
        let names = [
            OsString::from_vec(b"\xc3\xc0".to_vec()),
            OsString::from_vec(b"\xc3\xc1".to_vec()),
        ];
        let gone = others_supplied(&names, dir.path(), Role::Tool);
        assert_eq!(gone, [names[0].clone()]);
        assert!(others_supplied(&names, dir.path(), Role::Listen).is_empty());
    }

    #[test]
    fn a_file_that_is_not_a_regular_file_is_not_read() {
        assert!(read_regular(Path::new("/dev/null")).is_none() || cfg!(not(unix)));
        let dir = tempfile::tempdir().unwrap();
        assert!(read_regular(dir.path()).is_none());
        let file = dir.path().join(".env");
        std::fs::write(&file, "A=1\n").unwrap();
        assert_eq!(read_regular(&file).unwrap(), b"A=1\n");
        // A pipe is not even opened: opening one waits for a writer.
        let fifo = dir.path().join("fifo.env");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::spawn(move || tx.send(read_regular(&fifo)));
            let got = rx.recv_timeout(std::time::Duration::from_secs(5));
            assert_eq!(got, Ok(None), "a pipe was opened");
        }
    }
}

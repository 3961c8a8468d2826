//! `azd-wasm-host run` holds to azd's rules and says how it ended: the real
//! binary, as a user runs it, against a WAT fixture provider (fast to compile,
//! and with every behaviour at hand: a service error from preview, a runaway
//! destroy, traps). The exit codes are the ones documented in docs/testing.md:
//! 0 done, 1 provider error, 2 changes pending (`--detailed-exitcode`),
//! 64 usage, 70 component or host fault, 130 interrupted.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use azd_wasm_host_fixtures as fixtures;

use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fixtures::behaviour_component;
use fixtures::harness::Setup;

const USAGE: i32 = 64;
const FAULT: i32 = 70;

fn provider() -> Setup {
    let setup = Setup::new(&behaviour_component(), "call_timeout_secs = 60");
    std::fs::write(
        setup.project().join("azure.yaml"),
        "name: odd project\ninfra:\n  provider: fixture\n",
    )
    .unwrap();
    setup
}

fn command(setup: &Setup, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_azd-wasm-host"));
    cmd.arg("run")
        .args(args)
        .arg("--provider")
        .arg(setup.manifest())
        .arg("--project")
        .arg(setup.project())
        .env("AZD_WASM_HOST_CACHE_DIR", setup.cache())
        .env("AZD_WASM_HOST_LOG_FILE", setup.dir.path().join("host.log"))
        .env_remove("AZD_DEBUG")
        .env_remove("AZURE_ENV_NAME");
    cmd
}

struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {}", self.stdout))
    }
}

fn run_with(cmd: &mut Command) -> Ran {
    let out = cmd.output().unwrap();
    Ran {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn run(setup: &Setup, args: &[&str]) -> Ran {
    run_with(&mut command(setup, args))
}

#[test]
fn a_provider_error_exits_1_and_json_carries_its_every_field() {
    let setup = provider();
    let r = run(&setup, &["preview", "--output", "json"]);
    assert_eq!(r.code, 1, "{}", r.stderr);
    let v = r.json();
    assert_eq!(v["command"], "preview");
    let e = &v["error"];
    assert_eq!(e["kind"], "provider", "{v:#}");
    assert_eq!(e["message"], "quota exceeded");
    assert_eq!(e["suggestion"], "ask for more");
    assert_eq!(e["code"], "QuotaExceeded");
    assert_eq!(e["statusCode"], 429);
    assert_eq!(e["service"], "compute");
    assert!(
        e["links"].as_array().is_some_and(|l| !l.is_empty()),
        "{v:#}"
    );
    // People still read it on stderr.
    assert!(r.stderr.contains("ERROR: quota exceeded"), "{}", r.stderr);
}

#[test]
fn a_component_that_traps_is_a_fault_not_a_provider_answer() {
    let setup = provider();
    // Parameters recurses without bound: the stack limit traps it.
    let r = run(&setup, &["parameters", "-o", "json"]);
    assert_eq!(r.code, FAULT, "{}", r.stderr);
    assert_eq!(r.json()["error"]["kind"], "fault", "{}", r.stdout);
}

#[test]
fn usage_errors_exit_64_before_anything_runs() {
    let setup = provider();
    let project = setup.project();
    // An unknown argument.
    assert_eq!(run(&setup, &["provision", "--bogus"]).code, USAGE);
    // An environment name azd refuses, from -e or from AZURE_ENV_NAME.
    let r = run(&setup, &["provision", "-e", "my env", "-o", "json"]);
    assert_eq!(r.code, USAGE, "{}", r.stderr);
    assert_eq!(r.json()["error"]["kind"], "usage");
    let r = run_with(command(&setup, &["provision"]).env("AZURE_ENV_NAME", "x:y"));
    assert_eq!(r.code, USAGE, "{}", r.stderr);
    assert!(r.stderr.contains("AZURE_ENV_NAME"), "{}", r.stderr);
    // A provider azure.yaml does not ask for (azd: `no concrete found`).
    let r = run(&setup, &["provision", "--provider-name", "other"]);
    assert_eq!(r.code, USAGE, "{}", r.stderr);
    assert!(r.stderr.contains("no concrete found"), "{}", r.stderr);
    // A .env azd could not read: refused before the provider runs.
    std::fs::create_dir_all(project.join(".azure/dev")).unwrap();
    std::fs::write(project.join(".azure/dev/.env"), b"A=1\nB=\xff\n").unwrap();
    let r = run(&setup, &["provision", "-e", "dev"]);
    assert_eq!(r.code, USAGE, "{}", r.stderr);
    assert!(
        r.stderr.contains("line 2") && r.stderr.contains("UTF-8"),
        "{}",
        r.stderr
    );
    assert!(
        !setup.cache().exists(),
        "the provider was compiled: {}",
        r.stderr
    );
    assert_eq!(
        std::fs::read(project.join(".azure/dev/.env")).unwrap(),
        b"A=1\nB=\xff\n"
    );
    // No azure.yaml, or one without infra.provider.
    std::fs::write(project.join("azure.yaml"), "name: p\n").unwrap();
    let r = run(&setup, &["provision"]);
    assert_eq!(r.code, USAGE);
    assert!(r.stderr.contains("infra.provider"), "{}", r.stderr);
    std::fs::remove_file(project.join("azure.yaml")).unwrap();
    let r = run(&setup, &["provision"]);
    assert_eq!(r.code, USAGE);
    assert!(r.stderr.contains("no azure.yaml"), "{}", r.stderr);
}

#[test]
fn the_environment_is_chosen_as_azd_chooses_it_and_preview_creates_nothing() {
    let setup = provider();
    let project = setup.project();
    // A fresh project: a command that changes nothing creates nothing.
    let r = run(&setup, &["state"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!project.join(".azure").exists(), "state created .azure");
    // AZURE_ENV_NAME names the environment; the first one becomes the default.
    let r = run_with(command(&setup, &["provision"]).env("AZURE_ENV_NAME", "staging"));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(project.join(".azure/staging").is_dir());
    assert!(
        !project.join(".azure/dev").exists(),
        "a stray dev environment"
    );
    let config = std::fs::read_to_string(project.join(".azure/config.json")).unwrap();
    assert!(config.contains("\"staging\""), "{config}");
    // The project's default is used without -e; a second environment does
    // not take the default over.
    std::fs::write(
        project.join(".azure/staging/.env"),
        "# mine\nexport KEEP=1\n",
    )
    .unwrap();
    let r = run(&setup, &["provision", "-e", "second"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let config = std::fs::read_to_string(project.join(".azure/config.json")).unwrap();
    assert!(config.contains("\"staging\""), "{config}");
    let r = run(&setup, &["provision"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(project.join(".azure/staging/.env")).unwrap(),
        "# mine\nexport KEEP=1\n",
        "the provider returned no outputs: the file is untouched"
    );
}

#[test]
fn the_first_start_says_it_is_compiling_and_later_ones_do_not() {
    let setup = provider();
    let first = run(&setup, &["state"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(first.stderr.contains("Compiling"), "{}", first.stderr);
    let again = run(&setup, &["state"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert!(!again.stderr.contains("Compiling"), "{}", again.stderr);
}

/// Processes whose environment names `needle` (the extension `run` spawned).
#[cfg(target_os = "linux")]
fn processes_with_env(needle: &Path) -> Vec<String> {
    let needle = needle.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|e| {
            std::fs::read(e.path().join("environ"))
                .is_ok_and(|env| String::from_utf8_lossy(&env).contains(&needle))
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect()
}

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_says_it_is_cancelling_stops_the_provider_and_exits_130() {
    let setup = provider();
    // Destroy reports "looping", then loops until stopped.
    let mut child = command(&setup, &["down", "--force"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("looping") {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "ended early: {seen}"
        );
        seen.push_str(&line);
    }
    let interrupted = Instant::now();
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{seen}{rest}");
    assert!(interrupted.elapsed() < Duration::from_secs(10));
    assert!(rest.contains("Cancelling"), "{rest}");
    assert!(rest.contains("Cancelled"), "{rest}");
    // The extension it spawned is gone too.
    assert!(
        processes_with_env(&setup.manifest()).is_empty(),
        "the provider's process outlived run"
    );
}

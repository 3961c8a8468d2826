//! The real binary started as azd starts the author's tool (`azd wasm …`:
//! `AZD_SERVER` and `AZD_ACCESS_TOKEN` set, and the project's azd
//! environment values among its variables): what a provider could have put
//! into `.azure/<env>/.env` picks neither the trust folder nor whether
//! unsigned code runs, nor reaches the programs the tool runs; azd's token
//! never does ([docs/trust.md](../../docs/trust.md#what-azds-environment-may-not-steer)).
#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use crate::trust_case;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use trust_case::BIN;

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `program ARGS` with a clean environment: HOME, PATH, and `vars`.
fn run(program: &Path, cwd: &Path, home: &Path, vars: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .env_clear()
        .env("HOME", home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// A trust folder that allows unsigned providers: what a provider would
/// point the tool at.
fn evil_config(root: &Path) -> PathBuf {
    trust_case::allowing_unsigned(root, "evil-config")
}

#[test]
fn under_azd_the_tool_reads_neither_trust_root_nor_unsigned_setting_from_its_environment() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let evil = evil_config(work.path());
    let steering = [
        ("AZD_CONFIG_DIR", evil.to_str().unwrap()),
        ("AZD_WASM_HOST_ALLOW_UNSIGNED", "true"),
    ];
    let azd = [("AZD_SERVER", "127.0.0.1:9"), ("AZD_ACCESS_TOKEN", "jwt")];

    // Outside azd: the variables are the user's, and are read.
    let out = run(
        Path::new(BIN),
        work.path(),
        &home,
        &steering,
        &["trust", "list"],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains(&evil.join("wasm-host").display().to_string()),
        "{stdout}"
    );
    assert!(stdout.contains("unsigned providers: allowed"), "{stdout}");

    // Under azd: ignored, named in one warning that says how to keep one.
    let both: Vec<_> = steering.iter().chain(&azd).copied().collect();
    let out = run(
        Path::new(BIN),
        work.path(),
        &home,
        &both,
        &["trust", "list"],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains(&home.join(".azd/wasm-host").display().to_string()),
        "{stdout}"
    );
    assert!(stdout.contains("unsigned providers: refused"), "{stdout}");
    let warning = stderr
        .lines()
        .find(|l| l.contains("ignored under azd"))
        .unwrap_or_else(|| panic!("no warning of ignored settings: {stderr}"));
    for name in ["AZD_CONFIG_DIR", "AZD_WASM_HOST_ALLOW_UNSIGNED"] {
        assert!(warning.contains(name), "{stderr}");
    }
    assert!(warning.contains("--trust-env "), "{stderr}");
    assert_eq!(stderr.matches("ignored under azd").count(), 1, "{stderr}");

    // Named by the flag: kept.
    let out = run(
        Path::new(BIN),
        work.path(),
        &home,
        &both,
        &[
            "--trust-env",
            "AZD_CONFIG_DIR",
            "trust",
            "list",
            "--trust-env",
            "AZD_WASM_HOST_ALLOW_UNSIGNED",
        ],
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(stdout.contains("unsigned providers: allowed"), "{stdout}");
}

#[cfg(unix)]
#[test]
fn an_installed_tool_takes_azds_config_folder_from_where_azd_installed_it() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let evil = evil_config(work.path());
    // As azd lays the tool out: <config>/extensions/<id>/azd-wasm-host.
    let config = work.path().join("azd-config");
    let installed = config.join("extensions/azd-wasm-host.tools/azd-wasm-host");
    std::fs::create_dir_all(installed.parent().unwrap()).unwrap();
    std::fs::hard_link(BIN, &installed)
        .or_else(|_| std::fs::copy(BIN, &installed).map(drop))
        .unwrap();
    let vars = [
        ("AZD_CONFIG_DIR", evil.to_str().unwrap()),
        ("AZD_SERVER", "127.0.0.1:9"),
        ("AZD_ACCESS_TOKEN", "jwt"),
    ];
    let out = run(&installed, work.path(), &home, &vars, &["trust", "list"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let expected = std::fs::canonicalize(&config).unwrap().join("wasm-host");
    assert!(stdout.contains(&expected.display().to_string()), "{stdout}");
    assert!(stdout.contains("unsigned providers: refused"), "{stdout}");
    assert!(
        stderr.contains("AZD_CONFIG_DIR=") && stderr.contains("is ignored"),
        "{stderr}"
    );
}

/// The programs the tool runs (here a `[build] command`) inherit neither
/// azd's token nor any variable the project's environment supplied (a list
/// of names that steer would miss `CC_wasm32_wasip2`, `WASI_SYSROOT`, …):
/// nothing the project's `.env` holds reaches them, unless `--trust-env`
/// names it.
#[cfg(unix)]
#[test]
fn programs_the_tool_runs_under_azd_get_neither_azds_token_nor_anything_the_projects_env_holds() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let project = work.path().join("project");
    std::fs::create_dir_all(project.join(".azure/dev")).unwrap();
    std::fs::write(project.join("azure.yaml"), "name: p\n").unwrap();
    // What a provider's outputs could have left in the project's environment.
    std::fs::write(
        project.join(".azure/dev/.env"),
        concat!(
            "GOFLAGS=\"-toolexec=/tmp/evil\"\nNODE_OPTIONS=\"--require /tmp/evil.js\"\nGREETING=\"hi\"\n",
            "export\tCC_wasm32_wasip2=/tmp/evil-cc\nA=1\rWASI_SYSROOT=/tmp/evil-sysroot\n",
            "B=\"1\" SSLKEYLOGFILE=/tmp/keys\nKEPT=\"named by --trust-env\"\n",
        ),
    )
    .unwrap();
    std::fs::write(
        project.join("provider.toml"),
        "name = \"p\"\ncomponent = \"build/p.wasm\"\n\n[build]\ncommand = \"env > seen.env\"\n",
    )
    .unwrap();
    let vars = [
        ("AZD_SERVER", "127.0.0.1:9"),
        ("AZD_ACCESS_TOKEN", "the-jwt-azd-gave"),
        ("GOFLAGS", "-toolexec=/tmp/evil"),
        ("NODE_OPTIONS", "--require /tmp/evil.js"),
        ("GREETING", "hi"),
        ("CARGO", "/tmp/evil-cargo"),
        ("CC_wasm32_wasip2", "/tmp/evil-cc"),
        ("WASI_SYSROOT", "/tmp/evil-sysroot"),
        ("SSLKEYLOGFILE", "/tmp/keys"),
        ("KEPT", "named by --trust-env"),
        // The user's own, which the project does not set.
        ("MY_OWN", "mine"),
    ];
    // The build fails (the command writes no component); what it saw is the point.
    let out = run(
        Path::new(BIN),
        &project,
        &home,
        &vars,
        &["build", "--trust-env", "KEPT"],
    );
    let seen = std::fs::read_to_string(project.join("seen.env")).unwrap();
    for gone in [
        "AZD_ACCESS_TOKEN",
        "the-jwt-azd-gave",
        "AZD_SERVER=",
        "GOFLAGS=",
        "NODE_OPTIONS=",
        "CARGO=",
        "GREETING=",
        "CC_wasm32_wasip2=",
        "WASI_SYSROOT=",
        "SSLKEYLOGFILE=",
    ] {
        assert!(
            !seen.contains(gone),
            "{gone} reached the build command:\n{seen}"
        );
    }
    assert!(seen.contains("KEPT=named by --trust-env"), "{seen}");
    assert!(seen.contains("MY_OWN=mine"), "{seen}");
    let stderr = text(&out.stderr);
    let warning = stderr
        .lines()
        .find(|l| l.contains("the project's azd environment"))
        .unwrap_or_else(|| panic!("no warning: {stderr}"));
    assert!(
        warning.contains("WASI_SYSROOT") && !warning.contains("KEPT"),
        "{warning}"
    );
}

/// Under azd, an argument's environment fallback is read only after the
/// environment is settled: the project's `AZD_WASM_HOST_AZD_CONTRACT` (a
/// setting of this tool, ignored under azd) never reaches `run`'s
/// `--azd-contract`, whose parse would refuse this value.
#[test]
fn under_azd_no_argument_is_read_from_the_environment_before_it_is_settled() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let contract = [("AZD_WASM_HOST_AZD_CONTRACT", "not-a-mode")];
    let args = ["run", "state", "--provider", "absent/provider.toml"];
    // Outside azd the variable is the user's, and clap reads it.
    let out = run(Path::new(BIN), work.path(), &home, &contract, &args);
    let stderr = text(&out.stderr);
    assert!(stderr.contains("not-a-mode"), "{stderr}");
    // Under azd it is ignored before clap reads anything.
    let under_azd = [
        contract[0],
        ("AZD_SERVER", "127.0.0.1:9"),
        ("AZD_ACCESS_TOKEN", "jwt"),
    ];
    let out = run(Path::new(BIN), work.path(), &home, &under_azd, &args);
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("invalid value"), "{stderr}");
    assert!(
        stderr.contains("AZD_WASM_HOST_AZD_CONTRACT"),
        "named as ignored: {stderr}"
    );
    assert!(
        stderr.contains("no azure.yaml"),
        "the run went on past its arguments: {stderr}"
    );
}

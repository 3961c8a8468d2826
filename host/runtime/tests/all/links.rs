//! Links against a hostile provider granted `.azure/{env}` read-write
//! (issue 45, item 5): the links a guest may make or move
//! (`sandbox::files::links`), and azd's files kept plain whatever the route
//! (`sandbox::files::azd_files`). The fake azd writes the environment's `.env` as
//! azd does, by path and following links, so a write through a link shows.
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test all links::`

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use azd_wasm_host_core::{
    AzdServices, ConfirmQuestion, Provider, ProviderError, SelectQuestion, ServiceError,
    TextQuestion,
};
use azd_wasm_host_fixtures::harness::{Setup, code, ctx, options, status, with_azd};
use azd_wasm_host_fixtures::{EPERM, links_component};
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_runtime::LoadedProvider;

/// What the user's home holds before the provider runs.
const BASHRC: &str = "export PATH=$HOME/bin:$PATH\n";

/// azd's environment service, writing `.env` as azd's `Save` does: by path,
/// through whatever link is there (`os.Create`).
struct FakeAzd {
    dotenv: PathBuf,
    writes: Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl AzdServices for FakeAzd {
    async fn current_environment(&self) -> Result<String, ServiceError> {
        Ok("dev".into())
    }
    async fn environment_values(&self, _: &str) -> Result<Vec<(String, String)>, ServiceError> {
        Ok(Vec::new())
    }
    async fn environment_value(&self, _: &str, _: &str) -> Result<String, ServiceError> {
        Ok(String::new())
    }
    async fn set_environment_value(
        &self,
        _: &str,
        key: &str,
        value: &str,
    ) -> Result<(), ServiceError> {
        self.writes
            .lock()
            .unwrap()
            .push((key.to_owned(), value.to_owned()));
        std::fs::write(&self.dotenv, format!("{key}=\"{value}\"\n"))
            .map_err(|e| ServiceError::new(e.to_string()))
    }
    async fn confirm(&self, _: ConfirmQuestion) -> Result<bool, ServiceError> {
        Err(ServiceError::new("not scripted"))
    }
    async fn prompt(&self, _: TextQuestion) -> Result<String, ServiceError> {
        Err(ServiceError::new("not scripted"))
    }
    async fn select(&self, _: SelectQuestion) -> Result<u32, ServiceError> {
        Err(ServiceError::new("not scripted"))
    }
}

/// The links fixture granted `.azure/{env}` read-write in environment `dev`,
/// with the user's `~/.bashrc` beside the project (`<tmp>/home/u/.bashrc`).
struct World {
    setup: Setup,
    loaded: LoadedProvider,
    azd: Arc<FakeAzd>,
}

impl World {
    fn new() -> Self {
        let setup = Setup::new(
            &links_component(),
            "fs = [{ path = \".azure/{env}\", access = \"read-write\" }]\n\
             [policy.azd]\nenvironment = \"read-write\"",
        );
        let home = setup.dir.path().join("home/u");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(home.join(".bashrc"), BASHRC).unwrap();
        std::fs::create_dir_all(setup.project().join(".azure/dev")).unwrap();
        let azd = Arc::new(FakeAzd {
            dotenv: setup.project().join(".azure/dev/.env"),
            writes: Mutex::new(Vec::new()),
        });
        let loaded = setup.try_load(with_azd(azd.clone(), Some("dev"))).unwrap();
        Self { setup, loaded, azd }
    }

    /// `name` in the environment's folder.
    fn env_file(&self, name: &str) -> PathBuf {
        self.setup.project().join(".azure/dev").join(name)
    }

    fn bashrc(&self) -> String {
        std::fs::read_to_string(self.setup.dir.path().join("home/u/.bashrc")).unwrap()
    }

    async fn instance(&self) -> Arc<dyn Provider> {
        self.setup.instance(&self.loaded).await
    }
}

/// From `.azure/dev` up to `<tmp>`, then into the user's home.
const TO_BASHRC: &str = "../../../home/u/.bashrc";

/// Asks the fixture to do `op` (its hint).
async fn guest(p: &Arc<dyn Provider>, op: &str) -> Result<(), ProviderError> {
    p.state(pb::ProvisioningStateOptions { hint: op.into() }, ctx(op))
        .await
        .map(drop)
}

fn is_link(path: &Path) -> bool {
    path.symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
}

/// The attack of the issue: `.env` made a link to `~/.bashrc`, then azd
/// writing the environment. The link is refused (EPERM), and what azd then
/// writes lands in a plain `.env`.
#[tokio::test]
async fn a_guest_link_that_climbs_out_of_its_folder_is_refused() {
    let w = World::new();
    let p = w.instance().await;
    for (target, at) in [
        (TO_BASHRC, ".env"),
        ("../../../../home/u/.bashrc", "config.json"),
        ("/etc/passwd", "abs"),
        ("sub/../../x", "dotdot"),
        (r"..\..\x", "backslash"),
    ] {
        let e = guest(&p, &format!("s{target}|{at}")).await.unwrap_err();
        assert_eq!(status(&e), EPERM, "{target}: {e}");
        assert!(w.env_file(at).symlink_metadata().is_err(), "{target}");
    }
    // The same link, then azd's environment written: azd never reaches ~/.bashrc.
    let e = guest(&p, &format!("e{TO_BASHRC}|.env")).await.unwrap_err();
    assert_eq!(status(&e), EPERM, "{e}");
    assert!(w.azd.writes.lock().unwrap().is_empty());
    assert_eq!(w.bashrc(), BASHRC);
}

/// A link that stays beneath its own folder is made, and serves as one.
#[tokio::test]
async fn a_link_that_stays_in_its_folder_still_works() {
    let w = World::new();
    let p = w.instance().await;
    std::fs::create_dir_all(w.env_file("v2/data")).unwrap();
    guest(&p, "sv2/data|current").await.unwrap();
    guest(&p, "s./v2|here").await.unwrap();
    assert_eq!(
        std::fs::read_link(w.env_file("current")).unwrap(),
        Path::new("v2/data")
    );
    assert!(w.env_file("current").is_dir(), "it resolves");
    // Moving it keeps it within its new folder: allowed too.
    std::fs::create_dir(w.env_file("moved")).unwrap();
    guest(&p, "rcurrent|moved/current").await.unwrap();
    assert!(is_link(&w.env_file("moved/current")));
    // And the provider serves on.
    guest(&p, "sv2|again").await.unwrap();
}

/// A link shipped in the project that points out of it (the user's, say)
/// cannot be moved over azd's `.env`, nor hard-linked there; nor can `.env`
/// be hard-linked elsewhere.
#[tokio::test]
async fn moving_or_hard_linking_a_link_over_an_azd_file_is_refused() {
    let w = World::new();
    symlink(TO_BASHRC, w.env_file("shipped")).unwrap();
    let p = w.instance().await;

    // `.env` is not there yet (or the guest removed it first).
    for from in ["shipped", "./shipped", "sub/../shipped"] {
        std::fs::create_dir_all(w.env_file("sub")).unwrap();
        let e = guest(&p, &format!("r{from}|.env")).await.unwrap_err();
        assert_eq!(status(&e), EPERM, "{from}: {e}");
    }
    // With a trailing slash the system refuses it itself (ENOTDIR).
    guest(&p, "rshipped/|.env").await.unwrap_err();
    let e = guest(&p, "lshipped|.env").await.unwrap_err();
    assert_eq!(status(&e), EPERM, "{e}");
    assert!(w.env_file(".env").symlink_metadata().is_err());
    // azd writes it; the guest cannot give it a second name.
    std::fs::write(w.env_file(".env"), "AZURE_LOCATION=\"westeurope\"\n").unwrap();
    let e = guest(&p, "l.env|copy").await.unwrap_err();
    assert_eq!(status(&e), EPERM, "{e}");
    assert!(!is_link(&w.env_file(".env")));
    assert!(w.env_file("copy").symlink_metadata().is_err());
    assert_eq!(
        std::fs::read_to_string(w.env_file(".env")).unwrap(),
        "AZURE_LOCATION=\"westeurope\"\n"
    );
    assert_eq!(w.bashrc(), BASHRC);
}

/// A link that obeys the rule, made elsewhere in the folder and renamed over
/// `.env`: the move itself is allowed, but the answer of that call is refused,
/// and the link is gone before azd could write through it.
#[tokio::test]
async fn a_link_renamed_over_an_azd_file_fails_the_answer_and_goes() {
    let w = World::new();
    std::fs::write(w.env_file(".env"), "A=1\n").unwrap();
    std::fs::write(w.env_file("mine"), "guest's\n").unwrap();
    let p = w.instance().await;
    let e = guest(&p, "smine|elsewhere").await;
    e.unwrap();
    let e = guest(&p, "relsewhere|.env").await.unwrap_err();
    assert_eq!(code(&e), "unsafe_azd_file", "{e}");
    assert!(e.message.contains(".azure/dev/.env"), "names it: {e}");
    assert!(e.message.contains("\"mine\""), "says where it pointed: {e}");
    assert!(w.env_file(".env").symlink_metadata().is_err(), "removed");
    assert_eq!(
        std::fs::read_to_string(w.env_file("mine")).unwrap(),
        "guest's\n"
    );
    // The instance is retired.
    let e = guest(&p, "sv2|x").await.unwrap_err();
    assert_eq!(code(&e), "provider_crashed", "{e}");
}

/// `.azure/dev/.env` replaced by a link to `~/.bashrc` between two calls
/// (standing in for any route: another process, a folder moved): the next
/// answer is an error naming the path and its target, the link is removed,
/// and azd's next save writes a plain `.env`, not `~/.bashrc`.
#[tokio::test]
async fn an_env_file_replaced_by_a_link_between_calls_fails_the_next_answer() {
    let w = World::new();
    std::fs::write(w.env_file(".env"), "A=1\n").unwrap();
    let p = w.instance().await;
    guest(&p, "sv2|fine").await.unwrap();

    std::fs::remove_file(w.env_file(".env")).unwrap();
    symlink(TO_BASHRC, w.env_file(".env")).unwrap();
    let e = p.deploy(ctx("deploy")).await.unwrap_err();
    assert_eq!(code(&e), "unsafe_azd_file", "{e}");
    assert!(e.message.contains("after `deploy`"), "{e}");
    assert!(e.message.contains(".azure/dev/.env"), "{e}");
    assert!(e.message.contains(TO_BASHRC), "{e}");
    assert!(e.message.contains("removed"), "{e}");
    assert!(!is_link(&w.env_file(".env")));

    // What azd writes next lands in the project.
    std::fs::write(w.env_file(".env"), "B=2\n").unwrap();
    assert_eq!(w.bashrc(), BASHRC);
    // A fresh Initialize serves again.
    w.instance().await.deploy(ctx("again")).await.unwrap();
}

/// A link the guest may make (it stays in its folder) put at `.env`, then
/// azd's environment written: the write never reaches azd, and the call's
/// answer is refused.
#[tokio::test]
async fn azds_environment_is_not_used_while_its_file_is_a_link() {
    let w = World::new();
    std::fs::write(w.env_file("stolen"), "").unwrap();
    let p = w.instance().await;
    let e = guest(&p, "estolen|.env").await.unwrap_err();
    assert_eq!(code(&e), "unsafe_azd_file", "{e}");
    assert!(
        e.message.contains("before azd's environment was used"),
        "{e}"
    );
    assert!(w.azd.writes.lock().unwrap().is_empty(), "azd was asked");
    assert_eq!(std::fs::read_to_string(w.env_file("stolen")).unwrap(), "");
    assert!(!is_link(&w.env_file(".env")));
}

/// A link at azd's file before the provider runs (shipped in the project, or
/// the user's own) refuses the grant, and is left as it is.
#[tokio::test]
async fn a_link_at_an_azd_file_before_initialize_refuses_the_grant() {
    let w = World::new();
    symlink("../../shared.env", w.env_file(".env")).unwrap();
    let p = w.loaded.factory.create().await.unwrap();
    let e = p
        .initialize(w.setup.project().to_str().unwrap(), options(), ctx("init"))
        .await
        .unwrap_err();
    assert_eq!(code(&e), "unsafe_grant", "{e}");
    assert!(e.message.contains(".azure/dev/.env"), "{e}");
    assert!(e.message.contains("../../shared.env"), "{e}");
    assert!(is_link(&w.env_file(".env")), "left as it was");
    // Where no read-write grant reaches, a link is the user's affair.
    let setup = Setup::new(
        &links_component(),
        "fs = [{ path = \"infra\", access = \"read-write\" }]",
    );
    std::fs::create_dir_all(setup.project().join(".azure/dev")).unwrap();
    symlink("../../shared.env", setup.project().join(".azure/dev/.env")).unwrap();
    let loaded = setup.load();
    setup
        .instance(&loaded)
        .await
        .deploy(ctx("d"))
        .await
        .unwrap();
    assert!(is_link(&setup.project().join(".azure/dev/.env")));
}

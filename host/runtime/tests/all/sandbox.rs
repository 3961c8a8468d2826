//! The sandbox against a hostile provider: one test per way out that a
//! hostile-provider review found (see issue "A sandbox you can trust"), each
//! with a fixture built from inline WAT (`fixtures/`).
//!
//! The two that measure the whole process (memory and threads left behind by
//! stopped calls, and the host's memory for one oversized answer) have test
//! binaries of their own: `bound_memory.rs` and `bound_answer.rs`.
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test all sandbox::`

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use azd_wasm_host_fixtures as fixtures;

use crate::log_sink::LogSink;

use azd_wasm_host_proto::RequestKind;
use azd_wasm_host_proto::azdext as pb;
use azd_wasm_host_runtime::{CacheOutcome, RuntimeOptions, check};

use fixtures::harness::{Setup, code, ctx_with_channel, options, progress_text, status};
use fixtures::{
    HOSTILE_TEXT, hostile_text_component, lookup_component, multi_memory_component, wasi_component,
};

fn hint(h: String) -> pb::ProvisioningStateOptions {
    pb::ProvisioningStateOptions { hint: h }
}

// 1. Grants cannot be redirected -------------------------------------------

/// A provider granted `state` read-write; between two Initializes the
/// directory is replaced by a symbolic link to a folder outside the project
/// (what a guest with write access to the parent, or a project shipped that
/// way, can do). The second Initialize must refuse the grant and name the
/// link; the guest must never see the outside folder.
#[cfg(unix)]
#[tokio::test]
async fn a_symlink_swapped_between_two_initializes_is_refused() {
    let setup = Setup::new(
        &wasi_component(),
        "fs = [{ path = \"state\", access = \"read-write\" }]",
    );
    let state = setup.project().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("data.txt"), "inside").unwrap();
    let outside = setup.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("data.txt"), "secret").unwrap();
    let loaded = setup.load();

    let p = setup.instance(&loaded).await;
    let got = p
        .state(hint("data.txt".into()), fixtures::harness::ctx("r1"))
        .await
        .unwrap();
    assert_eq!(got.state.unwrap().resources[0].id, "inside");

    std::fs::remove_dir_all(&state).unwrap();
    std::os::unix::fs::symlink("../outside", &state).unwrap();

    let project = setup.project();
    let e = p
        .initialize(
            project.to_str().unwrap(),
            options(),
            fixtures::harness::ctx("r2"),
        )
        .await
        .unwrap_err();
    assert_eq!(code(&e), "unsafe_grant", "{e}");
    assert!(e.message.contains("\"state\""), "names the grant: {e}");
    assert!(
        e.message.contains("../outside"),
        "says where it points: {e}"
    );
    // No instance serves the request that would read through the link.
    let e = p
        .state(hint("data.txt".into()), fixtures::harness::ctx("r3"))
        .await
        .unwrap_err();
    assert_ne!(e.message, "secret");
    assert!(code(&e).starts_with("provider_"), "{e}");
}

/// `{env}` comes from azd; `..` would turn `.azure/{env}` into the project
/// root. It is checked with azd's rule and refused.
#[tokio::test]
async fn a_dotdot_environment_name_is_refused() {
    let setup = Setup::new(
        &wasi_component(),
        "fs = [{ path = \".azure/{env}\", access = \"read-write\" }]",
    );
    std::fs::write(setup.project().join("root.txt"), "root").unwrap();
    for bad in ["..", ".", "a/b", "my env"] {
        let loaded = setup
            .try_load(RuntimeOptions {
                environment: Some(bad.into()),
                ..RuntimeOptions::default()
            })
            .unwrap();
        let p = loaded.factory.create().await.unwrap();
        let e = p
            .initialize(
                setup.project().to_str().unwrap(),
                options(),
                fixtures::harness::ctx("r"),
            )
            .await
            .unwrap_err();
        assert_eq!(code(&e), "invalid_environment_name", "{bad}: {e}");
        assert!(e.message.contains(&format!("{bad:?}")), "{e}");
    }
    // A valid name works and grants `.azure/<name>` only.
    let loaded = setup
        .try_load(RuntimeOptions {
            environment: Some("dev".into()),
            ..RuntimeOptions::default()
        })
        .unwrap();
    let p = setup.instance(&loaded).await;
    assert!(setup.project().join(".azure/dev").is_dir());
    let e = p
        .state(hint("../../root.txt".into()), fixtures::harness::ctx("r"))
        .await
        .unwrap_err();
    assert_ne!(status(&e), 0, "{e}");
}

/// A grant outside the project is refused unless the manifest says
/// `outside_project = true`; `check` then shows it as outside.
#[tokio::test]
async fn grants_outside_the_project_need_explicit_consent() {
    for path in ["/etc", "../elsewhere", "a/../../b"] {
        let setup = Setup::new(
            &wasi_component(),
            &format!("fs = [{{ path = \"{path}\", access = \"read\" }}]"),
        );
        let e = format!(
            "{:#}",
            setup.try_load(RuntimeOptions::default()).unwrap_err()
        );
        assert!(e.contains("outside the project"), "{path}: {e}");
        assert!(e.contains("outside_project = true"), "{path}: {e}");
    }
    let setup = Setup::new(
        &wasi_component(),
        "fs = [{ path = \"../shared\", access = \"read\", outside_project = true }]",
    );
    let shared = setup.dir.path().join("shared");
    std::fs::create_dir_all(&shared).unwrap();
    std::fs::write(shared.join("data.txt"), "shared").unwrap();
    let report = check(&setup.manifest(), &RuntimeOptions::default()).unwrap();
    assert!(report.manifest.policy.fs[0].outside_project);
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let got = p
        .state(hint("data.txt".into()), fixtures::harness::ctx("r"))
        .await
        .unwrap();
    assert_eq!(got.state.unwrap().resources[0].id, "shared");
}

// 2. azd's credentials are never granted -------------------------------------

#[test]
fn azd_credentials_can_never_be_granted() {
    for name in [
        "AZD_ACCESS_TOKEN",
        "AZD_SERVER",
        "azd_access_token",
        "AZD_AUTH_KEY",
    ] {
        let setup = Setup::new(&wasi_component(), &format!("env = [\"{name}\"]"));
        let e = format!(
            "{:#}",
            setup.try_load(RuntimeOptions::default()).unwrap_err()
        );
        assert!(e.contains("can never be granted"), "{name}: {e}");
        assert!(
            e.to_lowercase().contains(&name.to_lowercase()),
            "{name}: {e}"
        );
    }
}

// 4. One budget for every memory and table ------------------------------------

/// The fixture grows two memories by 40 MiB each (deploy) and two tables by
/// 900,000 elements each (preview): under a per-memory or per-table limit each
/// grow would pass; the instance's one budget refuses the second.
#[tokio::test]
async fn one_budget_bounds_every_memory_and_table() {
    let setup = Setup::new(&multi_memory_component(), "memory_mb = 64");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p.deploy(fixtures::harness::ctx("r")).await.unwrap_err();
    assert_eq!(code(&e), "provider_out_of_memory", "{e}");
    assert!(e.message.contains("64 MiB"), "{e}");
    let p = setup.instance(&loaded).await;
    p.state(Default::default(), fixtures::harness::ctx("after"))
        .await
        .expect("a fresh instance serves calls");

    let setup = Setup::new(&multi_memory_component(), "memory_mb = 128");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.deploy(fixtures::harness::ctx("r"))
        .await
        .expect("80 MiB in two memories fits in 128 MiB");

    let setup = Setup::new(&multi_memory_component(), "memory_mb = 16");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p.preview(fixtures::harness::ctx("r")).await.unwrap_err();
    assert_eq!(code(&e), "provider_out_of_memory", "{e}");

    let setup = Setup::new(&multi_memory_component(), "memory_mb = 64");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.preview(fixtures::harness::ctx("r"))
        .await
        .expect("1.8 M table elements fit in 64 MiB");
}

// 6. Name lookups only for allowlisted names ---------------------------------

#[tokio::test]
async fn name_lookups_reach_only_allowlisted_names() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();

    // An allowlisted name resolves (by the host) and its address connects:
    // `localhost` names loopback as literally as 127.0.0.1 does.
    let setup = Setup::new(
        &lookup_component(),
        &format!("network = [\"localhost:{port}\"]"),
    );
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.state(
        hint(format!("{port}:localhost")),
        fixtures::harness::ctx("r"),
    )
    .await
    .expect("an allowlisted name resolves and connects");

    // Any other name is refused before the resolver sees it: access-denied
    // (400 + 1), not the resolver's "name-unresolvable".
    let p = setup.instance(&loaded).await;
    let e = p
        .state(
            hint(format!("{port}:exfiltrate.example.invalid")),
            fixtures::harness::ctx("r"),
        )
        .await
        .unwrap_err();
    assert_eq!(status(&e), 401, "{e}");

    // An IP literal needs no lookup, but connecting still needs the allowlist:
    // 127.0.0.1 was not resolved from an allowlisted name in this instance
    // (300 + access-denied: the connect is refused).
    let p = setup.instance(&loaded).await;
    let e = p
        .state(
            hint(format!("{port}:127.0.0.1")),
            fixtures::harness::ctx("r"),
        )
        .await
        .unwrap_err();
    assert_eq!(status(&e), 301, "{e}");

    // With only IP entries, no name resolves at all.
    let setup = Setup::new(
        &lookup_component(),
        &format!("network = [\"127.0.0.1:{port}\"]"),
    );
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p
        .state(
            hint(format!("{port}:localhost")),
            fixtures::harness::ctx("r"),
        )
        .await
        .unwrap_err();
    assert_eq!(status(&e), 401, "{e}");
    p.state(
        hint(format!("{port}:127.0.0.1")),
        fixtures::harness::ctx("r2"),
    )
    .await
    .expect("an allowlisted IP connects");
}

/// A name grant reaches what its name resolves to, but never this machine or its link: a grant
/// of `127.1:PORT` (a name: the resolver reads it as 127.0.0.1) resolves, yet the connect to
/// 127.0.0.1 is refused (access-denied); the same address granted literally connects, with or
/// without the name beside it.
#[tokio::test]
async fn a_name_grant_never_reaches_loopback_unless_the_address_is_granted_literally() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();

    let by_name = Setup::new(
        &lookup_component(),
        &format!("network = [\"127.1:{port}\"]"),
    );
    let loaded = by_name.load();
    let p = by_name.instance(&loaded).await;
    let e = p
        .state(hint(format!("{port}:127.1")), fixtures::harness::ctx("r"))
        .await
        .unwrap_err();
    // 200/300 + access-denied: start-connect or finish-connect refused, not the lookup.
    assert!(
        [201, 301].contains(&status(&e)),
        "a name grant reached loopback: {e}"
    );

    let both = Setup::new(
        &lookup_component(),
        &format!("network = [\"127.1:{port}\", \"127.0.0.1:{port}\"]"),
    );
    let loaded = both.load();
    let p = both.instance(&loaded).await;
    p.state(hint(format!("{port}:127.1")), fixtures::harness::ctx("r"))
        .await
        .expect("loopback granted literally connects, whatever name found it");

    let literal = Setup::new(
        &lookup_component(),
        &format!("network = [\"127.0.0.1:{port}\"]"),
    );
    let loaded = literal.load();
    let p = literal.instance(&loaded).await;
    p.state(
        hint(format!("{port}:127.0.0.1")),
        fixtures::harness::ctx("r"),
    )
    .await
    .expect("a literal loopback grant connects");
}

// 7. Terminal control sequences never reach a terminal -----------------------

/// The guest reports and logs a text full of OSC/CSI sequences; what reaches
/// azd (progress) and the log keeps the words and loses every control
/// character. (Its subscriber is this thread's, as the call runs here.)
#[tokio::test]
async fn terminal_control_sequences_are_stripped_from_guest_text() {
    let sink = LogSink::default();
    let _log = tracing::subscriber::set_default(sink.subscriber(tracing::Level::DEBUG).finish());
    assert!(HOSTILE_TEXT.chars().any(char::is_control));
    let setup = Setup::new(&hostile_text_component(), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let (ctx, mut rx) = ctx_with_channel(RequestKind::Deploy, "r");
    p.deploy(ctx).await.unwrap();
    let (_, _, text) = progress_text(&rx.recv().await.unwrap());
    assert!(text.contains("visible"), "{text:?}");
    assert!(!text.chars().any(char::is_control), "{text:?}");
    let log = sink.text();
    let line = log
        .lines()
        .find(|l| l.contains("visible"))
        .unwrap_or_else(|| panic!("guest log line missing:\n{log}"));
    assert!(
        !line.contains('\u{1b}') && !line.contains('\u{7}'),
        "{line:?}"
    );
}

// 8. The compile cache is trusted only when nobody else could write it -------

#[cfg(unix)]
#[test]
fn a_cache_others_can_write_to_is_not_used() {
    use std::os::unix::fs::PermissionsExt as _;
    let setup = Setup::new(&wasi_component(), "");
    let cache = setup.cache();
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o777)).unwrap();
    assert_eq!(setup.load().cache, CacheOutcome::Uncached);
    let entries = std::fs::read_dir(&cache).unwrap().count();
    assert_eq!(entries, 0, "nothing is written to a shared cache");
    std::fs::set_permissions(&cache, std::fs::Permissions::from_mode(0o700)).unwrap();
    assert_eq!(setup.load().cache, CacheOutcome::Stored);
    assert_eq!(setup.load().cache, CacheOutcome::Hit);
}

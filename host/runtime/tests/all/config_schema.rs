//! The provider's config schema at Initialize: azd's config is checked before
//! the guest sees it. The fixture's `initialize` traps, so an Initialize that
//! answers `invalid_config` never reached the guest, and one that answers
//! `provider_trapped` passed the schema and called it.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    reason = "test code: a failed unwrap is a failed test; figures are printed for the note"
)]

use azd_wasm_host_core::json::object_to_struct;
use azd_wasm_host_fixtures::harness::{Setup, code, ctx, options};
use azd_wasm_host_fixtures::{IMPORTS_AZD, component, module};
use azd_wasm_host_manifest::ConfigSchema;
use azd_wasm_host_proto::azdext as pb;
use serde_json::json;

const SCHEMA: &str = r#"{
  "type": "object",
  "properties": { "name": { "type": "string", "minLength": 1 }, "replicas": { "type": "integer", "maximum": 3 } },
  "required": ["name"],
  "additionalProperties": false
}"#;

/// A provider whose `initialize` traps, with the schema above.
fn setup() -> Setup {
    let wat = module(IMPORTS_AZD, "", &[("initialize", "(unreachable)")]);
    let setup = Setup::new(
        &component(&wat, &[], "provisioning-provider", false),
        "\n[config]\nschema = \"config.schema.json\"",
    );
    std::fs::write(setup.dir.path().join("config.schema.json"), SCHEMA).unwrap();
    setup
}

fn with_config(config: serde_json::Value) -> pb::ProvisioningOptions {
    pb::ProvisioningOptions {
        config: Some(object_to_struct(config.as_object().unwrap())),
        ..options()
    }
}

#[tokio::test]
async fn a_config_the_schema_refuses_never_reaches_the_guest() {
    let setup = setup();
    let loaded = setup.load();
    let p = loaded.factory.create().await.unwrap();
    let project = setup.project();
    let project = project.to_str().unwrap();
    let bad = with_config(json!({ "name": 7, "replicas": 9, "extra": true }));
    let e = p.initialize(project, bad, ctx("i1")).await.unwrap_err();
    assert_eq!(code(&e), "invalid_config", "{e}");
    assert!(!e.is_fault());
    let m = &e.message;
    assert!(
        m.contains("provider `fixture`") && m.contains("3 violations"),
        "{m}"
    );
    assert!(
        m.contains("at \"/name\": want string, but got number"),
        "{m}"
    );
    assert!(
        m.contains("at \"/replicas\": must be <=3, but got 9"),
        "{m}"
    );
    assert!(
        m.contains("at \"\": additionalProperties 'extra' not allowed"),
        "{m}"
    );
    assert!(
        e.suggestion.contains("config.schema.json"),
        "{}",
        e.suggestion
    );
    // No instance serves after a refused Initialize.
    let e = p.deploy(ctx("d1")).await.unwrap_err();
    assert_eq!(code(&e), "provider_not_initialized", "{e}");
    // azd sent no config: the guest would get `{}`, which lacks `name`.
    let e = p
        .initialize(project, options(), ctx("i2"))
        .await
        .unwrap_err();
    assert!(e.message.contains("missing properties 'name'"), "{e}");
    // A config that matches reaches the guest, whose initialize traps.
    let good = with_config(json!({ "name": "world", "replicas": 2 }));
    let e = p.initialize(project, good, ctx("i3")).await.unwrap_err();
    assert_eq!(code(&e), "provider_trapped", "{e}");
}

#[tokio::test]
async fn a_provider_without_a_schema_gets_any_config() {
    let wat = module(IMPORTS_AZD, "", &[]);
    let setup = Setup::new(&component(&wat, &[], "provisioning-provider", false), "");
    let loaded = setup.load();
    assert!(loaded.manifest.config_schema.is_none());
    let p = loaded.factory.create().await.unwrap();
    let any = with_config(json!({ "name": 7, "whatever": [1, 2] }));
    p.initialize(setup.project().to_str().unwrap(), any, ctx("i"))
        .await
        .unwrap();
}

/// What the check costs at Initialize: loading (reading and compiling) the
/// schema, and checking a matching and a refused config
/// (`cargo test -p azd-wasm-host-runtime --test all config_schema:: -- --nocapture` prints the figures).
#[test]
fn the_check_costs_microseconds() {
    let setup = setup();
    let path = setup.dir.path().join("config.schema.json");
    let started = std::time::Instant::now();
    let schema = ConfigSchema::load(&path, &setup.manifest()).unwrap();
    let load = started.elapsed();
    let good = json!({ "name": "world", "replicas": 2 });
    let bad = json!({ "name": 7, "replicas": 9, "extra": true });
    let runs = 10_000u32;
    let time = |config: &serde_json::Value, ok: bool| {
        let started = std::time::Instant::now();
        for _ in 0..runs {
            assert_eq!(schema.check(config, "fixture").is_ok(), ok);
        }
        started.elapsed() / runs
    };
    let (matched, refused) = (time(&good, true), time(&bad, false));
    println!(
        "config schema: load {:.1} µs, check of a matching config {:.2} µs, of a refused one (3 violations, the message written) {:.2} µs",
        load.as_secs_f64() * 1e6,
        matched.as_secs_f64() * 1e6,
        refused.as_secs_f64() * 1e6
    );
    // A bound far above what it costs, far below what azd would notice.
    assert!(matched < std::time::Duration::from_millis(1), "{matched:?}");
    assert!(refused < std::time::Duration::from_millis(1), "{refused:?}");
}

//! Golden conversations: `listen --record` (here under `run`, which plays azd's part as azd
//! does) writes azd's requests and the extension's answers; `azd-wasm-host test` plays azd's
//! side of it again against this build, reports an answer that changed with the lines that
//! differ, and `--update` accepts it.
//!
//! Needs the c-hello example component (`scripts/build-examples.sh`; the suite builds it first).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use azd_wasm_host_recorder::conversation::Line;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");

fn example() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/c-hello");
    assert!(
        dir.join("build/c-hello.wasm").exists(),
        "examples/c-hello is not built: run scripts/build-examples.sh"
    );
    std::fs::canonicalize(dir).unwrap()
}

fn host(work: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .env("AZD_WASM_HOST_CACHE_DIR", work.join("cache"))
        .env("AZD_WASM_HOST_LOG_FILE", work.join("host.log"))
        .env_remove("AZD_DEBUG")
        .env_remove("AZD_WASM_HOST_RECORD")
        .env_remove("AZURE_ENV_NAME");
    cmd
}

fn text(out: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A provider folder (manifest naming the example's component) with a project and `tests/`.
fn workspace(work: &Path) -> (PathBuf, PathBuf) {
    let example = example();
    let manifest = std::fs::read_to_string(example.join("provider.toml"))
        .unwrap()
        .replace(
            "component = \"build/c-hello.wasm\"",
            &format!(
                "component = {:?}",
                example.join("build/c-hello.wasm").display().to_string()
            ),
        );
    std::fs::write(work.join("provider.toml"), manifest).unwrap();
    let project = work.join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("azure.yaml"),
        "name: golden\ninfra:\n  provider: c-hello\n  config:\n    name: world\n",
    )
    .unwrap();
    std::fs::create_dir_all(work.join("tests")).unwrap();
    (project, work.join("tests/provision.conversation.jsonl"))
}

fn lines(path: &Path) -> Vec<Line> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_recorded_conversation_replays_and_a_changed_answer_is_shown_then_accepted() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let (project, conversation) = workspace(work);

    // Recorded while `run provision` plays azd: Initialize, then Deploy with its progress.
    let out = host(work, &["run", "provision", "--output", "json"])
        .args([
            "--provider",
            &work.join("provider.toml").display().to_string(),
        ])
        .args(["--project", &project.display().to_string()])
        .env("AZD_WASM_HOST_RECORD", &conversation)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let recorded = lines(&conversation);
    assert!(
        matches!(&recorded[0], Line::Recording { provider, .. } if provider == "c-hello"),
        "{recorded:?}"
    );
    let kinds: Vec<(&str, &str)> = recorded
        .iter()
        .filter_map(|l| match l {
            Line::Azd { kind, .. } => Some(("azd", kind.as_str())),
            Line::Host { kind, .. } => Some(("host", kind.as_str())),
            _ => None,
        })
        .collect();
    for wanted in [
        ("azd", "initialize"),
        ("azd", "deploy"),
        ("host", "progress"),
        ("host", "answer"),
    ] {
        assert!(kinds.contains(&wanted), "{wanted:?} not in {kinds:?}");
    }

    // Played again against this build: the same answers.
    let out = host(work, &["test", "."])
        .current_dir(work)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("replayed conversation (2 requests)"),
        "{}",
        text(&out)
    );

    // As if an earlier build had answered "Hello, moon!!" (same length: the protobuf stays whole).
    let tampered: Vec<String> = std::fs::read_to_string(&conversation)
        .unwrap()
        .lines()
        .map(|l| {
            let line: Line = serde_json::from_str(l).unwrap();
            let Line::Host { id, kind, message } = line else {
                return l.to_owned();
            };
            let bytes = STANDARD.decode(&message).unwrap();
            let from = b"Hello, world!";
            let Some(at) = bytes.windows(from.len()).position(|w| w == from) else {
                return l.to_owned();
            };
            let mut bytes = bytes;
            bytes[at..at + from.len()].copy_from_slice(b"Hello, moon!!");
            serde_json::to_string(&Line::Host {
                id,
                kind,
                message: STANDARD.encode(bytes),
            })
            .unwrap()
        })
        .collect();
    std::fs::write(&conversation, tampered.join("\n") + "\n").unwrap();
    let out = host(work, &["test", "."])
        .current_dir(work)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("(deploy): changed: answer:"),
        "{}",
        text(&out)
    );
    assert!(
        stdout.contains("- ") && stdout.contains("Hello, moon!!"),
        "{}",
        text(&out)
    );
    assert!(
        stdout.contains("+ ") && stdout.contains("Hello, world!"),
        "{}",
        text(&out)
    );

    // Accepted: the file now holds this build's answers, and replays clean.
    let out = host(work, &["test", "--update", "."])
        .current_dir(work)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("updated 1 answer(s)"),
        "{}",
        text(&out)
    );
    assert!(!std::fs::read_to_string(&conversation).unwrap().is_empty());
    let out = host(work, &["test", "."])
        .current_dir(work)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
}

#[test]
fn a_conversation_of_another_provider_is_refused_before_anything_runs() {
    let work = tempfile::tempdir().unwrap();
    let work = work.path();
    let (_, conversation) = workspace(work);
    std::fs::write(
        &conversation,
        "{\"from\":\"recording\",\"format\":1,\"provider\":\"other\"}\n",
    )
    .unwrap();
    let out = host(work, &["test", "."])
        .current_dir(work)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("recorded with the provider `other`"),
        "{}",
        text(&out)
    );
    std::fs::write(&conversation, "{\"from\":\"nobody\"}\n").unwrap();
    let out = host(work, &["test", "."])
        .current_dir(work)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("line 1: not a conversation line"),
        "{}",
        text(&out)
    );
}

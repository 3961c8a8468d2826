//! The log file of a process that logs far more than its bound: it is
//! rotated while the process runs, so neither the file nor the one moved
//! aside passes the bound (8 MiB) by more than a line, and both stay private.
//!
//! The test runs itself again as a child (the logging is the process's, set
//! up once, from its environment), which logs 20 MiB; the parent looks at the
//! files.
//!
//! Run: `cargo test -p azd-wasm-host-sidecar --test log_file`

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::path::Path;

use azd_wasm_host_sidecar::logs;

/// Set in the child's environment: this process is the one that logs.
const CHILD: &str = "AZD_WASM_HOST_LOG_FILE_TEST_CHILD";
/// The documented bound of the log file.
const BOUND: u64 = 8 << 20;
/// One line the child logs, and a little for its prefix.
const LINE: usize = 16 << 10;
const MARKER: &str = "the-last-line";

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The child: logs 20 MiB of host lines into the file its environment names.
fn child() {
    let path = logs::init(false, true).expect("a log file");
    assert!(path.ends_with("host.log"), "{}", path.display());
    let text = "x".repeat(LINE);
    for _ in 0..(20 << 20) / LINE {
        tracing::warn!(target: "azd_wasm_host::test", "{text}");
    }
    tracing::warn!(target: "azd_wasm_host::test", "{MARKER}");
}

#[test]
fn the_log_file_is_rotated_while_the_process_runs() {
    if std::env::var_os(CHILD).is_some() {
        return child();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("logs").join("host.log");
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "the_log_file_is_rotated_while_the_process_runs",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .env(logs::ENV_LOG_FILE, &path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let rotated = path.with_file_name("host.log.1");
    let slack = (LINE + 200) as u64;
    assert!(size(&path) <= BOUND + slack, "{} bytes", size(&path));
    assert!(size(&rotated) <= BOUND + slack, "{} bytes", size(&rotated));
    assert!(size(&rotated) >= BOUND - slack, "{} bytes", size(&rotated));
    let newest = std::fs::read_to_string(&path).unwrap();
    assert!(
        newest.trim_end().ends_with(MARKER),
        "the newest line is not last"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&rotated), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
    }
}

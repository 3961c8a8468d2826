//! `azd-wasm-host check --diff OLD NEW`: what a new version of a provider asks for beyond the
//! old one's policy (exit 1), and what it no longer asks for (exit 0 when that is all; 2 when a
//! manifest cannot be read, as diff(1)).

use std::path::Path;
use std::process::{Command, Output};

fn manifest(dir: &Path, name: &str, policy: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(
        &path,
        format!("name = \"storage\"\ncomponent = \"build/storage.wasm\"\n\n{policy}"),
    )
    .unwrap();
    path
}

fn diff(old: &Path, new: &Path) -> (Option<i32>, String, String) {
    let out: Output = Command::new(env!("CARGO_BIN_EXE_azd-wasm-host"))
        .args(["check", "--diff"])
        .args([old, new])
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_new_origin_is_more_a_dropped_grant_is_less_and_the_exit_code_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let old = manifest(
        dir.path(),
        "old.toml",
        "[policy]\nenv = [\"AZURE_STORAGE_KEY\", \"LEGACY\"]\n[policy.http]\nallow = [\"https://a.blob.core.windows.net\"]\n",
    );
    let new = manifest(
        dir.path(),
        "new.toml",
        "[policy]\nenv = [\"AZURE_STORAGE_KEY\"]\n[policy.http]\nallow = [\"https://a.blob.core.windows.net\", \"https://a.queue.core.windows.net\"]\n",
    );
    let (code, stdout, stderr) = diff(&old, &new);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(
        stdout.contains("asks for more (1):\n  + HTTP origin https://a.queue.core.windows.net"),
        "{stdout}"
    );
    assert!(
        stdout.contains("no longer asks for (1):\n  - environment variable LEGACY"),
        "{stdout}"
    );

    // Fewer grants ask for nothing: exit 0.
    let fewer = manifest(
        dir.path(),
        "fewer.toml",
        "[policy]\nenv = [\"AZURE_STORAGE_KEY\"]\n[policy.http]\nallow = [\"https://a.blob.core.windows.net\"]\n",
    );
    let (code, stdout, _) = diff(&new, &fewer);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(!stdout.contains("asks for more"), "{stdout}");
    assert!(
        stdout.contains("  - HTTP origin https://a.queue.core.windows.net"),
        "{stdout}"
    );
    let (code, stdout, _) = diff(&old, &old);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("the same capabilities"), "{stdout}");

    // A manifest that is not one is an error, not a difference.
    let broken = manifest(
        dir.path(),
        "broken.toml",
        "[policy]\nmemory_mb = \"lots\"\n",
    );
    let (code, stdout, stderr) = diff(&old, &broken);
    assert_eq!(code, Some(2), "{stdout}");
    assert!(stderr.contains("broken.toml"), "{stderr}");
}

#[test]
fn a_higher_disk_bound_is_more_where_a_directory_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let writes = "[policy]\nfs = [{ path = \"out\", access = \"read-write\" }]\n";
    let old = manifest(dir.path(), "old.toml", writes);
    let more = manifest(dir.path(), "more.toml", &format!("{writes}disk_mb = 512\n"));
    let (code, stdout, stderr) = diff(&old, &more);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert!(stdout.contains("  + disk_mb 64 → 512"), "{stdout}");
    let (code, stdout, _) = diff(&more, &old);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(stdout.contains("  - disk_mb 512 → 64"), "{stdout}");
    // Without a read-write grant the bound bounds nothing: no line.
    let reads = "[policy]\nfs = [{ path = \"out\", access = \"read\" }]\n";
    let a = manifest(dir.path(), "a.toml", reads);
    let b = manifest(dir.path(), "b.toml", &format!("{reads}disk_mb = 512\n"));
    let (code, stdout, _) = diff(&a, &b);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(!stdout.contains("disk_mb"), "{stdout}");
    // Out of range: refused when the manifest is read.
    let zero = manifest(dir.path(), "zero.toml", &format!("{writes}disk_mb = 0\n"));
    let (code, _, stderr) = diff(&old, &zero);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("disk_mb = 0 is out of range"), "{stderr}");
}

//! `azd-wasm-host test` as an author runs it: the real binary reads the
//! examples' own test files and plays every step as `run` does (a simulated
//! azd on loopback, the binary started as the extension), in parallel; a
//! changed expectation fails with the difference; an invalid file exits 64
//! naming its line; the JUnit file reads back with quick-junit's reader; a
//! step starts one process, the extension, and no `run`.
//!
//! Needs the example components (`scripts/build-examples.sh` and
//! `scripts/build-rust-example.sh`; the test suite builds them first).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

use quick_junit::{Report, TestCaseStatus};

const EXAMPLES: [&str; 8] = [
    "c-hello",
    "go-devcerts",
    "go-storage",
    "js-storage",
    "js-hello",
    "rust-hello",
    "python-localfiles",
    "azure-storage",
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn example(name: &str) -> PathBuf {
    let dir = root().join("examples").join(name);
    assert!(
        dir.join("build").join(format!("{name}.wasm")).exists(),
        "examples/{name} is not built: run scripts/build-examples.sh and scripts/build-rust-example.sh"
    );
    dir
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `azd-wasm-host test ARGS` with its own compile cache and log file.
fn test(work: &Path, args: &[&OsStr]) -> Outcome {
    let out = Command::new(env!("CARGO_BIN_EXE_azd-wasm-host"))
        .arg("test")
        .args(args)
        .env("AZD_WASM_HOST_CACHE_DIR", work.join("cache"))
        .env("AZD_WASM_HOST_LOG_FILE", work.join("host.log"))
        .env_remove("AZD_DEBUG")
        .output()
        .unwrap();
    Outcome {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn test_files(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("tests"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".test.toml")
        })
        .count()
}

#[test]
fn every_example_passes_its_own_tests_with_a_junit_file_ci_reads() {
    let work = tempfile::tempdir().unwrap();
    let junit = work.path().join("reports/junit.xml");
    let dirs: Vec<PathBuf> = EXAMPLES.iter().map(|e| example(e)).collect();
    let mut args: Vec<&OsStr> = dirs.iter().map(|d| d.as_os_str()).collect();
    args.extend(["--output", "json", "--junit"].map(OsStr::new));
    args.push(junit.as_os_str());
    let out = test(work.path(), &args);
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    let doc: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let files: usize = dirs.iter().map(|d| test_files(d)).sum();
    assert!(files >= EXAMPLES.len(), "each example ships a test");
    assert_eq!(doc["passed"], files, "{doc:#}");
    assert_eq!(doc["failed"], 0, "{doc:#}");
    // Every step of every test ran and was checked.
    for t in doc["tests"].as_array().unwrap() {
        let steps = t["steps"].as_array().unwrap();
        assert!(!steps.is_empty(), "{t:#}");
        assert!(
            steps
                .iter()
                .all(|s| s["failures"].as_array().unwrap().is_empty())
        );
    }
    // A line per test on stderr while it ran.
    assert_eq!(out.stderr.matches("] ok ").count(), files, "{}", out.stderr);

    let xml = std::fs::read_to_string(&junit).unwrap();
    let report = Report::deserialize_from_str(&xml).unwrap();
    assert_eq!(report.tests, files);
    assert_eq!(report.failures, 0);
    let cases = &report.test_suites[0].test_cases;
    assert!(
        cases.iter().any(|c| c.name.as_str() == "lifecycle"),
        "{xml}"
    );
}

/// The c-hello example's test, copied beside a changed expectation.
fn changed_test(work: &Path, from: &str, to: &str) -> PathBuf {
    let dir = example("c-hello");
    let text = std::fs::read_to_string(dir.join("tests/greeting.test.toml")).unwrap();
    assert!(text.contains(from));
    let provider = dir.join("provider.toml");
    let text = format!(
        "provider = {:?}\n{}",
        provider.display().to_string(),
        text.replacen(from, to, 1)
    );
    let file = work.join("changed.test.toml");
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn a_changed_expected_output_fails_with_what_came_instead() {
    let work = tempfile::tempdir().unwrap();
    let file = changed_test(
        work.path(),
        "outputs = { GREETING = \"Hello, world!\"",
        "outputs = { GREETING = \"Hello, moon!\"",
    );
    let junit = work.path().join("junit.xml");
    let out = test(
        work.path(),
        &[file.as_os_str(), OsStr::new("--junit"), junit.as_os_str()],
    );
    assert_eq!(
        out.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    assert!(
        out.stdout.contains(
            "step 1 (state): output GREETING: expected \"Hello, moon!\", got \"Hello, world!\""
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("0 passed, 1 failed"), "{}", out.stdout);
    // The steps after the failing one still ran, and passed.
    assert!(!out.stdout.contains("step 2"), "{}", out.stdout);
    let report = Report::deserialize_from_str(&std::fs::read_to_string(&junit).unwrap()).unwrap();
    assert_eq!(report.failures, 1);
    assert!(matches!(
        report.test_suites[0].test_cases[0].status,
        TestCaseStatus::NonSuccess { .. }
    ));
}

#[test]
fn an_expected_error_that_does_not_come_fails_the_test() {
    let work = tempfile::tempdir().unwrap();
    // The last step's config names nobody; with a name it succeeds, and the test must fail.
    let file = changed_test(
        work.path(),
        "config = { greeting = \"Hi\" }",
        "config = { name = \"x\" }",
    );
    let out = test(work.path(), &[file.as_os_str()]);
    assert_eq!(
        out.code, 1,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    assert!(
        out.stdout
            .contains("step 6 (provision): the command succeeded; an error was expected"),
        "{}",
        out.stdout
    );
}

#[test]
fn an_invalid_test_file_exits_64_naming_its_line_and_runs_nothing() {
    let work = tempfile::tempdir().unwrap();
    let provider = example("c-hello").join("provider.toml");
    let file = work.path().join("typo.test.toml");
    std::fs::write(
        &file,
        format!(
            "provider = {:?}\n\n[[step]]\ncommand = \"provision\"\nexpect.outptus = {{ A = \"1\" }}\n",
            provider.display().to_string()
        ),
    )
    .unwrap();
    let out = test(work.path(), &[file.as_os_str()]);
    assert_eq!(out.code, 64, "{}", out.stderr);
    assert!(
        out.stderr.contains("typo.test.toml: line 5"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("outptus"), "{}", out.stderr);
    assert!(!out.stderr.contains("] ok"), "{}", out.stderr);

    let empty = tempfile::tempdir().unwrap();
    let out = test(work.path(), &[empty.path().as_os_str()]);
    assert_eq!(out.code, 64, "{}", out.stderr);
    assert!(out.stderr.contains("no test found"), "{}", out.stderr);
}

/// `test` plays each step in its own process, through the runner library: the one
/// process a step starts is the extension (`listen`), started by `test` itself. (Each
/// step was once a `run` child that started the extension: two processes a step.) The
/// extension is started through a wrapper that the test file's `process_env` names as
/// `AZD_WASM_HOST_EXTENSION_COMMAND` (so the runner reads its own variables through the
/// test's environment, as a `run` child did), which logs who started it and then
/// becomes the binary.
#[cfg(target_os = "linux")]
#[test]
fn each_step_starts_one_extension_and_no_run_process() {
    use std::os::unix::fs::PermissionsExt as _;

    let work = tempfile::tempdir().unwrap();
    let dir = example("azure-storage");
    let text = std::fs::read_to_string(dir.join("tests/storage.test.toml")).unwrap();
    let steps = text.matches("[[step]]").count();
    assert!(steps >= 5, "{text}");
    let log = work.path().join("starts.log");
    let wrapper = work.path().join("extension.sh");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nprintf '%s|%s|%s\\n' \"$PPID\" \"$(tr '\\0' ' ' < /proc/$PPID/cmdline)\" \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            env!("CARGO_BIN_EXE_azd-wasm-host"),
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    // The example's test, beside this test's files: the provider, project and
    // cassette named where they are; the wrapper in its process_env.
    let from = "from = \"../project\"";
    let key = "process_env = { AZURE_STORAGE_KEY";
    assert!(text.contains(from) && text.contains(key), "{text}");
    let text = text.replacen(
        from,
        &format!("from = {:?}", dir.join("project").display().to_string()),
        1,
    );
    let text = text.replacen(
        key,
        &format!(
            "process_env = {{ AZD_WASM_HOST_EXTENSION_COMMAND = {:?}, AZURE_STORAGE_KEY",
            format!("'{}'", wrapper.display())
        ),
        1,
    );
    let file = work.path().join("storage.test.toml");
    std::fs::write(
        &file,
        format!(
            "provider = {:?}\ncassette = {:?}\n{text}",
            dir.join("provider.toml").display().to_string(),
            dir.join("tests/cassettes/storage.json")
                .display()
                .to_string(),
        ),
    )
    .unwrap();

    let child = Command::new(env!("CARGO_BIN_EXE_azd-wasm-host"))
        .arg("test")
        .arg(&file)
        .env("AZD_WASM_HOST_CACHE_DIR", work.path().join("cache"))
        .env("AZD_WASM_HOST_LOG_FILE", work.path().join("host.log"))
        .env_remove("AZD_DEBUG")
        .env_remove("AZD_WASM_HOST_EXTENSION_COMMAND")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let test_pid = child.id().to_string();
    let out = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        out.status
    );
    assert!(stdout.contains("1 passed, 0 failed"), "{stdout}");
    let starts = std::fs::read_to_string(&log).unwrap_or_default();
    let starts: Vec<Vec<&str>> = starts.lines().map(|l| l.splitn(3, '|').collect()).collect();
    // One extension a step, each `listen`, each started by `test` itself: no
    // process stood between them (a `run` child would have started it).
    assert_eq!(starts.len(), steps, "{starts:#?}");
    for start in &starts {
        assert_eq!(start.get(2).copied(), Some("listen"), "{starts:#?}");
        assert_eq!(
            start.first().copied(),
            Some(test_pid.as_str()),
            "{starts:#?}"
        );
        assert!(
            start
                .get(1)
                .is_some_and(|parent| parent.contains(" test ") && !parent.contains(" run ")),
            "{starts:#?}"
        );
    }
}

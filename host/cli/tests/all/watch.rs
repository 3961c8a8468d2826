//! `azd-wasm-host watch` as an author runs it, on a fresh copy of a provider
//! that builds in milliseconds: the C example's component as the "source"
//! its `[build] command` copies into place, and the example's own test. The
//! real binary watches the folder; the test edits the source and reads the
//! cycle lines, then stops it with SIGINT as Ctrl-C would.
//!
//! Needs the C example built (`scripts/build-examples.sh c-hello`; the test
//! suite builds it first). Unix only (signals).
#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use azd_wasm_host_fixtures::repo_root;

const BIN: &str = env!("CARGO_BIN_EXE_azd-wasm-host");
/// How long a cycle may take on a loaded machine (the first compiles the component).
const CYCLE: Duration = Duration::from_secs(180);

/// A provider folder: the C example's component as `src/c-hello.wasm`, a
/// `[build] command` that copies it to `build/c-hello.wasm`, and the
/// example's test.
struct Provider {
    root: tempfile::TempDir,
    dir: PathBuf,
    source: PathBuf,
    good: Vec<u8>,
}

impl Provider {
    fn new(command: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("provider");
        let example = repo_root().join("examples/c-hello");
        let good = std::fs::read(example.join("build/c-hello.wasm"))
            .expect("examples/c-hello is not built: run scripts/build-examples.sh c-hello");
        std::fs::create_dir_all(dir.join("src")).unwrap();
        std::fs::create_dir_all(dir.join("tests")).unwrap();
        std::fs::create_dir_all(root.path().join("tmp")).unwrap();
        let manifest = std::fs::read_to_string(example.join("provider.toml")).unwrap();
        std::fs::write(
            dir.join("provider.toml"),
            format!("{manifest}\n[build]\ncommand = '{command}'\n"),
        )
        .unwrap();
        std::fs::copy(
            example.join("tests/greeting.test.toml"),
            dir.join("tests/greeting.test.toml"),
        )
        .unwrap();
        let source = dir.join("src/c-hello.wasm");
        std::fs::write(&source, &good).unwrap();
        Self {
            root,
            dir,
            source,
            good,
        }
    }

    fn component(&self) -> PathBuf {
        self.dir.join("build/c-hello.wasm")
    }

    /// The folder `watch` is given as its temporary folder (TMPDIR).
    fn tmp(&self) -> PathBuf {
        self.root.path().join("tmp")
    }

    /// Starts `watch` on the provider, with its own caches and trust folder.
    fn watch(&self, args: &[&str]) -> Watch {
        let mut child = Command::new(BIN)
            .arg("watch")
            .arg(&self.dir)
            .args(args)
            .env("AZD_WASM_HOST_CACHE_DIR", self.root.path().join("cache"))
            .env("AZD_WASM_HOST_LOG_FILE", self.root.path().join("host.log"))
            .env("AZD_CONFIG_DIR", self.root.path().join("azd-config"))
            .env("TMPDIR", self.tmp())
            .env_remove("AZD_DEBUG")
            .env_remove("AZURE_ENV_NAME")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        for (stream, reader) in [
            ("out", Box::new(out) as Box<dyn std::io::Read + Send>),
            ("err", Box::new(err)),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(reader).lines() {
                    let Ok(line) = line else { return };
                    if tx.send((stream, line)).is_err() {
                        return;
                    }
                }
            });
        }
        Watch {
            child,
            lines: rx,
            seen: Vec::new(),
            out_from: 0,
            err_from: 0,
        }
    }
}

/// A running `watch`, and every line it printed.
struct Watch {
    child: Child,
    lines: mpsc::Receiver<(&'static str, String)>,
    seen: Vec<(&'static str, String)>,
    /// Where the next search of each stream starts in `seen`.
    out_from: usize,
    err_from: usize,
}

impl Watch {
    /// Waits for the next line of `stream` (after the one last returned of
    /// it) that starts with `prefix`; returns it. The two streams are read
    /// apart, so only the order within each is kept.
    fn line(&mut self, stream: &'static str, prefix: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        let from = if stream == "out" {
            &mut self.out_from
        } else {
            &mut self.err_from
        };
        let found = self.seen[*from..]
            .iter()
            .position(|(s, l)| *s == stream && l.starts_with(prefix));
        if let Some(at) = found {
            *from += at + 1;
            return self.seen[*from - 1].1.clone();
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok((s, line)) => {
                    self.seen.push((s, line.clone()));
                    if s == stream && line.starts_with(prefix) {
                        let next = self.seen.len();
                        if stream == "out" {
                            self.out_from = next;
                        } else {
                            self.err_from = next;
                        }
                        return line;
                    }
                }
                Err(_) => panic!(
                    "no `{prefix}` line on std{stream} within {within:?}; it printed:\n{}",
                    self.printed()
                ),
            }
        }
    }

    /// The stdout lines that are cycle lines, in order.
    fn cycles(&self) -> Vec<&str> {
        self.seen
            .iter()
            .filter(|(s, l)| *s == "out" && (l.starts_with("ok:") || l.starts_with("FAILED:")))
            .map(|(_, l)| l.as_str())
            .collect()
    }

    fn printed(&self) -> String {
        self.seen
            .iter()
            .map(|(s, l)| format!("[{s}] {l}\n"))
            .collect()
    }

    /// SIGINT, as Ctrl-C sends it; the exit code and the last stderr line.
    fn interrupt(&mut self) -> (Option<i32>, String) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-INT", &pid]).status().unwrap();
        assert!(sent.success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "watch did not end within 30 s of SIGINT:\n{}",
                self.printed()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // Everything it printed, to the end of its output.
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        let last = self
            .seen
            .iter()
            .rev()
            .find(|(s, _)| *s == "err")
            .map(|(_, l)| l.clone())
            .unwrap_or_default();
        (status.code(), last)
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The component with a custom section added: still the same provider, other bytes.
fn edited(good: &[u8], mark: &[u8]) -> Vec<u8> {
    let mut bytes = good.to_vec();
    bytes.push(0); // a custom section ...
    bytes.push(u8::try_from(mark.len() + 1).unwrap()); // ... of this size ...
    bytes.push(u8::try_from(mark.len()).unwrap()); // ... named `mark`, with no payload
    bytes.extend_from_slice(mark);
    bytes
}

fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

const COPY: &str = "cp src/c-hello.wasm build/c-hello.wasm";

#[test]
fn watch_rebuilds_and_tests_on_each_change_and_stops_cleanly_at_ctrl_c() {
    let p = Provider::new(COPY);
    // --debug: watch logs each change it acts on (its path), which the end checks.
    let mut w = p.watch(&["--debounce", "300", "--debug"]);
    let first = w.line("out", "ok: ", CYCLE);
    assert!(
        first.starts_with("ok: build ")
            && first.contains(", test ")
            && first.ends_with("s (1 passed)"),
        "{first}"
    );
    assert!(
        !first.contains('\x1b'),
        "plain text off a terminal: {first:?}"
    );
    assert_eq!(std::fs::read(p.component()).unwrap(), p.good);

    // An edit of the source: one save, one cycle, built from the edited source.
    let source = edited(&p.good, b"edit");
    std::fs::write(&p.source, &source).unwrap();
    let second = w.line("out", "ok: ", CYCLE);
    assert!(second.starts_with("ok: build "), "{second}");
    assert_eq!(std::fs::read(p.component()).unwrap(), source);

    // Changes to an output or an editor's swap file are no change of the provider
    // (checked at the end: no change but the source's was acted on).
    std::fs::write(p.dir.join("build/notes.txt"), "x").unwrap();
    std::fs::write(p.dir.join("src/.c-hello.wasm.swp"), "x").unwrap();
    std::fs::write(p.dir.join("tests/greeting.test.toml.swp"), "x").unwrap();
    let again = edited(&p.good, b"again");
    std::fs::write(&p.source, &again).unwrap();
    w.line("out", "ok: ", CYCLE);
    assert_eq!(std::fs::read(p.component()).unwrap(), again);
    assert_eq!(w.cycles().len(), 3, "{}", w.printed());

    let (code, last) = w.interrupt();
    assert_eq!(code, Some(0), "{}", w.printed());
    assert_eq!(last, "watch: stopped after 3 cycles", "{}", w.printed());
    assert_eq!(w.cycles().len(), 3, "{}", w.printed());
    assert!(
        entries(&p.tmp()).is_empty(),
        "watch left temporary files: {:?}",
        entries(&p.tmp())
    );
    // The only change acted on was the source's: not the noise, and not what the
    // cycles themselves read (the manifest, the test file) or wrote (the component).
    let changed: Vec<String> = w
        .seen
        .iter()
        .map(|(_, l)| plain(l))
        .filter(|l| l.contains(" changed "))
        .filter_map(|l| {
            let at = l.find("path=")?;
            l[at + 5..].split_whitespace().next().map(str::to_owned)
        })
        .collect();
    let source = std::fs::canonicalize(&p.source).unwrap();
    assert!(!changed.is_empty(), "no change logged:\n{}", w.printed());
    assert!(
        changed.iter().all(|c| Path::new(c) == source),
        "changes acted on: {changed:?}"
    );
}

/// A log line without its colours.
fn plain(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[test]
fn a_failing_build_prints_its_error_and_the_loop_goes_on() {
    let p = Provider::new(COPY);
    let mut w = p.watch(&["--no-test", "--debounce", "200"]);
    let first = w.line("out", "ok: ", CYCLE);
    assert!(
        first.starts_with("ok: build ") && !first.contains("test"),
        "{first}"
    );

    // Not a component: the build fails, says why, and watch waits.
    std::fs::write(&p.source, b"not wasm").unwrap();
    let failed = w.line("out", "FAILED: ", CYCLE);
    assert!(
        failed.starts_with("FAILED: build ") && failed.ends_with(" failed"),
        "{failed}"
    );
    w.line("err", "watch: waiting for a change", CYCLE);
    assert!(
        w.printed().contains("not a provider component"),
        "the build's error is shown:\n{}",
        w.printed()
    );
    // The last good component is still in place, and nothing of the failed build.
    assert_eq!(std::fs::read(p.component()).unwrap(), p.good);
    assert_eq!(entries(&p.dir.join("build")), ["c-hello.wasm"]);

    // Fixed: the next cycle passes.
    let fixed = edited(&p.good, b"fixed");
    std::fs::write(&p.source, &fixed).unwrap();
    w.line("out", "ok: build ", CYCLE);
    assert_eq!(std::fs::read(p.component()).unwrap(), fixed);

    let (code, last) = w.interrupt();
    assert_eq!(code, Some(0), "{}", w.printed());
    assert_eq!(last, "watch: stopped after 3 cycles", "{}", w.printed());
}

#[test]
fn ctrl_c_during_a_build_stops_its_processes_and_restores_the_component() {
    // A build that never ends: it notes its process id, then sleeps.
    let p = Provider::new("echo $$ > build/sleeper.pid && exec sleep 300");
    std::fs::create_dir_all(p.dir.join("build")).unwrap();
    std::fs::write(p.component(), &p.good).unwrap();
    let mut w = p.watch(&["--no-test"]);
    let pid_file = p.dir.join("build/sleeper.pid");
    let deadline = Instant::now() + CYCLE;
    let pid = loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse::<u32>().ok())
        {
            break pid;
        }
        assert!(
            Instant::now() < deadline,
            "the build never started:\n{}",
            w.printed()
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let started = Instant::now();
    let (code, last) = w.interrupt();
    assert_eq!(code, Some(0), "{}", w.printed());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "stopped by its signal, not after the grace time: {:?}",
        started.elapsed()
    );
    assert_eq!(
        last,
        "watch: stopped after 1 cycle (build interrupted)",
        "{}",
        w.printed()
    );
    assert!(
        w.cycles().is_empty(),
        "no cycle line for an interrupted cycle"
    );
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.contains(") Z "),
        "the build's process {pid} outlived watch: {stat}"
    );
    // The build put the previous component back, as a failed build does.
    assert_eq!(std::fs::read(p.component()).unwrap(), p.good);
    let mut left = entries(&p.dir.join("build"));
    left.sort();
    assert_eq!(left, ["c-hello.wasm", "sleeper.pid"]);
    assert!(entries(&p.tmp()).is_empty(), "{:?}", entries(&p.tmp()));
}

#[test]
fn install_without_azd_says_how_to_get_it() {
    let p = Provider::new(COPY);
    let out = Command::new(BIN)
        .arg("watch")
        .arg(&p.dir)
        .arg("--install")
        .env("AZD", p.root.path().join("no-azd-here"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("AZD names") && stderr.contains("no-azd-here"),
        "{stderr}"
    );
    let out = Command::new(BIN)
        .arg("watch")
        .arg(&p.dir)
        .arg("--install")
        .env_remove("AZD")
        .env("PATH", p.root.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("not on PATH") && stderr.contains("set AZD"),
        "{stderr}"
    );
}

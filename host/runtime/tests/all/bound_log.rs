//! The guest-log budget against a guest that floods the log
//! (`fixtures::flood::log_flood_component`): stdout, stderr and `log` calls, each
//! far past the budget, together, as empty lines, across instances. What
//! reaches the log sink stays within the documented bounds (4 MiB per
//! instance, 32 MiB per process: docs/commands.md#logs) plus one line that
//! says the output was truncated; a new instance gets a fresh budget; what
//! was dropped is counted once at the end of the call; and a trap still
//! quotes the guest's last stderr lines.
//!
//! Each test captures what is logged on its own thread (`#[tokio::test]`
//! runs the guest on the test's thread), so the tests do not see each
//! other's lines.
//!
//! Run: `cargo test -p azd-wasm-host-runtime --test all bound_log::`

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

use crate::log_sink::LogSink;

use azd_wasm_host_fixtures::flood::{FLOOD_LINE_BYTES, log_flood_component};
use azd_wasm_host_fixtures::harness::{Setup, code, ctx};

/// The documented bound of one instance's log output.
const INSTANCE_BYTES: usize = 4 << 20;
/// The documented bound of one process's log output (all its instances).
const PROCESS_BYTES: usize = 32 << 20;

/// Lines of [`FLOOD_LINE_BYTES`] in `bytes`.
fn lines(bytes: usize) -> u32 {
    u32::try_from(bytes / FLOOD_LINE_BYTES).unwrap()
}

/// Everything logged on this thread while it is alive, as the log file
/// would hold it.
struct Captured {
    sink: LogSink,
    _guard: tracing::subscriber::DefaultGuard,
}

impl Captured {
    /// Captures at `debug`, as `listen` writes guest lines into its file.
    fn start() -> Self {
        let sink = LogSink::default();
        let subscriber = sink.subscriber(tracing::Level::DEBUG).finish();
        Self {
            sink,
            _guard: tracing::subscriber::set_default(subscriber),
        }
    }

    /// What was logged since the last take.
    fn take(&self) -> Logged {
        Logged(self.sink.take())
    }
}

struct Logged(String);

impl Logged {
    /// The guest's own lines (stdout, stderr, `log`), as the sink holds them.
    fn guest_lines(&self) -> impl Iterator<Item = &str> {
        self.0.lines().filter(|l| l.contains(" guest: "))
    }

    /// The bytes of the guest's lines in the sink, newlines included.
    fn guest_bytes(&self) -> usize {
        self.guest_lines().map(|l| l.len() + 1).sum()
    }

    /// The host's lines saying a guest's output was truncated.
    fn truncations(&self) -> Vec<&str> {
        self.0
            .lines()
            .filter(|l| !l.contains(" guest: ") && l.contains("truncated"))
            .collect()
    }

    /// The bytes the host says it dropped (`dropped_bytes=N`), summed.
    fn dropped(&self) -> u64 {
        self.0
            .lines()
            .filter_map(|l| l.split("dropped_bytes=").nth(1))
            .map(|rest| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse::<u64>().unwrap()
            })
            .sum()
    }
}

/// Within the instance's budget, and most of it used (the bound is the
/// documented one, not something smaller).
fn assert_one_instance_budget(logged: &Logged) {
    let bytes = logged.guest_bytes();
    assert!(
        bytes <= INSTANCE_BYTES,
        "{bytes} bytes of guest lines logged"
    );
    assert!(bytes >= INSTANCE_BYTES / 2, "only {bytes} bytes logged");
    let cut = logged.truncations();
    assert_eq!(cut.len(), 1, "{cut:#?}");
}

#[tokio::test]
async fn stdout_past_the_instance_budget_is_cut_with_one_line_and_counted() {
    let log = Captured::start();
    let setup = Setup::new(&log_flood_component(lines(4 * INSTANCE_BYTES)), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.deploy(ctx("flood")).await.unwrap();
    let logged = log.take();
    assert_one_instance_budget(&logged);
    // Dropped: what the guest wrote less what was logged (without the log's prefixes).
    let dropped = logged.dropped();
    assert!(
        dropped >= (3 * INSTANCE_BYTES) as u64,
        "dropped {dropped} bytes"
    );
    // Nothing more of this instance, from any stream.
    p.state(Default::default(), ctx("more")).await.unwrap();
    p.preview(ctx("more")).await.unwrap();
    let after = log.take();
    assert_eq!(after.guest_bytes(), 0, "{}", after.0);
    assert!(after.truncations().is_empty(), "{:#?}", after.truncations());
}

#[tokio::test]
async fn log_calls_and_stderr_past_the_budget_are_cut() {
    let log = Captured::start();
    let setup = Setup::new(&log_flood_component(lines(2 * INSTANCE_BYTES)), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.state(Default::default(), ctx("log")).await.unwrap();
    assert_one_instance_budget(&log.take());
    let p = setup.instance(&loaded).await;
    p.preview(ctx("stderr")).await.unwrap();
    assert_one_instance_budget(&log.take());
}

/// A third of the budget to each of stdout, stderr and `log`, and a little
/// more: one budget for the three.
#[tokio::test]
async fn stdout_stderr_and_log_share_one_budget() {
    let log = Captured::start();
    let setup = Setup::new(&log_flood_component(lines(INSTANCE_BYTES * 3 / 2)), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.ensure_env(ctx("all three")).await.unwrap();
    assert_one_instance_budget(&log.take());
}

/// A million empty lines: each costs its share, so the log holds no more
/// than the budget of them either.
#[tokio::test]
async fn empty_lines_are_bounded_too() {
    let log = Captured::start();
    let setup = Setup::new(&log_flood_component(1), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    p.parameters(ctx("empty")).await.unwrap();
    let logged = log.take();
    let bytes = logged.guest_bytes();
    assert!(
        bytes <= INSTANCE_BYTES,
        "{bytes} bytes of guest lines logged"
    );
    assert!(logged.guest_lines().count() > 1000);
    assert_eq!(logged.truncations().len(), 1, "{:#?}", logged.truncations());
}

#[tokio::test]
async fn a_new_instance_gets_a_fresh_budget() {
    let log = Captured::start();
    let setup = Setup::new(&log_flood_component(lines(2 * INSTANCE_BYTES)), "");
    let loaded = setup.load();
    for round in 0..2 {
        let p = setup.instance(&loaded).await;
        p.deploy(ctx("flood")).await.unwrap();
        let logged = log.take();
        assert_one_instance_budget(&logged);
        assert!(
            logged.truncations()[0].contains("instance"),
            "round {round}: {:#?}",
            logged.truncations()
        );
    }
}

/// Instance after instance, each within its own budget, until the process's
/// is spent: one line says so, and later instances log nothing.
#[tokio::test]
async fn the_process_budget_holds_across_instances() {
    let log = Captured::start();
    let setup = Setup::new(&log_flood_component(lines(INSTANCE_BYTES * 5 / 4)), "");
    let loaded = setup.load();
    let instances = PROCESS_BYTES / INSTANCE_BYTES + 2;
    let mut total = 0;
    let mut process_lines = 0;
    let mut last = usize::MAX;
    for _ in 0..instances {
        let p = setup.instance(&loaded).await;
        p.deploy(ctx("flood")).await.unwrap();
        let logged = log.take();
        last = logged.guest_bytes();
        assert!(last <= INSTANCE_BYTES, "{last}");
        assert!(
            logged.truncations().len() <= 1,
            "{:#?}",
            logged.truncations()
        );
        total += last;
        process_lines += logged
            .truncations()
            .iter()
            .filter(|l| l.contains("process"))
            .count();
    }
    assert!(
        total <= PROCESS_BYTES,
        "{total} bytes of guest lines logged"
    );
    assert_eq!(process_lines, 1);
    assert_eq!(last, 0, "the last instance was still logged");
}

/// Truncation stops what reaches the log, not the stderr lines a trap's
/// error quotes.
#[tokio::test]
async fn a_trap_still_quotes_the_last_stderr_lines_after_truncation() {
    let log = Captured::start();
    let setup = Setup::new(&log_flood_component(lines(2 * INSTANCE_BYTES)), "");
    let loaded = setup.load();
    let p = setup.instance(&loaded).await;
    let e = p.planned_outputs(ctx("trap")).await.unwrap_err();
    assert_eq!(code(&e), "provider_trapped", "{e}");
    assert!(e.message.contains("Traceback: last words"), "{e}");
    let logged = log.take();
    assert!(logged.guest_bytes() <= INSTANCE_BYTES);
    assert!(
        !logged.guest_lines().any(|l| l.contains("Traceback")),
        "logged past the budget"
    );
}

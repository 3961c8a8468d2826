//! Where the binary's log lines go.
//!
//! - stderr: only when debugging (`--debug`, `AZD_DEBUG=true`), because stderr
//!   is the user's terminal (and azd discards an extension's stderr anyway);
//! - the log file, for `listen` (what azd runs): always. Host lines at `info`
//!   and above, every guest line (its `log` calls, stdout and stderr), and
//!   everything at `debug` when debugging. It is the one place a user can read
//!   what happened under azd; every error `listen` sends azd names it.
//!
//! The file is `AZD_WASM_HOST_LOG_FILE`, else `azd-wasm-host/logs/azd-wasm-host.log`
//! in the user's cache directory (`~/.cache` on Linux, `~/Library/Caches` on
//! macOS, `%LOCALAPPDATA%` on Windows). Lines are appended (several `listen`
//! processes may share it); a write that would take it past 8 MiB first moves
//! it to `….log.1`, while the process runs (`rolling`). The folder is
//! created private to the user, the files owner-only.
//!
//! What a guest writes is bounded before it gets here (the runtime's log
//! budget: 4 MiB per instance, 32 MiB per process).

mod rolling;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rolling::RollingFile;

use tracing_subscriber::Layer as _;
use tracing_subscriber::filter::{FilterExt, LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Environment variable naming the log file.
pub const ENV_LOG_FILE: &str = azd_wasm_host_core::settings::LOG_FILE;
/// A write that would take the log file past this moves it aside first.
const ROTATE_BYTES: u64 = 8 << 20;

/// Whether debug logging was asked for by flag or by `AZD_DEBUG`.
pub fn debug_requested(flag: bool) -> bool {
    flag || std::env::var("AZD_DEBUG").is_ok_and(|v| {
        let v = v.trim();
        v.eq_ignore_ascii_case("true") || v == "1"
    })
}

/// The log file: `AZD_WASM_HOST_LOG_FILE`, else the default in the cache dir.
pub fn log_file_path() -> Option<PathBuf> {
    match std::env::var_os(ENV_LOG_FILE).filter(|v| !v.is_empty()) {
        Some(p) => Some(PathBuf::from(p)),
        None => azd_wasm_host_runtime::user_cache_dir()
            .map(|d| d.join("logs").join("azd-wasm-host.log")),
    }
}

/// Installs the subscriber: stderr when `debug`, and the log file when
/// `to_file`. Returns the log file's path when one is open. `RUST_LOG` refines
/// the stderr filter when debugging.
pub fn init(debug: bool, to_file: bool) -> Option<PathBuf> {
    // `Targets` (`target=level,…,level`), not `EnvFilter`: its regular
    // expressions would be most of the shipped binary's logging code.
    let stderr_filter = match (debug, std::env::var("RUST_LOG")) {
        (true, Ok(directives)) => {
            FilterExt::boxed(directives.parse::<Targets>().unwrap_or_else(|e| {
                eprintln!("azd-wasm-host: RUST_LOG ignored ({e}): give `target=level,…,level`");
                default_targets()
            }))
        }
        (true, Err(_)) => FilterExt::boxed(default_targets()),
        (false, _) => FilterExt::boxed(LevelFilter::OFF),
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_filter(stderr_filter);
    let file = to_file
        .then(log_file_path)
        .flatten()
        .and_then(|path| open(&path).map(|f| (path, f)));
    let (path, file) = file.unzip();
    let file_layer = file.map(|f| {
        let filter = if debug {
            "azd_wasm_host=debug,guest=debug,info"
        } else {
            "azd_wasm_host=info,guest=debug,warn"
        };
        tracing_subscriber::fmt::layer()
            .with_writer(Mutex::new(f))
            .with_ansi(false)
            .with_target(true)
            .with_filter(targets(filter))
    });
    let _ = tracing_subscriber::registry()
        .with(stderr)
        .with(file_layer)
        .try_init();
    let path = path?;
    tracing::info!(pid = std::process::id(), version = env!("CARGO_PKG_VERSION"), args = ?std::env::args().skip(1).collect::<Vec<_>>(), "azd-wasm-host started");
    Some(path)
}

/// What debugging shows on stderr unless `RUST_LOG` says otherwise.
fn default_targets() -> Targets {
    targets("azd_wasm_host=debug,guest=debug,info")
}

/// A filter by target, from a list this file writes (`target=level,…,level`).
fn targets(list: &str) -> Targets {
    list.parse()
        .unwrap_or_else(|_| Targets::new().with_default(LevelFilter::INFO))
}

/// Opens the log file (in a private folder); `None` if it cannot be written
/// (logging must never stop the host).
fn open(path: &Path) -> Option<RollingFile> {
    if let Some(dir) = path.parent() {
        azd_wasm_host_core::files::create_private_dir(dir).ok()?;
    }
    RollingFile::open(path, ROTATE_BYTES).ok()
}

//! # azd-wasm-host-sidecar
//!
//! What azd runs: `listen` (connect to azd, register the provider, Ready,
//! serve until azd ends the stream; see `listen`) and `metadata` (azd's
//! metadata for the extension, at install; see `metadata`), with the process around it:
//! the environment read in one place ([`env`]), where log lines go ([`logs`]),
//! and the thread and async runtime it serves on ([`run_listen`]).
//!
//! Two binaries serve through it:
//! - the development CLI (`azd-wasm-host listen`, from a checkout), which
//!   compiles a component that has no precompiled code (and caches the code),
//!   and lends `listen` recording and replay ([`DevelopmentTools`], the
//!   `azd-wasm-host-recorder` crate's, which this crate does not link);
//! - this crate's `azd-wasm-host-sidecar`, the binary `package` ships as an
//!   extension's entry point. It is built without wasmtime's compilers and
//!   without the author's toolchain, so it is a fraction of the size, and runs
//!   only the code `package` precompiled beside it for its platform; anything
//!   else is refused with the fix, repackaging ([`Serving::Sidecar`]). Asked
//!   to record, it hands the session to the development CLI ([`env::DEV_CLI`]).
//!
//! Modules: `listen`, `admission` (signature and consent before a provider
//! runs; `approve`), `develop` (what the development CLI lends, and the
//! hand-over), `locate` (the manifest), `metadata`, [`env`], [`launch`] (the
//! environment kept when azd started the process), [`logs`].

mod admission;
mod develop;
pub mod env;
pub mod launch;
mod listen;
mod locate;
pub mod logs;
mod metadata;

use std::process::ExitCode;

pub use admission::approve;
pub use develop::{DevelopmentTools, Recording};
pub use listen::{EXIT_UNANSWERED, ListenArgs, Serving};
pub use metadata::print_metadata;

/// Stack of every thread that runs our tasks: sized for the deepest config azd
/// may send that the host reads (`MAX_CONFIG_DEPTH` levels, decoded,
/// converted and dropped recursively); only the pages used are committed.
pub const STACK_SIZE: usize = 16 << 20;

/// `listen`, as a whole process: logging (stderr only when debugging, and the
/// log file), a current-thread async runtime on a thread with [`STACK_SIZE`],
/// the exit code.
///
/// One azd stream is served on one thread: each step of a request's path (the
/// stream's reader, the broker, the guest call, the answer's writer) is then a
/// task switch instead of a wake-up of another thread, which took about a
/// quarter of a State round trip (`scripts/bench.sh go`). A guest that
/// computes still yields at every epoch tick (10 ms); compiles and file I/O
/// run on the blocking pool.
pub fn run_listen(args: ListenArgs, debug_flag: bool, serving: Serving) -> ExitCode {
    if args.record.is_some() && matches!(serving, Serving::Sidecar) {
        return develop::hand_over(args.manifest.as_deref());
    }
    on_main_thread(move || {
        let debug = logs::debug_requested(debug_flag);
        let log_file = logs::init(debug, true);
        launch::log_notes();
        let rt = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("azd-wasm-host: cannot start the async runtime: {e}");
                return ExitCode::FAILURE;
            }
        };
        let result = rt.block_on(listen::listen(args, log_file, serving));
        // A blocking thread still finishing a file operation for a dropped
        // guest, or a compile under way, must not hold the process open.
        rt.shutdown_timeout(std::time::Duration::from_millis(200));
        exit_code(result)
    })
}

/// Runs `work` on a thread with [`STACK_SIZE`] (a current-thread runtime runs
/// on the thread that blocks on it) and returns its exit code.
pub fn on_main_thread(work: impl FnOnce() -> ExitCode + Send + 'static) -> ExitCode {
    let thread = std::thread::Builder::new()
        .name("azd-wasm-host".into())
        .stack_size(STACK_SIZE)
        .spawn(work);
    match thread.map(std::thread::JoinHandle::join) {
        Ok(Ok(code)) => code,
        Ok(Err(_)) => ExitCode::FAILURE, // the panic message is already on stderr
        Err(e) => {
            eprintln!("azd-wasm-host: cannot start the main thread: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The exit code of a command's result; an error is printed on stderr with
/// its causes.
pub fn exit_code(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("azd-wasm-host: error: {e}");
            for cause in e.chain().skip(1) {
                eprintln!("  caused by: {cause}");
            }
            ExitCode::FAILURE
        }
    }
}

//! The process around `listen`: the thread it serves on ([`STACK_SIZE`]),
//! its async runtime, and the exit code of a command's result.

use std::process::ExitCode;

use crate::listen::{ListenArgs, Serving};
use crate::{develop, launch, listen, logs};

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

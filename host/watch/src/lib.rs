//! `azd-wasm-host watch`: the provider author's dev loop, like `azd x watch`
//! or `spin watch`. One cycle at start, then one after every burst of
//! changes to the provider's manifest, sources or tests: rebuild (as
//! `build`), run its tests offline (as `test`, replayed from cassettes), and
//! with `--install` repackage it (as `package`) and reinstall it into azd.
//! Each cycle prints one line with every step's time; a failed step prints
//! its error and the loop waits for the next change. Ctrl-C or SIGTERM stops
//! it, and the step that was running with everything it started; exit 0.
//!
//! - `cycle`: the loop, generic over its steps and its events (debounce,
//!   one cycle at a time, one more after changes during a cycle, stop);
//! - `files`: which paths matter (outputs and editors' noise do not);
//! - `fs_events`: notify's events and the signals, as the loop's events;
//! - `steps`: the real steps; `worker`: the build, test and package steps,
//!   each run in a child process of this binary (`watch --step`); `child`:
//!   such a process, in a process group of its own, stopped whole; `azd`:
//!   the install into azd;
//! - `report`: the cycle's line, for a terminal or plain;
//! - `command`: the arguments and the whole put together.
//!
//! This file only declares modules and re-exports.

mod azd;
mod child;
mod command;
mod cycle;
mod files;
mod fs_events;
mod report;
mod steps;
mod worker;

pub use command::{WatchOptions, run_step, watch};
pub use worker::WorkerStep;

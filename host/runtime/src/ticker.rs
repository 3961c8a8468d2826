//! The epoch ticker: one thread that advances every engine's epoch each
//! [`EPOCH_TICK`] while a guest runs, so a guest computing in a loop still
//! yields to its caller (deadline, cancellation). Between azd's requests it
//! sleeps: no thread of the sidecar wakes while nothing runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use wasmtime::Engine;

/// How often the epoch advances (the granularity of deadlines and cancellation).
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Has `engine`'s epoch advanced every [`EPOCH_TICK`] while a guest runs
/// (the process's one ticker thread serves every engine).
pub(crate) fn start(engine: &Engine) -> Result<(), String> {
    let ticker = ticker()?;
    lock(&ticker.engines).push(engine.clone());
    Ok(())
}

/// The epoch ticker: one thread that advances its engines' epochs every
/// [`EPOCH_TICK`], but only while a guest runs ([`ticking`]). Between azd's
/// requests no thread of the sidecar wakes (a ticker that never stopped woke
/// it 100 times a second for as long as azd kept it).
pub(crate) struct Ticker {
    engines: Mutex<Vec<Engine>>,
    /// Guest calls running now.
    running: Mutex<usize>,
    wake: Condvar,
    /// Ticks so far (what the tests watch).
    ticks: AtomicU64,
}

/// Held while a guest runs: the ticker ticks until the last one is dropped.
pub(crate) struct Ticking(&'static Ticker);

impl Drop for Ticking {
    fn drop(&mut self) {
        let mut running = lock(&self.0.running);
        *running = running.saturating_sub(1);
    }
}

/// Ticks for as long as the result is held (nothing when no engine was made).
pub(crate) fn ticking() -> Option<Ticking> {
    let ticker = TICKER.get()?.as_ref().ok()?;
    Some(ticker.hold())
}

static TICKER: OnceLock<Result<&'static Ticker, String>> = OnceLock::new();

fn ticker() -> Result<&'static Ticker, String> {
    TICKER
        .get_or_init(|| {
            let ticker: &'static Ticker = Box::leak(Box::default());
            ticker.spawn().map(|()| ticker)
        })
        .clone()
}

impl Default for Ticker {
    fn default() -> Self {
        Self {
            engines: Mutex::default(),
            running: Mutex::new(0),
            wake: Condvar::new(),
            ticks: AtomicU64::new(0),
        }
    }
}

impl Ticker {
    fn hold(&'static self) -> Ticking {
        let first = {
            let mut running = lock(&self.running);
            *running += 1;
            *running == 1
        };
        // Notified after the lock is released: woken while it was held, the ticker
        // would block on it at once and be woken a second time (two context switches
        // more on the path of every guest call, seen with `perf sched`).
        if first {
            self.wake.notify_one();
        }
        Ticking(self)
    }

    fn spawn(&'static self) -> Result<(), String> {
        std::thread::Builder::new()
            .name("wasm-epoch".into())
            .spawn(move || self.run())
            .map(drop)
            .map_err(|e| format!("cannot start the epoch ticker thread: {e}"))
    }

    fn run(&self) {
        loop {
            {
                let running = lock(&self.running);
                let _running = self
                    .wake
                    .wait_while(running, |n| *n == 0)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            std::thread::sleep(EPOCH_TICK);
            for engine in lock(&self.engines).iter() {
                engine.increment_epoch();
            }
            self.ticks.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// A lock that a panic elsewhere does not poison for the ticker.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ticks(t: &Ticker) -> u64 {
        t.ticks.load(Ordering::Relaxed)
    }

    #[test]
    fn the_ticker_ticks_only_while_a_guest_runs() {
        let ticker: &'static Ticker = Box::leak(Box::default());
        ticker.spawn().unwrap();
        std::thread::sleep(EPOCH_TICK * 10);
        assert_eq!(ticks(ticker), 0, "it ticked with no guest running");
        let (first, second) = (ticker.hold(), ticker.hold());
        std::thread::sleep(EPOCH_TICK * 15);
        drop(first);
        let during = ticks(ticker);
        assert!(during >= 3, "{during} ticks in 15 tick lengths");
        std::thread::sleep(EPOCH_TICK * 5);
        assert!(ticks(ticker) > during, "it stopped while a call still ran");
        drop(second);
        // The tick under way when the last call ended may still finish.
        std::thread::sleep(EPOCH_TICK * 3);
        let after = ticks(ticker);
        std::thread::sleep(EPOCH_TICK * 10);
        assert_eq!(ticks(ticker), after, "it kept ticking after the last call");
    }
}

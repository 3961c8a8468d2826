//! The epoch ticker: one thread that advances every engine's epoch each
//! [`EPOCH_TICK`] while a guest runs, so a guest computing in a loop still
//! yields to its caller (deadline, cancellation). It goes on for [`LINGER`]
//! after the last call ended, so that calls in a row (azd's Initialize, then
//! its Deploy or State; a test's requests) find it awake and do not each pay
//! a thread wake-up; after that it sleeps: no thread of the sidecar wakes
//! while nothing runs.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use wasmtime::Engine;

/// How often the epoch advances (the granularity of deadlines and cancellation).
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// How long the ticker goes on after the last guest call ended.
pub(crate) const LINGER: Duration = Duration::from_secs(1);

/// Has `engine`'s epoch advanced every [`EPOCH_TICK`] while a guest runs
/// (the process's one ticker thread serves every engine).
pub(crate) fn start(engine: &Engine) -> Result<(), String> {
    let ticker = ticker()?;
    lock(&ticker.engines).push(engine.clone());
    Ok(())
}

/// The epoch ticker: one thread that advances its engines' epochs every
/// [`EPOCH_TICK`], but only while a guest runs ([`ticking`]) and for
/// `linger` after. Between azd's commands no thread of the sidecar wakes (a
/// ticker that never stopped woke it 100 times a second for as long as azd
/// kept it).
pub(crate) struct Ticker {
    engines: Mutex<Vec<Engine>>,
    state: Mutex<State>,
    wake: Condvar,
    linger: Duration,
    /// Ticks so far (what the tests watch).
    ticks: AtomicU64,
    /// Times a call had to wake the ticker (what the tests watch).
    wakes: AtomicU64,
}

/// What the ticker and the calls share.
#[derive(Default)]
struct State {
    /// Guest calls running now.
    running: usize,
    /// The ticker waits for a call (a call must wake it).
    asleep: bool,
}

/// Held while a guest runs: the ticker ticks until the last one is dropped.
pub(crate) struct Ticking(&'static Ticker);

impl Drop for Ticking {
    fn drop(&mut self) {
        let mut state = lock(&self.0.state);
        state.running = state.running.saturating_sub(1);
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
            let ticker: &'static Ticker = Box::leak(Box::new(Ticker::new(LINGER)));
            ticker.spawn().map(|()| ticker)
        })
        .clone()
}

impl Ticker {
    fn new(linger: Duration) -> Self {
        Self {
            engines: Mutex::default(),
            state: Mutex::default(),
            wake: Condvar::new(),
            linger,
            ticks: AtomicU64::new(0),
            wakes: AtomicU64::new(0),
        }
    }

    fn hold(&'static self) -> Ticking {
        let asleep = {
            let mut state = lock(&self.state);
            state.running += 1;
            std::mem::replace(&mut state.asleep, false)
        };
        // Notified after the lock is released: woken while it was held, the ticker
        // would block on it at once and be woken a second time (two context switches
        // more on the path of every guest call, seen with `perf sched`). Only when it
        // sleeps: lingering, it sees the call at its next tick.
        if asleep {
            self.wakes.fetch_add(1, Ordering::Relaxed);
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
                let mut state = lock(&self.state);
                state.asleep = state.running == 0;
                // Until a call wakes it (it ticks then, even if that call has
                // ended by the time it runs: it lingers for the next).
                let _state = self
                    .wake
                    .wait_while(state, |s| s.asleep)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            self.tick_while_needed();
        }
    }

    /// Ticks while a call runs and for `linger` after the last one ended.
    fn tick_while_needed(&self) {
        let mut idle_since: Option<std::time::Instant> = None;
        loop {
            std::thread::sleep(EPOCH_TICK);
            for engine in lock(&self.engines).iter() {
                engine.increment_epoch();
            }
            self.ticks.fetch_add(1, Ordering::Relaxed);
            let mut state = lock(&self.state);
            if state.running > 0 {
                idle_since = None;
                continue;
            }
            let since = *idle_since.get_or_insert_with(std::time::Instant::now);
            if since.elapsed() >= self.linger {
                // Asleep from here: a call from now on wakes it.
                state.asleep = true;
                return;
            }
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

    fn started(linger: Duration) -> &'static Ticker {
        let ticker: &'static Ticker = Box::leak(Box::new(Ticker::new(linger)));
        ticker.spawn().unwrap();
        ticker
    }

    #[test]
    fn the_ticker_ticks_only_while_a_guest_runs_and_a_little_after() {
        let ticker = started(EPOCH_TICK * 5);
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
        // It lingers 5 ticks; the tick under way when it stops may still finish.
        std::thread::sleep(EPOCH_TICK * 9);
        let after = ticks(ticker);
        std::thread::sleep(EPOCH_TICK * 10);
        assert_eq!(ticks(ticker), after, "it kept ticking after lingering");
    }

    #[test]
    fn calls_in_a_row_wake_the_ticker_once() {
        let ticker = started(Duration::from_secs(5));
        std::thread::sleep(EPOCH_TICK * 3);
        for _ in 0..20 {
            drop(ticker.hold());
            std::thread::sleep(EPOCH_TICK / 2);
        }
        assert_eq!(ticker.wakes.load(Ordering::Relaxed), 1);
        assert!(ticks(ticker) > 0, "it never ticked");
    }

    #[test]
    fn a_call_after_the_ticker_went_back_to_sleep_wakes_it_again() {
        let ticker = started(EPOCH_TICK);
        std::thread::sleep(EPOCH_TICK * 3);
        drop(ticker.hold());
        std::thread::sleep(EPOCH_TICK * 6);
        let before = ticks(ticker);
        let call = ticker.hold();
        std::thread::sleep(EPOCH_TICK * 5);
        assert_eq!(ticker.wakes.load(Ordering::Relaxed), 2);
        assert!(ticks(ticker) > before, "the second call found no ticker");
        drop(call);
    }
}

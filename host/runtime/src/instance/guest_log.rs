//! What a guest may write to the host's log ([`GuestLog`]): its stdout,
//! stderr and `log` calls together, bounded per instance and per process.
//!
//! Every line a guest writes costs its length plus [`LINE_COST`] (what the log
//! adds to it: time, level, provider), so empty lines are bounded too. An
//! instance may spend [`INSTANCE_BYTES`]; all instances of one loaded provider
//! (in `listen`, the process) together [`PROCESS_BYTES`]. The line that would
//! pass a bound is not logged; instead one host line says the output was
//! truncated, and nothing more of that instance (or, past the process's bound,
//! of any instance) reaches the log. What is dropped is counted, and reported
//! once at the end of each call that dropped something.
//!
//! The bounds are fixed, not manifest-tunable: they bound what lands on the
//! user's disk and in their log, not anything a provider needs to work, and no
//! provider in normal use comes near them.
//!
//! Counting is an atomic add per line, nothing per byte and no lock; once a
//! bound is passed, the guest's lines are dropped before they are converted or
//! cleaned.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What one instance may write to the log, in bytes (each line counted with
/// [`LINE_COST`]).
pub(crate) const INSTANCE_BYTES: u64 = 4 << 20;
/// What all instances of one loaded provider (in `listen`, the process) may
/// write to the log together.
pub(crate) const PROCESS_BYTES: u64 = 32 << 20;
/// What each line costs beyond its own bytes: the log's prefix to it.
pub(crate) const LINE_COST: u64 = 128;

/// One bound: the bytes taken so far against it.
struct Budget {
    bound: u64,
    used: AtomicU64,
}

/// What taking from a [`Budget`] did.
#[derive(Debug, PartialEq, Eq)]
enum Take {
    /// Within the bound.
    Fits,
    /// This take passed the bound (exactly one take does).
    Crossed,
    /// The bound was already passed.
    Past,
}

impl Budget {
    fn new(bound: u64) -> Self {
        Self {
            bound,
            used: AtomicU64::new(0),
        }
    }

    fn take(&self, n: u64) -> Take {
        let before = self.used.fetch_add(n, Ordering::Relaxed);
        if before.saturating_add(n) <= self.bound {
            Take::Fits
        } else if before <= self.bound {
            Take::Crossed
        } else {
            Take::Past
        }
    }

    fn passed(&self) -> bool {
        self.used.load(Ordering::Relaxed) > self.bound
    }
}

/// The log budget every instance of one loaded provider shares (the
/// template's: in `listen`, the process's).
#[derive(Clone)]
pub(crate) struct ProcessLog(Arc<Budget>);

impl Default for ProcessLog {
    fn default() -> Self {
        Self(Arc::new(Budget::new(PROCESS_BYTES)))
    }
}

/// One instance's log budget, which its stdout, stderr and `log` import share.
#[derive(Clone)]
pub(crate) struct GuestLog(Arc<Inner>);

struct Inner {
    provider: Arc<str>,
    instance: Budget,
    process: ProcessLog,
    /// Bytes of the guest's lines not logged, and how many of them were reported.
    dropped: AtomicU64,
    reported: AtomicU64,
}

impl GuestLog {
    /// A fresh budget for one instance of `provider`, within `process`'s.
    pub(crate) fn new(provider: Arc<str>, process: &ProcessLog) -> Self {
        Self(Arc::new(Inner {
            provider,
            instance: Budget::new(INSTANCE_BYTES),
            process: process.clone(),
            dropped: AtomicU64::new(0),
            reported: AtomicU64::new(0),
        }))
    }

    /// Whether nothing more of this instance is logged (a bound was passed):
    /// the caller drops its line ([`GuestLog::drop_line`]) without cleaning it.
    pub(crate) fn spent(&self) -> bool {
        self.0.instance.passed() || self.0.process.0.passed()
    }

    /// Counts a line of `len` bytes that is not logged.
    pub(crate) fn drop_line(&self, len: usize) {
        self.0.dropped.fetch_add(len as u64, Ordering::Relaxed);
    }

    /// Takes a line of `len` bytes (as it will be logged) from the budgets:
    /// whether to log it. The line that passes a bound is not logged; one
    /// line says so in its place.
    pub(crate) fn admit(&self, len: usize) -> bool {
        let inner = &*self.0;
        let cost = len as u64 + LINE_COST;
        if inner.process.0.passed() {
            self.drop_line(len);
            return false;
        }
        let fits = match inner.instance.take(cost) {
            Take::Fits => match inner.process.0.take(cost) {
                Take::Fits => true,
                Take::Crossed => {
                    tracing::warn!(
                        provider = %inner.provider,
                        "provider `{}` wrote more than {} MiB to the log in this process \
                         (all its instances together): its output is truncated, nothing more \
                         of it is logged until the process ends",
                        inner.provider,
                        PROCESS_BYTES >> 20
                    );
                    false
                }
                Take::Past => false,
            },
            Take::Crossed => {
                tracing::warn!(
                    provider = %inner.provider,
                    "provider `{}` wrote more than {} MiB to the log in one instance: its \
                     output is truncated, nothing more of this instance is logged (until the \
                     next Initialize); what is dropped is counted at the end of each call",
                    inner.provider,
                    INSTANCE_BYTES >> 20
                );
                false
            }
            Take::Past => false,
        };
        if !fits {
            self.drop_line(len);
        }
        fits
    }

    /// Says, once, how much of the guest's output was dropped since the last
    /// report (at the end of the call `call`).
    pub(crate) fn report_dropped(&self, call: &str) {
        let inner = &*self.0;
        let dropped = inner.dropped.load(Ordering::Relaxed);
        let before = inner.reported.swap(dropped, Ordering::Relaxed);
        if dropped > before {
            tracing::info!(
                provider = %inner.provider,
                call,
                dropped_bytes = dropped - before,
                "guest output past its log budget was not logged"
            );
        }
    }
}

impl Drop for Inner {
    /// What was dropped after the last call's report (start code that never
    /// served a call, the rest of a line flushed as the instance ends).
    fn drop(&mut self) {
        let dropped = *self.dropped.get_mut();
        let reported = *self.reported.get_mut();
        if dropped > reported {
            tracing::info!(
                provider = %self.provider,
                dropped_bytes = dropped - reported,
                "guest output past its log budget was not logged (as the instance ended)"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exactly_one_take_crosses_a_bound() {
        let b = Budget::new(10);
        assert_eq!(b.take(4), Take::Fits);
        assert_eq!(b.take(6), Take::Fits);
        assert!(!b.passed());
        assert_eq!(b.take(1), Take::Crossed);
        assert!(b.passed());
        assert_eq!(b.take(1), Take::Past);
        assert_eq!(b.take(0), Take::Past);
    }

    #[test]
    fn a_line_costs_its_bytes_and_the_prefix() {
        let log = GuestLog::new(Arc::from("p"), &ProcessLog::default());
        let per_line = 1000;
        let fit = INSTANCE_BYTES / (per_line + LINE_COST);
        for _ in 0..fit {
            assert!(log.admit(1000));
        }
        assert!(!log.spent());
        assert!(!log.admit(1000));
        assert!(log.spent());
        assert!(!log.admit(0));
        assert_eq!(log.0.dropped.load(Ordering::Relaxed), 1000);
    }

    #[test]
    fn instances_share_the_process_bound() {
        let process = ProcessLog::default();
        let per_instance = INSTANCE_BYTES / (1000 + LINE_COST);
        let mut logged = 0;
        for _ in 0..(PROCESS_BYTES / INSTANCE_BYTES + 2) {
            let log = GuestLog::new(Arc::from("p"), &process);
            for _ in 0..=per_instance {
                if log.admit(1000) {
                    logged += 1000 + LINE_COST;
                }
            }
        }
        assert!(logged <= PROCESS_BYTES, "{logged}");
        assert!(logged > PROCESS_BYTES - INSTANCE_BYTES, "{logged}");
        assert!(GuestLog::new(Arc::from("p"), &process).spent());
    }
}

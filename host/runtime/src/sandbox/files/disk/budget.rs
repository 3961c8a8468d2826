//! One instance's budget of bytes written, and what a refused write says.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a new directory entry costs: one filesystem block.
pub(crate) const ENTRY_BYTES: u64 = 4096;

/// One instance's budget of bytes written, shared by all its descriptors and
/// streams.
#[derive(Debug, Clone)]
pub(crate) struct DiskBudget {
    used: Arc<AtomicU64>,
    limit: u64,
}

impl DiskBudget {
    /// A budget of `limit` bytes.
    pub(crate) fn new(limit: u64) -> Self {
        Self {
            used: Arc::new(AtomicU64::new(0)),
            limit,
        }
    }

    /// Takes `bytes` from the budget, or nothing when that would pass the
    /// limit (`Err(NoSpace)`).
    pub(crate) fn charge(&self, bytes: u64) -> Result<(), NoSpace> {
        if bytes == 0 {
            return Ok(());
        }
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .map(drop)
            .map_err(|used| NoSpace {
                asked: bytes,
                left: self.limit.saturating_sub(used),
                limit: self.limit,
            })
    }

    /// Gives back what an operation charged and then did not do.
    pub(crate) fn refund(&self, bytes: u64) {
        let _ = self
            .used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                Some(used.saturating_sub(bytes))
            });
    }

    /// Bytes charged so far.
    #[cfg(test)]
    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }
}

/// A write the budget refused: what the guest sees as `insufficient-space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NoSpace {
    asked: u64,
    left: u64,
    limit: u64,
}

impl std::fmt::Display for NoSpace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "no space: the write needs {} bytes and {} of the instance's [policy] disk_mb ({} \
             bytes) are left",
            self.asked, self.left, self.limit
        )
    }
}

impl std::error::Error for NoSpace {}

/// How far writing `len` bytes at `offset` takes a file of `size` bytes past
/// its end.
pub(crate) fn growth(size: u64, offset: u64, len: u64) -> u64 {
    offset.saturating_add(len).saturating_sub(size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_refuses_what_would_pass_it_and_takes_nothing_then() {
        let b = DiskBudget::new(10);
        assert!(b.charge(6).is_ok());
        let refused = b.charge(5).unwrap_err();
        assert_eq!((refused.asked, refused.left), (5, 4));
        assert_eq!(b.used(), 6);
        assert!(b.charge(4).is_ok());
        assert!(b.charge(1).is_err());
        assert!(b.charge(u64::MAX).is_err(), "no overflow");
        b.refund(3);
        assert_eq!(b.used(), 7);
        assert!(b.charge(0).is_ok());
        assert!(refused.to_string().contains("no space"), "{refused}");
    }

    #[test]
    fn growth_counts_holes_and_not_overwrites() {
        assert_eq!(growth(100, 0, 50), 0);
        assert_eq!(growth(100, 90, 20), 10);
        assert_eq!(growth(0, 1 << 40, 1), (1 << 40) + 1);
        assert_eq!(growth(0, u64::MAX, 10), u64::MAX);
    }

    #[test]
    fn parallel_charges_never_pass_the_limit() {
        let b = DiskBudget::new(1000);
        let granted: u64 = std::thread::scope(|s| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let b = b.clone();
                    s.spawn(move || (0..100).filter(|_| b.charge(7).is_ok()).count() as u64)
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).sum()
        });
        assert_eq!(granted * 7, b.used());
        assert!(b.used() <= 1000 && b.used() > 1000 - 7);
    }
}

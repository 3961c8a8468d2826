//! The memory capability, a bound: every linear memory and every table an
//! instance creates counts against one budget, `[policy] memory_mb`.
//!
//! wasmtime asks the limiter before it creates or grows a memory or a table
//! (`current` is 0 for a new one). Memories and tables never shrink and live as
//! long as the `Store`, so the running total only goes up: a component with
//! many core modules (or a multi-memory module) gets `memory_mb` in all, not
//! per memory. Table elements are counted at [`TABLE_ELEMENT_BYTES`] each, what
//! wasmtime keeps per element on a 64-bit host.
//!
//! The counts (instances, memories, tables) are bounded as well, so a guest
//! cannot exhaust the host with many small objects either.

use async_trait::async_trait;
use wasmtime::ResourceLimiterAsync;
use wasmtime::component::Linker;

use super::capability::Capability;
use azd_wasm_host_manifest::Policy;

/// The instance's memories and tables, within `memory_mb` (the store's
/// limiter, [`InstanceLimits`]; a trap after a refused grow is reported as
/// out of memory).
pub(crate) struct Memory;

impl Capability for Memory {
    const KEYS: &'static [&'static str] = &["memory_mb"];
    const INTERFACES: &'static [&'static str] = &[];

    fn reach(_interface: &str, _policy: &Policy) -> &'static str {
        ""
    }
}

/// Nothing to link: the store's limiter, [`InstanceLimits`], enforces the bound.
pub(super) fn link<T>(_linker: &mut Linker<T>) -> wasmtime::Result<()> {
    Ok(())
}

/// Host bytes one table element is counted as.
pub(crate) const TABLE_ELEMENT_BYTES: usize = 16;
/// Most bytes a guest may hand the host in one transfer: the lifted answer of
/// a call (strings and lists, counted as the host's copy), or the arguments of
/// one import call. azd reads at most 4 MiB per answer; this leaves room for
/// the host's own representation of a legitimate one.
pub(crate) const MAX_GUEST_TRANSFER: usize = 16 << 20;
/// Most core instances one component instance may create (Python's has ~10).
const MAX_INSTANCES: usize = 1_000;
/// Most linear memories one instance may create.
const MAX_MEMORIES: usize = 100;
/// Most tables one instance may create.
const MAX_TABLES: usize = 1_000;

/// The budget of one instance, remembering whether it refused a grow (so a
/// trap that follows can be reported as "out of memory").
#[derive(Debug)]
pub(crate) struct InstanceLimits {
    /// Bytes every memory and table of the instance may take together.
    budget: usize,
    /// Bytes taken so far.
    used: usize,
    /// Whether a grow was refused since the last [`InstanceLimits::take_denied`].
    denied: bool,
}

impl InstanceLimits {
    pub(crate) fn new(budget: usize) -> Self {
        Self {
            budget,
            used: 0,
            denied: false,
        }
    }

    /// Bytes taken by the instance's memories and tables.
    #[cfg(test)]
    fn used(&self) -> usize {
        self.used
    }

    /// Whether a grow was refused since the last call; resets the flag.
    pub(crate) fn take_denied(&mut self) -> bool {
        std::mem::take(&mut self.denied)
    }

    /// Grants growing one object from `current` to `desired` bytes when the
    /// total stays within the budget (and the object's own `maximum`).
    fn grow(&mut self, current: usize, desired: usize, maximum: Option<usize>) -> bool {
        let extra = desired.saturating_sub(current);
        let total = self.used.saturating_add(extra);
        let within_max = maximum.is_none_or(|m| desired <= m);
        if total <= self.budget && within_max {
            self.used = total;
            true
        } else {
            self.denied = true;
            false
        }
    }
}

#[async_trait]
impl ResourceLimiterAsync for InstanceLimits {
    async fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow(current, desired, maximum))
    }

    async fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let bytes = |elements: usize| elements.saturating_mul(TABLE_ELEMENT_BYTES);
        Ok(self.grow(bytes(current), bytes(desired), maximum.map(bytes)))
    }

    fn instances(&self) -> usize {
        MAX_INSTANCES
    }

    fn tables(&self) -> usize {
        MAX_TABLES
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[tokio::test]
    async fn every_memory_and_table_shares_one_budget() {
        let mut l = InstanceLimits::new(10 * MIB);
        assert!(l.memory_growing(0, 4 * MIB, None).await.unwrap());
        assert!(l.memory_growing(0, 4 * MIB, None).await.unwrap());
        // A third memory of 4 MiB would make 12 MiB.
        assert!(!l.memory_growing(0, 4 * MIB, None).await.unwrap());
        assert!(l.take_denied());
        assert!(!l.take_denied(), "the flag resets");
        // Growing the first memory by 1 MiB still fits, by 2 MiB no more.
        assert!(l.memory_growing(4 * MIB, 5 * MIB, None).await.unwrap());
        assert!(!l.memory_growing(5 * MIB, 7 * MIB, None).await.unwrap());
        // Tables take from the same budget.
        let elements = MIB / TABLE_ELEMENT_BYTES;
        assert!(l.table_growing(0, elements, None).await.unwrap());
        assert_eq!(l.used(), 10 * MIB);
        assert!(!l.table_growing(elements, elements + 1, None).await.unwrap());
    }

    #[tokio::test]
    async fn an_objects_own_maximum_is_kept() {
        let mut l = InstanceLimits::new(10 * MIB);
        assert!(!l.memory_growing(0, 2 * MIB, Some(MIB)).await.unwrap());
        assert_eq!(l.used(), 0);
    }
}

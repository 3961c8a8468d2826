//! [`Seal`]: what keeps an instance made ahead of its Initialize
//! (`ahead.rs`) from reaching outside itself until then. Each way out of the
//! guest that depends on the request or reaches the world (the granted
//! directories, azd's services, access tokens, HTTP, sockets) asks it first.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether an instance may reach outside itself yet. Instances made for
/// their Initialize have none; one made ahead is sealed until its Initialize.
#[derive(Clone, Debug, Default)]
pub(crate) struct Seal(Option<Arc<SealState>>);

#[derive(Debug, Default)]
struct SealState {
    open: AtomicBool,
    broken: AtomicBool,
}

impl Seal {
    /// No seal: everything the policy grants is reachable at once.
    pub(crate) fn none() -> Self {
        Self(None)
    }

    /// A closed seal.
    pub(crate) fn closed() -> Self {
        Self(Some(Arc::default()))
    }

    /// Whether the guest may do `what` (something that reaches outside it)
    /// now. While the seal is closed it may not, and the seal breaks.
    pub(crate) fn allows(&self, what: &str) -> bool {
        match &self.0 {
            Some(s) if !s.open.load(Ordering::SeqCst) => {
                s.broken.store(true, Ordering::SeqCst);
                tracing::debug!(
                    what,
                    "an instance made ahead reached outside itself; it will not be used"
                );
                false
            }
            _ => true,
        }
    }

    /// The message of a refusal (the guest may see it; azd never does).
    pub(crate) const REFUSAL: &'static str =
        "not available before initialize (the instance was made ahead of it)";

    pub(crate) fn broken(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(|s| s.broken.load(Ordering::SeqCst))
    }

    pub(crate) fn open(&self) {
        if let Some(s) = &self.0 {
            s.open.store(true, Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Seal;

    #[test]
    fn a_closed_seal_refuses_and_breaks_until_opened() {
        let none = Seal::none();
        assert!(none.allows("x"));
        assert!(!none.broken());

        let seal = Seal::closed();
        let shared = seal.clone();
        assert!(!seal.broken());
        assert!(!shared.allows("azd's environment"));
        assert!(seal.broken(), "a refusal through a clone breaks the seal");
        seal.open();
        assert!(shared.allows("azd's environment"));
    }
}

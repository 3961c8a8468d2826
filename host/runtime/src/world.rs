//! The world a provider component targets, and the export it must have: what every check
//! of a component, and every error about one, names.

/// The export a provider component must have.
pub(crate) const PROVIDER_EXPORT: &str = "azd:provisioning/provider@0.1.0";
/// The world a provider targets (0.1.0's world loads too: its imports are a subset).
pub const WORLD: &str = "azd:provisioning/provisioning-provider@0.2.0";

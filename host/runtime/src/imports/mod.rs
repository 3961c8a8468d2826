//! The host side of the guest's imports beyond WASI, each implemented on the
//! part of the store's data it needs (the linker projects it):
//! - [`provisioning`]: `progress` and `log` (world 0.1.0), on the call in progress;
//! - [`services`]: `environment` and `prompt` (world 0.2.0), azd's services as granted;
//! - [`credentials`]: `azd:credentials`, access tokens for granted scopes.

pub(crate) mod credentials;
pub(crate) mod provisioning;
pub(crate) mod services;

//! A component's code: compiled once per process, or taken from the compile
//! cache or from what its package shipped, never mapped before it is
//! authenticated, and checked against everything the host links.
//!
//! - `engine`: the process-wide engine (and its epoch `ticker`), the linker
//!   (WASI, our imports, and each capability's line: `crate::sandbox`), and
//!   compiling a component into a pre-instantiated world;
//! - `cache`: the compile cache, each entry authenticated before it is mapped;
//! - `shipped` and `targets`: the code `package` precompiles per platform,
//!   and the sidecar loads; `opened`: code hashed and mapped through one
//!   handle;
//! - `load`: a provider loaded (or prepared while it compiles) into the
//!   factory of its instances (`crate::instance`);
//! - `check`: what `azd-wasm-host check` reports of a component.

pub(crate) mod cache;
pub(crate) mod check;
pub(crate) mod engine;
pub(crate) mod load;
pub(crate) mod opened;
pub(crate) mod shipped;
pub(crate) mod targets;
pub(crate) mod ticker;

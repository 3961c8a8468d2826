//! The files capability: `[policy] fs` and `disk_mb`.
//!
//! - each `fs` grant becomes a preopened directory, opened beneath the
//!   project and never through a symbolic link, read-only or read-write
//!   ([`dirs`]); they are opened at Initialize, since they depend on the
//!   project it names, and an instance made ahead of it gets none until then
//!   (its `wasi:filesystem/preopens` traps while the seal is closed);
//! - what a guest may write into its read-write grants is bounded by
//!   `disk_mb` ([`disk`]: `wasi:filesystem/types` behind a budget), and the
//!   links it may make there by [`links`]: a symbolic link only into its own
//!   folder's subtree, no hard link;
//! - the files azd writes that the read-write grants reach (`.azure/<env>/.env`
//!   and the like) are checked to be plain files before the guest gets them,
//!   after each call, and before each use of azd's environment ([`azd_files`]);
//! - a path in a granted folder crosses to azd in the host's form, and back to
//!   the guest in its own ([`paths`]).

mod azd_files;
mod dirs;
mod disk;
mod links;
mod paths;

use wasmtime::component::{HasData, Linker, Resource, ResourceTable};
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::{preopens, types};

pub(crate) use azd_files::AzdFiles;
pub use dirs::remove_unused_dirs;
pub(crate) use dirs::{GrantedDir, Grants, guest_form, open_grants_within};
pub(crate) use disk::{BoundedFs, DiskBudget};
pub(crate) use paths::PathMap;

use super::capability::Capability;
use crate::instance::seal::Seal;
use azd_wasm_host_manifest::Policy;

/// Files: the granted directories, and what may be written into them.
pub(crate) struct Files;

impl Capability for Files {
    const KEYS: &'static [&'static str] = &["fs", "disk_mb"];
    const INTERFACES: &'static [&'static str] =
        &["wasi:filesystem/types", "wasi:filesystem/preopens"];

    fn reach(_interface: &str, policy: &Policy) -> &'static str {
        if policy.fs.is_empty() {
            "files: none granted (no [policy] fs), every open fails"
        } else {
            "files (only the fs grants below)"
        }
    }
}

/// The store's part for files: what the guest's preopens and file calls reach.
pub(crate) trait FilesView: Send {
    /// The granted directories, for `wasi:filesystem/preopens`.
    fn preopens(&mut self) -> GrantedPreopens<'_>;
    /// Files, behind the disk budget, for `wasi:filesystem/types`.
    fn filesystem(&mut self) -> BoundedFs<'_>;
}

/// Serves `wasi:filesystem/preopens` and `types` in place of wasmtime-wasi's:
/// directories opened beneath the project, files behind the instance's disk
/// budget.
pub(super) fn link<T: FilesView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    preopens::add_to_linker::<T, PreopensFromGrants>(linker, T::preopens)?;
    types::add_to_linker::<T, disk::BoundedFsData>(linker, T::filesystem)?;
    linker.allow_shadowing(false);
    Ok(())
}

/// Links `wasi:filesystem/preopens` to [`GrantedPreopens`] (in place of
/// wasmtime-wasi's, which opens directories by path).
struct PreopensFromGrants;

impl HasData for PreopensFromGrants {
    type Data<'a> = GrantedPreopens<'a>;
}

/// The granted directories, as the guest asks for them.
pub(crate) struct GrantedPreopens<'a> {
    pub(crate) table: &'a mut ResourceTable,
    pub(crate) dirs: &'a [GrantedDir],
    pub(crate) seal: &'a Seal,
}

impl preopens::Host for GrantedPreopens<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        if !self.seal.allows("the granted directories") {
            // A trap: the directories cannot be known yet, and a guest that
            // kept an empty list would serve the project without them.
            wasmtime::bail!("the granted directories are {}", Seal::REFUSAL);
        }
        let mut out = Vec::with_capacity(self.dirs.len());
        for granted in self.dirs {
            let fd = self.table.push(Descriptor::Dir(granted.dir.clone()))?;
            out.push((fd, granted.guest_path.clone()));
        }
        Ok(out)
    }
}

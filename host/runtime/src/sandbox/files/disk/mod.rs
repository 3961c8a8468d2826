//! The disk an instance may take: `[policy] disk_mb`, across its read-write
//! grants.
//!
//! `wasi:filesystem/types` is served by wasmtime-wasi's own implementation
//! behind [`BoundedFs`], which charges every operation that can make the
//! disk hold more, before it runs, to the instance's [`DiskBudget`]:
//! - a write (`write`, and each write on a stream from `write-via-stream`
//!   or `append-via-stream`, whatever the number of streams open at once):
//!   how far it takes the file past its current size, counting from the
//!   offset written at, so a write far past the end (a sparse file) costs
//!   the whole hole; an append costs its length;
//! - `set-size` past the current size: the difference;
//! - a new entry (a file created by `open-at`, a directory, a symbolic link
//!   and its target): [`ENTRY_BYTES`] each, what a filesystem spends on one
//!   at least, so that many empty files are bounded too.
//!
//! Being the one place every such operation passes, [`BoundedFs`] also
//! applies the rule of which links a guest may make or move
//! ([`super::links`]: a symbolic link only into its own folder's subtree, no
//! hard links).
//!
//! Nothing is given back when a file shrinks or goes: the budget bounds what
//! an instance writes, so its net growth of the disk is at most the budget
//! (an overwrite in place costs nothing). Past the budget the operation fails
//! with WASI's `insufficient-space` (ENOSPC in the guest's libc) and nothing
//! is written; the guest's error reaches azd like any other. A fresh instance
//! (every Initialize) starts with the whole budget.

mod budget;
mod fs;
mod stream;

pub(crate) use budget::DiskBudget;
pub(crate) use fs::{BoundedFs, BoundedFsData};

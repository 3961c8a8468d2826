//! `wasi:filesystem/types` as wasmtime-wasi serves it, with what can make the
//! disk hold more charged to the instance's [`DiskBudget`] first (the
//! module's doc says what each costs), and the links a guest may not make
//! refused (`symlink-at`, `rename-at` of a link, `link-at`:
//! `sandbox::links`). Everything else is handed on as it is.

use wasmtime::component::{HasData, Resource};
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystemCtxView};
use wasmtime_wasi::p2::bindings::filesystem::types::{
    self, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream, FsError, FsResult};

use super::budget::{DiskBudget, ENTRY_BYTES, NoSpace, growth};
use super::stream::{BoundedOutput, Position};
use crate::sandbox::files::links::refused_target;

/// Links `wasi:filesystem/types` to [`BoundedFs`].
pub(crate) struct BoundedFsData;

impl HasData for BoundedFsData {
    type Data<'a> = BoundedFs<'a>;
}

/// wasmtime-wasi's filesystem of one instance, and its budget.
pub(crate) struct BoundedFs<'a> {
    pub(crate) inner: WasiFilesystemCtxView<'a>,
    pub(crate) budget: &'a DiskBudget,
}

/// Another handle on the descriptor `fd` names (a borrow: the table's entry
/// is unchanged).
fn again<T: 'static>(fd: &Resource<T>) -> Resource<T> {
    Resource::new_borrow(fd.rep())
}

/// The guest's error for a link the rule refuses (`sandbox::links`).
fn refused_link(what: &str, at: &str, target: &str, why: &str) -> FsError {
    tracing::debug!(at, target, "refused {what}: {why}");
    ErrorCode::NotPermitted.into()
}

fn no_space(no: NoSpace) -> FsError {
    tracing::debug!("{no}");
    ErrorCode::InsufficientSpace.into()
}

impl BoundedFs<'_> {
    /// The open file `fd` names and its size now.
    fn file_size(
        &mut self,
        fd: &Resource<Descriptor>,
    ) -> FsResult<(std::sync::Arc<std::fs::File>, u64)> {
        match self.inner.table.get(fd)? {
            Descriptor::File(f) => {
                let file = f.file.clone();
                let size = file.metadata().map_err(ErrorCode::from)?.len();
                Ok((file, size))
            }
            Descriptor::Dir(_) => Err(ErrorCode::IsDirectory.into()),
        }
    }

    /// Runs `op` charged `cost`: refused with no space before it starts when
    /// the budget has not that much left, and given it back when it fails.
    async fn charged<R, F: Future<Output = FsResult<R>>>(
        budget: &DiskBudget,
        cost: u64,
        op: impl FnOnce() -> F,
    ) -> FsResult<R> {
        budget.charge(cost).map_err(no_space)?;
        let result = op().await;
        if result.is_err() {
            budget.refund(cost);
        }
        result
    }

    /// The target of `path` beneath `fd` when it is a symbolic link (`None`
    /// inside when it cannot be read), else `None` (not a link, or missing:
    /// the operation itself says so).
    async fn symlink_target(
        &mut self,
        fd: &Resource<Descriptor>,
        path: &str,
    ) -> Option<Option<String>> {
        let stat = self
            .inner
            .stat_at(again(fd), types::PathFlags::empty(), path.to_owned())
            .await
            .ok()?;
        if stat.type_ != types::DescriptorType::SymbolicLink {
            return None;
        }
        Some(
            self.inner
                .readlink_at(again(fd), path.to_owned())
                .await
                .ok(),
        )
    }

    /// A stream of `fd` from wasmtime-wasi, put back in the table bounded.
    fn bounded(
        &mut self,
        fd: &Resource<Descriptor>,
        stream: Resource<DynOutputStream>,
        position: Position,
    ) -> FsResult<Resource<DynOutputStream>> {
        let (file, _) = self.file_size(fd)?;
        let inner = self.inner.table.delete(stream)?;
        let bounded: DynOutputStream = Box::new(BoundedOutput {
            inner,
            file,
            position,
            budget: self.budget.clone(),
        });
        Ok(self.inner.table.push(bounded)?)
    }
}

impl types::Host for BoundedFs<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.inner, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        if self
            .inner
            .table
            .get(&err)?
            .downcast_ref::<NoSpace>()
            .is_some()
        {
            return Ok(Some(ErrorCode::InsufficientSpace));
        }
        types::Host::filesystem_error_code(&mut self.inner, err)
    }
}

impl HostDescriptor for BoundedFs<'_> {
    async fn write(
        &mut self,
        fd: Resource<types::Descriptor>,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        let (_, size) = self.file_size(&fd)?;
        let cost = growth(size, offset, buf.len() as u64);
        Self::charged(self.budget, cost, || self.inner.write(fd, buf, offset)).await
    }

    async fn set_size(
        &mut self,
        fd: Resource<types::Descriptor>,
        size: types::Filesize,
    ) -> FsResult<()> {
        let (_, now) = self.file_size(&fd)?;
        let cost = size.saturating_sub(now);
        Self::charged(self.budget, cost, || self.inner.set_size(fd, size)).await
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<types::Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        let stream = self.inner.write_via_stream(again(&fd), offset)?;
        self.bounded(&fd, stream, Position::At(offset))
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<Resource<DynOutputStream>> {
        let stream = self.inner.append_via_stream(again(&fd))?;
        self.bounded(&fd, stream, Position::End)
    }

    async fn open_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<types::Descriptor>> {
        let creates = oflags.contains(types::OpenFlags::CREATE)
            && self
                .inner
                .stat_at(again(&fd), types::PathFlags::empty(), path.clone())
                .await
                .is_err();
        let cost = if creates { ENTRY_BYTES } else { 0 };
        Self::charged(self.budget, cost, || {
            self.inner.open_at(fd, path_flags, path, oflags, flags)
        })
        .await
    }

    async fn create_directory_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        Self::charged(self.budget, ENTRY_BYTES, || {
            self.inner.create_directory_at(fd, path)
        })
        .await
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        if let Some(why) = refused_target(&src_path) {
            return Err(refused_link("a symbolic link", &dest_path, &src_path, why));
        }
        let cost = ENTRY_BYTES.saturating_add(src_path.len() as u64);
        Self::charged(self.budget, cost, || {
            self.inner.symlink_at(fd, src_path, dest_path)
        })
        .await
    }

    async fn link_at(
        &mut self,
        _fd: Resource<types::Descriptor>,
        _old_path_flags: types::PathFlags,
        old_path: String,
        _new_descriptor: Resource<types::Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        // No hard links at all (`sandbox::links` says why).
        tracing::debug!(from = %old_path, to = %new_path, "refused a hard link");
        Err(ErrorCode::NotPermitted.into())
    }

    // What cannot make the disk hold more: handed on.

    async fn advise(
        &mut self,
        fd: Resource<types::Descriptor>,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        self.inner.advise(fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Resource<types::Descriptor>) -> FsResult<()> {
        self.inner.sync_data(fd).await
    }

    async fn get_flags(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<types::DescriptorFlags> {
        self.inner.get_flags(fd).await
    }

    async fn get_type(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<types::DescriptorType> {
        self.inner.get_type(fd).await
    }

    async fn set_times(
        &mut self,
        fd: Resource<types::Descriptor>,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.inner.set_times(fd, atim, mtim).await
    }

    async fn read(
        &mut self,
        fd: Resource<types::Descriptor>,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        self.inner.read(fd, len, offset).await
    }

    async fn read_directory(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<Resource<types::DirectoryEntryStream>> {
        self.inner.read_directory(fd).await
    }

    async fn sync(&mut self, fd: Resource<types::Descriptor>) -> FsResult<()> {
        self.inner.sync(fd).await
    }

    async fn stat(&mut self, fd: Resource<types::Descriptor>) -> FsResult<types::DescriptorStat> {
        self.inner.stat(fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::DescriptorStat> {
        self.inner.stat_at(fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        self.inner
            .set_times_at(fd, path_flags, path, atim, mtim)
            .await
    }

    fn drop(&mut self, fd: Resource<types::Descriptor>) -> wasmtime::Result<()> {
        HostDescriptor::drop(&mut self.inner, fd)
    }

    async fn readlink_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<String> {
        self.inner.readlink_at(fd, path).await
    }

    async fn remove_directory_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        self.inner.remove_directory_at(fd, path).await
    }

    async fn rename_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        old_path: String,
        new_fd: Resource<types::Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        // A link moves only if it could have been made where it goes.
        if let Some(target) = self.symlink_target(&fd, &old_path).await {
            let why = target
                .as_deref()
                .map_or(Some("its target cannot be read"), refused_target);
            if let Some(why) = why {
                let target = target.as_deref().unwrap_or("?");
                return Err(refused_link(
                    "moving a symbolic link",
                    &new_path,
                    target,
                    why,
                ));
            }
        }
        self.inner.rename_at(fd, old_path, new_fd, new_path).await
    }

    async fn unlink_file_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path: String,
    ) -> FsResult<()> {
        self.inner.unlink_file_at(fd, path).await
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<types::Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynInputStream>> {
        self.inner.read_via_stream(fd, offset)
    }

    async fn is_same_object(
        &mut self,
        a: Resource<types::Descriptor>,
        b: Resource<types::Descriptor>,
    ) -> wasmtime::Result<bool> {
        self.inner.is_same_object(a, b).await
    }

    async fn metadata_hash(
        &mut self,
        fd: Resource<types::Descriptor>,
    ) -> FsResult<types::MetadataHashValue> {
        self.inner.metadata_hash(fd).await
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<types::Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        self.inner.metadata_hash_at(fd, path_flags, path).await
    }
}

impl HostDirectoryEntryStream for BoundedFs<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        self.inner.read_directory_entry(stream).await
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        HostDirectoryEntryStream::drop(&mut self.inner, stream)
    }
}

//! The loop's events from the real world: the file system (notify) and the
//! signals that stop `watch` (Ctrl-C's SIGINT, SIGTERM).
//!
//! The provider's folder is watched by itself (not below), and each of its
//! folders but the ignored ones below (so `node_modules/` or `target/` cost
//! no inotify watch); a folder made later is watched once it appears.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use notify::event::{AccessKind, AccessMode, EventKind};
use notify::{RecommendedWatcher, RecursiveMode, Watcher as _};
use tokio::sync::mpsc;

use crate::cycle::{Event, Events};
use crate::files::{Watched, ignored_dir};

/// What the watcher's thread and the signal task send.
enum Raw {
    Fs(notify::Result<notify::Event>),
    Stop,
}

/// The file system's changes that matter, and the stop signals.
pub(crate) struct FsEvents {
    watched: Watched,
    watcher: RecommendedWatcher,
    rx: mpsc::UnboundedReceiver<Raw>,
    /// Folders watched below them (to watch a new one once).
    deep: Vec<PathBuf>,
}

impl FsEvents {
    /// Starts watching; the signal handlers are in place when it returns.
    pub(crate) fn start(watched: Watched) -> anyhow::Result<Self> {
        let (tx, rx) = mpsc::unbounded_channel();
        let fs_tx = tx.clone();
        let watcher = notify::recommended_watcher(move |event| {
            let _ = fs_tx.send(Raw::Fs(event));
        })
        .context("cannot watch files on this system")?;
        stop_on_signals(tx)?;
        let mut events = Self {
            watched,
            watcher,
            rx,
            deep: Vec::new(),
        };
        let dir = events.watched.dir.clone();
        events
            .watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .with_context(|| format!("cannot watch {}", dir.display()))?;
        for entry in std::fs::read_dir(&dir)
            .with_context(|| format!("cannot read {}", dir.display()))?
            .flatten()
        {
            events.watch_folder(&entry.path());
        }
        if let Some((root, deep)) = events.watched.outside_root() {
            let mode = if deep {
                RecursiveMode::Recursive
            } else {
                RecursiveMode::NonRecursive
            };
            events
                .watcher
                .watch(&root, mode)
                .with_context(|| format!("cannot watch {}", root.display()))?;
        }
        Ok(events)
    }

    /// Watches `path` and below when it is a folder of the provider's
    /// folder that is not ignored, and not watched yet.
    fn watch_folder(&mut self, path: &Path) {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !path.is_dir() || ignored_dir(name) || self.deep.iter().any(|d| d == path) {
            return;
        }
        match self.watcher.watch(path, RecursiveMode::Recursive) {
            Ok(()) => self.deep.push(path.to_path_buf()),
            Err(e) => eprintln!("watch: cannot watch {}: {e}", path.display()),
        }
    }

    /// The paths of `event` that matter, when its kind is a change.
    fn changed(&mut self, event: &notify::Event) -> Option<PathBuf> {
        let change = match event.kind {
            EventKind::Create(_) | EventKind::Modify(_) | EventKind::Remove(_) => true,
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => true,
            EventKind::Any => true,
            EventKind::Access(_) | EventKind::Other => false,
        };
        if !change {
            return None;
        }
        let mut found = None;
        for path in &event.paths {
            if path.parent() == Some(self.watched.dir.as_path()) {
                // A folder made (or made again) in the provider's folder.
                self.watch_folder(path);
            }
            if found.is_none() && self.watched.matters(path) {
                found = Some(path.clone());
            }
        }
        if found.as_deref() == Some(self.watched.manifest.as_path()) {
            // The manifest may name another component or source.
            if let Ok(watched) = Watched::new(&self.watched.manifest) {
                self.watched = watched;
            }
        }
        found
    }
}

impl Events for FsEvents {
    async fn next(&mut self) -> Event {
        loop {
            match self.rx.recv().await {
                None | Some(Raw::Stop) => return Event::Stop,
                Some(Raw::Fs(Err(e))) => eprintln!("watch: {e}"),
                Some(Raw::Fs(Ok(event))) => {
                    if let Some(path) = self.changed(&event) {
                        tracing::debug!(path = %path.display(), kind = ?event.kind, "changed");
                        return Event::Changed;
                    }
                }
            }
        }
    }
}

/// Sends a stop at Ctrl-C (SIGINT) or SIGTERM. The handlers are installed
/// before it returns, so a signal during the first cycle is not lost.
fn stop_on_signals(tx: mpsc::UnboundedSender<Raw>) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut interrupt = signal(SignalKind::interrupt()).context("cannot handle SIGINT")?;
        let mut terminate = signal(SignalKind::terminate()).context("cannot handle SIGTERM")?;
        tokio::spawn(async move {
            tokio::select! {
                _ = interrupt.recv() => {}
                _ = terminate.recv() => {}
            }
            let _ = tx.send(Raw::Stop);
        });
    }
    #[cfg(not(unix))]
    {
        let mut ctrl_c = tokio::signal::windows::ctrl_c().context("cannot handle Ctrl-C")?;
        tokio::spawn(async move {
            ctrl_c.recv().await;
            let _ = tx.send(Raw::Stop);
        });
    }
    Ok(())
}

//! [`ExtensionProcess`]: an extension binary started the way azd starts it.

use std::process::ExitStatus;
use std::sync::Arc;

use parking_lot::Mutex;
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::process::{Child, ChildStderr};
use tokio::task::JoinHandle;

use crate::error::SimError;

/// azd's default wait for `ExtensionService/Ready`.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(15);

/// Bytes of captured stderr kept (the newest).
const STDERR_KEEP: usize = 256 * 1024;

/// How the extension process is started.
#[derive(Debug, Clone, Default)]
pub struct SpawnOptions {
    /// Pipe the extension's stderr into a buffer ([`ExtensionProcess::stderr_text`]) instead
    /// of leaving it as the caller configured it (inherited by default). Each line is also
    /// logged through `tracing` at debug level.
    pub capture_stderr: bool,
    /// How long to wait for Ready instead of azd's rule ([`ready_timeout_from_env`]);
    /// `run` uses a longer one, since a first start may compile a large component.
    pub ready_timeout: Option<Duration>,
    /// Start as azd does under `azd --debug`: adds the argument `--debug` and `AZD_DEBUG=true`.
    pub debug: bool,
    /// `AZD_CWD`: the project directory azd runs in.
    pub cwd: Option<std::path::PathBuf>,
    /// `AZD_ENVIRONMENT`: the azd environment name.
    pub environment: Option<String>,
}

/// The ready timeout azd would use: `AZD_EXT_TIMEOUT=<seconds>` (a positive integer) in this
/// process's environment, else 15 s.
pub fn ready_timeout_from_env() -> Duration {
    std::env::var("AZD_EXT_TIMEOUT")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|s| *s > 0)
        .map_or(DEFAULT_READY_TIMEOUT, Duration::from_secs)
}

/// A running extension. Owns the child process, which is killed when this is dropped.
#[derive(Debug)]
pub struct ExtensionProcess {
    child: Child,
    stderr: Option<Arc<Mutex<Vec<u8>>>>,
    stderr_task: Option<JoinHandle<()>>,
}

impl ExtensionProcess {
    pub(crate) fn new(mut child: Child, capture: bool) -> Self {
        let (stderr, stderr_task) = match (capture, child.stderr.take()) {
            (true, Some(pipe)) => {
                let buf = Arc::new(Mutex::new(Vec::new()));
                let task = tokio::spawn(capture_stderr(pipe, Arc::clone(&buf)));
                (Some(buf), Some(task))
            }
            _ => (None, None),
        };
        Self {
            child,
            stderr,
            stderr_task,
        }
    }

    /// The child process.
    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The OS process id, while the process runs.
    pub fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// What the extension wrote to stderr so far (the newest 256 KiB; empty unless started
    /// with [`SpawnOptions::capture_stderr`]).
    pub fn stderr_text(&self) -> String {
        self.stderr
            .as_ref()
            .map(|b| String::from_utf8_lossy(&b.lock()).into_owned())
            .unwrap_or_default()
    }

    /// Waits up to `timeout` for the process to exit (and for its captured stderr to be
    /// complete); kills it if it does not.
    pub async fn wait(&mut self, timeout: Duration) -> Result<ExitStatus, SimError> {
        let status = match tokio::time::timeout(timeout, self.child.wait()).await {
            Ok(status) => status.map_err(SimError::Wait)?,
            Err(_) => {
                // Best effort: the error below says what happened either way.
                let _ = self.child.kill().await;
                return Err(SimError::DidNotExit {
                    timeout,
                    stderr: self.stderr_suffix(),
                });
            }
        };
        if let Some(task) = self.stderr_task.take() {
            // A grandchild may hold the pipe open; don't wait for it for long.
            if tokio::time::timeout(Duration::from_secs(2), task)
                .await
                .is_err()
            {
                tracing::debug!("stderr of the extension still open after it exited");
            }
        }
        Ok(status)
    }

    /// Kills the process and waits for it.
    pub async fn kill(&mut self) -> Result<(), SimError> {
        self.child.kill().await.map_err(SimError::Kill)
    }

    /// The captured stderr as a suffix for error messages.
    pub(crate) fn stderr_suffix(&self) -> String {
        let text = self.stderr_text();
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            format!("; its stderr:\n{text}")
        }
    }
}

impl Drop for ExtensionProcess {
    fn drop(&mut self) {
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }
}

/// Copies the child's stderr into `buf`, keeping the newest bytes, and logs each line.
async fn capture_stderr(mut pipe: ChildStderr, buf: Arc<Mutex<Vec<u8>>>) {
    let mut chunk = [0u8; 8192];
    let mut line = Vec::new();
    loop {
        let n = match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let data = &chunk[..n];
        {
            let mut b = buf.lock();
            b.extend_from_slice(data);
            if b.len() > STDERR_KEEP {
                let excess = b.len() - STDERR_KEEP;
                b.drain(..excess);
            }
        }
        for &byte in data {
            if byte == b'\n' {
                tracing::debug!(target: "sim::extension", "{}", String::from_utf8_lossy(&line));
                line.clear();
            } else if line.len() < 4096 {
                line.push(byte);
            }
        }
    }
    if !line.is_empty() {
        tracing::debug!(target: "sim::extension", "{}", String::from_utf8_lossy(&line));
    }
}

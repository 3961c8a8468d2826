//! A step's child process: started in a process group of its own (so the
//! terminal's Ctrl-C reaches `watch` alone), its output kept, and stopped
//! with everything it started.
//!
//! Stopping sends SIGTERM to the whole group, again every 100 ms (a step
//! that starts a new process after the first signal sees it stopped too),
//! until the child itself ends; a step of this binary (`watch --step`) shields
//! itself from SIGTERM, so its own clean-up runs (a build puts the previous
//! component back, a test removes its temporary project) once its tools
//! have ended. After [`GRACE`] the group gets SIGKILL. On Windows the child
//! is ended alone.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::process::{Child, Command};
use tokio_util::sync::CancellationToken;

/// How long a stopped step may take to end its own work.
pub(crate) const GRACE: Duration = Duration::from_secs(5);

/// How a child ended.
#[derive(Debug)]
pub(crate) enum Ran {
    /// It ended by itself.
    Finished {
        status: ExitStatus,
        stdout: String,
        stderr: String,
    },
    /// It was stopped.
    Stopped,
}

/// Runs `cmd` (stdin empty, output kept) until it ends or `stop` is cancelled.
pub(crate) async fn run(mut cmd: Command, stop: &CancellationToken) -> std::io::Result<Ran> {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    cmd.process_group(0);
    #[cfg(windows)]
    cmd.creation_flags(0x0000_0200); // CREATE_NEW_PROCESS_GROUP: no console Ctrl-C
    let mut child = cmd.spawn()?;
    let stdout = child.stdout.take().map(|mut out| {
        tokio::spawn(async move {
            let mut bytes = Vec::new();
            let _ = out.read_to_end(&mut bytes).await;
            bytes
        })
    });
    let stderr = child.stderr.take().map(|mut err| {
        tokio::spawn(async move {
            let mut bytes = Vec::new();
            let _ = err.read_to_end(&mut bytes).await;
            bytes
        })
    });
    let status = tokio::select! {
        status = child.wait() => Some(status?),
        () = stop.cancelled() => None,
    };
    let Some(status) = status else {
        end(&mut child).await;
        for task in [stdout, stderr].into_iter().flatten() {
            task.abort();
        }
        return Ok(Ran::Stopped);
    };
    Ok(Ran::Finished {
        status,
        stdout: collect(stdout).await,
        stderr: collect(stderr).await,
    })
}

/// What a reader task read; a process the child left behind may hold the
/// pipe open, so it is waited for a moment only.
async fn collect(task: Option<tokio::task::JoinHandle<Vec<u8>>>) -> String {
    let Some(mut task) = task else {
        return String::new();
    };
    match tokio::time::timeout(Duration::from_secs(2), &mut task).await {
        Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).into_owned(),
        _ => {
            task.abort();
            String::new()
        }
    }
}

/// Stops the child and everything it started, and waits for it.
async fn end(child: &mut Child) {
    #[cfg(unix)]
    if let Some(pgid) = child.id().and_then(|id| i32::try_from(id).ok()) {
        use rustix::process::{Pid, Signal, kill_process_group};
        let Some(group) = Pid::from_raw(pgid) else {
            let _ = child.kill().await;
            return;
        };
        let deadline = tokio::time::Instant::now() + GRACE;
        while tokio::time::Instant::now() < deadline {
            let _ = kill_process_group(group, Signal::TERM);
            tokio::select! {
                _ = child.wait() => return,
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
        // The child has not been reaped, so the group is still its own.
        let _ = kill_process_group(group, Signal::KILL);
    }
    let _ = child.kill().await;
}

/// The last `n` lines of `text`.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.trim_end().lines().collect();
    let skip = lines.len().saturating_sub(n);
    let mut out = String::new();
    if skip > 0 {
        out.push_str(&format!("… ({skip} lines before)\n"));
    }
    out.push_str(&lines[skip..].join("\n"));
    out
}

/// Points a child's temporary files into `tmp`.
pub(crate) fn temp_dir_env(cmd: &mut Command, tmp: &Path) {
    for var in ["TMPDIR", "TMP", "TEMP"] {
        cmd.env(var, tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_lines_and_counts_the_rest() {
        assert_eq!(tail("a\nb\nc\n", 2), "… (1 lines before)\nb\nc");
        assert_eq!(tail("a\n", 5), "a");
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn a_finished_child_gives_its_status_and_output() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo err >&2; exit 3"]);
        let Ran::Finished {
            status,
            stdout,
            stderr,
        } = run(cmd, &CancellationToken::new()).await.unwrap()
        else {
            panic!("not stopped");
        };
        assert_eq!(status.code(), Some(3));
        assert_eq!(stdout, "out\n");
        assert_eq!(stderr, "err\n");
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn a_stopped_child_ends_with_what_it_started() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("grandchild.pid");
        let mut cmd = Command::new("sh");
        // A grandchild that would outlive its parent, and a parent that waits on it.
        cmd.arg("-c")
            .arg("sleep 30 & echo $! > \"$1\"; wait")
            .arg("sh")
            .arg(&pid_file);
        let stop = CancellationToken::new();
        let stopper = stop.clone();
        let pid_file_seen = pid_file.clone();
        tokio::spawn(async move {
            for _ in 0..500 {
                if std::fs::read_to_string(&pid_file_seen).is_ok_and(|s| s.ends_with('\n')) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            stopper.cancel();
        });
        let started = std::time::Instant::now();
        let ran = run(cmd, &stop).await.unwrap();
        assert!(matches!(ran, Ran::Stopped), "{ran:?}");
        assert!(
            started.elapsed() < GRACE,
            "ended by SIGTERM, not after the grace"
        );
        let pid: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // The grandchild is gone (or a zombie being reaped by init): give it a moment.
        let gone = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| s.split(") ").nth(1).is_some_and(|r| r.starts_with('Z')))
                .unwrap_or(true)
        };
        for _ in 0..200 {
            if gone() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("the grandchild {pid} outlived its stopped step");
    }
}

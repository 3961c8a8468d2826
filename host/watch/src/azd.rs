//! `watch --install`: the packaged provider reinstalled into azd, as an
//! author does by hand ([packaging.md]): its `dist/registry.json` added as a
//! `file` extension source once (named as `package` prints it: the id's last
//! word), then `azd extension install <id> --source <name> --force` after
//! every package.
//!
//! azd is `AZD` when set, else `azd` on PATH.
//!
//! [packaging.md]: ../../../docs/packaging.md

use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use crate::child::{self, Ran, tail, temp_dir_env};
use crate::cycle::Outcome;
use crate::worker::Packaged;

/// azd, and what this session already did with it.
#[derive(Debug)]
pub(crate) struct Azd {
    path: PathBuf,
    /// The registry file whose source is in place.
    source_added: Option<PathBuf>,
}

impl Azd {
    /// azd from `AZD`, else from PATH; an error that says how to get it.
    pub(crate) fn find() -> anyhow::Result<Self> {
        let path = match std::env::var_os("AZD").filter(|v| !v.is_empty()) {
            Some(named) => {
                let path = PathBuf::from(&named);
                if !path.is_file() {
                    bail!(
                        "AZD names {}, which is not a file: point it at the azd binary",
                        path.display()
                    );
                }
                path
            }
            None => on_path(if cfg!(windows) { "azd.exe" } else { "azd" }).context(
                "--install needs azd, and it is not on PATH: install the Azure Developer CLI \
                 (https://aka.ms/azd-install), or set AZD to its path",
            )?,
        };
        Ok(Self {
            path,
            source_added: None,
        })
    }

    /// Adds the source (once) and reinstalls the extension.
    pub(crate) async fn install(
        &mut self,
        packaged: &Packaged,
        tmp: &Path,
        stop: &CancellationToken,
    ) -> Outcome {
        let source = source_name(&packaged.id);
        if self.source_added.as_deref() != Some(packaged.registry.as_path()) {
            match self.add_source(source, &packaged.registry, tmp, stop).await {
                Ok(true) => self.source_added = Some(packaged.registry.clone()),
                Ok(false) => return Outcome::Stopped,
                Err(failed) => return failed,
            }
        }
        let install = [
            "extension",
            "install",
            packaged.id.as_str(),
            &format!("--source={source}"),
            "--force",
            "--no-prompt",
        ];
        match self.run(&install, tmp, stop).await {
            Ok(Some(_)) => Outcome::Done(None),
            Ok(None) => Outcome::Stopped,
            Err(failed) => failed,
        }
    }

    /// The source named `name` at `registry`: kept when it is there, put
    /// there (again) when not. `Ok(false)`: stopped.
    async fn add_source(
        &self,
        name: &str,
        registry: &Path,
        tmp: &Path,
        stop: &CancellationToken,
    ) -> Result<bool, Outcome> {
        // `--output=json`: azd 1.31 takes a bare `json` for an extension's namespace.
        let list = [
            "extension",
            "source",
            "list",
            "--output=json",
            "--no-prompt",
        ];
        let Some(listed) = self.run(&list, tmp, stop).await? else {
            return Ok(false);
        };
        let sources: Vec<serde_json::Value> =
            serde_json::from_str(&listed).map_err(|e| Outcome::Failed {
                summary: None,
                detail: format!(
                    "azd extension source list printed what is not JSON ({e}):\n{listed}"
                ),
            })?;
        let location = registry.display().to_string();
        let mut found = false;
        for s in sources.iter().filter(|s| s["name"] == name) {
            if s["location"] == location.as_str() && s["type"] == "file" {
                return Ok(true);
            }
            found = true;
        }
        if found {
            let remove = ["extension", "source", "remove", name, "--no-prompt"];
            if self.run(&remove, tmp, stop).await?.is_none() {
                return Ok(false);
            }
        }
        let add = [
            "extension",
            "source",
            "add",
            &format!("--name={name}"),
            "--type=file",
            &format!("--location={location}"),
            "--no-prompt",
        ];
        Ok(self.run(&add, tmp, stop).await?.is_some())
    }

    /// Runs azd with `args`; its stdout, or `None` when stopped, or the failure.
    async fn run(
        &self,
        args: &[&str],
        tmp: &Path,
        stop: &CancellationToken,
    ) -> Result<Option<String>, Outcome> {
        let mut cmd = Command::new(&self.path);
        cmd.args(args);
        temp_dir_env(&mut cmd, tmp);
        let shown = format!("azd {}", args.join(" "));
        match child::run(cmd, stop).await {
            Ok(Ran::Stopped) => Ok(None),
            Ok(Ran::Finished { status, stdout, .. }) if status.success() => Ok(Some(stdout)),
            Ok(Ran::Finished {
                status,
                stdout,
                stderr,
            }) => Err(Outcome::Failed {
                summary: None,
                detail: format!(
                    "`{shown}` failed ({status}):\n{}",
                    tail(&format!("{stdout}{stderr}"), 30)
                ),
            }),
            Err(e) => Err(Outcome::Failed {
                summary: None,
                detail: format!("cannot run {}: {e}", self.path.display()),
            }),
        }
    }
}

/// The source `package` tells its user to add: the extension id's last word.
fn source_name(id: &str) -> &str {
    id.rsplit('.').next().unwrap_or(id)
}

/// `program` in a folder of PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| executable(candidate))
}

fn executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_source_is_named_as_package_prints_it() {
        assert_eq!(source_name("local.todo"), "todo");
        assert_eq!(source_name("todo"), "todo");
    }
}

//! The command line read before the environment is settled: the role and
//! the `--trust-env` names, with no argument's environment fallback read.

use std::ffi::OsString;

/// What the process is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// `listen`: azd's provisioning provider.
    Listen,
    /// Any other command: the author's tool, or `approve`/`metadata`.
    Tool,
}

/// The role and the `--trust-env` names of the command line `args`, read by
/// `cli` (the binary's own clap command) with every argument's environment
/// fallback taken away and parse errors ignored: nothing of the environment
/// is read before [`super::settle`], and the real parse, after it, reports what is
/// wrong with the arguments.
pub fn arguments(
    cli: clap::Command,
    args: impl IntoIterator<Item = OsString>,
) -> (Role, Vec<String>) {
    let trust = cli
        .get_arguments()
        .find(|a| a.get_id() == TRUST_ENV_ID)
        .map(|a| a.clone().global(false).env(None));
    let cli = without_env(cli.ignore_errors(true), trust.as_ref());
    let Ok(matches) = cli.try_get_matches_from(args) else {
        return (Role::Tool, Vec::new());
    };
    let role = match matches.subcommand_name() {
        Some("listen") => Role::Listen,
        _ => Role::Tool,
    };
    // Each level keeps its own occurrences (a global argument's later ones
    // would replace the earlier): all of them count.
    let mut trusted: Vec<String> = Vec::new();
    let mut level = Some(&matches);
    while let Some(m) = level {
        if let Ok(Some(names)) = m.try_get_many::<String>(TRUST_ENV_ID) {
            trusted.extend(names.cloned());
        }
        level = m.subcommand().map(|(_, sub)| sub);
    }
    trusted.sort();
    trusted.dedup();
    (role, trusted)
}

/// The id of `--trust-env` in the binaries' commands.
const TRUST_ENV_ID: &str = "trust_env";

/// `cmd` and every subcommand without environment fallbacks, each with its
/// own `--trust-env` (`trust`) instead of the one global argument.
fn without_env(cmd: clap::Command, trust: Option<&clap::Arg>) -> clap::Command {
    let subcommands: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_owned())
        .collect();
    let mut cmd = cmd.mut_args(|a| a.env(None));
    if let Some(trust) = trust {
        cmd = if cmd.get_arguments().any(|a| a.get_id() == TRUST_ENV_ID) {
            cmd.mut_arg(TRUST_ENV_ID, |_| trust.clone())
        } else {
            cmd.arg(trust.clone())
        };
    }
    subcommands.iter().fold(cmd, |cmd, name| {
        cmd.mut_subcommand(name, |sub| without_env(sub, trust))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arguments_are_read_without_the_environment() {
        use clap::{Arg, ArgAction, Command};
        let cli = Command::new("t")
            .arg(
                Arg::new("trust_env")
                    .long("trust-env")
                    .global(true)
                    .action(ArgAction::Append),
            )
            .subcommand(
                Command::new("listen").arg(
                    Arg::new("name")
                        .long("name")
                        .env("AZD_WASM_HOST_TEST_NEVER_SET_VALUE")
                        .required(true),
                ),
            )
            .subcommand(Command::new("build"));
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            arguments(cli.clone(), args(&["t", "listen"])),
            (Role::Listen, Vec::new()),
            "a required argument missing from the line is not an error here"
        );
        assert_eq!(
            arguments(
                cli.clone(),
                args(&["t", "--trust-env", "B", "build", "--trust-env=A"])
            ),
            (Role::Tool, vec!["A".to_owned(), "B".to_owned()])
        );
        assert_eq!(
            arguments(cli, args(&["t", "nonsense", "--what"])).0,
            Role::Tool
        );
    }
}

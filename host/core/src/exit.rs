//! How the tool's commands end: every exit status of both binaries (`azd-wasm-host` and the
//! shipped sidecar), each once, with the code it exits with. A command documents which of them
//! it uses (docs/commands.md, docs/testing.md); the numbers follow the BSD `sysexits` convention
//! for usage (64) and internal failures (70), diff(1) for comparisons (2: could not compare), and
//! Terraform's `-detailed-exitcode` for a preview with changes (2).

/// An exit status of the tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// 0: done; what was checked holds.
    Done,
    /// 1: the command's answer is no: the provider answered with an error (`run`), a test
    /// failed (`test`), a manifest asks for more than before (`check --diff`) or than the
    /// ceiling allows (`policy check`), or the command failed.
    Failed,
    /// 2: `run preview --detailed-exitcode`: done, changes pending.
    ChangesPending,
    /// 2: nothing could be compared (`check --diff`, `policy check`: a manifest, package or
    /// ceiling that cannot be read), as diff(1)'s 2.
    Trouble,
    /// 3: `listen`: the stream with azd ended with requests of azd's unanswered.
    Unanswered,
    /// 64 (`EX_USAGE`): bad arguments, or input that names nothing to run; nothing ran.
    Usage,
    /// 70 (`EX_SOFTWARE`): the provider's component or the host failed.
    Fault,
    /// 130: interrupted (Ctrl-C, as a shell reports SIGINT); what ran was stopped and waited for.
    Interrupted,
}

impl Exit {
    /// The process's exit code.
    pub fn code(self) -> u8 {
        match self {
            Self::Done => 0,
            Self::Failed => 1,
            Self::ChangesPending | Self::Trouble => 2,
            Self::Unanswered => 3,
            Self::Usage => 64,
            Self::Fault => 70,
            Self::Interrupted => 130,
        }
    }

    /// [`Exit::Done`] when `holds`, else [`Exit::Failed`].
    pub fn holds(holds: bool) -> Self {
        if holds { Self::Done } else { Self::Failed }
    }
}

impl From<Exit> for std::process::ExitCode {
    fn from(exit: Exit) -> Self {
        Self::from(exit.code())
    }
}

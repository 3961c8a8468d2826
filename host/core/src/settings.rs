//! The tool's environment settings, in one catalogue: every `AZD_WASM_HOST_*` variable the two
//! binaries, the test kit and the scripts read, as a constant that every reader names (no other
//! production file spells one), and [`CATALOGUE`], the table `docs/commands.md` shows
//! ("Environment variables"), row for row: a test holds the page to it. Variables of azd's
//! (`AZD_SERVER`, `AZD_CONFIG_DIR`) and of other tools (`WASI_SYSROOT`) that the tool reads are in
//! the table too, by name. [`INTERNAL`] lists those one part of the tool sets for another, which
//! nobody sets by hand.

/// What every setting of the tool's own starts with.
pub const PREFIX: &str = "AZD_WASM_HOST_";
/// The provider manifest `listen` serves.
pub const MANIFEST: &str = "AZD_WASM_HOST_MANIFEST";
/// The provider's name for a bare component (`listen --provider-name`).
pub const PROVIDER_NAME: &str = "AZD_WASM_HOST_PROVIDER_NAME";
/// `listen`'s log file.
pub const LOG_FILE: &str = "AZD_WASM_HOST_LOG_FILE";
/// The compile cache's folder.
pub const CACHE_DIR: &str = "AZD_WASM_HOST_CACHE_DIR";
/// Where `listen` records the conversation with azd (`--record`).
pub const RECORD: &str = "AZD_WASM_HOST_RECORD";
/// Strings a recorded conversation may keep though they look like credentials.
pub const RECORD_SAFE: &str = "AZD_WASM_HOST_RECORD_SAFE";
/// The development CLI a packaged sidecar hands a recording session to.
pub const DEV_CLI: &str = "AZD_WASM_HOST_DEV_CLI";
/// The folder of the installed extension whose packaged sidecar handed its session over.
pub const INSTALLED_DIR: &str = "AZD_WASM_HOST_INSTALLED_DIR";
/// The azd executable access tokens come from.
pub const AZD: &str = "AZD_WASM_HOST_AZD";
/// Which of azd's contracts the simulated azd serves.
pub const AZD_CONTRACT: &str = "AZD_WASM_HOST_AZD_CONTRACT";
/// `test` keeps each test's temporary project.
pub const TEST_KEEP: &str = "AZD_WASM_HOST_TEST_KEEP";
/// Runs unsigned providers for one command.
pub const ALLOW_UNSIGNED: &str = "AZD_WASM_HOST_ALLOW_UNSIGNED";
/// One more ceiling file.
pub const POLICY: &str = "AZD_WASM_HOST_POLICY";
/// The registry password for `publish` and `pull`.
pub const REGISTRY_PASSWORD: &str = "AZD_WASM_HOST_REGISTRY_PASSWORD";
/// The cargo `build` uses.
pub const CARGO: &str = "AZD_WASM_HOST_CARGO";
/// The Node.js `build` uses.
pub const NODE: &str = "AZD_WASM_HOST_NODE";
/// The Python componentizer `build` uses.
pub const COMPONENTIZE_PY: &str = "AZD_WASM_HOST_COMPONENTIZE_PY";
/// The wasm32-wasi C compiler `build` uses (may carry arguments).
pub const CC: &str = "AZD_WASM_HOST_CC";
/// The Go toolchain `build` uses.
pub const GO: &str = "AZD_WASM_HOST_GO";
/// What `run` and `test` start as the extension.
pub const EXTENSION_COMMAND: &str = "AZD_WASM_HOST_EXTENSION_COMMAND";
/// The project path `run` and `test` send the extension.
pub const EXTENSION_PROJECT_PATH: &str = "AZD_WASM_HOST_EXTENSION_PROJECT_PATH";
/// `scripts/test.sh` also builds and tests the other platforms' sidecars.
pub const CROSS: &str = "AZD_WASM_HOST_CROSS";
/// Lengthens every fuzz campaign.
pub const FUZZ_SECS: &str = "AZD_WASM_HOST_FUZZ_SECS";
/// Replays a fuzz campaign's seed.
pub const FUZZ_SEED: &str = "AZD_WASM_HOST_FUZZ_SEED";
/// `scripts/test.sh` also runs the real azd CLI end to end.
pub const E2E: &str = "AZD_WASM_HOST_E2E";
/// The development CLI the scripts build the examples with.
pub const CLI: &str = "AZD_WASM_HOST_CLI";
/// The host `scripts/pgo.sh` and `scripts/cross-test.sh` drive.
pub const BIN: &str = "AZD_WASM_HOST_BIN";
/// The scripts that install tools never install Debian packages.
pub const NO_APT: &str = "AZD_WASM_HOST_NO_APT";
/// The traffic plan `test` gives the extension it starts for a step (development `listen` only).
pub const TRAFFIC: &str = "AZD_WASM_HOST_TRAFFIC";
/// The release key's private half: a secret of the repository, which the release workflow signs
/// the tools' list with (`.github/workflows/release-tools.yml`).
pub const RELEASE_SIGNING_KEY: &str = "AZD_WASM_HOST_RELEASE_SIGNING_KEY";
/// The release's public key, built into the sidecar by `scripts/release.sh` (read at compile
/// time, with `option_env!`, which takes the name as it is written: `package/sidecars.rs`).
pub const RELEASE_KEY: &str = "AZD_WASM_HOST_RELEASE_KEY";

/// One row of the table of settings: the variables, what reads them, what they do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Setting {
    /// The variables, as the row names them.
    pub names: &'static [&'static str],
    /// The commands, binaries or scripts that read them.
    pub read_by: &'static str,
    /// What they do (markdown, as the page shows it).
    pub meaning: &'static str,
}

impl Setting {
    /// The row as `docs/commands.md` writes it.
    pub fn row(&self) -> String {
        let names: Vec<String> = self.names.iter().map(|n| format!("`{n}`")).collect();
        format!(
            "| {} | {} | {} |",
            names.join(", "),
            self.read_by,
            self.meaning
        )
    }
}

/// Every setting a user may set, in the page's order.
pub const CATALOGUE: &[Setting] = &[
    Setting {
        names: &["AZD_SERVER", "AZD_ACCESS_TOKEN"],
        read_by: "`listen`",
        meaning: "set by azd: where azd's gRPC server is, and the token for every call",
    },
    Setting {
        names: &[MANIFEST],
        read_by: "`listen`",
        meaning: "the provider manifest (or a bare `.wasm`, deny-all) instead of `provider.toml` beside the executable",
    },
    Setting {
        names: &[PROVIDER_NAME],
        read_by: "`listen`",
        meaning: "the provider's name when the manifest is a bare component (as `--provider-name`)",
    },
    Setting {
        names: &[LOG_FILE],
        read_by: "`listen`",
        meaning: "the log file instead of the one in the user's cache directory",
    },
    Setting {
        names: &[CACHE_DIR],
        read_by: "`listen`, `check`, `run`",
        meaning: "the compile cache's folder",
    },
    Setting {
        names: &[RECORD, RECORD_SAFE],
        read_by: "`listen`",
        meaning: "record the conversation with azd (as `--record`); strings a recording may keep, and `binary: METHOD URL` marks for bodies that are not text ([testing.md](testing.md#golden-conversations))",
    },
    Setting {
        names: &[DEV_CLI],
        read_by: "the shipped sidecar",
        meaning: "with `AZD_WASM_HOST_RECORD` set, the development CLI the sidecar hands the session to, which records (else `azd-wasm-host` on PATH)",
    },
    Setting {
        names: &[INSTALLED_DIR],
        read_by: "the development CLI, set by the sidecar",
        meaning: "the installed extension's folder, when a packaged sidecar handed its session over: its provider is checked as installed (signature required, consent asked); it can only add checks",
    },
    Setting {
        names: &[AZD],
        read_by: "`listen`",
        meaning: "another azd for `azd auth token` (access tokens)",
    },
    Setting {
        names: &[AZD_CONTRACT],
        read_by: "`run`, `test`",
        meaning: "`legacy`, `both` or `v1`: which of azd's contracts the simulated azd serves ([architecture.md](architecture.md#azds-contract-versions))",
    },
    Setting {
        names: &["AZURE_ENV_NAME"],
        read_by: "`run`",
        meaning: "the azd environment when `-e` is not given",
    },
    Setting {
        names: &[TEST_KEEP],
        read_by: "`test`",
        meaning: "`1` keeps each test's temporary project",
    },
    Setting {
        names: &["AZD_CONFIG_DIR"],
        read_by: "trust, consent",
        meaning: "azd's config folder (else `~/.azd`), which holds the trust folder `wasm-host/`",
    },
    Setting {
        names: &[ALLOW_UNSIGNED],
        read_by: "signature checks",
        meaning: "`true` runs unsigned providers for one command",
    },
    Setting {
        names: &[POLICY],
        read_by: "every route that runs a provider, `policy`, `check`, `approve`",
        meaning: "one more ceiling file (absolute, outside any repository or project), held beside the machine-wide one and the config folder's: it can only tighten, so `azd wasm …` keeps it from the shell, and a project's `.env` that sets it refuses every provider ([trust.md](trust.md#a-ceiling-for-platform-teams))",
    },
    Setting {
        names: &[REGISTRY_PASSWORD],
        read_by: "`publish`, `pull`",
        meaning: "the registry password for `--user` (never on the command line)",
    },
    Setting {
        names: &[CARGO, NODE, COMPONENTIZE_PY, CC, GO],
        read_by: "`build`",
        meaning: "the tool to use instead of PATH's: cargo (its rustc beside it), Node.js (npm beside it), the Python componentizer, the wasm32-wasi C compiler (may carry arguments), the Go toolchain; one that names no program is an error ([authoring.md](authoring.md#build-recipes-per-language))",
    },
    Setting {
        names: &["WASI_SYSROOT"],
        read_by: "`build`",
        meaning: "the wasi-libc for clang (C) and for Rust's std built from source (else Debian's `/usr`)",
    },
    Setting {
        names: &[EXTENSION_COMMAND, EXTENSION_PROJECT_PATH],
        read_by: "`run`, `test`",
        meaning: "what `run` starts as the extension, and the project path it sends (used by `scripts/cross-test.sh`)",
    },
    Setting {
        names: &[CROSS],
        read_by: "`scripts/test.sh`",
        meaning: "`1` (or a list of platforms) also builds and tests the other platforms' sidecars",
    },
    Setting {
        names: &[E2E],
        read_by: "`scripts/test.sh`",
        meaning: "`1` also runs the real azd CLI end to end (`.ci/run` sets it)",
    },
    Setting {
        names: &[CLI, BIN],
        read_by: "the scripts",
        meaning: "the development CLI that builds the examples (`scripts/build-examples.sh`, `scripts/build-rust-example.sh`), and the one `scripts/pgo.sh` and `scripts/cross-test.sh` drive, instead of one they build",
    },
    Setting {
        names: &[NO_APT],
        read_by: "the scripts that install tools",
        meaning: "`1` never installs Debian packages, even as root",
    },
    Setting {
        names: &["RELEASE_PGO"],
        read_by: "`scripts/release.sh`",
        meaning: "`0` builds this machine's sidecar without a profile",
    },
    Setting {
        names: &[FUZZ_SECS, FUZZ_SEED],
        read_by: "the fuzz campaigns",
        meaning: "lengthen every campaign; replay a failing seed ([testing.md](testing.md#fuzzing))",
    },
    Setting {
        names: &["BENCH_SIDECAR", "BENCH_RUNS", "BENCH_SMAPS_DIR"],
        read_by: "the benchmarks",
        meaning: "the sidecar to measure, the number of runs, where to keep `/proc/<pid>/smaps` ([benchmarks.md](benchmarks.md))",
    },
];

/// The settings one part of the tool sets for another, never by hand.
pub const INTERNAL: &[&str] = &[TRAFFIC, RELEASE_KEY, RELEASE_SIGNING_KEY];

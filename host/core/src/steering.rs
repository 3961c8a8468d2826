//! Environment variables that steer: whose value picks a program or a
//! library that runs, a trust root, a place something is written, azd's own
//! target, or the credentials something signs in with.
//!
//! azd hands an extension the values of the project's azd environment
//! (`.azure/<env>/.env`), and a provider can write that file through its
//! outputs and azd's environment service. The rules that keep it from
//! steering what runs next are grammars, not this list: a provider writes
//! only variables' names (`crate::dotenv::check_name`), and the author's
//! tool under azd keeps no variable the project's `.env` sets at all
//! (`azd-wasm-host-sidecar`'s `launch`). This list is the second wall: a
//! provider may not write a name on it even when the name is well formed,
//! and `listen`, which keeps the project's other values for the provider's
//! grants, removes these.
//!
//! Names are compared without regard to ASCII case (Windows reads `Path` as
//! `PATH`). Names that merely describe what a provider made
//! (`AZURE_STORAGE_ACCOUNT_NAME`, `WEB_URL`) are not in it.

/// Why a variable is off limits to a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Steering {
    /// azd's own settings and this extension's (`AZD_*`, `AZURE_DEV_*`,
    /// `AZURE_ENV_NAME`, `AZURE_SUBSCRIPTION_ID`, `AZURE_LOCATION`, …): what
    /// azd targets, where its config (and the trust folder) is, what runs.
    Azd,
    /// Credentials and where they are read from (`AZURE_CLIENT_*`,
    /// `AZURE_CONFIG_DIR`, `ARM_*`, `IDENTITY_*`, CI tokens, …).
    Credentials,
    /// What picks a program, a library or a compiler flag: `PATH`, `CARGO`,
    /// `RUSTC_WRAPPER`, `GOTOOLCHAIN`, `NODE_OPTIONS`, `PYTHONPATH`,
    /// `LD_PRELOAD`, `CC`, `GIT_*`, …
    Program,
    /// Where things are read or written, and whom TLS trusts: `HOME`,
    /// `TMPDIR`, `XDG_*`, `SSL_CERT_FILE`, `HTTPS_PROXY`, …
    Location,
}

impl Steering {
    /// A few words for a warning: "azd's own setting", ….
    pub fn describe(self) -> &'static str {
        match self {
            Self::Azd => "azd's or this extension's own setting",
            Self::Credentials => "a credential setting",
            Self::Program => "it picks a program or what a program loads",
            Self::Location => "it picks where files are read or written, or whom TLS trusts",
        }
    }
}

/// Whole names (upper case) and what they steer.
const NAMES: &[(&str, Steering)] = &[
    // azd's own targets.
    ("AZURE_ENV_NAME", Steering::Azd),
    ("AZURE_SUBSCRIPTION_ID", Steering::Azd),
    ("AZURE_LOCATION", Steering::Azd),
    ("AZURE_RESOURCE_GROUP", Steering::Azd),
    ("AZURE_PRINCIPAL_ID", Steering::Azd),
    ("AZURE_PRINCIPAL_TYPE", Steering::Azd),
    // Credentials (the Azure SDKs' environment credential, az, CI systems).
    ("AZURE_TENANT_ID", Steering::Credentials),
    ("AZURE_USERNAME", Steering::Credentials),
    ("AZURE_PASSWORD", Steering::Credentials),
    ("AZURE_AUTHORITY_HOST", Steering::Credentials),
    ("AZURE_REGIONAL_AUTHORITY_NAME", Steering::Credentials),
    ("AZURE_TOKEN_CREDENTIALS", Steering::Credentials),
    ("AZURE_CONFIG_DIR", Steering::Credentials),
    ("AZURE_EXTENSION_DIR", Steering::Credentials),
    ("AZURE_ACCESS_TOKEN", Steering::Credentials),
    ("GITHUB_TOKEN", Steering::Credentials),
    ("SYSTEM_ACCESSTOKEN", Steering::Credentials),
    ("GNUPGHOME", Steering::Credentials),
    // Programs and what they load.
    ("PATH", Steering::Program),
    ("PATHEXT", Steering::Program),
    ("SHELL", Steering::Program),
    ("COMSPEC", Steering::Program),
    ("BASH_ENV", Steering::Program),
    // `ENV` is left out on purpose: only interactive shells read it, and
    // `ENV` is a common name for an output holding the environment's name.
    ("ZDOTDIR", Steering::Program),
    ("PROMPT_COMMAND", Steering::Program),
    ("IFS", Steering::Program),
    ("EDITOR", Steering::Program),
    ("VISUAL", Steering::Program),
    ("PAGER", Steering::Program),
    ("CARGO", Steering::Program),
    ("RUSTC", Steering::Program),
    ("RUSTDOC", Steering::Program),
    ("RUSTFLAGS", Steering::Program),
    ("RUSTDOCFLAGS", Steering::Program),
    ("GOROOT", Steering::Program),
    ("GOPATH", Steering::Program),
    ("GOBIN", Steering::Program),
    ("GOFLAGS", Steering::Program),
    ("GOTOOLCHAIN", Steering::Program),
    ("GOPROXY", Steering::Program),
    ("GONOPROXY", Steering::Program),
    ("GOPRIVATE", Steering::Program),
    ("GONOSUMDB", Steering::Program),
    ("GONOSUMCHECK", Steering::Program),
    ("GOSUMDB", Steering::Program),
    ("GOINSECURE", Steering::Program),
    ("GOENV", Steering::Program),
    ("GOWORK", Steering::Program),
    ("GOEXPERIMENT", Steering::Program),
    ("GODEBUG", Steering::Program),
    ("GOCACHE", Steering::Program),
    ("GOMODCACHE", Steering::Program),
    ("GOTMPDIR", Steering::Program),
    ("GOVCS", Steering::Program),
    ("GOOS", Steering::Program),
    ("GOARCH", Steering::Program),
    ("GCCGO", Steering::Program),
    ("NODE_OPTIONS", Steering::Program),
    ("NODE_PATH", Steering::Program),
    ("NODE_EXTRA_CA_CERTS", Steering::Program),
    ("NODE_TLS_REJECT_UNAUTHORIZED", Steering::Program),
    ("NODE_REPL_EXTERNAL_MODULE", Steering::Program),
    ("VIRTUAL_ENV", Steering::Program),
    ("PERL5LIB", Steering::Program),
    ("PERL5OPT", Steering::Program),
    ("PERLLIB", Steering::Program),
    ("RUBYOPT", Steering::Program),
    ("RUBYLIB", Steering::Program),
    ("JAVA_TOOL_OPTIONS", Steering::Program),
    ("_JAVA_OPTIONS", Steering::Program),
    ("JDK_JAVA_OPTIONS", Steering::Program),
    ("CLASSPATH", Steering::Program),
    ("CC", Steering::Program),
    ("CXX", Steering::Program),
    ("CPP", Steering::Program),
    ("AR", Steering::Program),
    ("LD", Steering::Program),
    ("CFLAGS", Steering::Program),
    ("CXXFLAGS", Steering::Program),
    ("CPPFLAGS", Steering::Program),
    ("LDFLAGS", Steering::Program),
    ("WASI_SDK_PATH", Steering::Program),
    // What the compilers and build tools of the guest languages read (cc-rs,
    // clang, gcc, pkg-config, prost, bindgen, TinyGo, wasm-opt, the shell).
    ("WASI_SYSROOT", Steering::Program),
    ("CCC_OVERRIDE_OPTIONS", Steering::Program),
    ("COMPILER_PATH", Steering::Program),
    ("GCC_EXEC_PREFIX", Steering::Program),
    ("TARGET_CC", Steering::Program),
    ("TARGET_CXX", Steering::Program),
    ("TARGET_AR", Steering::Program),
    ("TARGET_CFLAGS", Steering::Program),
    ("TARGET_CXXFLAGS", Steering::Program),
    ("HOST_CC", Steering::Program),
    ("HOST_CXX", Steering::Program),
    ("HOST_AR", Steering::Program),
    ("HOST_CFLAGS", Steering::Program),
    ("HOST_CXXFLAGS", Steering::Program),
    ("CPATH", Steering::Program),
    ("C_INCLUDE_PATH", Steering::Program),
    ("CPLUS_INCLUDE_PATH", Steering::Program),
    ("LIBRARY_PATH", Steering::Program),
    ("PKG_CONFIG", Steering::Program),
    ("PKG_CONFIG_PATH", Steering::Program),
    ("PKG_CONFIG_LIBDIR", Steering::Program),
    ("PKG_CONFIG_SYSROOT_DIR", Steering::Program),
    ("PROTOC", Steering::Program),
    ("PROTOC_INCLUDE", Steering::Program),
    ("LIBCLANG_PATH", Steering::Program),
    ("CLANG_PATH", Steering::Program),
    ("BINDGEN_EXTRA_CLANG_ARGS", Steering::Program),
    ("TINYGOROOT", Steering::Program),
    ("WASMOPT", Steering::Program),
    ("SHELLOPTS", Steering::Program),
    ("BASHOPTS", Steering::Program),
    ("PS4", Steering::Program),
    ("GCONV_PATH", Steering::Program),
    ("SSLKEYLOGFILE", Steering::Credentials),
    // What the builds azd runs for services read (.NET, the JVM's tools,
    // containers, PowerShell, Ruby, PHP), and glibc.
    ("MAVEN_OPTS", Steering::Program),
    ("MAVEN_ARGS", Steering::Program),
    ("GRADLE_OPTS", Steering::Program),
    ("GRADLE_USER_HOME", Steering::Program),
    ("JAVA_OPTS", Steering::Program),
    ("JAVA_HOME", Steering::Program),
    ("KUBECONFIG", Steering::Credentials),
    ("BROWSER", Steering::Program),
    ("PSMODULEPATH", Steering::Program),
    ("GLIBC_TUNABLES", Steering::Program),
    ("MALLOC_CONF", Steering::Program),
    ("PHP_INI_SCAN_DIR", Steering::Program),
    ("PHPRC", Steering::Program),
    ("GEM_HOME", Steering::Program),
    ("GEM_PATH", Steering::Program),
    ("NODE_PRESERVE_SYMLINKS", Steering::Program),
    // Where names resolve: the next `listen`'s granted names included.
    ("LOCALDOMAIN", Steering::Location),
    ("RES_OPTIONS", Steering::Location),
    ("HOSTALIASES", Steering::Location),
    // Where things go, and whom TLS trusts.
    ("HOME", Steering::Location),
    ("USERPROFILE", Steering::Location),
    ("APPDATA", Steering::Location),
    ("LOCALAPPDATA", Steering::Location),
    // Where Windows keeps the machine-wide provider policy (the ceiling).
    ("PROGRAMDATA", Steering::Location),
    ("ALLUSERSPROFILE", Steering::Location),
    ("TMPDIR", Steering::Location),
    ("TMP", Steering::Location),
    ("TEMP", Steering::Location),
    ("SSL_CERT_FILE", Steering::Location),
    ("SSL_CERT_DIR", Steering::Location),
    ("REQUESTS_CA_BUNDLE", Steering::Location),
    ("CURL_CA_BUNDLE", Steering::Location),
    ("HTTP_PROXY", Steering::Location),
    ("HTTPS_PROXY", Steering::Location),
    ("ALL_PROXY", Steering::Location),
    ("NO_PROXY", Steering::Location),
];

/// Prefixes (upper case) whose every name steers.
const PREFIXES: &[(&str, Steering)] = &[
    ("AZD_", Steering::Azd),
    ("AZURE_DEV_", Steering::Azd),
    ("AZURE_CLIENT_", Steering::Credentials),
    ("AZURE_FEDERATED_", Steering::Credentials),
    ("AZURE_CORE_", Steering::Credentials),
    ("ARM_", Steering::Credentials),
    ("IDENTITY_", Steering::Credentials),
    ("MSI_", Steering::Credentials),
    ("ACTIONS_", Steering::Credentials),
    ("SSH_", Steering::Credentials),
    ("LD_", Steering::Program),
    ("DYLD_", Steering::Program),
    ("CARGO_", Steering::Program),
    ("RUSTC_", Steering::Program),
    ("RUSTUP_", Steering::Program),
    ("CGO_", Steering::Program),
    ("NPM_CONFIG_", Steering::Program),
    ("YARN_", Steering::Program),
    ("PYTHON", Steering::Program),
    ("PIP_", Steering::Program),
    ("ZIG_", Steering::Program),
    ("GIT_", Steering::Program),
    // .NET's runtime and build (startup hooks, profilers, the runtime's knobs;
    // MSBuild reads every variable as a property, so no list closes it: the
    // author's tool keeps none of the project's variables at all).
    ("DOTNET_", Steering::Program),
    ("CORECLR_", Steering::Program),
    ("COR_", Steering::Program),
    ("COMPLUS_", Steering::Program),
    ("MSBUILD", Steering::Program),
    ("NUGET_", Steering::Program),
    ("DOCKER_", Steering::Credentials),
    ("BUNDLE_", Steering::Program),
    // cc-rs's per-target forms (`CC_wasm32_wasip2`, `CFLAGS_x86_64_unknown_linux_gnu`).
    ("CC_", Steering::Program),
    ("CXX_", Steering::Program),
    ("AR_", Steering::Program),
    ("CFLAGS_", Steering::Program),
    ("CXXFLAGS_", Steering::Program),
    ("XDG_", Steering::Location),
];

/// What `name` steers, if anything (ASCII case ignored).
pub fn steering(name: &str) -> Option<Steering> {
    let upper = name.trim().to_ascii_uppercase();
    NAMES
        .iter()
        .find(|(n, _)| *n == upper)
        .or_else(|| PREFIXES.iter().find(|(p, _)| upper.starts_with(p)))
        .map(|(_, s)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_steers_a_program_a_trust_root_or_credentials_is_named() {
        for (name, expected) in [
            ("AZD_CONFIG_DIR", Steering::Azd),
            ("AZD_WASM_HOST_ALLOW_UNSIGNED", Steering::Azd),
            ("azd_wasm_host_azd", Steering::Azd),
            ("AZURE_DEV_COLLECT_TELEMETRY", Steering::Azd),
            ("AZURE_SUBSCRIPTION_ID", Steering::Azd),
            ("AZURE_CLIENT_SECRET", Steering::Credentials),
            ("AZURE_CLIENT_ID", Steering::Credentials),
            ("AZURE_CONFIG_DIR", Steering::Credentials),
            ("ARM_USE_MSI", Steering::Credentials),
            ("PATH", Steering::Program),
            ("Path", Steering::Program),
            ("CARGO", Steering::Program),
            ("CARGO_HOME", Steering::Program),
            ("RUSTC_WRAPPER", Steering::Program),
            ("GOTOOLCHAIN", Steering::Program),
            ("NODE_OPTIONS", Steering::Program),
            ("PYTHONPATH", Steering::Program),
            ("LD_PRELOAD", Steering::Program),
            ("DYLD_INSERT_LIBRARIES", Steering::Program),
            ("npm_config_prefix", Steering::Program),
            ("GIT_SSH_COMMAND", Steering::Program),
            ("CC_wasm32_wasip2", Steering::Program),
            ("WASI_SYSROOT", Steering::Program),
            ("SSLKEYLOGFILE", Steering::Credentials),
            ("GCONV_PATH", Steering::Program),
            ("DOTNET_STARTUP_HOOKS", Steering::Program),
            ("COR_PROFILER_PATH", Steering::Program),
            ("DOCKER_HOST", Steering::Credentials),
            ("KUBECONFIG", Steering::Credentials),
            ("RES_OPTIONS", Steering::Location),
            ("HOSTALIASES", Steering::Location),
            ("HOME", Steering::Location),
            ("XDG_CACHE_HOME", Steering::Location),
            ("SSL_CERT_FILE", Steering::Location),
            ("https_proxy", Steering::Location),
        ] {
            assert_eq!(steering(name), Some(expected), "{name}");
        }
    }

    #[test]
    fn names_that_describe_what_a_provider_made_are_free() {
        for name in [
            "AZURE_STORAGE_ACCOUNT_NAME",
            "AZURE_STORAGE_BLOB_ENDPOINT",
            "AZURE_KEY_VAULT_ENDPOINT",
            "GREETING",
            "WEB_URL",
            "LOCALFILES_ROOT",
            "NODE_ENV",
            "ENV",
            "GOOGLE_PROJECT",
            "PATHWAY",
            "CARGO_SHIP_NAME_",
            "",
        ] {
            // `CARGO_SHIP_NAME_` is a CARGO_ variable: listed to show prefixes bite.
            let expected = name.starts_with("CARGO_");
            assert_eq!(steering(name).is_some(), expected, "{name}");
        }
    }
}

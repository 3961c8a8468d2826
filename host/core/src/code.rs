//! The codes the host itself reports, each with its one string form and its
//! category ([`ErrorCode`], [`ErrorCategory`]); `error` builds errors from them.

/// Every code the host itself reports (a guest's own codes are its own).
///
/// Each has one string form ([`ErrorCode::as_str`], what azd shows and what
/// tests match), one category, and says whether it is a *fault*: the
/// provider's component failed instead of answering.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// The call ran past `call_timeout_secs`.
    ProviderTimeout,
    /// The guest trapped after its budget refused to grow a memory or table.
    ProviderOutOfMemory,
    /// The guest trapped (panic, `unreachable`, stack overflow, exit).
    ProviderTrapped,
    /// A call after a fault retired the instance (needs Initialize).
    ProviderCrashed,
    /// The request was cancelled (azd went away) while the guest ran.
    ProviderCancelled,
    /// A call before any Initialize of this instance.
    ProviderNotInitialized,
    /// The component is not a provider this host can run.
    InvalidComponent,
    /// The compile stopped without a result.
    CompileFailed,
    /// An answer, or one transfer from the guest, is too big.
    AnswerTooLarge,
    /// A host handler panicked.
    HandlerPanicked,
    /// An output's type is not one azd knows.
    InvalidOutputType,
    /// An output's value does not match its type.
    InvalidOutputValue,
    /// A grant cannot be opened safely (a symbolic link on its path, or in
    /// azd's files it reaches).
    UnsafeGrant,
    /// After a call, a file azd writes that the provider's grants reach was
    /// a link (or not a plain file): the answer is refused.
    UnsafeAzdFile,
    /// The project directory azd named cannot be used.
    InvalidProjectPath,
    /// The azd environment's name breaks azd's rule.
    InvalidEnvironmentName,
    /// A request of a kind this version does not serve (or none).
    UnknownRequest,
    /// A request for another provider than the one registered.
    UnknownProvider,
    /// A request before any provider was registered.
    NotRegistered,
    /// A request before azd's Initialize.
    NotInitialized,
    /// A request reached a handler that does not serve its kind.
    MisroutedRequest,
    /// A config nested deeper than the host reads.
    ConfigTooDeep,
    /// A message azd sent that cannot be decoded.
    InvalidMessage,
    /// A request under the id of one azd sent before that is not answered yet.
    DuplicateRequestId,
    /// `listen` could not start serving.
    ExtensionFailedToStart,
    /// The provider is unsigned, signed by a key not trusted, or changed since it was signed.
    UntrustedProvider,
    /// The provider asks for grants the user has not allowed.
    ConsentRequired,
    /// azd's config does not match the provider's config schema.
    InvalidConfig,
    /// This machine's provider policy (the administrator's ceiling) does not
    /// let the provider run, or cannot be used.
    ForbiddenByPolicy,
}

impl ErrorCode {
    /// Every code.
    pub const ALL: [Self; 29] = [
        Self::ProviderTimeout,
        Self::ProviderOutOfMemory,
        Self::ProviderTrapped,
        Self::ProviderCrashed,
        Self::ProviderCancelled,
        Self::ProviderNotInitialized,
        Self::InvalidComponent,
        Self::CompileFailed,
        Self::AnswerTooLarge,
        Self::HandlerPanicked,
        Self::InvalidOutputType,
        Self::InvalidOutputValue,
        Self::UnsafeGrant,
        Self::UnsafeAzdFile,
        Self::InvalidProjectPath,
        Self::InvalidEnvironmentName,
        Self::UnknownRequest,
        Self::UnknownProvider,
        Self::NotRegistered,
        Self::NotInitialized,
        Self::MisroutedRequest,
        Self::ConfigTooDeep,
        Self::InvalidMessage,
        Self::DuplicateRequestId,
        Self::ExtensionFailedToStart,
        Self::UntrustedProvider,
        Self::ConsentRequired,
        Self::InvalidConfig,
        Self::ForbiddenByPolicy,
    ];

    /// The code as azd shows it (`local_error.code`).
    pub fn as_str(self) -> &'static str {
        self.facts().0
    }

    /// The category it is reported under.
    pub fn category(self) -> ErrorCategory {
        self.facts().1
    }

    /// Whether the provider's component failed rather than answered: it
    /// trapped, ran out of time or memory, could not be loaded, or answered
    /// outside the contract.
    pub fn is_fault(self) -> bool {
        self.facts().2
    }

    /// The code whose string form is `code`.
    pub fn parse(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.as_str() == code)
    }

    fn facts(self) -> (&'static str, ErrorCategory, bool) {
        use ErrorCategory::{Internal, Validation};
        match self {
            Self::ProviderTimeout => ("provider_timeout", Internal, true),
            Self::ProviderOutOfMemory => ("provider_out_of_memory", Internal, true),
            Self::ProviderTrapped => ("provider_trapped", Internal, true),
            Self::ProviderCrashed => ("provider_crashed", Internal, true),
            Self::ProviderCancelled => ("provider_cancelled", Internal, false),
            Self::ProviderNotInitialized => ("provider_not_initialized", Internal, false),
            Self::InvalidComponent => ("invalid_component", Validation, true),
            Self::CompileFailed => ("compile_failed", Internal, true),
            Self::AnswerTooLarge => ("answer_too_large", Validation, true),
            Self::HandlerPanicked => ("handler_panicked", Internal, true),
            Self::InvalidOutputType => ("invalid_output_type", Validation, true),
            Self::InvalidOutputValue => ("invalid_output_value", Validation, true),
            Self::UnsafeGrant => ("unsafe_grant", Validation, false),
            Self::UnsafeAzdFile => ("unsafe_azd_file", Validation, true),
            Self::InvalidProjectPath => ("invalid_project_path", Validation, false),
            Self::InvalidEnvironmentName => ("invalid_environment_name", Validation, false),
            Self::UnknownRequest => ("unknown_request", Validation, false),
            Self::UnknownProvider => ("unknown_provider", Validation, false),
            Self::NotRegistered => ("not_registered", Internal, false),
            Self::NotInitialized => ("not_initialized", Validation, false),
            Self::MisroutedRequest => ("misrouted_request", Internal, false),
            Self::ConfigTooDeep => ("config_too_deep", Validation, false),
            Self::InvalidMessage => ("invalid_message", Validation, false),
            Self::DuplicateRequestId => ("duplicate_request_id", Validation, false),
            Self::ExtensionFailedToStart => ("extension_failed_to_start", Validation, false),
            Self::UntrustedProvider => ("untrusted_provider", Validation, false),
            Self::ConsentRequired => ("consent_required", Validation, false),
            Self::InvalidConfig => ("invalid_config", Validation, false),
            Self::ForbiddenByPolicy => ("forbidden_by_policy", Validation, false),
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The categories azd understands for local errors. The guest SDK's
/// `Category` has the same seven (a test keeps the two in step); a guest may
/// still send any text, which is kept as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCategory {
    /// Bad input or configuration.
    Validation,
    /// Sign-in or permissions.
    Auth,
    /// A missing or broken dependency.
    Dependency,
    /// A version or protocol mismatch.
    Compatibility,
    /// Something the user must do.
    User,
    /// A fault of the host or provider itself.
    Internal,
    /// A local machine problem.
    Local,
}

impl ErrorCategory {
    /// Every category.
    pub const ALL: [Self; 7] = [
        Self::Validation,
        Self::Auth,
        Self::Dependency,
        Self::Compatibility,
        Self::User,
        Self::Internal,
        Self::Local,
    ];

    /// The name azd reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Validation => "validation",
            Self::Auth => "auth",
            Self::Dependency => "dependency",
            Self::Compatibility => "compatibility",
            Self::User => "user",
            Self::Internal => "internal",
            Self::Local => "local",
        }
    }
}

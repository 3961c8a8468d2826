//! The provider's error type and its one conversion to azd's `ExtensionError`.
//!
//! Providers (native or WebAssembly) fail with [`ProviderError`]. It carries
//! everything azd's `ExtensionError` does; the conversion to the wire type happens
//! only at the broker's edge, in [`ProviderError::to_wire`].

use azd_wasm_host_proto::azdext as pb;

/// Where an error came from (azd's `ErrorOrigin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ErrorOrigin {
    /// Not said.
    #[default]
    Unspecified,
    /// The local machine.
    Local,
    /// A remote service.
    Service,
    /// An external tool.
    Tool,
}

/// The typed detail azd shows with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ErrorDetail {
    /// A local failure: `code` in lower snake_case, `category` one of validation,
    /// auth, dependency, compatibility, user, internal, local.
    Local {
        /// Machine-readable code, e.g. `missing_subscription_id`.
        code: String,
        /// Category azd understands.
        category: String,
    },
    /// A failure a remote service reported.
    Service {
        /// The service's own error code.
        error_code: String,
        /// HTTP status.
        status_code: i32,
        /// Which service.
        service_name: String,
    },
}

/// A link shown with an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorLink {
    /// Where it points.
    pub url: String,
    /// What it is called.
    pub title: String,
}

/// A failure a provider (or the host on its behalf) reports to azd.
#[derive(Debug, Clone, PartialEq, Eq, Default, thiserror::Error)]
#[error("{message}")]
pub struct ProviderError {
    /// What went wrong, for the user.
    pub message: String,
    /// Where it came from.
    pub origin: ErrorOrigin,
    /// What the user can do about it (may be empty).
    pub suggestion: String,
    /// Links shown with the error.
    pub links: Vec<ErrorLink>,
    /// The typed detail, if any.
    pub detail: Option<ErrorDetail>,
}

/// Codes of the errors the host sends when a provider's component failed
/// rather than answered ([`ProviderError::is_fault`]).
pub const FAULT_CODES: [&str; 10] = [
    "provider_timeout",
    "provider_out_of_memory",
    "provider_trapped",
    "provider_crashed",
    "invalid_component",
    "compile_failed",
    "answer_too_large",
    "handler_panicked",
    "invalid_output_type",
    "invalid_output_value",
];

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

impl ProviderError {
    /// A local error with a code and category.
    pub fn local(code: &str, category: ErrorCategory, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            origin: ErrorOrigin::Local,
            detail: Some(ErrorDetail::Local {
                code: code.to_owned(),
                category: category.as_str().to_owned(),
            }),
            ..Self::default()
        }
    }

    /// A fault inside the host (category `internal`).
    pub fn internal(code: &str, message: impl Into<String>) -> Self {
        Self::local(code, ErrorCategory::Internal, message)
    }

    /// Bad input (category `validation`).
    pub fn validation(code: &str, message: impl Into<String>) -> Self {
        Self::local(code, ErrorCategory::Validation, message)
    }

    /// Adds a suggestion.
    #[must_use]
    pub fn with_suggestion(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = suggestion.into();
        self
    }

    /// Says which HTTP origins the sandbox refused during the call, and the
    /// grant that would allow them, ahead of any suggestion the guest made.
    #[must_use]
    pub fn with_http_denied(mut self, origins: &[String]) -> Self {
        if origins.is_empty() {
            return self;
        }
        let quoted: Vec<String> = origins.iter().map(|o| format!("{o:?}")).collect();
        let hint = format!(
            "The sandbox refused HTTP requests to {} (not granted): add {} to `allow` under \
             [policy.http] in provider.toml if the provider should reach {}.",
            origins.join(", "),
            quoted.join(", "),
            if origins.len() == 1 { "it" } else { "them" }
        );
        self.suggestion = if self.suggestion.is_empty() {
            hint
        } else {
            format!("{hint} {}", self.suggestion)
        };
        self
    }

    /// Adds what a guest last wrote to stderr (a traceback, an exception) to
    /// the message, so its words reach the user.
    #[must_use]
    pub fn with_guest_stderr(mut self, lines: &[String]) -> Self {
        if !lines.is_empty() {
            self.message
                .push_str("\nThe provider's last lines on stderr:");
            for line in lines {
                self.message.push_str("\n  ");
                self.message.push_str(line);
            }
        }
        self
    }

    /// Adds a link to the host's log file, where the details are.
    #[must_use]
    pub fn with_log_file(mut self, path: &std::path::Path) -> Self {
        self.links.push(ErrorLink {
            url: format!("file://{}", path.display()),
            title: "azd-wasm-host log (details)".to_owned(),
        });
        self
    }

    /// The local error code, if this is a local error.
    pub fn code(&self) -> Option<&str> {
        match &self.detail {
            Some(ErrorDetail::Local { code, .. }) => Some(code),
            _ => None,
        }
    }

    /// Whether the host reported this error because the provider's component
    /// failed instead of answering: it trapped, ran out of time or memory,
    /// could not be loaded, or answered outside the contract (see
    /// [`FAULT_CODES`]). Anything else is the provider's own answer.
    pub fn is_fault(&self) -> bool {
        self.code().is_some_and(|c| FAULT_CODES.contains(&c))
    }

    /// The wire form azd reads. Every text is [sanitized](crate::text::sanitize):
    /// azd prints it on the user's terminal.
    pub fn to_wire(&self) -> pb::ExtensionError {
        let clean = |s: &str| crate::text::sanitize(s).into_owned();
        let origin = match self.origin {
            ErrorOrigin::Unspecified => pb::ErrorOrigin::Unspecified,
            ErrorOrigin::Local => pb::ErrorOrigin::Local,
            ErrorOrigin::Service => pb::ErrorOrigin::Service,
            ErrorOrigin::Tool => pb::ErrorOrigin::Tool,
        };
        let source = self.detail.as_ref().map(|d| match d {
            ErrorDetail::Local { code, category } => {
                pb::extension_error::Source::LocalError(pb::LocalErrorDetail {
                    code: clean(code),
                    category: clean(category),
                })
            }
            ErrorDetail::Service {
                error_code,
                status_code,
                service_name,
            } => pb::extension_error::Source::ServiceError(pb::ServiceErrorDetail {
                error_code: clean(error_code),
                status_code: *status_code,
                service_name: clean(service_name),
            }),
        });
        pb::ExtensionError {
            message: clean(&self.message),
            origin: origin as i32,
            suggestion: clean(&self.suggestion),
            links: self
                .links
                .iter()
                .map(|l| pb::ErrorLink {
                    url: clean(&l.url),
                    title: clean(&l.title),
                })
                .collect(),
            source,
        }
    }

    /// Reads the wire form (used by the simulated azd and `run`).
    pub fn from_wire(e: &pb::ExtensionError) -> Self {
        let origin = match pb::ErrorOrigin::try_from(e.origin) {
            Ok(pb::ErrorOrigin::Local) => ErrorOrigin::Local,
            Ok(pb::ErrorOrigin::Service) => ErrorOrigin::Service,
            Ok(pb::ErrorOrigin::Tool) => ErrorOrigin::Tool,
            _ => ErrorOrigin::Unspecified,
        };
        let detail = e.source.as_ref().map(|s| match s {
            pb::extension_error::Source::LocalError(l) => ErrorDetail::Local {
                code: l.code.clone(),
                category: l.category.clone(),
            },
            pb::extension_error::Source::ServiceError(s) => ErrorDetail::Service {
                error_code: s.error_code.clone(),
                status_code: s.status_code,
                service_name: s.service_name.clone(),
            },
        });
        Self {
            message: e.message.clone(),
            origin,
            suggestion: e.suggestion.clone(),
            links: e
                .links
                .iter()
                .map(|l| ErrorLink {
                    url: l.url.clone(),
                    title: l.title.clone(),
                })
                .collect(),
            detail,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn categories_are_the_guest_sdks() {
        use azd_provider_sdk::Category as Sdk;
        // Both matches are exhaustive: a category added on one side only fails
        // to compile here.
        let to_sdk = |c: ErrorCategory| match c {
            ErrorCategory::Validation => Sdk::Validation,
            ErrorCategory::Auth => Sdk::Auth,
            ErrorCategory::Dependency => Sdk::Dependency,
            ErrorCategory::Compatibility => Sdk::Compatibility,
            ErrorCategory::User => Sdk::User,
            ErrorCategory::Internal => Sdk::Internal,
            ErrorCategory::Local => Sdk::Local,
        };
        let from_sdk = |c: Sdk| match c {
            Sdk::Validation => ErrorCategory::Validation,
            Sdk::Auth => ErrorCategory::Auth,
            Sdk::Dependency => ErrorCategory::Dependency,
            Sdk::Compatibility => ErrorCategory::Compatibility,
            Sdk::User => ErrorCategory::User,
            Sdk::Internal => ErrorCategory::Internal,
            Sdk::Local => ErrorCategory::Local,
        };
        for c in ErrorCategory::ALL {
            assert_eq!(c.as_str(), to_sdk(c).as_str());
            assert_eq!(from_sdk(to_sdk(c)), c);
        }
    }

    #[test]
    fn wire_round_trip_keeps_every_field() {
        let e = ProviderError {
            message: "quota exceeded".into(),
            origin: ErrorOrigin::Service,
            suggestion: "ask for more".into(),
            links: vec![ErrorLink {
                url: "https://example.com/q".into(),
                title: "Quotas".into(),
            }],
            detail: Some(ErrorDetail::Service {
                error_code: "QuotaExceeded".into(),
                status_code: 409,
                service_name: "compute".into(),
            }),
        };
        let wire = e.to_wire();
        assert_eq!(wire.origin, pb::ErrorOrigin::Service as i32);
        assert_eq!(ProviderError::from_wire(&wire), e);
        let l = ProviderError::validation("bad_config", "nope").with_suggestion("fix it");
        assert_eq!(ProviderError::from_wire(&l.to_wire()), l);
        assert_eq!(l.code(), Some("bad_config"));
    }

    #[test]
    fn terminal_control_sequences_never_reach_azd() {
        let mut e = ProviderError::validation("c\u{1b}[2J", "boom\u{1b}]8;;https://x\u{7}here")
            .with_suggestion("try \u{1b}]52;c;Zm9v\u{7}again");
        e.links.push(ErrorLink {
            url: "https://ok\r".into(),
            title: "t\u{9b}1m".into(),
        });
        let wire = e.to_wire();
        let texts = [
            wire.message.as_str(),
            wire.suggestion.as_str(),
            wire.links[0].url.as_str(),
            wire.links[0].title.as_str(),
        ];
        for t in texts {
            assert!(!t.chars().any(char::is_control), "{t:?}");
        }
        assert_eq!(wire.message, "boom]8;;https://xhere");
    }
}

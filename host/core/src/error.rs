//! The provider's error type and its one conversion to azd's `ExtensionError`.
//!
//! Providers (native or WebAssembly) fail with [`ProviderError`]. It carries
//! everything azd's `ExtensionError` does; the conversion to the wire type happens
//! only at the broker's edge, in [`ProviderError::to_wire`].

use azd_wasm_host_proto::azdext as pb;

use crate::code::{ErrorCategory, ErrorCode};

/// How much of each text of an error reaches azd: a provider's message may quote
/// anything (a config, a service's answer), so each is cut (with `…`) to a size a
/// terminal can show, and the whole error stays far under azd's 4 MiB per message.
struct WireText {
    /// Bytes of the message.
    message: usize,
    /// Bytes of the suggestion.
    suggestion: usize,
    /// Links kept.
    links: usize,
    /// Bytes of a link's URL, and of its title.
    link: usize,
    /// Bytes of a code, a category, a service's name or error code.
    name: usize,
}

/// The bounds of [`ProviderError::to_wire`]: at most about 60 KiB in all.
const WIRE_TEXT: WireText = WireText {
    message: 32 * 1024,
    suggestion: 8 * 1024,
    links: 8,
    link: 1024,
    name: 256,
};

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

    /// An error the host reports, under `code`'s category.
    pub fn host(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::local(code.as_str(), code.category(), message)
    }

    /// Adds a suggestion.
    #[must_use]
    pub fn with_suggestion(mut self, suggestion: impl Into<String>) -> Self {
        self.suggestion = suggestion.into();
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

    /// The host's code, when the host reported this error.
    pub fn host_code(&self) -> Option<ErrorCode> {
        self.code().and_then(ErrorCode::parse)
    }

    /// Whether the host reported this error because the provider's component
    /// failed instead of answering ([`ErrorCode::is_fault`]). Anything else
    /// is the provider's own answer.
    pub fn is_fault(&self) -> bool {
        self.host_code().is_some_and(ErrorCode::is_fault)
    }

    /// This error with each text made `f(text, its bound)` (the bounds of
    /// `WIRE_TEXT`) and the links past their bound left out.
    fn with_texts(&self, f: impl Fn(&str, usize) -> String) -> Self {
        let name = WIRE_TEXT.name;
        Self {
            message: f(&self.message, WIRE_TEXT.message),
            origin: self.origin,
            suggestion: f(&self.suggestion, WIRE_TEXT.suggestion),
            links: self
                .links
                .iter()
                .take(WIRE_TEXT.links)
                .map(|l| ErrorLink {
                    url: f(&l.url, WIRE_TEXT.link),
                    title: f(&l.title, WIRE_TEXT.link),
                })
                .collect(),
            detail: self.detail.as_ref().map(|d| match d {
                ErrorDetail::Local { code, category } => ErrorDetail::Local {
                    code: f(code, name),
                    category: f(category, name),
                },
                ErrorDetail::Service {
                    error_code,
                    status_code,
                    service_name,
                } => ErrorDetail::Service {
                    error_code: f(error_code, name),
                    status_code: *status_code,
                    service_name: f(service_name, name),
                },
            }),
        }
    }

    /// This error with every text cut to what azd would be shown (see `WIRE_TEXT`):
    /// what the host keeps of an error it may repeat (a failed Initialize is quoted by
    /// every request after it) need be no larger than what azd gets.
    #[must_use]
    pub fn bounded(&self) -> Self {
        self.with_texts(|s, max| crate::text::clip(s, max).into_owned())
    }

    /// The wire form azd reads. Every text is cut to a bound (see `WIRE_TEXT`)
    /// and [sanitized](crate::text::sanitize) (azd prints it on the user's terminal).
    pub fn to_wire(&self) -> pb::ExtensionError {
        let e = self
            .with_texts(|s, max| crate::text::sanitize(&crate::text::clip(s, max)).into_owned());
        let origin = match e.origin {
            ErrorOrigin::Unspecified => pb::ErrorOrigin::Unspecified,
            ErrorOrigin::Local => pb::ErrorOrigin::Local,
            ErrorOrigin::Service => pb::ErrorOrigin::Service,
            ErrorOrigin::Tool => pb::ErrorOrigin::Tool,
        };
        let source = e.detail.map(|d| match d {
            ErrorDetail::Local { code, category } => {
                pb::extension_error::Source::LocalError(pb::LocalErrorDetail { code, category })
            }
            ErrorDetail::Service {
                error_code,
                status_code,
                service_name,
            } => pb::extension_error::Source::ServiceError(pb::ServiceErrorDetail {
                error_code,
                status_code,
                service_name,
            }),
        });
        pb::ExtensionError {
            message: e.message,
            origin: origin as i32,
            suggestion: e.suggestion,
            links: e
                .links
                .into_iter()
                .map(|l| pb::ErrorLink {
                    url: l.url,
                    title: l.title,
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
    fn every_code_has_one_string_form_and_faults_are_the_components() {
        let mut seen = std::collections::HashSet::new();
        for code in ErrorCode::ALL {
            assert!(seen.insert(code.as_str()), "{code} twice");
            assert_eq!(ErrorCode::parse(code.as_str()), Some(code));
            let e = ProviderError::host(code, "x");
            assert_eq!(e.host_code(), Some(code));
            assert_eq!(e.is_fault(), code.is_fault(), "{code}");
        }
        assert_eq!(ErrorCode::parse("bad_config"), None);
        assert!(
            !ProviderError::local("provider_timeoutx", ErrorCategory::Internal, "x").is_fault()
        );
        let faults: Vec<_> = ErrorCode::ALL
            .into_iter()
            .filter(|c| c.is_fault())
            .collect();
        assert_eq!(faults.len(), 11, "{faults:?}");
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
        let l = ProviderError::local("bad_config", ErrorCategory::Validation, "nope")
            .with_suggestion("fix it");
        assert_eq!(ProviderError::from_wire(&l.to_wire()), l);
        assert_eq!(l.code(), Some("bad_config"));
    }

    #[test]
    fn terminal_control_sequences_never_reach_azd() {
        let mut e = ProviderError::local(
            "c\u{1b}[2J",
            ErrorCategory::Validation,
            "boom\u{1b}]8;;https://x\u{7}here",
        )
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

    #[test]
    fn every_text_azd_gets_is_bounded() {
        use prost::Message as _;
        let huge = "x".repeat(3 << 20);
        let mut e = ProviderError::local(&huge, ErrorCategory::Validation, huge.clone())
            .with_suggestion(huge.clone());
        // Past the bound on links, each of the first ones past the bound on a link's texts
        // (a thousand of those would be 6 GB to build).
        e.links = vec![
            ErrorLink {
                url: huge.clone(),
                title: huge.clone(),
            };
            WIRE_TEXT.links + 1
        ];
        e.links.extend(vec![
            ErrorLink {
                url: "https://x".into(),
                title: "x".into(),
            };
            1000
        ]);
        let wire = e.to_wire();
        assert!(wire.encoded_len() < 64 * 1024, "{}", wire.encoded_len());
        // What the host keeps of it is as small, and reads the same on the wire.
        let kept = e.bounded();
        assert!(kept.message.len() <= WIRE_TEXT.message);
        assert_eq!(kept.to_wire(), wire);
        assert!(wire.message.ends_with('…') && wire.message.starts_with("xxx"));
        assert_eq!(wire.links.len(), WIRE_TEXT.links);
        // A service's detail too.
        let s = ProviderError {
            detail: Some(ErrorDetail::Service {
                error_code: huge.clone(),
                status_code: 500,
                service_name: huge.clone(),
            }),
            ..e
        };
        assert!(s.to_wire().encoded_len() < 64 * 1024);
    }
}

//! The [`Error`] a provider returns: azd shows its message, suggestion and links to the user,
//! and treats it as a local or a service failure depending on its detail.
//!
//! It wraps the WIT `error` record in a `Box`, so `Result<T, Error>` stays one pointer wide
//! whatever the record holds (the record itself is 136 bytes).

use std::fmt;

use crate::bindings::azd::provisioning0_1_0::types::{
    Error as WitError, ErrorDetail, ErrorLink, ErrorOrigin, LocalError, ServiceError,
};

/// A failure azd shows to the user (the WIT `error` record, azd's `ExtensionError`).
///
/// Build it with a constructor named after its category ([`Error::validation`],
/// [`Error::dependency`], ...) or [`Error::service`], then add a suggestion or links.
/// `Display` shows the message.
#[derive(Clone, PartialEq, Eq)]
pub struct Error(Box<WitError>);

/// The kind of a local failure, as azd classifies them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Category {
    /// The input (configuration, parameters, files) is wrong.
    Validation,
    /// Credentials are missing or refused.
    Auth,
    /// Something the provider needs (a tool, a service, a file) is missing or failed.
    Dependency,
    /// The request asks for something this provider or version does not support.
    Compatibility,
    /// The user must act (answer, choose, confirm).
    User,
    /// A bug in the provider.
    Internal,
    /// Any other local failure.
    Local,
}

impl Category {
    /// The category string azd understands (`validation`, `auth`, ...).
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

/// Constructors and builders. `code` is a short lower snake_case identifier of the failure
/// (e.g. `missing_subscription_id`); `message` is the sentence azd shows.
impl Error {
    /// A local failure of the given category.
    pub fn local(category: Category, code: impl Into<String>, message: impl Into<String>) -> Self {
        Self(Box::new(WitError {
            message: message.into(),
            origin: ErrorOrigin::Local,
            suggestion: String::new(),
            links: Vec::new(),
            detail: Some(ErrorDetail::Local(LocalError {
                code: code.into(),
                category: category.as_str().to_owned(),
            })),
        }))
    }

    /// The input is wrong (category `validation`).
    pub fn validation(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::local(Category::Validation, code, message)
    }

    /// Credentials are missing or refused (category `auth`).
    pub fn auth(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::local(Category::Auth, code, message)
    }

    /// Something the provider needs is missing or failed (category `dependency`).
    pub fn dependency(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::local(Category::Dependency, code, message)
    }

    /// The request is not supported (category `compatibility`).
    pub fn compatibility(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::local(Category::Compatibility, code, message)
    }

    /// The user must act (category `user`).
    pub fn user(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::local(Category::User, code, message)
    }

    /// A bug in the provider (category `internal`).
    pub fn internal(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::local(Category::Internal, code, message)
    }

    /// A failure a remote service reported: its name, its own error code and the HTTP status.
    pub fn service(
        service_name: impl Into<String>,
        error_code: impl Into<String>,
        status_code: i32,
        message: impl Into<String>,
    ) -> Self {
        Self(Box::new(WitError {
            message: message.into(),
            origin: ErrorOrigin::Service,
            suggestion: String::new(),
            links: Vec::new(),
            detail: Some(ErrorDetail::Service(ServiceError {
                error_code: error_code.into(),
                status_code,
                service_name: service_name.into(),
            })),
        }))
    }

    /// Sets what the user can do about the failure.
    #[must_use]
    pub fn with_suggestion(mut self, suggestion: impl Into<String>) -> Self {
        self.0.suggestion = suggestion.into();
        self
    }

    /// Adds a link azd shows with the error.
    #[must_use]
    pub fn with_link(mut self, url: impl Into<String>, title: impl Into<String>) -> Self {
        self.0.links.push(ErrorLink {
            url: url.into(),
            title: title.into(),
        });
        self
    }

    /// Overrides where the failure came from, e.g. [`ErrorOrigin::Tool`] when an external tool
    /// the provider ran failed.
    #[must_use]
    pub fn with_origin(mut self, origin: ErrorOrigin) -> Self {
        self.0.origin = origin;
        self
    }

    /// The message azd shows.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// What the user can do about it (empty when not set).
    pub fn suggestion(&self) -> &str {
        &self.0.suggestion
    }

    /// Where the failure came from.
    pub fn origin(&self) -> ErrorOrigin {
        self.0.origin
    }

    /// The links azd shows with the error.
    pub fn links(&self) -> &[ErrorLink] {
        &self.0.links
    }

    /// The local or service detail.
    pub fn detail(&self) -> Option<&ErrorDetail> {
        self.0.detail.as_ref()
    }

    /// The error code: the local `code`, or the service's `error_code`; `None` without detail.
    pub fn code(&self) -> Option<&str> {
        match &self.0.detail {
            Some(ErrorDetail::Local(local)) => Some(&local.code),
            Some(ErrorDetail::Service(service)) => Some(&service.error_code),
            None => None,
        }
    }

    /// The WIT record handed to the host.
    pub fn into_wit(self) -> WitError {
        *self.0
    }
}

impl From<WitError> for Error {
    fn from(error: WitError) -> Self {
        Self(Box::new(error))
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validation_error_is_local_with_category_code_and_suggestion() {
        let error = Error::validation("missing_bucket", "no bucket configured")
            .with_suggestion("set config.bucket in azure.yaml")
            .with_link("https://example.invalid/docs", "docs");
        assert_eq!(error.message(), "no bucket configured");
        assert_eq!(error.to_string(), "no bucket configured");
        assert_eq!(error.origin(), ErrorOrigin::Local);
        assert_eq!(error.suggestion(), "set config.bucket in azure.yaml");
        assert_eq!(
            error.links(),
            [ErrorLink {
                url: "https://example.invalid/docs".into(),
                title: "docs".into()
            }]
        );
        assert_eq!(
            error.detail(),
            Some(&ErrorDetail::Local(LocalError {
                code: "missing_bucket".into(),
                category: "validation".into()
            }))
        );
        assert_eq!(error.code(), Some("missing_bucket"));
    }

    #[test]
    fn every_category_maps_to_the_string_azd_understands() {
        let cases = [
            (Error::validation("c", "m"), "validation"),
            (Error::auth("c", "m"), "auth"),
            (Error::dependency("c", "m"), "dependency"),
            (Error::compatibility("c", "m"), "compatibility"),
            (Error::user("c", "m"), "user"),
            (Error::internal("c", "m"), "internal"),
            (Error::local(Category::Local, "c", "m"), "local"),
        ];
        for (error, expected) in cases {
            match error.detail() {
                Some(ErrorDetail::Local(local)) => assert_eq!(local.category, expected),
                other => panic!("expected a local detail, got {other:?}"),
            }
        }
    }

    #[test]
    fn service_error_carries_service_detail_and_origin() {
        let error = Error::service("storage", "BucketNotFound", 404, "bucket gone")
            .with_origin(ErrorOrigin::Service);
        assert_eq!(error.origin(), ErrorOrigin::Service);
        assert_eq!(
            error.detail(),
            Some(&ErrorDetail::Service(ServiceError {
                error_code: "BucketNotFound".into(),
                status_code: 404,
                service_name: "storage".into()
            }))
        );
        assert_eq!(error.code(), Some("BucketNotFound"));
    }

    #[test]
    fn origin_can_be_overridden_for_tool_failures() {
        let error = Error::dependency("terraform_failed", "terraform exited with 1")
            .with_origin(ErrorOrigin::Tool);
        assert_eq!(error.origin(), ErrorOrigin::Tool);
        assert_eq!(error.code(), Some("terraform_failed"));
    }

    #[test]
    fn error_is_small_and_round_trips_through_the_wit_record() {
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
        let error = Error::user("confirm", "please confirm").with_suggestion("run again");
        let record = error.clone().into_wit();
        assert_eq!(record.message, "please confirm");
        assert_eq!(Error::from(record), error);
    }
}

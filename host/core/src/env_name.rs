//! azd environment names, checked with azd's own rule wherever one comes from
//! (`AZD_ENVIRONMENT`, `run -e`, `.azure/config.json`, `AZURE_ENV_NAME`).
//!
//! azd accepts 1 to 64 characters from `A-Z a-z 0-9 - ( ) _ .`, the
//! characters of an Azure deployment name, and also requires the name to be a
//! plain directory name: not made only of periods (`.` and `..` would name the
//! folder itself or its parent; Windows drops trailing periods) and, on
//! Windows, not a reserved device name (`CON`, `NUL`, `COM1`, ...). The name
//! becomes a path component (`.azure/<name>`, `{env}` in grants), so anything
//! else could point outside the project.

use std::fmt;

/// Longest name azd accepts.
pub(crate) const MAX_LEN: usize = 64;

/// A name azd would accept for an environment.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EnvironmentName(String);

/// Why a name is not a valid environment name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "environment name {} is invalid: {why} (azd allows 1-64 letters, digits, hyphens, \
     underscores, parentheses and periods; the name must be a directory name, not a path)",
    crate::text::quote(name)
)]
pub struct InvalidEnvironmentName {
    /// The name as given.
    pub name: String,
    /// What is wrong with it.
    pub why: &'static str,
}

/// Device names Windows reserves in every directory.
const WINDOWS_RESERVED: [&str; 22] = [
    "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8",
    "COM9", "LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9",
];

impl EnvironmentName {
    /// Checks `name` with azd's rule.
    pub fn parse(name: &str) -> Result<Self, InvalidEnvironmentName> {
        let invalid = |why| InvalidEnvironmentName {
            name: name.to_owned(),
            why,
        };
        if name.is_empty() {
            return Err(invalid("it is empty"));
        }
        if name.len() > MAX_LEN {
            return Err(invalid("it is longer than 64 characters"));
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '(' | ')' | '_' | '.'))
        {
            return Err(invalid("it contains a character other than those allowed"));
        }
        if name.chars().all(|c| c == '.') {
            return Err(invalid("it is made only of periods"));
        }
        if cfg!(windows) || name.ends_with('.') {
            let stem = name.split('.').next().unwrap_or(name);
            if WINDOWS_RESERVED
                .iter()
                .any(|r| r.eq_ignore_ascii_case(stem))
            {
                return Err(invalid("it is a device name Windows reserves"));
            }
        }
        Ok(Self(name.to_owned()))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EnvironmentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for EnvironmentName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn azds_names_are_accepted() {
        for ok in ["dev", "my-env_2", "prod(eu).v1", "a", &"x".repeat(64)] {
            assert_eq!(EnvironmentName::parse(ok).unwrap().as_str(), ok);
        }
    }

    #[test]
    fn paths_and_odd_names_are_refused() {
        for bad in [
            "",
            ".",
            "..",
            "...",
            "../x",
            "a/b",
            "a\\b",
            "my env",
            "x:y",
            "line\nbreak",
            "é",
            &"x".repeat(65),
        ] {
            let e = EnvironmentName::parse(bad).unwrap_err();
            assert_eq!(e.name, bad);
            assert!(e.to_string().contains("invalid"), "{e}");
        }
    }

    #[test]
    fn windows_device_names_are_refused_with_a_trailing_period_everywhere() {
        assert!(EnvironmentName::parse("nul.").is_err());
        assert_eq!(
            EnvironmentName::parse("CON").is_err(),
            cfg!(windows),
            "CON is only a device name on Windows"
        );
    }
}

//! What a provider may put into azd's `.env`: a name by grammar, a value azd
//! reads back whole.
//!
//! azd 1.31.2 writes `.env` with godotenv's `Marshal` (`KEY="value"`, the key
//! written as it is, the value escaped) and reads it back with godotenv's
//! reader. A name is therefore safe only when it is a name and nothing else:
//! `A="1" NODE_OPTIONS` is written as `A="1" NODE_OPTIONS="…"` and read back
//! as two variables. So a name must be an environment variable's name,
//! `[A-Za-z_][A-Za-z0-9_]*`, which every shell, every platform and godotenv
//! read as one word, and not one that steers ([`crate::steering`]): the rule
//! is a grammar, with the list of steering names only as a second wall.
//!
//! A value is escaped by `Marshal`, but godotenv ends a quoted value at the
//! first quote not preceded by a backslash, then trims every quote from both
//! ends: a value that ends in a backslash is written `K="…\\"`, whose
//! closing quote is taken as escaped, so the value runs on into the next line
//! and what follows it is read as statements of its own (or, on the last
//! line, the file no longer reads); a value that ends in a double quote is
//! written `K="…\""` and read back ending in a backslash. Both are refused.
//! (azd's writer also rewrites a value Go's `strconv.Atoi` reads as that
//! integer: `007` comes back `7`, `+1` as `1`; whoever the provider is.)
//!
//! And since azd hands every value to every program it starts for the
//! environment, as `NAME=value` in its environment: a value holding a NUL
//! byte (Go refuses to start any process with one), or a `NAME=value` past
//! [`MAX_ENTRY_BYTES`] (Windows' limit for one variable; Linux refuses one
//! string past 128 KiB), would keep every later extension and hook from
//! starting. Both are refused.
//!
//! `host/core/tests/all/godotenv.rs` holds both rules to godotenv v1.5.1 itself:
//! generated names and values go through [`check_name`] and [`check_value`],
//! then through `Marshal` and the reader, and what is read back is exactly
//! what was let out.

use crate::steering::{self, Steering};

/// The most bytes of `NAME=value` a provider may hand azd: what Windows
/// takes for one environment variable (32,767 characters).
pub const MAX_ENTRY_BYTES: usize = 32_767;

/// Why azd's `.env` may not take a name or a value from a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not an environment variable's name (`[A-Za-z_][A-Za-z0-9_]*`).
    NotAName,
    /// A name that steers a program, a trust root, azd or credentials.
    Steers(Steering),
    /// A value azd's `.env` cannot carry back whole (it ends in a backslash
    /// or a double quote).
    UnreadableValue,
    /// A value no program could be started with (a NUL byte, or past
    /// [`MAX_ENTRY_BYTES`] with its name).
    UnrunnableValue,
}

impl Refusal {
    /// The code a guest's refused call carries (`invalid_name`,
    /// `reserved_name`, `invalid_value`).
    pub fn code(self) -> &'static str {
        match self {
            Self::NotAName => "invalid_name",
            Self::Steers(_) => "reserved_name",
            Self::UnreadableValue | Self::UnrunnableValue => "invalid_value",
        }
    }

    /// The sentence a refusal or a log warning carries, naming `name`
    /// (quoted, bounded and escaped: it may hold anything).
    pub fn sentence(self, name: &str) -> String {
        let quoted = crate::text::quote(name);
        match self {
            Self::NotAName => format!(
                "{quoted} is not an environment variable name (letters, digits and `_`, not \
                 starting with a digit): azd writes names into .env as they are, where anything \
                 else could read as other variables or make the file unreadable"
            ),
            Self::Steers(s) => format!(
                "a provider may not set {quoted}: {} (azd passes its environment's values to \
                 extensions and tools, so such a value would steer them)",
                s.describe()
            ),
            Self::UnreadableValue => format!(
                "the value of {quoted} ends with a backslash or a double quote, which azd's .env \
                 does not read back: after a backslash azd reads the lines that follow as part of \
                 the value, and a final quote comes back as a backslash"
            ),
            Self::UnrunnableValue => format!(
                "the value of {quoted} holds a NUL byte or is longer than {MAX_ENTRY_BYTES} bytes \
                 with its name: azd hands every value to every program it starts, and none could \
                 start with it"
            ),
        }
    }

    /// What the provider's author can do about it.
    pub fn suggestion(self) -> &'static str {
        match self {
            Self::NotAName => {
                "Name it with letters, digits and `_` only, not starting with a digit."
            }
            Self::Steers(_) => {
                "Give the value another name: azd's, credential and program variables are never a provider's to set."
            }
            Self::UnreadableValue => {
                "End the value with another character (a trailing backslash or quote cannot be kept)."
            }
            Self::UnrunnableValue => {
                "Keep large or binary data elsewhere (a file, a storage account) and output where it is."
            }
        }
    }
}

/// Whether `name` is an environment variable's name: an ASCII letter or `_`,
/// then ASCII letters, digits and `_`.
pub fn is_variable_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// Whether a provider may give azd's `.env` the name `name`: a variable's
/// name ([`is_variable_name`]) that does not steer.
pub fn check_name(name: &str) -> Result<(), Refusal> {
    if !is_variable_name(name) {
        return Err(Refusal::NotAName);
    }
    match steering::steering(name) {
        Some(s) => Err(Refusal::Steers(s)),
        None => Ok(()),
    }
}

/// Whether azd's `.env` carries `value` back whole (see the module).
pub fn check_value(value: &str) -> Result<(), Refusal> {
    if value.ends_with(['\\', '"']) {
        Err(Refusal::UnreadableValue)
    } else if value.contains('\0') {
        Err(Refusal::UnrunnableValue)
    } else {
        Ok(())
    }
}

/// [`check_name`], then [`check_value`], then the size of `NAME=value`.
pub fn check_entry(name: &str, value: &str) -> Result<(), Refusal> {
    check_name(name)?;
    check_value(value)?;
    if name.len() + 1 + value.len() > MAX_ENTRY_BYTES {
        return Err(Refusal::UnrunnableValue);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_a_variable_name_and_nothing_else() {
        for ok in [
            "A",
            "_",
            "_A1",
            "greeting",
            "AZURE_STORAGE_ACCOUNT_NAME",
            "a1_B2",
        ] {
            assert_eq!(check_name(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "1A",
            "A=\"1\" NODE_OPTIONS",
            "A=\"1\"\rSSL_CERT_FILE",
            "export\tRUSTFLAGS",
            "MY-VAR",
            "A B",
            "A.B",
            "A:B",
            "Ä",
            "A\u{0}",
            "#A",
            " A",
            "A ",
        ] {
            assert_eq!(check_name(bad), Err(Refusal::NotAName), "{bad:?}");
        }
        assert_eq!(
            check_name("NODE_OPTIONS"),
            Err(Refusal::Steers(Steering::Program))
        );
    }

    #[test]
    fn a_value_ending_in_a_backslash_is_refused_and_others_pass() {
        assert_eq!(check_value("C:\\dir\\"), Err(Refusal::UnreadableValue));
        assert_eq!(check_value("say \"hi\""), Err(Refusal::UnreadableValue));
        for ok in [
            "",
            "a\\b",
            "\"a",
            "x\\\"y",
            "line\nbreak",
            "$HOME",
            "\\ ",
            "'",
        ] {
            assert_eq!(check_value(ok), Ok(()), "{ok:?}");
        }
        assert_eq!(check_entry("1", "x"), Err(Refusal::NotAName));
        assert_eq!(check_value("a\0b"), Err(Refusal::UnrunnableValue));
        let fits = "v".repeat(MAX_ENTRY_BYTES - 2);
        assert_eq!(check_entry("A", &fits), Ok(()));
        assert_eq!(
            check_entry("AB", &fits),
            Err(Refusal::UnrunnableValue),
            "one byte over with its name"
        );
        assert_eq!(check_entry("A", "x\\"), Err(Refusal::UnreadableValue));
    }

    #[test]
    fn a_refusal_names_what_it_refuses_escaped() {
        let why = Refusal::NotAName.sentence("A=\"1\"\rSSL_CERT_FILE");
        assert!(why.contains("not an environment variable name"), "{why}");
        assert!(!why.contains('\r'), "{why:?}");
        assert!(why.contains("SSL_CERT_FILE"), "{why}");
        assert_eq!(Refusal::Steers(Steering::Azd).code(), "reserved_name");
        assert!(
            Refusal::UnreadableValue
                .sentence("P")
                .contains("ends with a backslash or a double quote")
        );
    }
}

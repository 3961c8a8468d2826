//! azd's `.env` (`.azure/<env>/.env`): read as azd reads it, and what a
//! provider may put into it.
//!
//! - [`read`]: godotenv v1.5.1's reader (azd 1.31.2's), over bytes and
//!   whole files: the one `.env` reader of the workspace. The runner edits
//!   `.env` on it; the launch of a process azd started learns from it which
//!   names the project's environment supplied ([`names`]).
//! - [`check_name`], [`check_value`]: the grammar of a name a provider may
//!   hand azd (an output's, or a key it sets through azd's environment
//!   service) and the values azd's `.env` carries back whole.
//!
//! Both are held to godotenv itself by a differential test
//! (`host/core/tests/all/godotenv.rs`, which builds a Go program on the pinned
//! module).

mod entry;
mod read;

use std::collections::BTreeSet;

pub use entry::{MAX_ENTRY_BYTES, Refusal, check_entry, check_name, check_value, is_variable_name};
pub use read::{
    DotEnvError, Read, Statement, crlf_to_lf, is_space, leading_blanks, line_of, read,
    read_normalised, trailing_blanks,
};

/// The names a `.env` sets as the bytes godotenv hands to the variables it
/// sets (a name that is not UTF-8 included), and why reading stopped early if
/// it did.
pub fn name_bytes(bytes: &[u8]) -> (BTreeSet<Vec<u8>>, Option<DotEnvError>) {
    let read = read::read_with(&crlf_to_lf(bytes), read::Values::Skip);
    (
        read.statements.into_iter().map(|s| s.key_bytes).collect(),
        read.error,
    )
}

/// The names a `.env` sets, as azd reads it (all of it, however large), and
/// why reading stopped early if it did: the names before that error are the
/// ones godotenv had read.
pub fn names(bytes: &[u8]) -> (BTreeSet<String>, Option<DotEnvError>) {
    let (raw, error) = name_bytes(bytes);
    let names = raw
        .iter()
        .map(|k| String::from_utf8_lossy(k).into_owned())
        .collect();
    (names, error)
}

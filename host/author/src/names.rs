//! The names a provider project and its package carry, by the rules of
//! everything that reads them (azd, cargo, npm, Windows file names), in one
//! place: `new` and `package` check the same way.

use anyhow::bail;

/// Provider names azd keeps for its own providers: an extension that
/// registered one would never be asked.
pub(crate) const RESERVED_PROVIDER_NAMES: &[&str] =
    &["bicep", "arm", "terraform", "pulumi", "test"];
/// Names a new project cannot take: Windows device names (no file or folder
/// may be called that there) and the crate names cargo keeps for itself.
const UNUSABLE_NAMES: &[&str] = &[
    "con",
    "prn",
    "aux",
    "nul",
    "com1",
    "com2",
    "com3",
    "com4",
    "com5",
    "com6",
    "com7",
    "com8",
    "com9",
    "lpt1",
    "lpt2",
    "lpt3",
    "lpt4",
    "lpt5",
    "lpt6",
    "lpt7",
    "lpt8",
    "lpt9",
    "core",
    "std",
    "alloc",
    "proc-macro",
    "self",
    "crate",
    "super",
];
/// The longest provider name `new` accepts.
const MAX_NAME_LEN: usize = 64;

/// Checks a provider name for a new project: it also names the folder, the
/// crate or npm package, the component file and the extension id's last
/// segment, so it takes the rule all of them accept.
pub(crate) fn check_name(name: &str) -> anyhow::Result<()> {
    let valid_chars = name
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    let starts = name.starts_with(|c: char| c.is_ascii_lowercase());
    if name.is_empty()
        || name.len() > MAX_NAME_LEN
        || !valid_chars
        || !starts
        || name.ends_with('-')
    {
        bail!(
            "`{}` cannot name a provider: use lower-case letters, digits and inner hyphens, starting \
             with a letter (at most {MAX_NAME_LEN} characters), e.g. `todo` or `storage-accounts`",
            name.escape_debug()
        );
    }
    if name.contains("--") {
        bail!("`{name}` cannot name a provider: no double hyphens");
    }
    if RESERVED_PROVIDER_NAMES.contains(&name) {
        bail!("`{name}` is one of azd's own provider names; azd would never ask the extension");
    }
    if UNUSABLE_NAMES.contains(&name) {
        bail!(
            "`{name}` cannot name a provider project: it is a Windows device name or a name cargo \
             keeps for itself"
        );
    }
    Ok(())
}

/// Checks an extension id against azd's rule (`extensionIdRegex`): at least
/// two dot-separated segments of lower-case letters, digits and inner hyphens.
pub(crate) fn check_extension_id(id: &str) -> anyhow::Result<()> {
    let segment_ok = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && !s.starts_with('-')
            && !s.ends_with('-')
    };
    let segments: Vec<&str> = id.split('.').collect();
    if segments.len() < 2 || !segments.iter().all(|s| segment_ok(s)) {
        bail!(
            "extension id `{}` is not one azd accepts: dot-separated segments of lower-case letters, \
             digits and inner hyphens, at least two (e.g. `contoso.todo`)",
            id.escape_debug()
        );
    }
    Ok(())
}

/// A path as one shell word, quoted when it needs to be.
pub fn shell_word(text: &str) -> String {
    if text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

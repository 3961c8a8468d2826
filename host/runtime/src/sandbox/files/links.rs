//! Which links a guest may make in its read-write grants.
//!
//! A guest cannot follow a link out of its grants (cap-std never resolves a
//! path above the directory it was opened from). Other programs can: azd, the
//! user's editor, a later build. A link a guest leaves in the project is a
//! path that anyone but the guest follows, so the rule is about what a link's
//! text could ever name, not about the guest:
//!
//! - **A symbolic link may only point into its own folder's subtree.** Its
//!   target must be relative, with no `..` anywhere in it (`/` and `\` both
//!   separate names, and a drive prefix such as `C:` counts as absolute, on
//!   every platform, since a project travels between them). So `current ->
//!   v2/data` is made, and `.env -> ../../../../home/u/.bashrc`,
//!   `x -> /etc/passwd` and `x -> a/../b` are refused with WASI's
//!   `not-permitted` (EPERM in the guest's libc). Absolute targets were
//!   already refused by cap-std.
//!
//!   Why no `..` at all, rather than "no `..` that climbs above the link's
//!   folder": the second rule is not sound once links chain. `b -> .` stays
//!   in its folder, and so does `a -> b/..` as text, yet `a` resolves to the
//!   folder's parent, because the system resolves `..` after following `b`.
//!   With no `..` in any target, every step of a resolution that starts in a
//!   folder goes down, or follows a link that goes down from its own folder,
//!   which is inside: the subtree is the bound whatever the guest makes later.
//!   The cost is that a provider cannot make a link to a sibling folder
//!   (`node_modules/.bin` style); it copies instead. Refusing every link was
//!   the other choice; it buys nothing more, since a link that only reaches
//!   down names nothing its folder's own path does not.
//!
//! - **An existing link moves only if it obeys that rule** (`rename-at`): a
//!   link shipped in the project (made by the user, not by the guest) may
//!   point anywhere; the guest cannot move it, say over `.azure/<env>/.env`.
//!
//! - **No hard links** (`link-at` is refused): a hard link gives a file a
//!   second name, possibly in another grant, so that what azd later writes
//!   to its own file (`.env`, secrets included) appears there too, and azd's
//!   file could be another grant's file from the start. Nothing a
//!   provisioning provider does needs one, and refusing them is the only
//!   rule that holds on every platform (Windows shows no link count).
//!
//! What this cannot see (a folder moved with a shipped link inside it, a
//! link made by another process) is caught for the files azd writes by the
//! check after every call ([`super::azd_files`]).

use std::path::Path;

/// Why a symbolic link with this target may not be made or moved, or `None`
/// when its target stays beneath the link's own folder.
pub(crate) fn refused_target(target: &str) -> Option<&'static str> {
    if target.starts_with(['/', '\\']) || azd_wasm_host_manifest::has_drive_prefix(target) {
        return Some("its target is absolute");
    }
    if target.split(['/', '\\']).any(|part| part == "..") {
        return Some("its target climbs with `..`");
    }
    // What this platform reads as a root or a prefix (`\\?\`, `C:`).
    let absolute = Path::new(target).components().any(|c| {
        matches!(
            c,
            std::path::Component::Prefix(_) | std::path::Component::RootDir
        )
    });
    absolute.then_some("its target is absolute")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_targets_beneath_the_links_folder_are_allowed() {
        for ok in [
            "v2",
            "v2/data",
            "./data",
            "a/./b",
            "..x",
            "x..",
            "a/...",
            "name:with-colon",
        ] {
            assert_eq!(refused_target(ok), None, "{ok}");
        }
        for (bad, why) in [
            ("../../../../home/u/.bashrc", "climbs"),
            ("..", "climbs"),
            ("a/../b", "climbs"),
            ("a/..", "climbs"),
            (r"a\..\..\b", "climbs"),
            ("/etc/passwd", "absolute"),
            (r"\Windows", "absolute"),
            (r"C:\Users\me", "absolute"),
            ("C:relative", "absolute"),
            ("//server/share", "absolute"),
        ] {
            let got = refused_target(bad).unwrap_or_else(|| panic!("{bad} was allowed"));
            assert!(got.contains(why), "{bad}: {got}");
        }
    }
}

//! Paths inside granted folders, in the guest's form and in the host's.
//!
//! The guest sees each granted folder at its WASI name ([`super::guest_form`]):
//! on Windows `/C:/Users/me/proj/localinfra` for `C:\Users\me\proj\localinfra`.
//! A provider that reports where it put something would hand the user, and any
//! later azd step, a path Windows cannot open. So the host translates such
//! values where they cross between the guest and azd, both ways:
//!
//! - guest → azd ([`PathMap::to_native`]): the outputs of `deploy`, `preview`
//!   and `state` (`runtime::convert`), and the values the guest sets in azd's
//!   environment;
//! - azd → guest ([`PathMap::to_guest`]): the values the guest reads from azd's
//!   environment, and `virtual-env` of `initialize` (where azd hands a layer
//!   the outputs of the layers before it). Outputs become environment values,
//!   so what a provider reported comes back to it in the form it reported,
//!   and the guest can open it.
//!
//! Why the host and not a WIT import with a helper in every SDK: every
//! provider, of every language and of the released 0.1.0 world too, reports
//! native paths without a line of its own, and none can forget to; the two
//! forms meet only at this boundary, which is the one place that knows both.
//! What it costs is that the rule must never touch a value that is not such a
//! path, hence its narrowness:
//!
//! - a value is translated only when it is exactly a grant's path, or lies
//!   beneath it: the grant's path, a separator (`/` in guest form; `\` or `/`
//!   in Windows form), and the rest. `/Z:/foobar` is not beneath `/Z:/foo`;
//! - a rest with a `..` component is left alone (it may climb out of the
//!   grant); names are compared exactly, case included;
//! - the deepest grant that holds the value decides;
//! - an object or array value (JSON text) has each of its string values
//!   translated by the same rule (keys never); the text is written again,
//!   compact, only when one of them changed; text that is not JSON is a
//!   single value;
//! - nothing else is translated: not the config the user wrote, prompt
//!   answers, parameters, preview rows, progress or error messages.
//!
//! On Linux and macOS the two forms are the same: the map is empty, and
//! every value crosses untouched.

use super::dirs::GrantedDir;

/// The granted folders of one instance, each as the guest and the host name
/// it; empty where the two are the same.
#[derive(Clone, Debug, Default)]
pub(crate) struct PathMap {
    /// (guest form, native form), deepest guest path first.
    pairs: Vec<(String, String)>,
    /// The separator native paths are written with (`\` on Windows).
    native_sep: char,
}

/// Which way a value crosses.
#[derive(Clone, Copy)]
enum Toward {
    Native,
    Guest,
}

impl PathMap {
    /// The map of `pairs` (guest form, native form), whose native paths use
    /// `native_sep`. Pairs whose two forms are the same, with `/` for a
    /// separator, translate nothing and are left out.
    pub(crate) fn new(pairs: impl IntoIterator<Item = (String, String)>, native_sep: char) -> Self {
        let mut pairs: Vec<(String, String)> = pairs
            .into_iter()
            .filter(|(guest, native)| !(guest == native && native_sep == '/'))
            .filter(|(guest, native)| !guest.is_empty() && !native.is_empty())
            .collect();
        pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        pairs.dedup_by(|a, b| a.0 == b.0);
        Self { pairs, native_sep }
    }

    /// The map of the directories an instance was granted.
    pub(crate) fn of_grants(dirs: &[GrantedDir]) -> Self {
        Self::new(
            dirs.iter()
                .map(|d| (d.guest_path.clone(), d.native_path.clone())),
            std::path::MAIN_SEPARATOR,
        )
    }

    /// Whether no value is ever translated (Linux, macOS, or no grants).
    pub(crate) fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// `value` (one path, or JSON text holding paths) as the host names it,
    /// if it names a place in a granted folder in the guest's form.
    pub(crate) fn to_native(&self, value: &str) -> Option<String> {
        self.translate(value, Toward::Native)
    }

    /// `value` (one path, or JSON text holding paths) as the guest names it,
    /// if it names a place in a granted folder in the host's form.
    pub(crate) fn to_guest(&self, value: &str) -> Option<String> {
        self.translate(value, Toward::Guest)
    }

    /// Translates `value` in place toward the guest's form.
    pub(crate) fn guest_in_place(&self, value: &mut String) {
        if let Some(guest) = self.to_guest(value) {
            *value = guest;
        }
    }

    fn translate(&self, value: &str, toward: Toward) -> Option<String> {
        if self.is_empty() {
            return None;
        }
        if let Some(one) = self.path(value, toward) {
            return Some(one);
        }
        let text = value.trim_start();
        if !(text.starts_with('{') || text.starts_with('[')) {
            return None;
        }
        let mut json: serde_json::Value = serde_json::from_str(value).ok()?;
        self.walk(&mut json, toward)
            .then(|| serde_json::to_string(&json).ok())
            .flatten()
    }

    /// Translates every string value inside `json`; whether any changed.
    fn walk(&self, json: &mut serde_json::Value, toward: Toward) -> bool {
        match json {
            serde_json::Value::String(s) => match self.path(s, toward) {
                Some(t) => {
                    *s = t;
                    true
                }
                None => false,
            },
            serde_json::Value::Array(items) => items
                .iter_mut()
                .fold(false, |changed, v| self.walk(v, toward) | changed),
            serde_json::Value::Object(map) => map
                .values_mut()
                .fold(false, |changed, v| self.walk(v, toward) | changed),
            _ => false,
        }
    }

    /// `value` translated when it is a single path in a grant.
    fn path(&self, value: &str, toward: Toward) -> Option<String> {
        let (to_sep, from_sep) = match toward {
            Toward::Native => (self.native_sep, '/'),
            Toward::Guest => ('/', self.native_sep),
        };
        // Windows takes `/` for `\` too: `Z:/proj/x` is `Z:\proj\x`.
        let windows_value;
        let value = if matches!(toward, Toward::Guest) && self.native_sep == '\\' {
            windows_value = value.replace('/', "\\");
            windows_value.as_str()
        } else {
            value
        };
        self.pairs.iter().find_map(|(guest, native)| {
            let (from, to) = match toward {
                Toward::Native => (guest, native),
                Toward::Guest => (native, guest),
            };
            let rest = beneath(value, from, from_sep)?;
            if rest.split(['/', '\\']).any(|part| part == "..") {
                return None;
            }
            if value.len() == from.len() {
                return Some(to.clone());
            }
            let mut out = to.clone();
            if !out.ends_with(to_sep) {
                out.push(to_sep);
            }
            out.extend(rest.chars().map(|c| if c == from_sep { to_sep } else { c }));
            Some(out)
        })
    }
}

/// What follows `root` in `value` after a separator (`""` when `value` is
/// `root` itself), or `None` when `value` is not `root` or beneath it.
fn beneath<'v>(value: &'v str, root: &str, sep: char) -> Option<&'v str> {
    let after = value.strip_prefix(root)?;
    if after.is_empty() {
        return Some("");
    }
    // A root that ends with its separator (`/C:/`) already has it.
    if root.ends_with(sep) {
        return Some(after);
    }
    after.strip_prefix(sep)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A project at `Z:\work\proj` (as Wine and azd name it) granted `.`,
    /// `localinfra` and `.azure\dev`, and a folder outside it at `D:\shared`.
    fn windows() -> PathMap {
        PathMap::new(
            [
                ("/Z:/work/proj", r"Z:\work\proj"),
                ("/Z:/work/proj/localinfra", r"Z:\work\proj\localinfra"),
                ("/Z:/work/proj/.azure/dev", r"Z:\work\proj\.azure\dev"),
                ("/D:/shared", r"D:\shared"),
            ]
            .map(|(g, n)| (g.to_owned(), n.to_owned())),
            '\\',
        )
    }

    #[test]
    fn a_grant_and_what_lies_beneath_it_reach_azd_in_windows_form() {
        let map = windows();
        for (guest, native) in [
            ("/Z:/work/proj/localinfra", r"Z:\work\proj\localinfra"),
            (
                "/Z:/work/proj/localinfra/web",
                r"Z:\work\proj\localinfra\web",
            ),
            (
                "/Z:/work/proj/localinfra/a/b.json",
                r"Z:\work\proj\localinfra\a\b.json",
            ),
            ("/Z:/work/proj", r"Z:\work\proj"),
            ("/Z:/work/proj/README.md", r"Z:\work\proj\README.md"),
            ("/D:/shared/x", r"D:\shared\x"),
            ("/Z:/work/proj/localinfra/", r"Z:\work\proj\localinfra\"),
        ] {
            assert_eq!(map.to_native(guest).as_deref(), Some(native), "{guest}");
            assert_eq!(map.to_guest(native).as_deref(), Some(guest), "{native}");
        }
        // Windows accepts `/` too.
        assert_eq!(
            map.to_guest("Z:/work/proj/localinfra/web").as_deref(),
            Some("/Z:/work/proj/localinfra/web")
        );
    }

    #[test]
    fn only_paths_in_a_grant_are_translated() {
        let map = windows();
        for value in [
            "/Z:/work/projects", // shares the grant's first characters
            "/Z:/work/proj-old/x",
            "/Z:/work", // above the grant
            "/Z:/elsewhere/file",
            "/z:/work/proj",           // another case
            "/Z:/work/proj/../secret", // climbs out
            "/Z:/work/proj/a/../../secret",
            r"/Z:/work/proj/a\..\..\x",
            "Z:/work/proj/x", // not a guest path
            "web",
            "",
            "42",
            "true",
            " /Z:/work/proj",
            "see /Z:/work/proj",
            "{not json /Z:/work/proj",
        ] {
            assert_eq!(map.to_native(value), None, "{value:?}");
        }
        for value in [
            r"Z:\work\projects",
            r"Z:\work",
            r"Z:\work\proj\..\x",
            "/Z:/work/proj",
            "C:\\x",
        ] {
            assert_eq!(map.to_guest(value), None, "{value:?}");
        }
    }

    #[test]
    fn the_deepest_grant_decides() {
        // An outside grant mounted beneath the project's guest path stands
        // for another host folder: its own pair must win.
        let map = PathMap::new(
            [
                ("/C:/p".to_owned(), r"C:\p".to_owned()),
                ("/C:/p/cache".to_owned(), r"E:\cache".to_owned()),
            ],
            '\\',
        );
        assert_eq!(
            map.to_native("/C:/p/cache/a").as_deref(),
            Some(r"E:\cache\a")
        );
        assert_eq!(
            map.to_native("/C:/p/cached").as_deref(),
            Some(r"C:\p\cached")
        );
        assert_eq!(
            map.to_guest(r"E:\cache\a").as_deref(),
            Some("/C:/p/cache/a")
        );
        // A drive's root keeps a single separator.
        let root = PathMap::new([("/C:/".to_owned(), r"C:\".to_owned())], '\\');
        assert_eq!(root.to_native("/C:/x/y").as_deref(), Some(r"C:\x\y"));
        assert_eq!(root.to_native("/C:/").as_deref(), Some(r"C:\"));
        assert_eq!(root.to_guest(r"C:\x").as_deref(), Some("/C:/x"));
    }

    #[test]
    fn json_values_have_their_paths_translated_and_nothing_else() {
        let map = windows();
        // Compact, keys in order: as the SDKs write it, and as it is written again.
        let paths = r#"{"/Z:/work/proj/k":1,"db":"/Z:/work/proj/localinfra/db.json","web":"/Z:/work/proj/localinfra/web"}"#;
        let native = map.to_native(paths).unwrap();
        let parsed: serde_json::Value = serde_json::from_str(&native).unwrap();
        assert_eq!(parsed["web"], r"Z:\work\proj\localinfra\web");
        assert_eq!(parsed["db"], r"Z:\work\proj\localinfra\db.json");
        assert_eq!(parsed["/Z:/work/proj/k"], 1, "keys stay");
        assert_eq!(map.to_guest(&native).as_deref(), Some(paths));
        let list = r#"["/D:/shared/a",["/Z:/work/proj"],"/Z:/other",7]"#;
        assert_eq!(
            map.to_native(list).as_deref(),
            Some(r#"["D:\\shared\\a",["Z:\\work\\proj"],"/Z:/other",7]"#)
        );
        // JSON with no path in a grant is left exactly as written.
        assert_eq!(map.to_native(r#"{ "a": "/Z:/other", "n": 1.50 }"#), None);
        assert_eq!(map.to_native("[1, 2]"), None);
    }

    #[test]
    fn where_both_forms_agree_nothing_changes() {
        let map = PathMap::new(
            [
                ("/home/me/proj".to_owned(), "/home/me/proj".to_owned()),
                (
                    "/home/me/proj/localinfra".to_owned(),
                    "/home/me/proj/localinfra".to_owned(),
                ),
            ],
            '/',
        );
        assert!(map.is_empty());
        for value in [
            "/home/me/proj/localinfra/web",
            r#"{"a":"/home/me/proj"}"#,
            "/home/me/proj",
        ] {
            assert_eq!(map.to_native(value), None);
            assert_eq!(map.to_guest(value), None);
        }
        let mut value = "/home/me/proj".to_owned();
        map.guest_in_place(&mut value);
        assert_eq!(value, "/home/me/proj");
    }

    #[test]
    fn in_place_translation_changes_only_what_maps() {
        let map = windows();
        let mut value = r"Z:\work\proj\localinfra".to_owned();
        map.guest_in_place(&mut value);
        assert_eq!(value, "/Z:/work/proj/localinfra");
        let mut other = r"Z:\work\projects".to_owned();
        map.guest_in_place(&mut other);
        assert_eq!(other, r"Z:\work\projects");
    }
}

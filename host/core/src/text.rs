//! Text that came from a provider, made safe for a terminal.
//!
//! Progress, error messages, suggestions, link titles, preview rows and log
//! lines written by a guest end up on the user's terminal (azd's spinner and
//! error output, the `run` report, `--debug` logs). A control character there
//! is an instruction to the terminal: ANSI/OSC escape sequences can recolour
//! or rewrite what the user sees, spoof a link (OSC 8), set the window title or
//! write to the clipboard (OSC 52); a bidi override or isolate reverses what
//! follows it on the screen, and a line separator breaks a line where the
//! terminal shows none. Every such string passes [`sanitize`]: all control
//! characters (C0, DEL, C1) are removed except newline and tab, and so is
//! every other character [`is_invisible`] names (format characters but the
//! zero-width joiner emoji sequences are made of, separators, private-use and
//! unassigned code points); the text of a sequence is left behind as
//! harmless characters.
//!
//! Text from the wire (a provider name, a request id, a project path, azd's own
//! messages) can be as long as a message may be. Quoted whole in an error, it makes
//! an answer larger than azd reads (which ends the stream) and a log line of
//! megabytes; quoted with [`quote`] (or cut with [`clip`]) it is bounded where it is
//! quoted.
//!
//! Strings a provider's author wrote for the host to show, rather than print
//! as the guest's own output (a manifest's name, grant paths, variables,
//! origins and scopes; what a signature claims; what a consent record kept),
//! follow a stricter rule, [`is_invisible`]: none of them may hold a control
//! character (tab, newline and carriage return included), a format character
//! (the bidi embeddings, overrides, isolates and marks, zero-width spaces and
//! joiners, the byte-order mark, the soft hyphen, …), a line or paragraph
//! separator, a private-use or unassigned code point: each can make a prompt
//! say something other than what the manifest asks for (erase a line, reverse
//! a path, hide a character). The manifest refuses them when it is read, and
//! what a prompt or a report quotes passes [`shown`] anyway, which writes each
//! as `\u{…}`.

use std::borrow::Cow;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};

/// Whether `c` may reach a terminal: newline and tab, and anything
/// [`is_invisible`] does not name but the zero-width joiner (emoji
/// sequences). ASCII is decided without the Unicode tables: progress messages
/// pass here one by one.
fn allowed(c: char) -> bool {
    if c.is_ascii() {
        return !c.is_ascii_control() || c == '\n' || c == '\t';
    }
    c == '\u{200d}' || !is_invisible(c)
}

/// `text` without control characters other than newline and tab. Borrows when
/// there is nothing to remove.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if text.chars().all(allowed) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.chars().filter(|c| allowed(*c)).collect())
    }
}

/// [`sanitize`] in place.
pub fn sanitize_in_place(text: &mut String) {
    if let Cow::Owned(clean) = sanitize(text) {
        *text = clean;
    }
}

/// Cuts `text` to at most `max` bytes without splitting a character.
pub fn truncate(text: &mut String, max: usize) {
    let end = text.floor_char_boundary(max);
    text.truncate(end);
}

/// The longest line of a guest's text the host keeps (a progress message, a
/// log or output line), in bytes; longer text is cut.
pub const LINE_MAX: usize = 16 * 1024;

/// A guest's text as one line for a terminal or a log: cut to [`LINE_MAX`]
/// bytes (whole characters), then without control characters but newline and
/// tab. The one bound-and-clean every guest text passes.
pub fn line(mut text: String) -> String {
    truncate(&mut text, LINE_MAX);
    sanitize_in_place(&mut text);
    text
}

/// The most of a text from the wire that [`quote`] shows, in bytes: enough to
/// recognise it.
pub const QUOTE_MAX: usize = 200;

/// The most of a message azd sent (its error's text, its suggestion) that the
/// host passes on, in bytes.
pub const AZD_MESSAGE_MAX: usize = 4 * QUOTE_MAX;

/// `text` cut to at most `max` bytes (whole characters) with `…` after the cut;
/// borrowed when it fits.
pub fn clip(text: &str, max: usize) -> Cow<'_, str> {
    if text.len() <= max {
        return Cow::Borrowed(text);
    }
    let end = text.floor_char_boundary(max.saturating_sub('…'.len_utf8()));
    Cow::Owned(format!("{}…", &text[..end]))
}

/// `text` as a message quotes text from the wire: in quotes with its control
/// characters escaped, cut to [`QUOTE_MAX`] bytes and then saying how long it was
/// (`"abc…" (2900000 bytes)`).
pub fn quote(text: &str) -> String {
    let shown = clip(text, QUOTE_MAX);
    if shown.len() == text.len() {
        format!("{shown:?}")
    } else {
        format!("{shown:?} ({} bytes)", text.len())
    }
}

/// Whether `c` must never stand unescaped in a string the host shows in a
/// prompt or a report: a control character (C0, tab, newline and carriage
/// return included, DEL, C1), a format character (Unicode category Cf: bidi
/// embeddings, overrides, isolates and marks, zero-width space and joiners,
/// word joiner, invisible operators, the byte-order mark, the soft hyphen,
/// …), a line or paragraph separator, a private-use code point, or one
/// Unicode has not assigned (noncharacters included). By Unicode's general
/// category (the `unicode-properties` tables), not a list of our own.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
            | GeneralCategory::Unassigned
    )
}

/// The first character of `text` that [`is_invisible`], with its byte offset.
pub fn find_invisible(text: &str) -> Option<(usize, char)> {
    text.char_indices().find(|(_, c)| is_invisible(*c))
}

/// `c` as Unicode names a code point: `U+202E`.
pub fn code_point(c: char) -> String {
    format!("U+{:04X}", u32::from(c))
}

/// `text` with every character that [`is_invisible`] written as `\u{…}`
/// (its code point in hex), and nothing else changed: for a line of free text
/// (a schema a report prints). Borrows when there is nothing to escape.
pub fn escape_invisible(text: &str) -> Cow<'_, str> {
    if find_invisible(text).is_none() {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        push_escaped(&mut out, c, false);
    }
    Cow::Owned(out)
}

/// Whether `c` may stand in a string [`shown`] leaves bare: ASCII letters,
/// digits and the punctuation of names, paths, addresses and URLs (`[` and
/// `]` for IPv6). No space, quote, parenthesis, comma or semicolon, so a
/// bare string cannot pass for the words or the list around it.
fn is_bare(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '.' | '-' | '_' | '/' | ':' | '+' | '@' | '{' | '}' | '[' | ']' | '~' | '%'
        )
}

/// A string from a manifest, a signature or a consent record as a prompt, a
/// refusal or a report shows it: bare when it is one plain token (ASCII
/// letters, digits and `.-_/:+@{}[]~%`: `HOME`, `.azure/{env}`,
/// `https://example.com`); otherwise in double quotes, with `"` and `\`
/// escaped by a backslash and every character that [`is_invisible`] written
/// as `\u{…}` (`"my dir"`, `"\u{1b}[2K"`). So what the user reads is what
/// the string holds, and where it ends is never in doubt. Never cut: a
/// prompt shows a grant whole.
pub fn shown(text: &str) -> Cow<'_, str> {
    if !text.is_empty() && text.chars().all(is_bare) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        push_escaped(&mut out, c, true);
    }
    out.push('"');
    Cow::Owned(out)
}

/// Pushes `c`, written as `\u{…}` when it [`is_invisible`]; in `quoted`
/// text `"` and `\` take a backslash too.
fn push_escaped(out: &mut String, c: char, quoted: bool) {
    if is_invisible(c) {
        use std::fmt::Write as _;
        let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
    } else {
        if quoted && matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_lose_their_control_characters() {
        // OSC 8 hyperlink, OSC 52 clipboard write, CSI colour, BEL, C1 CSI.
        let hostile = "a\u{1b}]8;;https://evil.example\u{7}click\u{1b}]8;;\u{7}b\
                       \u{1b}]52;c;aGk=\u{7}\u{1b}[31mred\u{1b}[0m\u{9b}2J\r";
        let clean = sanitize(hostile);
        assert!(!clean.chars().any(char::is_control), "{clean:?}");
        assert!(clean.starts_with('a') && clean.contains("click") && clean.contains("red"));
    }

    /// What a guest prints cannot reverse, hide or break the terminal's
    /// text either: bidi overrides and isolates, zero-width spaces, line
    /// separators and private-use characters go; emoji sequences stay.
    #[test]
    fn invisible_characters_of_guest_text_are_removed_too() {
        let hostile =
            "deploy \u{202e}txt.exe\u{202c} ok\u{2066}x\u{2069}\u{200b}\u{2028}y\u{e000}\u{feff}";
        let clean = sanitize(hostile);
        assert_eq!(clean, "deploy txt.exe okxy");
        assert!(!clean.chars().any(is_invisible), "{clean:?}");
        let family = "done \u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467} \u{2705} café";
        assert!(matches!(sanitize(family), Cow::Borrowed(_)));
    }

    #[test]
    fn newline_and_tab_stay_and_clean_text_is_borrowed() {
        assert!(matches!(sanitize("one\ttwo\nthree é"), Cow::Borrowed(_)));
        assert_eq!(sanitize("x\0y\u{7f}z"), "xyz");
        let mut s = String::from("ok\u{1b}[2K");
        sanitize_in_place(&mut s);
        assert_eq!(s, "ok[2K");
    }

    #[test]
    fn quoting_is_bounded_and_says_how_long_the_text_was() {
        assert_eq!(quote("todo"), "\"todo\"");
        assert_eq!(quote("a\u{1b}]0;x\u{7}"), "\"a\\u{1b}]0;x\\u{7}\"");
        let long = "é".repeat(1_500_000); // 3 MB
        let q = quote(&long);
        assert!(q.len() < QUOTE_MAX + 32, "{}", q.len());
        assert!(q.ends_with("…\" (3000000 bytes)"), "{q}");
        assert_eq!(clip("short", 10), "short");
        assert_eq!(clip("abcdefghij", 6), "abc…");
        assert!(clip(&long, 5).len() <= 5);
    }

    #[test]
    fn a_line_is_cut_before_it_is_cleaned() {
        assert_eq!(line("a\u{1b}[2Jb".to_owned()), "a[2Jb");
        let long = line(format!("{}\u{7}", "é".repeat(LINE_MAX)));
        assert!(long.len() <= LINE_MAX, "{}", long.len());
        assert!(long.chars().all(|c| c == 'é'));
    }

    /// One of each kind the rule refuses: ESC, CR, LF, TAB, DEL, a C1 control (CSI), the bidi
    /// override, embedding, isolate and mark, the Arabic letter mark, zero-width space and
    /// joiner, word joiner, an invisible operator, the byte-order mark, the soft hyphen, the
    /// line and paragraph separators, private use (BMP and plane 15), a noncharacter and an
    /// unassigned code point.
    const INVISIBLE: &[char] = &[
        '\u{1b}',
        '\r',
        '\n',
        '\t',
        '\u{7f}',
        '\u{9b}',
        '\u{202e}',
        '\u{202a}',
        '\u{2066}',
        '\u{2069}',
        '\u{200f}',
        '\u{61c}',
        '\u{200b}',
        '\u{200d}',
        '\u{2060}',
        '\u{2064}',
        '\u{feff}',
        '\u{ad}',
        '\u{2028}',
        '\u{2029}',
        '\u{e000}',
        '\u{f0000}',
        '\u{fdd0}',
        '\u{ffff}',
        '\u{378}',
    ];

    #[test]
    fn every_control_format_separator_private_and_unassigned_character_is_invisible() {
        for c in INVISIBLE {
            assert!(is_invisible(*c), "{} passed", code_point(*c));
        }
        for visible in [
            'a', 'Z', '0', ' ', '.', '{', 'é', 'ß', 'ж', '中', 'ا', '\u{301}', '😀', '\u{a0}',
        ] {
            assert!(
                !is_invisible(visible),
                "{} was refused",
                code_point(visible)
            );
        }
        assert_eq!(code_point('\u{1b}'), "U+001B");
        assert_eq!(code_point('\u{f0000}'), "U+F0000");
        assert_eq!(find_invisible("ab\u{202e}c"), Some((2, '\u{202e}')));
        assert_eq!(find_invisible("plain é"), None);
    }

    #[test]
    fn shown_text_is_bare_only_when_plain_and_never_holds_an_invisible_character() {
        for plain in [
            "HOME",
            ".azure/{env}",
            "https://example.com:8443",
            "[::1]:8080",
            "a+b@c~d%20",
        ] {
            assert!(matches!(shown(plain), Cow::Borrowed(_)), "{plain}");
        }
        assert_eq!(shown(""), "\"\"");
        assert_eq!(shown("my dir"), "\"my dir\"");
        assert_eq!(shown("données"), "\"données\"");
        assert_eq!(shown("a\"b\\c"), "\"a\\\"b\\\\c\"");
        assert_eq!(shown("x\u{1b}[2K\ry"), "\"x\\u{1b}[2K\\u{d}y\"");
        assert_eq!(shown("gnp.\u{202e}exe"), "\"gnp.\\u{202e}exe\"");
        // A list or prose cannot be faked: a comma, a semicolon, a space, a parenthesis is quoted.
        for prose in ["HOME,PATH", "a;b", "x (read)", "`x`"] {
            assert!(shown(prose).starts_with('"'), "{prose}");
        }
        for c in INVISIBLE {
            let text = format!("a{c}b");
            let out = shown(&text);
            assert!(
                find_invisible(&out).is_none(),
                "{}: {out:?}",
                code_point(*c)
            );
            assert!(
                out.contains(&format!("\\u{{{:x}}}", u32::from(*c))),
                "{out}"
            );
            let free = escape_invisible(&text);
            assert!(
                find_invisible(&free).is_none() && free.starts_with('a'),
                "{free:?}"
            );
        }
        assert!(matches!(
            escape_invisible("{ \"a\": \"b\\n\" }"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn truncation_keeps_whole_characters() {
        let mut s = "é".repeat(10); // 20 bytes
        truncate(&mut s, 5);
        assert_eq!(s, "éé");
        let mut short = "abc".to_owned();
        truncate(&mut short, 5);
        assert_eq!(short, "abc");
    }
}

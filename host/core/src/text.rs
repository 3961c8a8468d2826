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
//! unassigned code points, default-ignorable code points), but for the blanks
//! that are not ASCII's space, which become one; the text of a sequence is
//! left behind as harmless characters.
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
//! separator, a private-use or unassigned code point, a code point Unicode
//! makes default-ignorable (variation selectors, Hangul fillers, the combining
//! grapheme joiner, tags, …: rendered as nothing), or a blank that is not
//! ASCII's space (no-break, ideographic, em, thin spaces, …, and the symbols
//! drawn without ink): each can make a prompt say something other than what
//! the manifest asks for (erase a line, reverse a path, hide a character, pass
//! two names for one). The manifest refuses them when it is read, and what a
//! prompt or a report quotes passes [`shown`] anyway, which writes each as
//! `\u{…}`.

use std::borrow::Cow;

use icu_properties::CodePointSetData;
use icu_properties::props::{DefaultIgnorableCodePoint, WhiteSpace};
use unicode_properties::{GeneralCategory, UnicodeGeneralCategory as _};

/// What of `c` may reach a terminal: newline and tab, anything
/// [`is_invisible`] does not name, and the zero-width joiner (emoji
/// sequences); a space for a blank that is not ASCII's ([`is_blank`]); nothing
/// for the rest. ASCII is decided without the Unicode tables: progress
/// messages pass here one by one.
fn on_terminal(c: char) -> Option<char> {
    if c.is_ascii() {
        return (!c.is_ascii_control() || c == '\n' || c == '\t').then_some(c);
    }
    if c == '\u{200d}' {
        return Some(c);
    }
    if is_blank(c) {
        return Some(' ');
    }
    (!is_invisible(c)).then_some(c)
}

/// `text` without control characters other than newline and tab, nor any
/// other character [`is_invisible`] names but the zero-width joiner; a blank
/// that is not ASCII's space becomes one. Borrows when nothing changes.
pub fn sanitize(text: &str) -> Cow<'_, str> {
    if text.chars().all(|c| on_terminal(c) == Some(c)) {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.chars().filter_map(on_terminal).collect())
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
/// prompt or a report:
/// - a control character (C0, tab, newline and carriage return included,
///   DEL, C1), a format character (Unicode category Cf: bidi embeddings,
///   overrides, isolates and marks, zero-width space and joiners, word
///   joiner, invisible operators, the byte-order mark, the soft hyphen, …), a
///   line or paragraph separator, a private-use code point, or one Unicode
///   has not assigned (noncharacters included): by general category (the
///   `unicode-properties` tables);
/// - a code point with Unicode's `Default_Ignorable_Code_Point` property,
///   which a font without support for it renders as nothing (variation
///   selectors, the Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, the
///   combining grapheme joiner U+034F, the Khmer inherent vowels U+17B4 and
///   U+17B5, the Mongolian selectors, tags U+E0000–U+E0FFF, …): by Unicode's
///   data as ICU4X ships it (`icu_properties`);
/// - a character with Unicode's `White_Space` property outside ASCII (the
///   no-break and ideographic spaces, …), and the other blanks [`is_blank`]
///   names.
///
/// No list of our own but the two symbols [`is_blank`] names.
pub fn is_invisible(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    matches!(
        c.general_category(),
        GeneralCategory::Control
            | GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
            | GeneralCategory::PrivateUse
            | GeneralCategory::Surrogate
            | GeneralCategory::Unassigned
    ) || CodePointSetData::new::<DefaultIgnorableCodePoint>().contains(c)
        || CodePointSetData::new::<WhiteSpace>().contains(c)
        || is_blank(c)
}

/// Whether `c` is a blank that is not ASCII's space: a space separator
/// (Unicode category Zs, all of which have the `White_Space` property) outside
/// ASCII (the no-break space, the Ogham space mark, the en to hair spaces
/// U+2000–U+200A, the narrow no-break and medium mathematical spaces, the
/// ideographic space U+3000), or one of the two symbols drawn with no ink at
/// all, U+2800 BRAILLE PATTERN BLANK and U+1D159 MUSICAL SYMBOL NULL NOTEHEAD.
/// (The Hangul fillers, letters that render blank, are default-ignorable, so
/// [`is_invisible`] already.) On a terminal such a blank becomes a plain space
/// ([`sanitize`]); in a manifest it is refused: two names that differ only in
/// it read the same.
pub fn is_blank(c: char) -> bool {
    !c.is_ascii()
        && (c.general_category() == GeneralCategory::SpaceSeparator
            || matches!(c, '\u{2800}' | '\u{1d159}'))
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
            'a', 'Z', '0', ' ', '.', '{', 'é', 'ß', 'ж', '中', 'ا', '\u{301}', '😀',
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

    /// Unicode 16's `Default_Ignorable_Code_Point` (DerivedCoreProperties.txt), whole.
    const DEFAULT_IGNORABLE: &[(u32, u32)] = &[
        (0xAD, 0xAD),
        (0x34F, 0x34F),
        (0x61C, 0x61C),
        (0x115F, 0x1160),
        (0x17B4, 0x17B5),
        (0x180B, 0x180F),
        (0x200B, 0x200F),
        (0x202A, 0x202E),
        (0x2060, 0x206F),
        (0x3164, 0x3164),
        (0xFE00, 0xFE0F),
        (0xFEFF, 0xFEFF),
        (0xFFA0, 0xFFA0),
        (0xFFF0, 0xFFF8),
        (0x1BCA0, 0x1BCA3),
        (0x1D173, 0x1D17A),
        (0xE0000, 0xE0FFF),
    ];
    /// Unicode 16's `White_Space` (PropList.txt) outside ASCII.
    const NON_ASCII_WHITE_SPACE: &[(u32, u32)] = &[
        (0x85, 0x85),
        (0xA0, 0xA0),
        (0x1680, 0x1680),
        (0x2000, 0x200A),
        (0x2028, 0x2029),
        (0x202F, 0x202F),
        (0x205F, 0x205F),
        (0x3000, 0x3000),
    ];

    fn listed(ranges: &[(u32, u32)], c: char) -> bool {
        ranges
            .iter()
            .any(|(from, to)| (*from..=*to).contains(&u32::from(c)))
    }

    /// What renders as nothing, or as a blank that is not an ASCII space, is refused too: every
    /// code point of Unicode's lists, and the symbols drawn without ink; ASCII's space is not.
    #[test]
    fn every_default_ignorable_code_point_and_blank_is_invisible() {
        let mut refused = 0;
        for c in (0..=0x10_FFFF_u32).filter_map(char::from_u32) {
            if listed(DEFAULT_IGNORABLE, c)
                || listed(NON_ASCII_WHITE_SPACE, c)
                || matches!(c, '\u{2800}' | '\u{1d159}')
            {
                assert!(is_invisible(c), "{} passed", code_point(c));
                assert_eq!(find_invisible(&format!("a{c}")), Some((1, c)));
                refused += 1;
            }
        }
        assert!(refused > 4_000, "{refused}");
        // The data the rule reads is Unicode's own: its default-ignorable set is the list above.
        let data = CodePointSetData::new::<DefaultIgnorableCodePoint>();
        for c in (0..=0x10_FFFF_u32).filter_map(char::from_u32) {
            assert_eq!(
                data.contains(c),
                listed(DEFAULT_IGNORABLE, c),
                "{}",
                code_point(c)
            );
        }
        // What the attack used, one by one.
        for c in [
            '\u{34f}',
            '\u{115f}',
            '\u{1160}',
            '\u{3164}',
            '\u{ffa0}',
            '\u{17b4}',
            '\u{180b}',
            '\u{fe0f}',
            '\u{e0101}',
            '\u{a0}',
            '\u{3000}',
            '\u{2800}',
        ] {
            assert!(is_invisible(c), "{} passed", code_point(c));
        }
        for visible in [' ', 'a', '한', 'ㄱ', '⠁', '\u{1d15a}', '😀', 'ก', '\u{e47}'] {
            assert!(
                !is_invisible(visible),
                "{} was refused",
                code_point(visible)
            );
        }
    }

    /// Guest text on a terminal: default-ignorable characters go (but the zero-width joiner of
    /// emoji sequences), blanks that are not ASCII's become a plain space.
    #[test]
    fn guest_text_loses_ignorable_characters_and_its_blanks_become_spaces() {
        let hostile = "ok\u{34f}\u{3164}\u{ffa0}\u{115f}\u{17b4}\u{180b}\u{fe0f}\u{e0101}!";
        assert_eq!(sanitize(hostile), "ok!");
        assert_eq!(sanitize("10\u{a0}MB\u{3000}\u{2800}done"), "10 MB  done");
        let clean = sanitize("a\u{2003}b\u{205f}c\u{1680}d");
        assert_eq!(clean, "a b c d");
        assert!(
            !clean.chars().any(|c| c != '\u{200d}' && is_invisible(c)),
            "{clean:?}"
        );
        let family = "\u{1f468}\u{200d}\u{1f469}\u{200d}\u{1f467}";
        assert_eq!(sanitize(family), family);
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

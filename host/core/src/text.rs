//! Text that came from a provider, made safe for a terminal.
//!
//! Progress, error messages, suggestions, link titles, preview rows and log
//! lines written by a guest end up on the user's terminal (azd's spinner and
//! error output, the `run` report, `--debug` logs). A control character there
//! is an instruction to the terminal: ANSI/OSC escape sequences can recolour
//! or rewrite what the user sees, spoof a link (OSC 8), set the window title or
//! write to the clipboard (OSC 52). Every such string passes [`sanitize`]: all
//! control characters (C0, DEL, C1) are removed except newline and tab, and
//! the text of a sequence is left behind as harmless characters.
//!
//! Text from the wire (a provider name, a request id, a project path, azd's own
//! messages) can be as long as a message may be. Quoted whole in an error, it makes
//! an answer larger than azd reads (which ends the stream) and a log line of
//! megabytes; quoted with [`quote`] (or cut with [`clip`]) it is bounded where it is
//! quoted.

use std::borrow::Cow;

/// Whether `c` may reach a terminal: anything but a control character, and
/// newline and tab.
fn allowed(c: char) -> bool {
    !c.is_control() || c == '\n' || c == '\t'
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

//! Test support for `property_tests`: how a generated JSON or XML text is
//! broken so that it no longer parses strictly, and how a body is put on
//! the wire (a content type, content and transfer codings, compression no
//! header names, a `binary:` mark).

use super::bodies_tests::encode_randomly;

/// The mark of the request every body answers.
pub(super) const MARK: &str = "binary: POST https://management.azure.com/s/";

/// How a JSON text is broken so that it no longer parses strictly.
pub(super) const BREAKS: [&str; 9] = [
    "lone surrogate",
    "trailing comma",
    "cut short",
    "control character",
    "single quote",
    "comment",
    "junk before",
    "two on a line",
    "stray byte",
];

/// `text` (a document) broken as `how` says, so that it no longer parses.
pub(super) fn broken(rng: &mut fastrand::Rng, text: &str, how: &str) -> Vec<u8> {
    let first = text.len() - text.trim_start().len();
    let last = text.trim_end().len() - 1;
    let inside = |rng: &mut fastrand::Rng| {
        // A place between two characters, after the document's first and
        // before its last.
        let mut at = rng.usize(first + 1..=last);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    match how {
        "trailing comma" => {
            let at = text.rfind('}').unwrap();
            format!("{},{}", &text[..at], &text[at..]).into_bytes()
        }
        "cut short" => text.as_bytes()[..inside(rng)].to_vec(),
        "control character" => {
            let at = text.find('"').unwrap() + 1;
            format!("{}\u{1}{}", &text[..at], &text[at..]).into_bytes()
        }
        "single quote" => text.replacen('"', "'", 1).into_bytes(),
        "comment" => format!("{text} // listKeys").into_bytes(),
        "junk before" => {
            let junk = ["\u{b}", "\u{0}", "\u{a0}", "\u{200b}"][rng.usize(..4)];
            format!("{junk}{text}").into_bytes()
        }
        "two on a line" => format!("{0}{0}", text.trim()).into_bytes(),
        "stray byte" => {
            let mut bytes = text.as_bytes().to_vec();
            bytes.insert(inside(rng), 0xff);
            bytes
        }
        // The surrogate is written by the writer itself.
        _ => text.as_bytes().to_vec(),
    }
}

/// How an XML text is broken so that it is no longer well-formed.
pub(super) const XML_BREAKS: [&str; 11] = [
    "doctype",
    "unclosed",
    "mismatched end",
    "unknown entity",
    "lt in attribute",
    "control character",
    "two roots",
    "no blank between attributes",
    "double hyphen in comment",
    "cut short",
    "stray byte",
];

/// `text` (an XML document whose root element `<r` starts at `root`, with
/// no attribute of its own but `xmlns:s`) broken as `how` says.
pub(super) fn broken_xml(rng: &mut fastrand::Rng, text: &str, root: usize, how: &str) -> Vec<u8> {
    // Just after the root's start tag, and its end tag's start.
    let open = root + text[root..].find('>').unwrap() + 1;
    let close = text.rfind("</r>").unwrap();
    let at = |rng: &mut fastrand::Rng| {
        let mut at = rng.usize(open..=close);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        at
    };
    let insert = |at: usize, what: &str| format!("{}{what}{}", &text[..at], &text[at..]);
    let text = match how {
        "doctype" => insert(root, "<!DOCTYPE r [<!ENTITY e \"x\">]>"),
        "unclosed" => text[..close].to_owned(),
        "mismatched end" => format!("{}</q>", &text[..close]),
        // Where no CDATA section can hold it as text.
        "unknown entity" => insert(open, "&e;"),
        "lt in attribute" => insert(root + 2, " bad=\"a<b\""),
        "control character" => insert(at(rng), "\u{1}"),
        "two roots" => format!("{text}<r/>"),
        "no blank between attributes" => insert(root + 2, " a=\"1\"b=\"2\""),
        "double hyphen in comment" => insert(open, "<!-- a -- b -->"),
        "cut short" => text[..at(rng).max(open)].to_owned(),
        _ => {
            let mut bytes = text.as_bytes().to_vec();
            bytes.insert(at(rng), 0xff);
            return bytes;
        }
    };
    text.into_bytes()
}

/// A body as it goes on the wire: one of `content_types` (or none), in
/// random codings (or compressed with none named); the headers, whether the
/// compression is undeclared, and the `safe` list (`marked`: the mark).
pub(super) fn wire(
    rng: &mut fastrand::Rng,
    body: &mut Vec<u8>,
    content_types: &[&str],
    marked: bool,
    what: &mut Vec<String>,
) -> (Vec<(String, String)>, bool, Vec<String>) {
    let mut headers = Vec::new();
    let content_type = content_types[rng.usize(..content_types.len())];
    if !content_type.is_empty() {
        headers.push(("content-type".to_owned(), content_type.to_owned()));
    }
    let mut undeclared = false;
    if body.len() < 1 << 16 {
        let (coded, named) = encode_randomly(rng, body);
        match named {
            Ok(named) => headers.extend(named),
            Err(coding) => {
                undeclared = true;
                what.push(format!("{coding}, named by no header"));
            }
        }
        *body = coded;
    }
    what.push(format!("headers {headers:?}"));
    if marked {
        what.push("marked binary".into());
    }
    let safe = if marked {
        vec![MARK.to_owned()]
    } else {
        vec![]
    };
    (headers, undeclared, safe)
}

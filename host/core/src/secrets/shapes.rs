//! Credentials known by their shape: redacted wherever they stand
//! ([`scrub_shapes`]), and looked for once a recording is redacted
//! ([`find_credential`]).

use super::hex;
use super::names::REDACTED;
use super::query::sas_signatures;
use super::wrap;

/// Connection-string keys whose values are credentials (lower case, with `=`).
const CONNECTION_KEYS: &[&str] = &[
    "accountkey=",
    "sharedaccesskey=",
    "sharedaccesssignature=",
    "password=",
    "pwd=",
    "accesskey=",
    "clientsecret=",
    "secret=",
];

/// `text` with what has the shape of a credential replaced by [`REDACTED`]:
/// the value of every `sig` in a URL's query (also percent-encoded, once or
/// more, `%26sig%3D`, `%2526sig%253D`, and whatever its name's encoding,
/// `s%69g=`), user-info in URLs, JWTs, PEM private keys, the key parts of
/// connection strings and hex keys under a secret name (`"key1":"9f86…"`);
/// a JWT in base64 wrapped at 64 or 76 columns too.
pub fn scrub_shapes(text: &str) -> String {
    let unwrapped = wrap::unwrap(text);
    let joined: &str = &unwrapped.text;
    let mut ranges = Vec::new();
    let lower = joined.to_ascii_lowercase();
    let bytes = joined.as_bytes();
    sas_signatures(joined, &mut ranges);
    user_info(bytes, &mut ranges);
    connection_keys(&lower, &mut ranges);
    hex::named_keys(joined, &mut ranges);
    for (start, end, _) in jwts(bytes).into_iter().chain(private_keys(joined)) {
        ranges.push((start, end));
    }
    let ranges = ranges
        .into_iter()
        .map(|(start, end)| unwrapped.original(start, end))
        .collect();
    replace(text, ranges)
}

/// What still looks like a credential, once a recording is redacted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What it looks like (`a JWT`, `an Azure storage key`, …).
    pub kind: &'static str,
    /// Where it starts in the text (bytes).
    pub at: usize,
    /// The text found (to compare with what an author marked safe; never
    /// to be printed whole).
    pub text: String,
}

impl Finding {
    /// How a message names it without showing it: its first four characters and length.
    pub fn shown(&self) -> String {
        let head: String = self.text.chars().take(4).collect();
        format!(
            "{} ({head}…, {} characters)",
            self.kind,
            self.text.chars().count()
        )
    }
}

/// The first of [`find_credential`]'s findings in `text` that is not in one of
/// `safe` (texts an author marked as no secret; their line breaks do not count,
/// as a finding's text has none).
pub fn find_unsafe_credential(text: &str, safe: &[String]) -> Option<Finding> {
    let safe: Vec<String> = safe
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| s.replace(['\r', '\n'], ""))
        .collect();
    find_credential(text)
        .into_iter()
        .find(|f| !safe.iter().any(|s| s.contains(&f.text)))
}

/// The credentials-looking strings in `text`: a JWT, a PEM private key, a
/// connection string's key, an Azure storage key (88 characters of base64),
/// a hex key under a secret name (16 hex digits or more, digits and letters,
/// right after `key1":"`, `primaryKey=`, `<Key1>`, …), a long string of high
/// entropy (32 or more base64 characters mixing upper
/// and lower case and digits, about as random as a key). [`REDACTED`] and
/// masks (`***`) are not. Base64 wrapped at 64 or 76 columns is read as one
/// line: a finding's text is without the line breaks, its place the original's.
pub fn find_credential(text: &str) -> Vec<Finding> {
    let unwrapped = wrap::unwrap(text);
    let mut found = find_joined(&unwrapped.text);
    for f in &mut found {
        f.at = unwrapped.original(f.at, f.at).0;
    }
    found
}

/// [`find_credential`] in a text whose wrapped base64 is joined.
fn find_joined(text: &str) -> Vec<Finding> {
    let bytes = text.as_bytes();
    let mut found: Vec<Finding> = Vec::new();
    let mut push = |kind, start: usize, end: usize| {
        found.push(Finding {
            kind,
            at: start,
            text: text.get(start..end).unwrap_or_default().to_owned(),
        });
    };
    let whole: Vec<(usize, usize, &'static str)> =
        jwts(bytes).into_iter().chain(private_keys(text)).collect();
    for &(start, end, kind) in &whole {
        push(kind, start, end);
    }
    let inside_whole =
        |start: usize, end: usize| whole.iter().any(|&(s, e, _)| start < e && end > s);
    let lower = text.to_ascii_lowercase();
    let mut keys = Vec::new();
    connection_keys(&lower, &mut keys);
    for (start, end) in keys {
        let value = text.get(start..end).unwrap_or_default();
        if !value.is_empty() && value != REDACTED && !value.bytes().all(|b| b == b'*') {
            push("a connection string's key", start, end);
        }
    }
    let mut hex_keys = Vec::new();
    hex::named_keys(text, &mut hex_keys);
    for (start, end) in hex_keys {
        push("a hex key under a secret name", start, end);
    }
    for (start, end) in runs(bytes) {
        if inside_whole(start, end) {
            continue;
        }
        let run = &bytes[start..end];
        if run.len() == 88 && run.ends_with(b"==") {
            push("an Azure storage key", start, end);
        } else if high_entropy(run) {
            push("a high-entropy string", start, end);
        }
    }
    found.sort_by_key(|f| f.at);
    found.dedup_by_key(|f| f.at);
    found
}

/// The user-info of URLs (`scheme://user:pass@host`).
fn user_info(bytes: &[u8], ranges: &mut Vec<(usize, usize)>) {
    let mut i = 0;
    while i + 3 <= bytes.len() {
        if &bytes[i..i + 3] != b"://" {
            i += 1;
            continue;
        }
        let start = i + 3;
        let mut end = start;
        while end < bytes.len()
            && !matches!(
                bytes[end],
                b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>' | b'\\'
            )
            && !bytes[end].is_ascii_whitespace()
        {
            end += 1;
        }
        if let Some(at) = bytes[start..end].iter().rposition(|&b| b == b'@')
            && at > 0
        {
            ranges.push((start, start + at));
        }
        i = end.max(i + 3);
    }
}

/// The values of connection-string keys (up to `;`, a quote or a line's end).
fn connection_keys(lower: &str, ranges: &mut Vec<(usize, usize)>) {
    let bytes = lower.as_bytes();
    for key in CONNECTION_KEYS {
        let mut from = 0;
        while let Some(at) = lower[from..].find(key) {
            let start = from + at;
            from = start + key.len();
            // A key of its own, not the end of a longer word (`mypassword=`).
            if start > 0 && bytes[start - 1].is_ascii_alphanumeric() {
                continue;
            }
            let value_start = start + key.len();
            let mut end = value_start;
            while end < bytes.len()
                && !matches!(
                    bytes[end],
                    b';' | b'"' | b'\'' | b'\n' | b'\r' | b'<' | b'&' | b'\\'
                )
            {
                end += 1;
            }
            if end > value_start {
                ranges.push((value_start, end));
            }
        }
    }
}

fn is_b64url(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

/// JWTs: `eyJ…` `.` `…` `.` `…` in base64url.
fn jwts(bytes: &[u8]) -> Vec<(usize, usize, &'static str)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i + 3 <= bytes.len() {
        if &bytes[i..i + 3] != b"eyJ" || (i > 0 && is_b64url(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let segment = |from: usize| {
            let mut end = from;
            while end < bytes.len() && is_b64url(bytes[end]) {
                end += 1;
            }
            end
        };
        let first = segment(i);
        let second = if bytes.get(first) == Some(&b'.') {
            segment(first + 1)
        } else {
            first
        };
        if second > first + 10 && bytes.get(second) == Some(&b'.') {
            let third = segment(second + 1);
            found.push((i, third, "a JWT"));
            i = third;
        } else {
            i = first.max(i + 1);
        }
    }
    found
}

/// PEM private keys, `-----BEGIN … PRIVATE KEY-----` to its end line (or the text's end).
fn private_keys(text: &str) -> Vec<(usize, usize, &'static str)> {
    let mut found = Vec::new();
    let mut from = 0;
    while let Some(at) = text[from..].find("-----BEGIN ") {
        let start = from + at;
        let header_end = text[start + 11..].find("-----").map(|e| start + 11 + e + 5);
        let Some(header_end) = header_end else { break };
        if !text[start..header_end].contains("PRIVATE KEY") {
            from = header_end;
            continue;
        }
        let end = text[header_end..]
            .find("-----END ")
            .and_then(|e| {
                let end_line = header_end + e;
                text[end_line + 9..]
                    .find("-----")
                    .map(|f| end_line + 9 + f + 5)
            })
            .unwrap_or(text.len());
        found.push((start, end, "a PEM private key"));
        from = end;
    }
    found
}

/// Runs of base64 characters (`A-Za-z0-9+/_-`, with up to two `=` of padding at the end).
fn runs(bytes: &[u8]) -> Vec<(usize, usize)> {
    let in_run = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'_' | b'-');
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if !in_run(bytes[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && in_run(bytes[i]) {
            i += 1;
        }
        let mut padding = 0;
        while padding < 2 && bytes.get(i) == Some(&b'=') {
            i += 1;
            padding += 1;
        }
        out.push((start, i));
    }
    out
}

/// 32 or more characters with upper and lower case letters and digits (two
/// of each at least), as random as a key (Shannon entropy of 4.3 bits per
/// character or more). Paths (with several `/`) and words joined by `-` or
/// `_` are not.
fn high_entropy(run: &[u8]) -> bool {
    if run.len() < 32 {
        return false;
    }
    let count = |f: fn(&u8) -> bool| run.iter().filter(|b| f(b)).count();
    if count(u8::is_ascii_uppercase) < 2
        || count(u8::is_ascii_lowercase) < 2
        || count(u8::is_ascii_digit) < 2
    {
        return false;
    }
    if run.iter().filter(|&&b| b == b'/').count() > 2
        || run.iter().filter(|&&b| b == b'-' || b == b'_').count() > 3
    {
        return false;
    }
    let mut freq = [0u32; 256];
    for &b in run {
        freq[b as usize] += 1;
    }
    let n = run.len() as f64;
    let entropy: f64 = freq
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / n;
            -p * p.log2()
        })
        .sum();
    entropy >= 4.3
}

/// `text` with each of `ranges` (byte ranges on character boundaries) replaced.
fn replace(text: &str, mut ranges: Vec<(usize, usize)>) -> String {
    if ranges.is_empty() {
        return text.to_owned();
    }
    ranges.sort_unstable();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (start, end) in ranges {
        if start < last {
            last = last.max(end);
            continue;
        }
        let piece = text.get(start..end).unwrap_or_default();
        out.push_str(text.get(last..start).unwrap_or_default());
        out.push_str(if piece == REDACTED { piece } else { REDACTED });
        last = end;
    }
    out.push_str(text.get(last..).unwrap_or_default());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const JWT: &str = "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL3N0b3JhZ2UuYXp1cmUuY29tIn0.c2lnbmF0dXJl";
    const KEY: &str =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";

    #[test]
    fn shapes_are_redacted_wherever_they_stand() {
        let cases = [
            (
                "https://a.blob.core.windows.net/c/b?sv=2021&sig=abc%2Fdef&se=1",
                "https://a.blob.core.windows.net/c/b?sv=2021&sig=REDACTED&se=1",
            ),
            (
                "{\"sasUri\":\"https://a/c?sp=r&sig=xyz\"}",
                "{\"sasUri\":\"https://a/c?sp=r&sig=REDACTED\"}",
            ),
            (
                "src=https%3A%2F%2Fa%2Fc%3Fsv%3D1%26sig%3Dabc%252F%26se%3D2",
                "src=https%3A%2F%2Fa%2Fc%3Fsv%3D1%26sig%3DREDACTED%26se%3D2",
            ),
            (
                "redis://user:p%40ss@host:6379/0",
                "redis://REDACTED@host:6379/0",
            ),
            (
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc==;EndpointSuffix=x",
                "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=REDACTED;EndpointSuffix=x",
            ),
            (
                "Server=s;Password=p@ss w;Database=d",
                "Server=s;Password=REDACTED;Database=d",
            ),
            ("<a>&amp;sig=qq</a>", "<a>&amp;sig=REDACTED</a>"),
        ];
        for (text, want) in cases {
            assert_eq!(scrub_shapes(text), want, "{text}");
        }
        let out = scrub_shapes(&format!("Bearer {JWT} and more"));
        assert_eq!(out, format!("Bearer {REDACTED} and more"));
        let pem = "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\nabc\n-----END RSA PRIVATE KEY-----\ny";
        assert_eq!(scrub_shapes(pem), format!("x\n{REDACTED}\ny"));
        // Not credentials: kept as they are.
        for plain in [
            "https://a.blob.core.windows.net/c?restype=container&comp=list",
            "design=1&signal=2",
            "mypassword=x",
            "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
            "eyJhbGciOiJIUzI1NiJ9 alone",
        ] {
            assert_eq!(scrub_shapes(plain), plain);
        }
    }

    /// `text` wrapped at `width` columns with `newline`.
    fn wrapped(text: &str, width: usize, newline: &str) -> String {
        let lines: Vec<&str> = text
            .as_bytes()
            .chunks(width)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        lines.join(newline)
    }

    #[test]
    fn the_scan_and_the_shapes_read_base64_wrapped_at_64_and_76_columns() {
        let long_jwt = format!("{JWT}{}", "Q".repeat(60));
        for (width, newline) in [(64, "\n"), (64, "\r\n"), (76, "\n"), (76, "\r\n")] {
            // A JWT cut by the wrap: one JWT, its text whole, its place the original's.
            let text = format!("token: {}\nend", wrapped(&long_jwt, width, newline))
                .replacen("token: ", "token:\n", 1);
            let found = find_credential(&text);
            assert_eq!(found.len(), 1, "{width}: {found:?}");
            assert_eq!(found[0].kind, "a JWT", "{width}");
            assert_eq!(found[0].text, long_jwt);
            assert_eq!(found[0].at, text.find("eyJ").unwrap());
            // Marked safe as it reads wrapped or whole.
            assert_eq!(
                find_unsafe_credential(&text, std::slice::from_ref(&long_jwt)),
                None
            );
            let as_wrapped = wrapped(&long_jwt, width, newline);
            assert_eq!(find_unsafe_credential(&text, &[as_wrapped]), None);
            assert_eq!(scrub_shapes(&text), format!("token:\n{REDACTED}\nend"));
            // A storage key cut by the wrap is still a storage key.
            let key_alone = format!("k:\n{}", wrapped(KEY, width, newline));
            let found = find_credential(&key_alone);
            assert_eq!(found.len(), 1, "{width}: {found:?}");
            assert_eq!(
                (found[0].kind, found[0].text.as_str()),
                ("an Azure storage key", KEY)
            );
        }
    }

    #[test]
    fn a_sig_is_redacted_however_its_name_and_its_url_are_encoded() {
        for (text, want) in [
            (
                "https://a.blob.core.windows.net/c?sv=1&s%69g=abc&se=2",
                "https://a.blob.core.windows.net/c?sv=1&s%69g=REDACTED&se=2",
            ),
            (
                "src=https%253A%252F%252Fa%252Fc%253Fsv%253D1%2526sig%253Dabc%25252F%2526se%253D2",
                "src=https%253A%252F%252Fa%252Fc%253Fsv%253D1%2526sig%253DREDACTED%2526se%253D2",
            ),
        ] {
            assert_eq!(scrub_shapes(text), want, "{text}");
        }
    }

    #[test]
    fn hex_under_a_secret_name_is_found_and_redacted_but_hex_ids_are_not() {
        // Cognitive Services keys: 32 hex digits, under `key1`, `key2`, …
        let hex = "9f86d081884c7d659a2feaa0c55ad015";
        let upper = hex.to_ascii_uppercase();
        for text in [
            format!(r#"{{"key1":"{hex}","key2": "{upper}"}}"#),
            format!("<Keys><Key1>{hex}</Key1></Keys>"),
            format!("grant=x&primaryKey={hex}&y=1"),
            format!("Ocp-Apim-Subscription-Key: {upper}"),
            format!(r#"<cred name="a" client_secret='{hex}'/>"#),
            format!("apiKey = {hex}\n"),
        ] {
            let found = find_credential(&text);
            assert!(
                !found.is_empty()
                    && found
                        .iter()
                        .all(|f| f.kind == "a hex key under a secret name"),
                "{text}: {found:?}"
            );
            let out = scrub_shapes(&text);
            assert!(
                !out.contains(hex) && !out.contains(&upper) && out.contains(REDACTED),
                "{text} → {out}"
            );
            assert!(find_credential(&out).is_empty(), "{out}");
        }
        // Hex that no secret name holds: request ids, digests, etags, resource ids.
        for clean in [
            format!("x-ms-request-id: {hex}"),
            format!(r#"{{"requestId":"{hex}","etag":"0x{upper}","md5":"{hex}"}}"#),
            format!("/subscriptions/s/resourceGroups/g/providers/x/keys/{hex}"),
            format!(r#"{{"keyName":"key1","value":"REDACTED","keyId":"{hex}"}}"#),
            "key1=0000000000000000000000000000000000&key2=abcdefabcdefabcdefabcdef".to_owned(),
        ] {
            assert!(
                find_credential(&clean).is_empty(),
                "{clean}: {:?}",
                find_credential(&clean)
            );
            assert_eq!(scrub_shapes(&clean), clean);
        }
    }

    #[test]
    fn the_scan_finds_what_still_looks_like_a_credential() {
        let kinds = |text: &str| -> Vec<&'static str> {
            find_credential(text).into_iter().map(|f| f.kind).collect()
        };
        assert_eq!(kinds(&format!("token {JWT}")), ["a JWT"]);
        assert_eq!(kinds(&format!("k={KEY}")), ["an Azure storage key"]);
        assert_eq!(kinds("AccountKey=abc;x"), ["a connection string's key"]);
        assert_eq!(
            kinds("-----BEGIN PRIVATE KEY-----\nMII"),
            ["a PEM private key"]
        );
        assert_eq!(
            kinds("x 9fK2pQ7zR4mW8vL1sT6yB3nH5cJ0dG2aE8uX"),
            ["a high-entropy string"]
        );
        for clean in [
            "AccountKey=REDACTED;",
            "AccountKey=*****;",
            "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
            "id 3fa85f64-5717-4562-b3fc-2c963f66afa6",
            "x-ms-request-id: 0a1b2c3d-0000-1111-2222-333344445555",
            "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/MyGroup1/providers",
            "ThisIsAVeryLongCamelCaseIdentifierWithoutDigits",
            "Content-MD5: 1B2M2Y8AsgTpgAmY7PhCfg==",
        ] {
            assert!(
                kinds(clean).is_empty(),
                "{clean}: {:?}",
                find_credential(clean)
            );
        }
        let f = &find_credential(&format!("k={KEY}"))[0];
        assert_eq!(f.shown(), "an Azure storage key (Eby8…, 88 characters)");
        assert_eq!(f.at, 2);
    }
}

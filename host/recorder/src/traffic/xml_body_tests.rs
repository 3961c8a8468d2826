//! The attacks on redaction by element and attribute name through what a
//! lenient scanner of tags reads otherwise than an XML parser: a secret in a
//! CDATA section, a `>` in a quoted attribute value before a secret
//! attribute, text split by references and comments, a secret inside an
//! element inside a secret one; known secrets and credential shapes written
//! with XML's references; and XML that is not well-formed (a DOCTYPE that
//! declares entities among it), which is not text. Each through
//! [`Traffic::serve`](super::Traffic::serve) as the runtime calls it.

use super::LogEvent;
use super::json_body_tests::record;
use super::record_tests::{KEY1, KEY2, assert_no_key};

/// A `binary:` mark for the request `record` sends.
const MARK: &str = "binary: POST https://management.azure.com/s/";

/// `text` with XML's references read (`&amp;` and the four other named
/// ones, `&#65;`, `&#x41;`), as a reader of the XML gets its text.
fn references_read(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let end = rest.find(';').filter(|&e| e <= 12);
        let name = end.map(|e| &rest[1..e]).unwrap_or_default();
        let c = match name {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => name.strip_prefix('#').and_then(|n| {
                let n = match n.strip_prefix('x') {
                    Some(hex) => u32::from_str_radix(hex, 16).ok(),
                    None => n.parse().ok(),
                };
                n.and_then(char::from_u32)
            }),
        };
        match (c, end) {
            (Some(c), Some(e)) => {
                out.push(c);
                rest = &rest[e + 1..];
            }
            _ => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The text body of the one exchange recorded, or a panic naming what happened.
fn recorded_text(events: &[LogEvent], what: &str) -> String {
    match events {
        [LogEvent::Recorded { exchange }] => exchange
            .response
            .body
            .body
            .clone()
            .unwrap_or_else(|| panic!("{what}: not a text body")),
        other => panic!("{what}: not recorded: {other:?}"),
    }
}

/// `text` with every character written as a decimal or hex reference, in turn.
fn as_references(text: &str) -> String {
    text.chars()
        .enumerate()
        .map(|(i, c)| {
            if i % 2 == 0 {
                format!("&#{};", u32::from(c))
            } else {
                format!("&#x{:X};", u32::from(c))
            }
        })
        .collect()
}

#[tokio::test]
async fn xml_text_is_redacted_by_name_whatever_markup_carries_it() {
    let (head, tail) = KEY1.split_at(30);
    let cases = [
        format!("<Creds><Password><![CDATA[{KEY1}]]></Password></Creds>"),
        format!("<Cred note=\"a>b\" Password=\"{KEY1}\"/>"),
        format!("<r><Cred note='x>\"y' AccountKey='{KEY1}'><Name>kept</Name></Cred></r>"),
        format!("<Password>{head}<!-- c -->{tail}</Password>"),
        format!("<Password>{}</Password>", as_references(KEY1)),
        format!("<r><Password>{head}<![CDATA[{tail}]]></Password><Name>kept</Name></r>"),
        format!("<ConnectionString><Part>{KEY1}</Part></ConnectionString>"),
        format!("<ConnectionString><Part Value=\"{KEY1}\"/></ConnectionString>"),
        format!("<s:Envelope xmlns:s=\"urn:x\"><s:Password>{KEY1}</s:Password></s:Envelope>"),
        format!(
            "<?xml version=\"1.0\"?><UserDelegationKey><SignedOid>o</SignedOid>\
             <Value><![CDATA[{KEY1}]]></Value></UserDelegationKey>"
        ),
        format!("<Key value=\"{KEY1}\"><Part>{KEY1}</Part></Key>"),
    ];
    for body in cases {
        for content_type in ["application/xml", "text/xml; charset=utf-8", ""] {
            let headers: Vec<(&str, &str)> = [("content-type", content_type)]
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .collect();
            let what = format!("{body} ({content_type:?})");
            let (bytes, events) = record(&[], &[], &headers, body.clone().into_bytes()).await;
            let text = recorded_text(&events, &what);
            assert_no_key(&bytes, &what);
            assert_no_key(references_read(&text).as_bytes(), &what);
            assert!(text.contains("REDACTED"), "{what}: {text}");
            if body.contains("<Name>kept</Name>") {
                assert!(text.contains("<Name>kept</Name>"), "{what}: {text}");
            }
        }
    }
    // A listing as storage answers it (Azurite's, from the examples' cassettes) keeps its text.
    let listing = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?><EnumerationResults \
                   ServiceEndpoint=\"http://127.0.0.1:10000/devstoreaccount1\"><Prefix/><MaxResults>5000\
                   </MaxResults><Containers><Container><Name>uploads</Name><Properties><Last-Modified>\
                   Fri, 04 Dec 2026 01:30:29 GMT</Last-Modified><Etag>\"0x2065856A41509E0\"</Etag>\
                   <LeaseStatus>unlocked</LeaseStatus></Properties></Container></Containers>\
                   <NextMarker/></EnumerationResults>";
    let headers = [("content-type", "application/xml")];
    let (_, events) = record(&[], &[], &headers, listing.as_bytes().to_vec()).await;
    assert_eq!(recorded_text(&events, listing), listing);
}

#[tokio::test]
async fn known_secrets_and_shapes_written_with_xml_references_never_reach_the_recording() {
    let known = "granted-env-value-0001";
    let cases = [
        "<r><Note>granted&#45;env&#x2D;value&#45;0001</Note></r>".to_owned(),
        "<r><A v=\"granted&#x2d;env-value&#x2D;0001\"/></r>".to_owned(),
        format!("<r><Note>{}</Note></r>", as_references(known)),
        // A SAS whose `sig` is spelled with a reference, in text and in an attribute.
        "<r><Url>https://a.blob.core.windows.net/c?sv=1&amp;s&#105;g=zzsecretsig</Url></r>"
            .to_owned(),
        "<r><Link href=\"https://a/c?sv=1&amp;&#115;ig=zzsecretsig\"/></r>".to_owned(),
        // A connection string's key behind references.
        format!("<r><Conn>AccountName=a;Account&#75;ey={KEY2}</Conn></r>"),
    ];
    for body in cases {
        let (bytes, events) = record(&[], &[known], &[], body.clone().into_bytes()).await;
        let text = recorded_text(&events, &body);
        let logged = String::from_utf8_lossy(&bytes);
        for seen in [logged.as_ref(), &text, &references_read(&text)] {
            for secret in [known, "zzsecretsig", &KEY2[..40]] {
                assert!(!seen.contains(secret), "{body}: {secret} in {seen}");
            }
        }
    }
}

#[tokio::test]
async fn xml_that_is_not_well_formed_is_not_text_and_is_refused_without_advising_a_mark() {
    let cases = [
        format!("<!DOCTYPE r [<!ENTITY e \"x\">]><r><Password>&e;</Password><A>{KEY1}</A></r>"),
        format!("<r><Password>{KEY1}</r>"),
        format!("<r><Password>{KEY1}</Passwort></r>"),
        format!("<r><A>{KEY1}</A></r><Password>x</Password>"),
        format!("<r><Password>&secret;{KEY1}</Password></r>"),
        format!("<r a=\"<\" Password=\"{KEY1}\"/>"),
        format!("<r Password=\"{KEY1}\"Name=\"x\"/>"),
        format!("<r Password=\"x\" Password=\"{KEY1}\"/>"),
        format!("<r><!-- {KEY1} -- --><A/></r>"),
        format!("<r>\u{1}<Password>{KEY1}</Password></r>"),
        format!("<r><Password>{KEY1}</Password>"),
        format!("<r><Password>{KEY1}&#0;</Password></r>"),
        format!("<r><Password>{KEY1}</Password></r>trailing"),
        format!("<?xml version=\"1.1\"?><r><Password>{KEY1}</Password></r>"),
    ];
    for body in cases {
        for content_type in ["application/xml", ""] {
            let headers: Vec<(&str, &str)> = [("content-type", content_type)]
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .collect();
            let what = format!("{body} ({content_type:?})");
            let (bytes, events) = record(&[], &[], &headers, body.clone().into_bytes()).await;
            assert_no_key(&bytes, &what);
            let [LogEvent::Refused { why, .. }] = events.as_slice() else {
                panic!("{what}: not refused: {events:?}")
            };
            assert!(
                why.contains("is not well-formed XML")
                    && why.contains("cannot keep")
                    && !why.contains("binary:"),
                "{what}: {why}"
            );
            // Marked safe, it is kept only with every known value masked.
            let (bytes, events) =
                record(&[MARK], &[KEY1], &headers, body.clone().into_bytes()).await;
            assert_no_key(&bytes, &what);
            assert!(
                matches!(events.as_slice(), [LogEvent::Recorded { .. }]),
                "{what}: {events:?}"
            );
        }
    }
    // Well-formed, with what XML allows around the root, it is text.
    let body = "\u{feff}<?xml version='1.0' encoding='UTF-8' standalone=\"yes\"?>\n<!-- c -->\
                <?pi data?><r a='1' b = \"&lt;&#x41;&#65;\"><![CDATA[<x>]]>&amp;<e/></r>\n";
    let (_, events) = record(&[], &[], &[], body.as_bytes().to_vec()).await;
    assert_eq!(recorded_text(&events, body), body);
}

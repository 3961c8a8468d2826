//! Codings undone before a recording redacts a body: content codings
//! (`Content-Encoding`) and transfer codings (`Transfer-Encoding`, but
//! `chunked`, which the connection undid), each gzip (`x-gzip`), deflate
//! (zlib-wrapped, or raw as some servers send it), br or zstd; stacked ones
//! in reverse order (`gzip, br` is br's output of gzip's; a transfer coding
//! is applied over the content codings). The decoded body is bounded at
//! every stage, so a decompression bomb is refused rather than held in
//! memory; a body that does not decode as its headers say, or in a coding
//! none of these, is refused too (never kept as it came).
//!
//! Bytes no header names a coding of can still be compressed data:
//! [`compressed`] says so by their first bytes (or by decoding whole, or
//! past the bound), and [`undo_any`] reads them in every coding they decode
//! in, so that what they hold is looked at before a `binary:` mark keeps
//! them; one that decodes past the bound cannot be looked at whole, and
//! says so.

use std::io::Read as _;

/// A coding a recording can undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Coding {
    Gzip,
    Deflate,
    Brotli,
    Zstd,
}

impl Coding {
    pub(super) fn name(self) -> &'static str {
        match self {
            Self::Gzip => "gzip",
            Self::Deflate => "deflate",
            Self::Brotli => "br",
            Self::Zstd => "zstd",
        }
    }
}

/// Which header names a coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Header {
    Content,
    Transfer,
}

impl Header {
    fn name(self) -> &'static str {
        match self {
            Self::Content => "Content-Encoding",
            Self::Transfer => "Transfer-Encoding",
        }
    }
}

/// A coding a body is in, and the header that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Layer {
    pub(super) coding: Coding,
    pub(super) header: Header,
}

/// The codings `headers` say a body is in, in the order they were applied
/// (content codings, then transfer codings; `identity` and `chunked` left
/// out); `None` when neither `Content-Encoding` nor `Transfer-Encoding` is
/// there.
pub(super) fn codings(headers: &http::HeaderMap) -> Result<Option<Vec<Layer>>, String> {
    let mut named = false;
    let mut out = Vec::new();
    for (header, field) in [
        (Header::Content, http::header::CONTENT_ENCODING),
        (Header::Transfer, http::header::TRANSFER_ENCODING),
    ] {
        for value in headers.get_all(field) {
            named = true;
            let text = value
                .to_str()
                .map_err(|_| format!("names a `{}` that is not text", header.name()))?;
            for token in text.split(',') {
                // A transfer coding may carry parameters (`gzip;q=1` is not one, but `x; y=z` is).
                let token = token.split(';').next().unwrap_or_default().trim();
                let coding = match token.to_ascii_lowercase().as_str() {
                    "" | "identity" => continue,
                    // Undone by the connection (hyper) before the body is read.
                    "chunked" if header == Header::Transfer => continue,
                    "gzip" | "x-gzip" => Coding::Gzip,
                    "deflate" => Coding::Deflate,
                    "br" => Coding::Brotli,
                    "zstd" => Coding::Zstd,
                    _ => {
                        let kind = match header {
                            Header::Content => "content coding",
                            Header::Transfer => "transfer coding",
                        };
                        return Err(format!(
                            "is in the {kind} `{}`, which a recording cannot undo",
                            azd_wasm_host_core::text::clip(token, 40)
                        ));
                    }
                };
                out.push(Layer { coding, header });
            }
        }
    }
    Ok(named.then_some(out))
}

/// `body` with `layers` undone, last applied first; at no stage more than
/// `max` bytes (`bound` names that limit in the refusal).
pub(super) fn decode(
    body: &[u8],
    layers: &[Layer],
    max: usize,
    bound: &str,
) -> Result<Vec<u8>, String> {
    let mut current = body.to_vec();
    for &Layer { coding, header } in layers.iter().rev() {
        current = undo(&current, coding, max).map_err(|e| match e {
            Undo::TooLarge => format!(
                "decodes ({}) to more than {max} bytes ({bound}): refused as a \
                 decompression bomb would be",
                coding.name()
            ),
            Undo::Invalid(why) => format!(
                "says `{}: {}` but does not decode as it: {why}",
                header.name(),
                coding.name()
            ),
        })?;
    }
    Ok(current)
}

/// How many layers deep [`undo_any`] reads.
const LAYERS: usize = 2;

/// What `body` decodes to in each coding it decodes in, and what that
/// decodes to in turn ([`LAYERS`] deep), each named (`gzip`, `br in
/// gzip`), empty results left out; or the name of one that decodes past
/// `max` bytes: compressed data whose whole cannot be read, so cannot be
/// vetted. Each decoding is bounded by `max` on its own (a stream that is
/// no coding's fails long before, whatever is left of a shared budget).
pub(super) fn undo_any(body: &[u8], max: usize) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    // What the previous layer decoded to (places in `out`); `None`: the body.
    let mut sources: Vec<Option<usize>> = vec![None];
    for _ in 0..LAYERS {
        let start = out.len();
        for &source in &sources {
            for coding in [Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd] {
                let bytes = source.map_or(body, |i| out[i].1.as_slice());
                let name = match source {
                    Some(i) => format!("{} in {}", coding.name(), out[i].0),
                    None => coding.name().to_owned(),
                };
                match undo(bytes, coding, max) {
                    Ok(decoded) if !decoded.is_empty() => out.push((name, decoded)),
                    Ok(_) | Err(Undo::Invalid(_)) => {}
                    Err(Undo::TooLarge) => return Err(name),
                }
            }
        }
        sources = (start..out.len()).map(Some).collect();
    }
    Ok(out)
}

/// The compression `body` is in, when no header names one: by its first
/// bytes (gzip, zlib, zstd, and archives a recording does not decode: zip,
/// bzip2, xz, 7z, lz4), or, for codings without such a mark, by decoding
/// whole (raw deflate to its last byte, br) to something; a stream that
/// decodes past `max` bytes is compressed too (no stream that is no
/// coding's decodes that far), said so.
pub(super) fn compressed(body: &[u8], max: usize) -> Option<String> {
    const MAGIC: [(&[u8], &str); 7] = [
        (b"\x1f\x8b", "gzip"),
        (b"\x28\xb5\x2f\xfd", "zstd"),
        (b"PK\x03\x04", "zip"),
        (b"BZh", "bzip2"),
        (b"\xfd7zXZ\x00", "xz"),
        (b"7z\xbc\xaf\x27\x1c", "7z"),
        (b"\x04\x22\x4d\x18", "lz4"),
    ];
    if let Some((_, name)) = MAGIC.iter().find(|(magic, _)| body.starts_with(magic)) {
        return Some((*name).to_owned());
    }
    let past = |name: &str| format!("{name}, decoding to more than {max} bytes");
    if let [cmf, flg, ..] = body
        && cmf & 0x0f == 8
        && (u16::from(*cmf) << 8 | u16::from(*flg)) % 31 == 0
    {
        match bounded(flate2::read::ZlibDecoder::new(body), max) {
            Ok(d) if !d.is_empty() => return Some("deflate (zlib)".to_owned()),
            Err(Undo::TooLarge) => return Some(past("deflate (zlib)")),
            _ => {}
        }
    }
    // Raw deflate has no mark: only a stream that ends at the body's last byte.
    let mut raw = flate2::bufread::DeflateDecoder::new(body);
    match bounded(&mut raw, max) {
        Ok(d)
            if !d.is_empty() && usize::try_from(raw.total_in()).is_ok_and(|n| n == body.len()) =>
        {
            return Some("deflate".to_owned());
        }
        Err(Undo::TooLarge) => return Some(past("deflate")),
        _ => {}
    }
    match bounded(brotli::Decompressor::new(body, 4096), max) {
        Ok(d) if !d.is_empty() => Some("br".to_owned()),
        Err(Undo::TooLarge) => Some(past("br")),
        _ => None,
    }
}

/// The coding `body` says it is in by its first bytes, of those a
/// recording decodes (gzip, zstd).
pub(super) fn marked(body: &[u8]) -> Option<Coding> {
    if body.starts_with(b"\x1f\x8b") {
        Some(Coding::Gzip)
    } else if body.starts_with(b"\x28\xb5\x2f\xfd") {
        Some(Coding::Zstd)
    } else {
        None
    }
}

/// Why one coding could not be undone.
enum Undo {
    TooLarge,
    Invalid(String),
}

fn undo(body: &[u8], coding: Coding, max: usize) -> Result<Vec<u8>, Undo> {
    match coding {
        // Several members, as `gzip` may hold; anything after the last is an error.
        Coding::Gzip => bounded(flate2::read::MultiGzDecoder::new(body), max),
        // RFC 9110's deflate is zlib's format; some servers send raw deflate.
        Coding::Deflate => match bounded(flate2::read::ZlibDecoder::new(body), max) {
            Err(Undo::Invalid(_)) => bounded(flate2::read::DeflateDecoder::new(body), max),
            other => other,
        },
        Coding::Brotli => bounded(brotli::Decompressor::new(body, 4096), max),
        Coding::Zstd => zstd_frames(body, max),
    }
}

/// The largest window a frame of HTTP's `zstd` coding may ask its decoder
/// to hold (RFC 9659), what the decoder keeps before it gives a byte out.
const ZSTD_WINDOW_MAX: u64 = 8 << 20;

/// A zstd body: one frame after another (a body may hold several), at most
/// `max` bytes in all, no frame asking for a window past [`ZSTD_WINDOW_MAX`].
fn zstd_frames(mut body: &[u8], max: usize) -> Result<Vec<u8>, Undo> {
    let mut out = Vec::new();
    while !body.is_empty() {
        if let Some(window) = zstd_window(body).filter(|&w| w > ZSTD_WINDOW_MAX) {
            return Err(Undo::Invalid(format!(
                "a frame asks for a window of {window} bytes, past the {ZSTD_WINDOW_MAX} HTTP's \
                 zstd coding allows (RFC 9659)"
            )));
        }
        let decoder = ruzstd::decoding::StreamingDecoder::new(&mut body)
            .map_err(|e| Undo::Invalid(e.to_string()))?;
        let frame = bounded(decoder, max - out.len())?;
        out.extend_from_slice(&frame);
    }
    Ok(out)
}

/// The window the zstd frame at the start of `frame` declares (RFC 8878
/// 3.1.1.1): its window descriptor, or its content size when it is one
/// segment; `None` when the header is cut short.
fn zstd_window(frame: &[u8]) -> Option<u64> {
    let descriptor = *frame.get(4)?;
    if descriptor & 0x20 == 0 {
        let window = *frame.get(5)?;
        let base = 1u64 << (10 + u32::from(window >> 3));
        return Some(base + base / 8 * u64::from(window & 7));
    }
    let dictionary = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let size = [1, 2, 4, 8][usize::from(descriptor >> 6)];
    let field = frame.get(5 + dictionary..5 + dictionary + size)?;
    let value = field
        .iter()
        .rev()
        .fold(0u64, |v, &b| (v << 8) | u64::from(b));
    Some(if size == 2 { value + 256 } else { value })
}

/// Everything `reader` gives, failing past `max` bytes without holding more.
fn bounded(reader: impl std::io::Read, max: usize) -> Result<Vec<u8>, Undo> {
    let mut out = Vec::new();
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    reader
        .take(limit)
        .read_to_end(&mut out)
        .map_err(|e| Undo::Invalid(e.to_string()))?;
    if out.len() > max {
        return Err(Undo::TooLarge);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traffic::bodies_tests::encode;

    fn headers(value: &str) -> http::HeaderMap {
        let mut h = http::HeaderMap::new();
        h.insert(http::header::CONTENT_ENCODING, value.parse().unwrap());
        h
    }

    #[test]
    fn each_coding_and_a_stack_of_them_is_undone() {
        let data = b"{\"keys\":[{\"keyName\":\"key1\",\"value\":\"v\"}]}".repeat(20);
        for (coding, header) in crate::traffic::bodies_tests::CODINGS {
            let body = encode(&data, coding);
            let named = codings(&headers(header)).unwrap().unwrap();
            assert_eq!(
                decode(&body, &named, 1 << 20, "b").unwrap(),
                data,
                "{coding}"
            );
        }
        // `gzip, br`: gzip first, then br over it; undone br first.
        let stacked = encode(&encode(&data, "gzip"), "br");
        let named = codings(&headers("gzip, identity, br")).unwrap().unwrap();
        let stack: Vec<Coding> = named.iter().map(|l| l.coding).collect();
        assert_eq!(stack, [Coding::Gzip, Coding::Brotli]);
        assert_eq!(decode(&stacked, &named, 1 << 20, "b").unwrap(), data);
        // A zstd body of two frames.
        let mut frames = encode(b"first ", "zstd");
        frames.extend(encode(b"second", "zstd"));
        let named = codings(&headers("zstd")).unwrap().unwrap();
        assert_eq!(
            decode(&frames, &named, 1 << 20, "b").unwrap(),
            b"first second"
        );
        // Two header lines stack the same way.
        let mut two = headers("gzip");
        two.append(http::header::CONTENT_ENCODING, "zstd".parse().unwrap());
        let body = encode(&encode(&data, "gzip"), "zstd");
        let named = codings(&two).unwrap().unwrap();
        assert_eq!(decode(&body, &named, 1 << 20, "b").unwrap(), data);
        assert_eq!(codings(&http::HeaderMap::new()).unwrap(), None);
        assert_eq!(codings(&headers("identity")).unwrap(), Some(vec![]));
    }

    #[test]
    fn a_bomb_a_lie_and_an_unknown_coding_are_refused() {
        // 64 MiB of zeros in a few kilobytes: refused past the bound, never held whole.
        let zeros = vec![0u8; 64 << 20];
        for coding in ["gzip", "br", "zstd", "deflate"] {
            let bomb = encode(&zeros, coding);
            assert!(bomb.len() < 1 << 20, "{coding}: {}", bomb.len());
            let named = codings(&headers(coding)).unwrap().unwrap();
            let e = decode(&bomb, &named, 1 << 20, "the bound").unwrap_err();
            assert!(
                e.contains("more than 1048576 bytes (the bound)"),
                "{coding}: {e}"
            );
        }
        for coding in ["gzip", "deflate", "br", "zstd"] {
            let named = codings(&headers(coding)).unwrap().unwrap();
            let e = decode(b"{\"plain\":\"json\"}", &named, 1 << 20, "b").unwrap_err();
            assert!(
                e.starts_with(&format!(
                    "says `Content-Encoding: {coding}` but does not decode"
                )),
                "{e}"
            );
        }
        // Cut short or with a byte changed, a body is refused, never a panic.
        let data = b"{\"keys\":[{\"keyName\":\"key1\",\"value\":\"v\"}]}".repeat(40);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for coding in ["gzip", "deflate", "br", "zstd"] {
            let body = encode(&data, coding);
            let named = codings(&headers(coding)).unwrap().unwrap();
            for cut in [1, 2, body.len() / 2, body.len() - 1] {
                assert!(
                    decode(&body[..cut], &named, 1 << 20, "b").is_err(),
                    "{coding} cut at {cut}"
                );
            }
            for _ in 0..200 {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                let mut changed = body.clone();
                let at = usize::try_from(seed % body.len() as u64).unwrap();
                changed[at] ^= u8::try_from(seed >> 56).unwrap() | 1;
                // Either refused or decoded to something; never a panic.
                let _ = decode(&changed, &named, 1 << 20, "b");
            }
        }
        // A zstd frame that asks its decoder to hold 64 MiB before giving a byte out.
        let mut wide = vec![0x28, 0xb5, 0x2f, 0xfd, 0x00, 16 << 3];
        wide.extend([0u8; 16]);
        let named = codings(&headers("zstd")).unwrap().unwrap();
        let e = decode(&wide, &named, 64 << 20, "b").unwrap_err();
        assert!(
            e.contains("a window of 67108864 bytes, past the 8388608"),
            "{e}"
        );
        // The window a frame declares, both ways of declaring it.
        assert_eq!(zstd_window(&wide), Some(64 << 20));
        let small = encode(b"0123456789", "zstd");
        assert!(zstd_window(&small).is_some_and(|w| w <= ZSTD_WINDOW_MAX));
        let e = codings(&headers("compress")).unwrap_err();
        assert!(
            e.contains("`compress`, which a recording cannot undo"),
            "{e}"
        );
    }
}

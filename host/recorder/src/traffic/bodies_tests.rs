//! Test support: bodies in each content coding, as a service sends them,
//! and what a reader could get back from a stored body.

use std::io::Write as _;

use super::coding::undo_any;

/// Each coding [`encode`] makes, with the `Content-Encoding` a service names
/// it by (zlib-wrapped and raw deflate are both `deflate`; `x-gzip` is gzip).
pub(crate) const CODINGS: [(&str, &str); 6] = [
    ("gzip", "gzip"),
    ("gzip", "x-gzip"),
    ("deflate", "deflate"),
    ("raw-deflate", "deflate"),
    ("br", "br"),
    ("zstd", "zstd"),
];

/// `data` in `coding`, as a service would send it.
pub(crate) fn encode(data: &[u8], coding: &str) -> Vec<u8> {
    match coding {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "deflate" => {
            let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "raw-deflate" => {
            let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "br" => {
            let mut out = Vec::new();
            {
                let mut e = brotli::CompressorWriter::new(&mut out, 4096, 5, 22);
                e.write_all(data).unwrap();
            }
            out
        }
        "zstd" => {
            ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
        }
        other => panic!("no coding {other}"),
    }
}

/// Headers, as `(name, value)` pairs.
pub(crate) type Headers = Vec<(String, String)>;

/// `body` in random codings, and the headers that name them: a content
/// coding, a transfer coding (`…, chunked`), both, none; or `Err` with the
/// coding when it is in one no header names.
pub(crate) fn encode_randomly(
    rng: &mut fastrand::Rng,
    body: &[u8],
) -> (Vec<u8>, Result<Headers, &'static str>) {
    let codings = ["gzip", "deflate", "raw-deflate", "br", "zstd"];
    let mut body = body.to_vec();
    let mut coding = |rng: &mut fastrand::Rng| {
        let c = codings[rng.usize(..codings.len())];
        body = encode(&body, c);
        if c == "raw-deflate" { "deflate" } else { c }
    };
    let header = |name: &str, value: String| (name.to_owned(), value);
    let named = match rng.u8(..6) {
        0 => Ok(vec![header("content-encoding", coding(rng).into())]),
        1 => Ok(vec![header(
            "transfer-encoding",
            format!("{}, chunked", coding(rng)),
        )]),
        2 => {
            let inner = coding(rng);
            let outer = coding(rng);
            Ok(vec![
                header("content-encoding", inner.into()),
                header("transfer-encoding", outer.into()),
            ])
        }
        3 => Err(coding(rng)),
        _ => Ok(vec![]),
    };
    (body, named)
}

/// Everything a reader gets from `bytes`: them, and what they decode to
/// from each coding they decode from (and that in turn).
pub(crate) fn readable(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let undone = undo_any(bytes, 64 << 20).expect("what a test stores decodes within 64 MiB");
    for (_, decoded) in undone {
        out.extend(decoded);
    }
    out
}

//! Test support: bodies in each content coding, as a service sends them,
//! and what a reader could get back from a stored body.

use std::io::Write as _;

use super::coding::{Coding, decode};

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

/// Everything a reader gets from `bytes`: them, and what they decode to
/// from each coding they decode from.
pub(crate) fn readable(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for coding in [Coding::Gzip, Coding::Deflate, Coding::Brotli, Coding::Zstd] {
        out.extend(decode(bytes, &[coding], 64 << 20, "b").unwrap_or_default());
    }
    out
}

//! Mutations of real inputs: bytes (for binary formats) and text (for files
//! a user writes), a few at a time, biased towards what breaks parsers:
//! boundaries, lengths, control characters, odd Unicode.

/// Values that sit on boundaries of the encodings parsers read.
const INTERESTING_BYTES: [u8; 10] = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x0a, 0x0d, 0x22, 0x5c, 0x3d];

/// Text that breaks naive parsers: quotes, escapes, separators, odd Unicode.
const INTERESTING_TEXT: [&str; 24] = [
    "\"",
    "'",
    "\\",
    "\n",
    "\r\n",
    "\t",
    "=",
    "#",
    ":",
    "- ",
    "[",
    "]",
    "{",
    "}",
    "${",
    "$(",
    "\u{0}",
    "\u{1b}[31m",
    "\u{feff}",
    "\u{202e}",
    "é",
    "𝄞",
    "..",
    "/",
];

/// A source of mutations.
#[derive(Debug)]
pub struct Mutator {
    rng: fastrand::Rng,
}

impl Mutator {
    /// A mutator drawing from `rng`.
    pub fn new(rng: fastrand::Rng) -> Self {
        Self { rng }
    }

    /// The random source, for choices of the caller's own.
    pub fn rng(&mut self) -> &mut fastrand::Rng {
        &mut self.rng
    }

    /// `input` with one to four byte mutations, none before `keep`; the name
    /// of the last one applied.
    pub fn bytes(&mut self, input: &[u8], keep: usize) -> (Vec<u8>, &'static str) {
        let mut out = input.to_vec();
        let mut name = "as-is";
        for _ in 0..self.rng.usize(1..=4) {
            let keep = keep.min(out.len());
            name = self.bytes_once(&mut out, keep);
        }
        (out, name)
    }

    fn bytes_once(&mut self, out: &mut Vec<u8>, keep: usize) -> &'static str {
        let len = out.len();
        let at = |rng: &mut fastrand::Rng| {
            if len > keep {
                rng.usize(keep..len)
            } else {
                keep
            }
        };
        match self.rng.u8(0..8) {
            0 if len > keep => {
                let i = at(&mut self.rng);
                out[i] ^= 1 << self.rng.u8(0..8);
                "flip-bit"
            }
            1 if len > keep => {
                let i = at(&mut self.rng);
                out[i] = INTERESTING_BYTES[self.rng.usize(..INTERESTING_BYTES.len())];
                "interesting-byte"
            }
            2 => {
                let i = self.rng.usize(keep..=len);
                out.truncate(i);
                "truncate"
            }
            3 => {
                let i = self.rng.usize(keep..=len);
                let n = self.rng.usize(1..16);
                let junk: Vec<u8> = (0..n).map(|_| self.rng.u8(..)).collect();
                out.splice(i..i, junk);
                "insert-random"
            }
            4 if len > keep => {
                let i = at(&mut self.rng);
                let j = self.rng.usize(i..=len.min(i + 32));
                out.drain(i..j);
                "delete-range"
            }
            5 if len > keep => {
                let i = at(&mut self.rng);
                let j = self.rng.usize(i..=len.min(i + 64));
                let copy = out[i..j].to_vec();
                let k = self.rng.usize(keep..=out.len());
                out.splice(k..k, copy);
                "duplicate-range"
            }
            6 => {
                out.truncate(keep);
                let n = self.rng.usize(0..64);
                out.extend((0..n).map(|_| self.rng.u8(..)));
                "garbage-tail"
            }
            _ => {
                let i = self.rng.usize(keep..=len);
                let v = INTERESTING_BYTES[self.rng.usize(..INTERESTING_BYTES.len())];
                out.splice(i..i, std::iter::repeat_n(v, self.rng.usize(1..8)));
                "repeat-byte"
            }
        }
    }

    /// `input` with one to four text mutations: a line deleted, duplicated or
    /// swapped, a token of `dictionary` (or an interesting one) inserted, a
    /// character replaced, the text cut. Always valid UTF-8.
    pub fn text(&mut self, input: &str, dictionary: &[&str]) -> String {
        let mut lines: Vec<String> = input.split_inclusive('\n').map(str::to_owned).collect();
        for _ in 0..self.rng.usize(1..=4) {
            if lines.is_empty() {
                lines.push(String::new());
            }
            let n = lines.len();
            let i = self.rng.usize(..n);
            match self.rng.u8(0..7) {
                0 => {
                    lines.remove(i);
                }
                1 => {
                    let copy = lines[i].clone();
                    lines.insert(self.rng.usize(..=n), copy);
                }
                2 => lines.swap(i, self.rng.usize(..n)),
                3 | 4 => {
                    let token = if !dictionary.is_empty() && self.rng.bool() {
                        dictionary[self.rng.usize(..dictionary.len())]
                    } else {
                        INTERESTING_TEXT[self.rng.usize(..INTERESTING_TEXT.len())]
                    };
                    let at = char_boundary(&lines[i], self.rng.usize(..=lines[i].len()));
                    lines[i].insert_str(at, token);
                }
                5 => {
                    let chars: Vec<char> = lines[i].chars().collect();
                    if !chars.is_empty() {
                        let k = self.rng.usize(..chars.len());
                        let c = self.rng.char(..);
                        lines[i] = chars[..k]
                            .iter()
                            .chain([c].iter())
                            .chain(chars[k + 1..].iter())
                            .collect();
                    }
                }
                _ => {
                    let at = char_boundary(&lines[i], self.rng.usize(..=lines[i].len()));
                    lines[i].truncate(at);
                    lines.truncate(i + 1);
                }
            }
        }
        lines.concat()
    }
}

/// The nearest char boundary of `s` at or before `i`.
fn char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

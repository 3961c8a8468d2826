//! Walking azd's bytes without recursion, the way prost will read them.
//!
//! [`shape`] follows the schema into every field prost decodes as a message
//! and into every group (wire types 3 and 4, which prost skips *recursively*
//! wherever they appear as unknown fields), with an explicit stack of 12
//! bytes a level (a group key can be one byte: up to twelve times the
//! message's size, for a hostile one),
//! and measures two depths: the nesting of messages and groups, and the
//! nesting of the config (objects and lists). It refuses exactly what prost refuses
//! at the wire level (a bad key, a truncated field, an unmatched end group)
//! and accepts more (it does not check strings or wire types of known
//! fields); what it accepts prost may still refuse, but never overflows a
//! stack on.
//!
//! [`head`] reads what survives of a message that cannot be decoded: its
//! request id and the kind of its body.

use super::limits::MAX_NESTING;
use super::schema::Schema;

/// How deep a readable message nests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// The deepest config level (objects and lists).
    pub config_depth: usize,
    /// The deepest nesting of messages and groups under the root.
    pub nesting: usize,
}

/// Why bytes are not protobuf: what is wrong, and at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub what: &'static str,
    pub at: usize,
}

/// Marks "no message type" (a group) and "not a group" in a [`Frame`].
const NONE: u32 = u32::MAX;

/// One message or group being walked, in 12 bytes: the walk keeps one per
/// level, and a hostile message can nest a level every byte.
#[derive(Clone, Copy)]
struct Frame {
    /// Its type in the schema; [`NONE`] for a group (always unknown here).
    message: u32,
    /// Where its bytes end (a group ends at its end-group key instead, within this).
    end: u32,
    /// The field number of the group, which its end-group key must repeat; [`NONE`] if
    /// not a group.
    group: u32,
}

/// Walks `bytes` as a `U` (a message of this crate's schema), then decodes it; the error
/// says what was wrong (not in the schema, nested past [`MAX_NESTING`], not protobuf).
pub fn decode<U: prost::Message + prost::Name + Default>(bytes: &[u8]) -> Result<U, String> {
    let Some(root) = Schema::get().message(&U::full_name()) else {
        return Err("its type is not in this build's schema".into());
    };
    match shape(bytes, root) {
        Ok(s) if s.nesting > MAX_NESTING => Err(format!(
            "it nests {} levels deep; azd-wasm-host reads at most {MAX_NESTING}",
            s.nesting
        )),
        Ok(_) => U::decode(bytes).map_err(|e| format!("it is not valid protobuf: {e}")),
        Err(m) => Err(format!(
            "it is not valid protobuf: {} at byte {}",
            m.what, m.at
        )),
    }
}

/// Walks `bytes` as a message of type `root` (an index of [`Schema::get`]),
/// to its end: the depths it reports are exact however deep it nests.
///
/// Long on purpose: one loop of a state machine over the wire format, one arm per wire type,
/// whose every arm moves the same position, frame and stack; split, each piece would take them
/// all as arguments, on the path every message azd sends crosses.
pub fn shape(bytes: &[u8], root: usize) -> Result<Shape, Malformed> {
    let malformed = |what, at| Malformed { what, at };
    let schema = Schema::get();
    let total = u32::try_from(bytes.len()).map_err(|_| malformed("a message over 4 GiB", 0))?;
    let is_level = |m: u32| m != NONE && schema.is_config_level(m as usize);
    let mut stack: Vec<Frame> = Vec::new();
    let mut top = Frame {
        message: u32::try_from(root).unwrap_or(NONE),
        end: total,
        group: NONE,
    };
    let (mut config_depth, mut deepest) = (
        0usize,
        Shape {
            config_depth: 0,
            nesting: 0,
        },
    );
    let mut pos = 0usize;
    loop {
        if pos == top.end as usize {
            if top.group != NONE {
                return Err(malformed("a group is not closed", pos));
            }
            let Some(outer) = stack.pop() else {
                return Ok(deepest);
            };
            config_depth -= usize::from(is_level(top.message));
            top = outer;
            continue;
        }
        let at = pos;
        let end = top.end as usize;
        let (field, wire) = key(bytes, &mut pos, end).map_err(|what| malformed(what, at))?;
        let child = match wire {
            0 => varint(bytes, &mut pos, end).map(|_| None),
            1 => advance(pos, 8, end).map(|p| {
                pos = p;
                None
            }),
            5 => advance(pos, 4, end).map(|p| {
                pos = p;
                None
            }),
            2 => length(bytes, &mut pos, end).map(|field_end| {
                let known = (top.message != NONE)
                    .then(|| schema.child(top.message as usize, field))
                    .flatten();
                match known {
                    // `field_end` fits: it is within `total`.
                    Some(message) => Some(Frame {
                        message: u32::try_from(message).unwrap_or(NONE),
                        end: u32::try_from(field_end).unwrap_or(top.end),
                        group: NONE,
                    }),
                    None => {
                        pos = field_end;
                        None
                    }
                }
            }),
            3 => Ok(Some(Frame {
                message: NONE,
                end: top.end,
                group: field,
            })),
            4 if top.group == field => {
                // The enclosing frame goes on from here.
                if let Some(outer) = stack.pop() {
                    top = outer;
                }
                Ok(None)
            }
            4 => Err("an end-group key without its group"),
            _ => Err("an invalid wire type"),
        }
        .map_err(|what| malformed(what, at))?;
        if let Some(frame) = child {
            stack.push(top);
            top = frame;
            config_depth += usize::from(is_level(top.message));
            deepest.nesting = deepest.nesting.max(stack.len());
            deepest.config_depth = deepest.config_depth.max(config_depth);
        }
    }
}

/// Reads a length-delimited field's length; returns where the field ends.
fn length(bytes: &[u8], pos: &mut usize, end: usize) -> Result<usize, &'static str> {
    let len = varint(bytes, pos, end)?;
    let len = usize::try_from(len).map_err(|_| "a length larger than memory")?;
    advance(*pos, len, end)
}

/// What survives of an envelope that cannot be decoded.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Head {
    /// The first `request_id` (field 1) read, if it is text. azd writes it first.
    pub request_id: Option<String>,
    /// The number of the body's field (`message_type`, fields 2 to 20), the
    /// last one whose key was read.
    pub body_field: Option<u32>,
    /// Where that field's contents start, when its length could be read.
    pub body_contents_at: Option<usize>,
}

/// Reads the envelope's top-level fields up to the first byte that is not
/// protobuf, skipping groups.
pub fn head(bytes: &[u8]) -> Head {
    let mut head = Head::default();
    let mut groups: Vec<u32> = Vec::new();
    let mut pos = 0;
    let end = bytes.len();
    while pos < end {
        let Ok((field, wire)) = key(bytes, &mut pos, end) else {
            break;
        };
        let skipped = match wire {
            0 => varint(bytes, &mut pos, end).map(|_| ()),
            1 => advance(pos, 8, end).map(|p| pos = p),
            5 => advance(pos, 4, end).map(|p| pos = p),
            2 => {
                // The body's key names its kind even when what follows is cut short.
                let body = groups.is_empty() && (2..=20).contains(&field);
                if body {
                    head.body_field = Some(field);
                    head.body_contents_at = None;
                }
                let Ok(len) = varint(bytes, &mut pos, end) else {
                    break;
                };
                if body {
                    head.body_contents_at = Some(pos);
                }
                let Ok(at) = advance(pos, usize::try_from(len).unwrap_or(usize::MAX), end) else {
                    break;
                };
                if groups.is_empty() && field == 1 && head.request_id.is_none() {
                    head.request_id = std::str::from_utf8(&bytes[pos..at]).ok().map(str::to_owned);
                }
                pos = at;
                Ok(())
            }
            // Fields after groups this deep are no envelope field azd wrote.
            3 if groups.len() >= 64 => Err("groups too deep"),
            3 => {
                groups.push(field);
                Ok(())
            }
            4 if groups.last() == Some(&field) => {
                groups.pop();
                Ok(())
            }
            _ => Err("not protobuf"),
        };
        if skipped.is_err() {
            break;
        }
    }
    head
}

/// Reads a field key the way prost does: a varint no larger than `u32`, a
/// wire type 0–5 (6 and 7 do not exist), a field number from 1.
fn key(bytes: &[u8], pos: &mut usize, end: usize) -> Result<(u32, u8), &'static str> {
    let key = varint(bytes, pos, end)?;
    let key = u32::try_from(key).map_err(|_| "a key larger than 32 bits")?;
    let (field, wire) = (key >> 3, (key & 7) as u8);
    if wire > 5 {
        return Err("an invalid wire type");
    }
    if field == 0 {
        return Err("field number 0");
    }
    Ok((field, wire))
}

fn advance(pos: usize, len: usize, end: usize) -> Result<usize, &'static str> {
    pos.checked_add(len)
        .filter(|p| *p <= end)
        .ok_or("a field runs past the end of its message")
}

/// A varint of at most ten bytes, the tenth holding only the top bit of 64
/// (as prost and Go's protobuf read them).
fn varint(bytes: &[u8], pos: &mut usize, end: usize) -> Result<u64, &'static str> {
    let mut value = 0u64;
    for i in 0..10 {
        let Some(&byte) = bytes.get(*pos).filter(|_| *pos < end) else {
            return Err("a truncated varint");
        };
        *pos += 1;
        if i == 9 && byte > 1 {
            return Err("a varint longer than 64 bits");
        }
        value |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a varint longer than 64 bits")
}

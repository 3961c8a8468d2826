//! How deep a message azd sends may nest and still be decoded.

/// The deepest `infra.config` read, in levels of nested objects and lists.
pub const MAX_CONFIG_DEPTH: usize = 1000;

/// The deepest nesting of messages and groups decoded: room for a config at
/// [`MAX_CONFIG_DEPTH`] (three levels per object: `Struct`, its map entry,
/// `Value`) under the envelope, the request and its options. The threads that
/// decode have stacks sized for it.
pub const MAX_NESTING: usize = 3 * MAX_CONFIG_DEPTH + 16;

//! How large a message azd sends may be, and how deep it may nest and still
//! be decoded.

/// Maximum size of one gRPC message in either direction, as azd configures it (4 MiB).
pub const MAX_MESSAGE_BYTES: usize = 4 * 1024 * 1024;

/// The deepest `infra.config` read, in levels of nested objects and lists.
pub const MAX_CONFIG_DEPTH: usize = 1000;

/// The deepest nesting of messages and groups decoded: room for a config at
/// [`MAX_CONFIG_DEPTH`] (three levels per object: `Struct`, its map entry,
/// `Value`) under the envelope, the request and its options. The threads that
/// decode have stacks sized for it.
pub const MAX_NESTING: usize = 3 * MAX_CONFIG_DEPTH + 16;

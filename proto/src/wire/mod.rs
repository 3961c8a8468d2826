//! Reading azd's bytes safely, whatever they hold.
//!
//! Our prost is built without its recursion limit, so that a config as deep as
//! azd may send is read; the price is that prost recurses once per level of
//! nested messages and of unknown groups (wire types 3 and 4, which it skips
//! recursively), and a hostile message could nest deep enough to overflow a
//! thread's stack. Every message read from azd is therefore walked first,
//! without recursion, by [`shape`] (which follows the schema protoc described,
//! [`Schema`]), and only decoded when it nests no deeper than
//! [`MAX_NESTING`]:
//!
//! - the provisioning stream's envelopes by the host's `inbound` module, which
//!   also answers what it cannot read;
//! - every unary response (environment, prompt, extension services) by
//!   [`GuardedCodec`], the codec the generated clients use (`client` feature).

mod limits;
mod schema;
mod walk;

#[cfg(feature = "client")]
mod codec;

#[cfg(feature = "client")]
pub use codec::{GuardedCodec, GuardedDecoder};
pub use limits::{MAX_CONFIG_DEPTH, MAX_NESTING};
pub use schema::Schema;
pub use walk::{Head, Malformed, Shape, head, shape};

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

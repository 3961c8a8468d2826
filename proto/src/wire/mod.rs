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
pub use limits::{MAX_CONFIG_DEPTH, MAX_MESSAGE_BYTES, MAX_NESTING};
pub use schema::Schema;
pub use walk::{Head, Malformed, Shape, decode, head, shape};

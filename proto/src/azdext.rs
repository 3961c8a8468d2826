//! Messages generated from `azdext/*.proto` (plain prost structs), and with the
//! `client` feature the tonic clients of azd's services. Generated at build
//! time; nothing hand-written lives here.

include!(concat!(env!("OUT_DIR"), "/messages/azdext.rs"));

#[cfg(feature = "client")]
include!(concat!(env!("OUT_DIR"), "/client/azdext.rs"));

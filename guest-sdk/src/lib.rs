//! guest sdk

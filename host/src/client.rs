//! TODO: client

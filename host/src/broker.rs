//! TODO: broker

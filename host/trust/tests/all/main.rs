//! The trust crate's tests, one target: signatures and consent (`trust`),
//! and the administrator's ceiling (`ceiling`).

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed unwrap is a failed test"
)]

mod ceiling;
mod trust;

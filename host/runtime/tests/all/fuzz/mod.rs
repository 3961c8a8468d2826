//! The fuzz campaigns, each a test named `fuzz_…` (`scripts/test.sh` runs them apart, with
//! their figures shown: `cargo test fuzz_ -- --nocapture`).

mod inputs;

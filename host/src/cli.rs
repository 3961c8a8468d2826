//! Command line (clap) of the azd-wasm-host binary.

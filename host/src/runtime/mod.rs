//! The WebAssembly provider runtime.

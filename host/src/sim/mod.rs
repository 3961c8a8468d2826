//! A simulated azd.

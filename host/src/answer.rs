//! TODO: answer

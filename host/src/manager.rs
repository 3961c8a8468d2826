//! TODO: manager

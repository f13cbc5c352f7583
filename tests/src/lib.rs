//! Test harness helpers.

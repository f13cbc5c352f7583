//! Flint's integration tests: one binary, a module per area.

mod manifest;
mod tune_e2e;

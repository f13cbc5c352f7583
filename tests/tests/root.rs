//! Flint's integration tests: one binary, a module per area.

mod attention_bwd;
mod attention_fwd;
mod manifest;
mod mha;
mod tune_e2e;
mod wgmma;

//! Benchmark harness helpers.

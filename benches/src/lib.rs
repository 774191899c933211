//! Benchmarks for dfgnn (work in progress).

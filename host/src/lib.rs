//! dfgnn host library (work in progress).

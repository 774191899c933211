//! Property tests for dfgnn (work in progress).

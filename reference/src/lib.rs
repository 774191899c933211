//! CPU ground truth for dfgnn (work in progress).

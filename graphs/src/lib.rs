//! Graphs for dfgnn (work in progress).

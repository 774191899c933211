//! dfgnn kernels (work in progress).
#![no_std]

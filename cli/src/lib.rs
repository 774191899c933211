//! The commands of the `dfgnn` tool, as a library so that tests can call them: the main job
//! ([`run`]), timing of one model ([`mod@bench`]), the benchmark suite with its report and plots
//! ([`suite`]), the chain demo ([`demo`]), where graphs come from
//! ([`data`]) and progress on stderr ([`progress`]). The binary (`src/main.rs`) parses arguments
//! and prints.

pub mod bench;
pub mod data;
pub mod demo;
mod error;
pub mod progress;
pub mod run;
pub mod suite;

pub use error::{CliError, Result};

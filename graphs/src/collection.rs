//! graph-tool's sample networks (the `.gt.gz` files of its `collection` folder) by name.
//!
//! The files come from Debian's `python3-graph-tool` package; `scripts/fetch-graph-tool-data.sh`
//! extracts them without installing anything. Nothing is downloaded at run time: [`dir`] says
//! where to look (`$DFGNN_GRAPH_TOOL_DIR`, else the system install of graph-tool).
//! [`crate::named`] loads them as `gt-<name>`, e.g. `gt-email-Enron`.

use std::path::PathBuf;

use crate::csr::Csr;
use crate::error::{GraphError, Result};
use crate::format;

/// The environment variable naming the folder with the `.gt.gz` files.
pub const DIR_ENV: &str = "DFGNN_GRAPH_TOOL_DIR";

/// Where Debian's python3-graph-tool installs the collection.
pub const SYSTEM_DIR: &str = "/usr/lib/python3/dist-packages/graph_tool/collection";

/// One network of the collection, with its size as graph-tool 2.45 counts it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Network {
    /// The file stem (`<name>.gt.gz`).
    pub name: &'static str,
    /// Vertices.
    pub vertices: usize,
    /// Edges as graph-tool counts them: an undirected edge once (dfgnn reads it as both
    /// directions, a self loop once).
    pub edges: usize,
    /// Whether the file is directed.
    pub directed: bool,
}

const fn net(name: &'static str, vertices: usize, edges: usize, directed: bool) -> Network {
    Network { name, vertices, edges, directed }
}

/// Every network of graph-tool 2.45's collection.
pub const NETWORKS: [Network; 19] = [
    net("adjnoun", 112, 425, false),
    net("as-22july06", 22_963, 48_436, false),
    net("astro-ph", 16_706, 121_251, false),
    net("celegansneural", 297, 2_359, true),
    net("cond-mat", 16_726, 47_594, false),
    net("cond-mat-2003", 31_163, 120_029, false),
    net("cond-mat-2005", 40_421, 175_693, false),
    net("dolphins", 62, 159, false),
    net("email-Enron", 36_692, 183_831, false),
    net("football", 115, 613, false),
    net("hep-th", 8_361, 15_751, false),
    net("karate", 34, 78, false),
    net("lesmis", 77, 254, false),
    net("netscience", 1_589, 2_742, false),
    net("pgp-strong-2009", 39_796, 301_498, true),
    net("polblogs", 1_490, 19_090, true),
    net("polbooks", 105, 441, false),
    net("power", 4_941, 6_594, false),
    net("serengeti-foodweb", 161, 592, true),
];

/// The real networks with about 10^5 CSR edges or more (dfgnn's count: both directions of an
/// undirected edge), a small tuning set of real degree distributions for benchmarks.
pub const TUNING_SET: [&str; 6] =
    ["as-22july06", "astro-ph", "cond-mat-2003", "cond-mat-2005", "email-Enron", "pgp-strong-2009"];

/// The folder with the collection: `$DFGNN_GRAPH_TOOL_DIR` if set, else [`SYSTEM_DIR`].
pub fn dir() -> PathBuf {
    std::env::var_os(DIR_ENV).map_or_else(|| PathBuf::from(SYSTEM_DIR), PathBuf::from)
}

/// The network called `name`, if the collection has one.
pub fn network(name: &str) -> Option<Network> {
    NETWORKS.iter().copied().find(|n| n.name == name)
}

/// The path of a network's file in [`dir`].
pub fn path(name: &str) -> PathBuf {
    dir().join(format!("{name}.gt.gz"))
}

/// Loads a network by name.
///
/// # Errors
/// [`GraphError::InvalidParameter`] for a name outside [`NETWORKS`]; [`GraphError::Io`] when the
/// file is absent (the message says how to fetch it); the `.gt` reader's errors.
pub fn load(name: &str) -> Result<Csr> {
    if network(name).is_none() {
        let names: Vec<&str> = NETWORKS.iter().map(|n| n.name).collect();
        return Err(GraphError::param("collection::load", format!("no network {name:?}; have {}", names.join(", "))));
    }
    let file = path(name);
    if !file.is_file() {
        return Err(GraphError::io(
            file.display().to_string(),
            std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no such file: run scripts/fetch-graph-tool-data.sh and set {DIR_ENV}"),
            ),
        ));
    }
    format::read_path(&file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_known_and_the_tuning_set_is_in_the_collection() {
        assert!(TUNING_SET.iter().all(|n| network(n).is_some()));
        assert_eq!(network("karate").map(|n| n.vertices), Some(34));
        assert!(load("nope").unwrap_err().to_string().contains("email-Enron"));
    }
}

//! Reproducible benchmark graphs by name, e.g. `er-1M-d16`, `pl-1M-d16`, `batch-1024x120-d50`.

use crate::csr::Csr;
use crate::error::{GraphError, Result};
use crate::generate::{chung_lu, erdos_renyi, inject_hubs, molecule_batch, rmat, sbm_batch};
use crate::{collection, corner, format};

/// The benchmark graphs of the project (the peers' recipes, docs/peers.md).
pub const BENCHMARKS: [&str; 3] = ["er-1M-d16", "pl-1M-d16", "batch-1024x120-d50"];

/// The grammar of graph names, as printed in errors.
pub const GRAMMAR: &str = "\
graph names:
  er-<N>-d<deg>[-s<seed>][-h<k>x<D>]          Erdos-Renyi, uniform sources, mean in-degree deg
  pl-<N>-d<deg>[-g<gamma>][-s<seed>][-h<k>x<D>]  Chung-Lu power law (gamma 2.1 by default)
  rmat-s<scale>-e<ef>[-s<seed>][-h<k>x<D>]     R-MAT, Graph500 a/b/c/d, 2^scale nodes, ef*2^scale edges
  batch-<G>x<n>-d<deg>[-s<seed>]               G SBM graphs of ~n nodes, mean degree deg (PATTERN-like)
  mol-<G>[x<atoms>][-s<seed>]                  G molecule-like graphs of ~atoms (22) atoms
  corner-<name>                                a corner case: empty, single_node, single_self_loop,
                                               isolated_nodes, only_self_loops, star, random_97,
                                               random_1025, duplicates, bipartite, hubs
  gt-<network>                                 a graph-tool sample network from $DFGNN_GRAPH_TOOL_DIR,
                                               e.g. gt-email-Enron (scripts/fetch-graph-tool-data.sh)
  N, G, k, D accept the binary suffixes K (2^10), M (2^20), G (2^30); deg and gamma may be decimal;
  -h<k>x<D> turns k random rows into hubs of in-degree D; the seed defaults to 0.
  examples: er-1M-d16, pl-1M-d16, pl-64K-d8-g2.5-s3, rmat-s20-e16, batch-1024x120-d50, mol-4096";

/// A parsed graph name.
#[derive(Clone, Debug, PartialEq)]
pub enum GraphSpec {
    /// `er-<N>-d<deg>`.
    ErdosRenyi {
        /// Nodes.
        n: usize,
        /// Mean in-degree.
        degree: f64,
    },
    /// `pl-<N>-d<deg>[-g<gamma>]`.
    PowerLaw {
        /// Nodes.
        n: usize,
        /// Mean degree before deduplication.
        degree: f64,
        /// The exponent.
        gamma: f64,
    },
    /// `rmat-s<scale>-e<ef>`.
    Rmat {
        /// log2 of the node count.
        scale: u32,
        /// Edges per node.
        edge_factor: u64,
    },
    /// `batch-<G>x<n>-d<deg>`.
    SbmBatch {
        /// Number of graphs.
        graphs: usize,
        /// Nodes per graph (mean).
        nodes: usize,
        /// Mean degree.
        degree: f64,
    },
    /// `mol-<G>[x<atoms>]`.
    Molecules {
        /// Number of molecules.
        graphs: usize,
        /// Atoms per molecule (mean).
        atoms: usize,
    },
    /// `corner-<name>`.
    Corner(String),
    /// `gt-<network>`: a file of graph-tool's collection (see [`crate::collection`]).
    GraphTool(String),
}

/// A parsed name: the family with its sizes, the seed and optional hubs `(k, D)`.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedGraph {
    /// The generator and its sizes.
    pub spec: GraphSpec,
    /// The seed (0 unless `-s<seed>` is given).
    pub seed: u64,
    /// `-h<k>x<D>`: k hubs of in-degree D.
    pub hubs: Option<(usize, usize)>,
}

/// Parses a graph name without generating it.
///
/// # Errors
/// [`GraphError::UnknownName`] with the reason and the [`GRAMMAR`].
pub fn parse(name: &str) -> Result<NamedGraph> {
    let fail = |reason: String| GraphError::UnknownName { name: name.to_string(), reason, grammar: GRAMMAR };
    let mut tokens = name.split('-');
    let family = tokens.next().unwrap_or_default();
    let rest: Vec<&str> = tokens.collect();
    if family == "corner" {
        let corner_name = rest.join("-");
        if corner::by_name(&corner_name).is_none() {
            return Err(fail(format!("no corner case named {corner_name:?}")));
        }
        return Ok(NamedGraph { spec: GraphSpec::Corner(corner_name), seed: 0, hubs: None });
    }
    if family == "gt" {
        let network = rest.join("-");
        if collection::network(&network).is_none() {
            return Err(fail(format!("no graph-tool network named {network:?}")));
        }
        return Ok(NamedGraph { spec: GraphSpec::GraphTool(network), seed: 0, hubs: None });
    }
    let required = match family {
        "er" | "pl" | "rmat" | "batch" => 2,
        "mol" => 1,
        _ => return Err(fail(format!("unknown family {family:?}"))),
    };
    if rest.len() < required {
        return Err(fail(format!("{family} needs {required} size fields")));
    }
    let (sizes, options) = rest.split_at(required);
    let field = |token: &str, prefix: char| -> std::result::Result<String, String> {
        token
            .strip_prefix(prefix)
            .map(str::to_string)
            .ok_or_else(|| format!("expected {prefix}<value>, found {token:?}"))
    };
    let mut seed = 0;
    let mut gamma = None;
    let mut hubs = None;
    for &option in options {
        let (key, value) = option.split_at(option.chars().next().map_or(0, char::len_utf8));
        match key {
            "s" => seed = value.parse().map_err(|_| fail(format!("bad seed {value:?}")))?,
            "g" if family == "pl" => gamma = Some(decimal(value).map_err(fail)?),
            "h" if matches!(family, "er" | "pl" | "rmat") => {
                let (k, d) =
                    value.split_once('x').ok_or_else(|| fail(format!("hubs need h<k>x<D>, found {option:?}")))?;
                hubs = Some((count(k).map_err(fail)?, count(d).map_err(fail)?));
            }
            _ => return Err(fail(format!("unexpected field {option:?} for {family}"))),
        }
    }
    let spec = match family {
        "er" | "pl" => {
            let n = count(sizes[0]).map_err(fail)?;
            let degree = decimal(&field(sizes[1], 'd').map_err(fail)?).map_err(fail)?;
            if family == "er" {
                GraphSpec::ErdosRenyi { n, degree }
            } else {
                GraphSpec::PowerLaw { n, degree, gamma: gamma.unwrap_or(2.1) }
            }
        }
        "rmat" => {
            let scale = field(sizes[0], 's').map_err(fail)?;
            let ef = field(sizes[1], 'e').map_err(fail)?;
            GraphSpec::Rmat {
                scale: scale.parse().map_err(|_| fail(format!("bad scale {scale:?}")))?,
                edge_factor: count(&ef).map_err(fail)? as u64,
            }
        }
        "batch" => {
            let (g, n) =
                sizes[0].split_once('x').ok_or_else(|| fail(format!("batch needs <G>x<n>, found {:?}", sizes[0])))?;
            GraphSpec::SbmBatch {
                graphs: count(g).map_err(fail)?,
                nodes: count(n).map_err(fail)?,
                degree: decimal(&field(sizes[1], 'd').map_err(fail)?).map_err(fail)?,
            }
        }
        _ => {
            let (g, atoms) = sizes[0].split_once('x').unwrap_or((sizes[0], "22"));
            GraphSpec::Molecules { graphs: count(g).map_err(fail)?, atoms: count(atoms).map_err(fail)? }
        }
    };
    Ok(NamedGraph { spec, seed, hubs })
}

/// Generates the graph called `name` (see [`GRAMMAR`]); the same name always gives the same
/// graph.
///
/// # Errors
/// [`GraphError::UnknownName`] for a name outside the grammar, or the generator's error for
/// parameters outside its domain.
pub fn generate(name: &str) -> Result<Csr> {
    parse(name)?.generate()
}

/// A graph from a file path or a name: an existing file is read (as `options` say), else a name
/// of the [`GRAMMAR`] is generated; a path that does not exist and is not a name says
/// "no such file" first.
///
/// # Errors
/// [`GraphError::Io`] (`NotFound`, "no such file") for a missing file (a known graph extension
/// or a `/` in `spec`); [`GraphError::UnknownName`] for anything else outside the grammar; the
/// reader's or generator's errors.
pub fn load(spec: &str, options: &format::ReadOptions) -> Result<format::Loaded> {
    let path = std::path::Path::new(spec);
    if path.exists() {
        return format::read_path_with(path, options);
    }
    match parse(spec) {
        Ok(named) => Ok(format::Loaded { graph: named.generate()?, ids: None }),
        Err(_) if spec.contains('/') || format::detect(path).is_ok() => {
            Err(GraphError::io(spec, std::io::Error::new(std::io::ErrorKind::NotFound, "no such file")))
        }
        Err(e) => Err(e),
    }
}

impl NamedGraph {
    /// Runs the generator.
    ///
    /// # Errors
    /// The generator's error for parameters outside its domain.
    pub fn generate(&self) -> Result<Csr> {
        let seed = self.seed;
        let g = match &self.spec {
            GraphSpec::ErdosRenyi { n, degree } => erdos_renyi(*n, *degree, seed)?,
            GraphSpec::PowerLaw { n, degree, gamma } => chung_lu(*n, *degree, *gamma, seed)?,
            GraphSpec::Rmat { scale, edge_factor } => rmat(*scale, *edge_factor, seed)?,
            GraphSpec::SbmBatch { graphs, nodes, degree } => sbm_batch(*graphs, *nodes, *degree, seed)?.graph,
            GraphSpec::Molecules { graphs, atoms } => molecule_batch(*graphs, *atoms, seed)?.graph,
            GraphSpec::Corner(name) => corner::by_name(name)
                .ok_or_else(|| GraphError::param("named::generate", format!("no corner case {name:?}")))?,
            GraphSpec::GraphTool(name) => collection::load(name)?,
        };
        match self.hubs {
            Some((k, d)) => inject_hubs(&g, k, d, seed ^ 0x6875_6273),
            None => Ok(g),
        }
    }
}

/// A count with an optional binary suffix: `1024`, `64K`, `1M`, `2G`.
fn count(text: &str) -> std::result::Result<usize, String> {
    let (digits, shift) = match text.as_bytes().last() {
        Some(b'K') => (&text[..text.len() - 1], 10),
        Some(b'M') => (&text[..text.len() - 1], 20),
        Some(b'G') => (&text[..text.len() - 1], 30),
        _ => (text, 0),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|v| v.checked_mul(1 << shift))
        .and_then(|v| usize::try_from(v).ok())
        .ok_or_else(|| format!("bad count {text:?}"))
}

/// A finite, non-negative decimal number.
fn decimal(text: &str) -> std::result::Result<f64, String> {
    text.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0 && text.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
        .ok_or_else(|| format!("bad number {text:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_grammar() {
        let p = parse("pl-64K-d8.5-g2.5-s3-h2x100").unwrap();
        assert_eq!(
            p,
            NamedGraph {
                spec: GraphSpec::PowerLaw { n: 65536, degree: 8.5, gamma: 2.5 },
                seed: 3,
                hubs: Some((2, 100)),
            }
        );
        assert_eq!(parse("er-1M-d16").unwrap().spec, GraphSpec::ErdosRenyi { n: 1 << 20, degree: 16.0 });
        assert_eq!(
            parse("rmat-s20-e16-s7").unwrap(),
            NamedGraph { spec: GraphSpec::Rmat { scale: 20, edge_factor: 16 }, seed: 7, hubs: None }
        );
        assert_eq!(
            parse("batch-1024x120-d50").unwrap().spec,
            GraphSpec::SbmBatch { graphs: 1024, nodes: 120, degree: 50.0 }
        );
        assert_eq!(parse("mol-4K").unwrap().spec, GraphSpec::Molecules { graphs: 4096, atoms: 22 });
        assert_eq!(parse("mol-10x30").unwrap().spec, GraphSpec::Molecules { graphs: 10, atoms: 30 });
        assert_eq!(parse("corner-star").unwrap().spec, GraphSpec::Corner("star".into()));
        assert_eq!(parse("gt-email-Enron").unwrap().spec, GraphSpec::GraphTool("email-Enron".into()));
    }

    #[test]
    fn rejects_names_outside_the_grammar_with_the_grammar() {
        for bad in [
            "",
            "xx-1-d2",
            "er-1M",
            "er-1M-16",
            "er-1Q-d16",
            "er-1M-d-3",
            "er-1M-d16-g2",
            "pl-1M-d16-gx",
            "rmat-20-e16",
            "batch-1024-d50",
            "mol-",
            "corner-nope",
            "gt-nope",
            "er-1M-d16-s",
            "er-99999999999999999999G-d1",
            "er-1M-d16-h3",
        ] {
            let e = parse(bad).unwrap_err();
            assert!(matches!(e, GraphError::UnknownName { .. }), "{bad}: {e}");
            assert!(e.to_string().contains("rmat-s<scale>"), "{bad}: {e}");
        }
    }

    #[test]
    fn load_says_no_such_file_first() {
        let options = format::ReadOptions::default();
        for missing in ["missing.txt", "data/graph.csv", "/nonexistent/x.mtx.gz"] {
            let e = load(missing, &options).unwrap_err();
            assert!(e.to_string().starts_with(&format!("{missing}: no such file")), "{e}");
        }
        assert!(matches!(load("er-1Q-d3", &options), Err(GraphError::UnknownName { .. })));
        assert_eq!(load("er-1K-d2", &options).unwrap().graph.nnz(), 2048);
    }

    #[test]
    fn generates_small_graphs_of_every_family() {
        assert_eq!(generate("er-1K-d4").unwrap().nnz(), 4096);
        assert!(generate("pl-4K-d8").unwrap().nnz() > 20_000);
        assert_eq!(generate("rmat-s10-e4").unwrap().nnz(), 4096);
        assert_eq!(generate("batch-4x40-d10").unwrap(), generate("batch-4x40-d10-s0").unwrap());
        assert_ne!(generate("mol-8").unwrap(), generate("mol-8-s1").unwrap());
        assert_eq!(generate("corner-empty").unwrap().num_dst(), 0);
        let h = crate::GraphStats::of(&generate("er-1K-d4-h2x500").unwrap());
        assert_eq!(h.rows_above(499), 2);
        assert!(generate("batch-2x10-d20").is_err(), "degree above n - 1");
    }
}

//! A small SMILES reader for molecular graphs (atoms and bonds only; no RDKit).
//!
//! Supported: the organic subset (`B C N O P S F Cl Br I`, aromatic `b c n o p s`, `*`),
//! bracket atoms (`[nH]`, `[C@@H]`, `[N+]`, `[O-]`, `[13CH3:2]`, `[Fe+2]`, `[se]`), bonds
//! (`-`, `=`, `#`, `$`, `:`; `/` and `\` read as single), branches, ring closures (`1`-`9` and
//! `%nn`, bond order given at either end) and `.` for disconnected parts. Implicit hydrogens are
//! not added as atoms; explicit `[H]` atoms are. The graph of a molecule is undirected: every
//! bond is an edge in both directions.

use crate::csr::Csr;
use crate::error::{GraphError, Result, preview};
use crate::transform::{Batch, block_diagonal};

/// The element symbols, for validating bracket atoms.
const ELEMENTS: &[&str] = &[
    "H", "He", "Li", "Be", "B", "C", "N", "O", "F", "Ne", "Na", "Mg", "Al", "Si", "P", "S", "Cl", "Ar", "K", "Ca",
    "Sc", "Ti", "V", "Cr", "Mn", "Fe", "Co", "Ni", "Cu", "Zn", "Ga", "Ge", "As", "Se", "Br", "Kr", "Rb", "Sr", "Y",
    "Zr", "Nb", "Mo", "Tc", "Ru", "Rh", "Pd", "Ag", "Cd", "In", "Sn", "Sb", "Te", "I", "Xe", "Cs", "Ba", "La", "Ce",
    "Pr", "Nd", "Pm", "Sm", "Eu", "Gd", "Tb", "Dy", "Ho", "Er", "Tm", "Yb", "Lu", "Hf", "Ta", "W", "Re", "Os", "Ir",
    "Pt", "Au", "Hg", "Tl", "Pb", "Bi", "Po", "At", "Rn", "Fr", "Ra", "Ac", "Th", "Pa", "U", "Np", "Pu", "Am", "Cm",
    "Bk", "Cf", "Es", "Fm", "Md", "No", "Lr", "Rf", "Db", "Sg", "Bh", "Hs", "Mt", "Ds", "Rg", "Cn", "Nh", "Fl", "Mc",
    "Lv", "Ts", "Og",
];

/// The aromatic symbols allowed in brackets.
const AROMATIC: &[&str] = &["b", "c", "n", "o", "p", "s", "se", "as", "te"];

/// An atom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Atom {
    /// The element symbol, capitalised (`"C"` for both `C` and `c`; `"*"` for a wildcard).
    pub element: String,
    /// Whether it was written aromatic (lowercase).
    pub aromatic: bool,
    /// The formal charge.
    pub charge: i8,
    /// Hydrogens written inside brackets (`[nH]` gives 1); 0 for organic-subset atoms.
    pub hydrogens: u8,
    /// The isotope mass number, if given.
    pub isotope: Option<u16>,
}

/// A bond order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BondOrder {
    /// `-`, `/`, `\` or implicit between non-aromatic atoms.
    Single,
    /// `=`.
    Double,
    /// `#`.
    Triple,
    /// `$`.
    Quadruple,
    /// `:` or implicit between aromatic atoms.
    Aromatic,
}

/// A bond between atoms `a` and `b`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bond {
    /// The first atom.
    pub a: u32,
    /// The second atom.
    pub b: u32,
    /// The order.
    pub order: BondOrder,
}

/// A parsed molecule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Molecule {
    /// The atoms in SMILES order.
    pub atoms: Vec<Atom>,
    /// The bonds.
    pub bonds: Vec<Bond>,
}

impl Atom {
    /// The atomic number (`H` 1, `C` 6, ...; 0 for the wildcard `*`).
    pub fn atomic_number(&self) -> u8 {
        ELEMENTS.iter().position(|&e| e == self.element).map_or(0, |k| k as u8 + 1)
    }
}

impl Molecule {
    /// Both directions of every bond as `(destination, source, order)`, sorted by destination,
    /// then source: the edges of [`Molecule::to_csr`] in its order.
    pub fn directed_bonds(&self) -> Vec<(u32, u32, BondOrder)> {
        let mut edges: Vec<_> = self.bonds.iter().flat_map(|b| [(b.a, b.b, b.order), (b.b, b.a, b.order)]).collect();
        // Stable: a molecule built by hand with two bonds between one pair keeps their order.
        edges.sort_by_key(|&(dst, src, _)| (dst, src));
        edges
    }

    /// The undirected graph: one node per atom, every bond in both directions, rows sorted.
    pub fn to_csr(&self) -> Csr {
        let mut rows = vec![Vec::new(); self.atoms.len()];
        for (dst, src, _) in self.directed_bonds() {
            rows[dst as usize].push(src);
        }
        Csr::from_rows(self.atoms.len(), &rows).unwrap_or_else(|e| unreachable!("bonds join parsed atoms: {e}"))
    }
}

/// Parses one SMILES string.
///
/// # Errors
/// [`GraphError::Smiles`] with the byte position and what is wrong.
pub fn parse(smiles: &str) -> Result<Molecule> {
    Parser { s: smiles.as_bytes(), smiles, pos: 0, mol: Molecule::default() }.run()
}

/// Parses several SMILES strings and packs their graphs into one block-diagonal graph.
///
/// # Errors
/// The first [`GraphError::Smiles`], or [`GraphError::TooLarge`] for more than `2^32` atoms.
pub fn batch<S: AsRef<str>>(smiles: &[S]) -> Result<Batch> {
    let graphs = smiles.iter().map(|s| parse(s.as_ref()).map(|m| m.to_csr())).collect::<Result<Vec<_>>>()?;
    block_diagonal(&graphs)
}

struct Parser<'a> {
    s: &'a [u8],
    smiles: &'a str,
    pos: usize,
    mol: Molecule,
}

impl Parser<'_> {
    fn fail(&self, position: usize, message: impl Into<String>) -> GraphError {
        GraphError::Smiles { smiles: preview(self.smiles.as_bytes()), position, message: message.into() }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn run(mut self) -> Result<Molecule> {
        if self.s.is_empty() {
            return Err(self.fail(0, "empty SMILES"));
        }
        let mut prev: Option<u32> = None;
        let mut pending: Option<(BondOrder, usize)> = None;
        let mut branches: Vec<(Option<u32>, usize)> = Vec::new();
        let mut rings: [Option<(u32, Option<BondOrder>, usize)>; 100] = [None; 100];
        while let Some(c) = self.peek() {
            let at = self.pos;
            match c {
                b'-' | b'=' | b'#' | b'$' | b':' | b'/' | b'\\' => {
                    if pending.is_some() {
                        return Err(self.fail(at, "two bonds in a row"));
                    }
                    if prev.is_none() {
                        return Err(self.fail(at, "bond without a preceding atom"));
                    }
                    let order = match c {
                        b'=' => BondOrder::Double,
                        b'#' => BondOrder::Triple,
                        b'$' => BondOrder::Quadruple,
                        b':' => BondOrder::Aromatic,
                        _ => BondOrder::Single,
                    };
                    pending = Some((order, at));
                    self.pos += 1;
                }
                b'(' => {
                    if prev.is_none() || pending.is_some() {
                        return Err(self.fail(at, "branch must follow an atom"));
                    }
                    branches.push((prev, at));
                    self.pos += 1;
                }
                b')' => {
                    if pending.is_some() {
                        return Err(self.fail(at, "bond before ')'"));
                    }
                    let (p, _) = branches.pop().ok_or_else(|| self.fail(at, "unmatched ')'"))?;
                    prev = p;
                    self.pos += 1;
                }
                b'.' => {
                    if pending.is_some() || prev.is_none() {
                        return Err(self.fail(at, "'.' must separate two atoms"));
                    }
                    prev = None;
                    self.pos += 1;
                }
                b'0'..=b'9' | b'%' => {
                    let atom = prev.ok_or_else(|| self.fail(at, "ring closure without an atom"))?;
                    let number = self.ring_number()?;
                    let bond = pending.take().map(|(o, _)| o);
                    match rings[number].take() {
                        Some((other, other_bond, _)) => {
                            if other == atom {
                                return Err(self.fail(at, format!("ring {number} closes on its own atom")));
                            }
                            let order = match (bond, other_bond) {
                                (Some(a), Some(b)) if a != b => {
                                    return Err(self.fail(at, format!("ring {number} has two bond orders")));
                                }
                                (Some(a), _) | (None, Some(a)) => a,
                                (None, None) => self.default_order(other, atom),
                            };
                            self.bond(other, atom, order, at)?;
                        }
                        None => rings[number] = Some((atom, bond, at)),
                    }
                }
                _ => {
                    let atom = self.atom()?;
                    let index = self.mol.atoms.len() as u32;
                    self.mol.atoms.push(atom);
                    if let Some(p) = prev {
                        let order = match pending.take() {
                            Some((o, _)) => o,
                            None => self.default_order(p, index),
                        };
                        self.bond(p, index, order, at)?;
                    }
                    prev = Some(index);
                }
            }
        }
        if let Some((_, at)) = pending {
            return Err(self.fail(at, "bond at the end"));
        }
        if let Some(&(_, at)) = branches.last() {
            return Err(self.fail(at, "unclosed '('"));
        }
        if let Some((number, (_, _, at))) = rings.iter().enumerate().find_map(|(k, r)| r.map(|r| (k, r))) {
            return Err(self.fail(at, format!("ring {number} is never closed")));
        }
        Ok(self.mol)
    }

    /// Reads `d` or `%dd` and returns the ring number.
    fn ring_number(&mut self) -> Result<usize> {
        let at = self.pos;
        if self.peek() == Some(b'%') {
            let digits = self.s.get(at + 1..at + 3).filter(|d| d.iter().all(u8::is_ascii_digit));
            let d = digits.ok_or_else(|| self.fail(at, "'%' must be followed by two digits"))?;
            self.pos += 3;
            Ok(((d[0] - b'0') * 10 + (d[1] - b'0')) as usize)
        } else {
            self.pos += 1;
            Ok((self.s[at] - b'0') as usize)
        }
    }

    fn default_order(&self, a: u32, b: u32) -> BondOrder {
        if self.mol.atoms[a as usize].aromatic && self.mol.atoms[b as usize].aromatic {
            BondOrder::Aromatic
        } else {
            BondOrder::Single
        }
    }

    fn bond(&mut self, a: u32, b: u32, order: BondOrder, at: usize) -> Result<()> {
        if self.mol.bonds.iter().any(|x| (x.a == a && x.b == b) || (x.a == b && x.b == a)) {
            return Err(self.fail(at, format!("atoms {a} and {b} are bonded twice")));
        }
        self.mol.bonds.push(Bond { a, b, order });
        Ok(())
    }

    /// Reads one atom: organic subset or bracket.
    fn atom(&mut self) -> Result<Atom> {
        let at = self.pos;
        let c = self.s[at];
        if c == b'[' {
            return self.bracket_atom();
        }
        let two = self.s.get(at..at + 2);
        let (symbol, len) = match (c, two) {
            (b'C', Some(b"Cl")) => ("Cl", 2),
            (b'B', Some(b"Br")) => ("Br", 2),
            (b'B' | b'C' | b'N' | b'O' | b'P' | b'S' | b'F' | b'I' | b'*', _) => (&self.smiles[at..at + 1], 1),
            (b'b' | b'c' | b'n' | b'o' | b'p' | b's', _) => (&self.smiles[at..at + 1], 1),
            _ => {
                let shown = self.smiles[at..].chars().next().unwrap_or('?');
                return Err(self.fail(at, format!("unexpected character {shown:?}")));
            }
        };
        self.pos += len;
        let aromatic = symbol.as_bytes()[0].is_ascii_lowercase();
        Ok(Atom { element: capitalise(symbol), aromatic, charge: 0, hydrogens: 0, isotope: None })
    }

    /// Reads `[isotope? symbol chirality? hcount? charge? class?]`.
    fn bracket_atom(&mut self) -> Result<Atom> {
        let open = self.pos;
        let close = self.s[open..]
            .iter()
            .position(|&b| b == b']')
            .map(|k| open + k)
            .ok_or_else(|| self.fail(open, "unclosed '['"))?;
        let body = &self.smiles[open + 1..close];
        let b = body.as_bytes();
        let mut k = 0;
        let err = |k: usize, msg: &str| GraphError::Smiles {
            smiles: preview(self.smiles.as_bytes()),
            position: open + 1 + k,
            message: msg.to_string(),
        };
        let digits = |k: &mut usize| {
            let start = *k;
            while *k < b.len() && b[*k].is_ascii_digit() {
                *k += 1;
            }
            (start < *k).then(|| body[start..*k].parse::<u32>().unwrap_or(u32::MAX))
        };
        let isotope = match digits(&mut k) {
            Some(v) => Some(u16::try_from(v).map_err(|_| err(0, "isotope too large"))?),
            None => None,
        };
        let sym_start = k;
        let (element, aromatic) = if k < b.len() && b[k] == b'*' {
            k += 1;
            ("*".to_string(), false)
        } else if k < b.len() && b[k].is_ascii_uppercase() {
            k += 1;
            if k < b.len() && b[k].is_ascii_lowercase() && ELEMENTS.contains(&&body[sym_start..k + 1]) {
                k += 1;
            }
            let symbol = &body[sym_start..k];
            if !ELEMENTS.contains(&symbol) {
                return Err(err(sym_start, "unknown element"));
            }
            (symbol.to_string(), false)
        } else if k < b.len() && b[k].is_ascii_lowercase() {
            let two = body.get(k..k + 2).filter(|t| AROMATIC.contains(t));
            let len = if two.is_some() { 2 } else { 1 };
            let symbol = &body[k..(k + len).min(body.len())];
            if !AROMATIC.contains(&symbol) {
                return Err(err(k, "unknown aromatic element"));
            }
            k += len;
            (capitalise(symbol), true)
        } else {
            return Err(err(k, "missing element symbol"));
        };
        if k < b.len() && b[k] == b'@' {
            k += 1;
            if k < b.len() && b[k] == b'@' {
                k += 1;
            } else if body.get(k..k + 2).is_some_and(|t| ["TH", "AL", "SP", "TB", "OH"].contains(&t)) {
                k += 2;
                digits(&mut k).ok_or_else(|| err(k, "chirality class needs a number"))?;
            }
        }
        let mut hydrogens = 0u8;
        if k < b.len() && b[k] == b'H' {
            k += 1;
            hydrogens = match digits(&mut k) {
                Some(v) => u8::try_from(v).map_err(|_| err(k, "hydrogen count too large"))?,
                None => 1,
            };
        }
        let mut charge = 0i32;
        if k < b.len() && (b[k] == b'+' || b[k] == b'-') {
            let sign = if b[k] == b'+' { 1 } else { -1 };
            let sign_char = b[k];
            k += 1;
            let mut magnitude = 1i32;
            if let Some(v) = digits(&mut k) {
                magnitude = v.min(99) as i32;
            } else {
                while k < b.len() && b[k] == sign_char {
                    magnitude += 1;
                    k += 1;
                }
            }
            charge = sign * magnitude;
            if charge.abs() > 15 {
                return Err(err(k, "charge out of range"));
            }
        }
        if k < b.len() && b[k] == b':' {
            k += 1;
            digits(&mut k).ok_or_else(|| err(k, "atom class needs a number"))?;
        }
        if k != b.len() {
            return Err(err(k, "unexpected text in bracket atom"));
        }
        self.pos = close + 1;
        Ok(Atom { element, aromatic, charge: charge as i8, hydrogens, isotope })
    }
}

/// `"cl"` -> `"Cl"`.
fn capitalise(symbol: &str) -> String {
    let mut out = symbol.to_string();
    if let Some(first) = out.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edges(smiles: &str) -> Vec<(u32, u32, BondOrder)> {
        parse(smiles).unwrap().bonds.iter().map(|b| (b.a, b.b, b.order)).collect()
    }

    #[test]
    fn chains_branches_and_rings() {
        use BondOrder::*;
        assert_eq!(edges("CC(=O)O"), vec![(0, 1, Single), (1, 2, Double), (1, 3, Single)]);
        // Benzene: 6 aromatic bonds, the ring closure last.
        let benzene = edges("c1ccccc1");
        assert_eq!(benzene.len(), 6);
        assert!(benzene.iter().all(|e| e.2 == Aromatic));
        assert_eq!(benzene[5], (0, 5, Aromatic));
        assert_eq!(edges("C=1CC1"), vec![(0, 1, Single), (1, 2, Single), (0, 2, Double)]);
        assert_eq!(edges("C%12CC%12").len(), 3);
        assert_eq!(edges("[Na+].[Cl-]"), vec![]);
        assert_eq!(edges("F/C=C\\F").len(), 3);
        let g = parse("CC1C2CCC(C2)C1CN(CCO)C(=O)c1ccc(Cl)cc1").unwrap().to_csr();
        // 22 heavy atoms, 21 tree bonds and 3 ring closures (norbornane's two rings, benzene).
        assert_eq!(g.num_dst(), 22);
        assert_eq!(g.nnz(), 2 * 24);
        assert_eq!(g.symmetrize().unwrap(), g);
    }

    #[test]
    fn bracket_atoms() {
        let m = parse("[nH]1cc[13CH2:4][C@@H]1[N+](=O)[O-].[Fe+2].[se]1cccc1.[H][H]").unwrap();
        let a = &m.atoms;
        assert_eq!((a[0].element.as_str(), a[0].aromatic, a[0].hydrogens), ("N", true, 1));
        assert_eq!((a[3].isotope, a[3].hydrogens), (Some(13), 2));
        assert_eq!((a[4].element.as_str(), a[4].hydrogens), ("C", 1));
        assert_eq!((a[5].charge, a[7].charge, a[8].charge), (1, -1, 2));
        assert_eq!((a[9].element.as_str(), a[9].aromatic), ("Se", true));
        assert_eq!(a[14].element, "H");
        assert_eq!(parse("[Cl-]").unwrap().atoms[0].element, "Cl");
        assert_eq!(parse("[O--]").unwrap().atoms[0].charge, -2);
        assert_eq!(parse("[C@TH1H]").unwrap().atoms[0].hydrogens, 1);
        let numbers: Vec<u8> = parse("[H]C(Cl)(Br)[Og]*").unwrap().atoms.iter().map(Atom::atomic_number).collect();
        assert_eq!(numbers, vec![1, 6, 17, 35, 118, 0]);
    }

    #[test]
    fn directed_bonds_are_both_directions_in_csr_order() {
        use BondOrder::*;
        let m = parse("C=CC#N").unwrap();
        let edges = m.directed_bonds();
        assert_eq!(
            edges,
            vec![(0, 1, Double), (1, 0, Double), (1, 2, Single), (2, 1, Single), (2, 3, Triple), (3, 2, Triple)]
        );
        let g = m.to_csr();
        let csr: Vec<(u32, u32)> =
            (0..g.num_dst()).flat_map(|d| g.row(d).iter().map(move |&s| (d as u32, s))).collect();
        assert_eq!(csr, edges.iter().map(|&(d, s, _)| (d, s)).collect::<Vec<_>>());
    }

    #[test]
    fn malformed_smiles_name_the_position() {
        for (s, pos, needle) in [
            ("", 0, "empty"),
            ("C(C", 1, "unclosed '('"),
            ("CC)", 2, "unmatched"),
            ("C1CC", 1, "never closed"),
            ("C=", 1, "end"),
            ("=C", 0, "without"),
            ("C==C", 2, "two bonds"),
            ("CX", 1, "unexpected character"),
            ("C[Xx]", 2, "unknown element"),
            ("C[CH", 1, "unclosed '['"),
            ("[C+3x]", 4, "unexpected text"),
            ("C11", 2, "own atom"),
            ("C1CC=1C", 0, ""),
            ("C12CC12", 6, "bonded twice"),
            ("C%1C", 1, "two digits"),
            ("C.(C)", 2, "branch"),
            ("C=1CC#1", 6, "two bond orders"),
            ("[]", 1, "missing element"),
            ("Cé", 1, "unexpected character 'é'"),
        ] {
            match parse(s) {
                Err(GraphError::Smiles { position, message, .. }) if needle.is_empty() => {
                    panic!("{s:?} should parse, got {position}: {message}")
                }
                Err(GraphError::Smiles { position, message, .. }) => {
                    assert_eq!(position, pos, "{s:?}: {message}");
                    assert!(message.contains(needle), "{s:?}: {message}");
                }
                Err(e) => panic!("{s:?}: {e}"),
                Ok(_) => assert!(needle.is_empty(), "{s:?} should fail"),
            }
        }
    }

    #[test]
    fn batches_are_block_diagonal() {
        let b = batch(&["CCO", "c1ccccc1"]).unwrap();
        assert_eq!(b.graph.num_dst(), 9);
        assert_eq!(b.dst_offsets, vec![0, 3, 9]);
        assert_eq!(b.graph.row(3), &[4, 8]);
        assert!(batch(&["CCO", "C("]).is_err());
    }
}

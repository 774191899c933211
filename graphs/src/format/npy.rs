//! NumPy `.npy` arrays (format versions 1.0, 2.0 and 3.0): parsing into a typed, little-endian
//! buffer and writing.

use std::io::{self, Write};

use crate::error::{GraphError, Result};

/// The element types this crate reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    /// `bool` (`|b1`).
    Bool,
    /// Signed integers of 1, 2, 4 or 8 bytes.
    Int(usize),
    /// Unsigned integers of 1, 2, 4 or 8 bytes.
    UInt(usize),
    /// Floats of 4 or 8 bytes.
    Float(usize),
    /// Fixed-length byte strings (`|S<n>`).
    Bytes(usize),
    /// Fixed-length UCS-4 strings (`<U<n>`, n characters).
    Unicode(usize),
}

impl DType {
    /// The size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::Bool => 1,
            DType::Int(s) | DType::UInt(s) | DType::Float(s) | DType::Bytes(s) => s,
            DType::Unicode(n) => 4 * n,
        }
    }

    /// The size of the unit that byte order applies to.
    fn swap_unit(self) -> usize {
        match self {
            DType::Bool | DType::Bytes(_) => 1,
            DType::Unicode(_) => 4,
            DType::Int(s) | DType::UInt(s) | DType::Float(s) => s,
        }
    }

    /// The NumPy descriptor (little-endian).
    pub fn descr(self) -> String {
        match self {
            DType::Bool => "|b1".into(),
            DType::Int(1) => "|i1".into(),
            DType::UInt(1) => "|u1".into(),
            DType::Int(s) => format!("<i{s}"),
            DType::UInt(s) => format!("<u{s}"),
            DType::Float(s) => format!("<f{s}"),
            DType::Bytes(n) => format!("|S{n}"),
            DType::Unicode(n) => format!("<U{n}"),
        }
    }
}

/// A parsed array: element type, shape and the data in little-endian C order.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// The element type.
    pub dtype: DType,
    /// The shape (empty for a 0-d array).
    pub shape: Vec<usize>,
    /// The raw elements, little-endian, C order.
    pub data: Vec<u8>,
    /// The byte offset of the data in the `.npy` stream (for error messages).
    pub data_offset: u64,
}

/// The magic string of `.npy` files.
const MAGIC: &[u8] = b"\x93NUMPY";

/// Parses a whole `.npy` image; `name` is used in error messages.
///
/// # Errors
/// [`GraphError::Binary`] with the byte offset of the first problem.
pub fn parse(bytes: &[u8], name: &str) -> Result<Array> {
    let bad = |offset: usize, msg: String| GraphError::binary(name, offset as u64, msg);
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(bad(0, "not a .npy array (missing the \\x93NUMPY magic)".into()));
    }
    let (header_len, header_start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(bad(8, "truncated header length".into()));
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        v => return Err(bad(6, format!("unsupported .npy version {v}.{}", bytes[7]))),
    };
    let data_start = header_start + header_len;
    if bytes.len() < data_start {
        return Err(bad(bytes.len(), format!("truncated header: needs {data_start} bytes")));
    }
    let header = std::str::from_utf8(&bytes[header_start..data_start])
        .map_err(|_| bad(header_start, "header is not text".into()))?;
    let (descr, fortran, shape) = parse_header(header).map_err(|m| bad(header_start, m))?;
    let (dtype, big_endian) = parse_descr(&descr).map_err(|m| bad(header_start, m))?;
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .and_then(|c| c.checked_mul(dtype.size()))
        .ok_or_else(|| bad(header_start, format!("shape {shape:?} is too large")))?;
    let available = bytes.len() - data_start;
    if available < count {
        return Err(bad(
            bytes.len(),
            format!("truncated data: shape {shape:?} of {descr} needs {count} bytes, {available} present"),
        ));
    }
    if available > count {
        return Err(bad(data_start + count, format!("{} bytes of trailing data", available - count)));
    }
    if fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(bad(header_start, "Fortran-order arrays are not supported".into()));
    }
    let mut data = bytes[data_start..].to_vec();
    let unit = dtype.swap_unit();
    if big_endian && unit > 1 {
        data.chunks_exact_mut(unit).for_each(<[u8]>::reverse);
    }
    Ok(Array { dtype, shape, data, data_offset: data_start as u64 })
}

/// Parses the header dict: `{'descr': '<i8', 'fortran_order': False, 'shape': (3, 4), }`.
fn parse_header(header: &str) -> std::result::Result<(String, bool, Vec<usize>), String> {
    let body = header
        .trim_end_matches(['\n', ' ', '\0'])
        .strip_prefix('{')
        .and_then(|h| h.strip_suffix('}'))
        .ok_or_else(|| format!("header is not a dict: {header:?}"))?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    let mut rest = body.trim_start();
    while !rest.is_empty() {
        let (key, after) = quoted(rest).ok_or_else(|| format!("expected a quoted key at {rest:?}"))?;
        let after = after.trim_start().strip_prefix(':').ok_or("expected ':' after a key")?.trim_start();
        rest = match key {
            "descr" => {
                let (value, after) = quoted(after).ok_or("descr must be a simple type string")?;
                descr = Some(value.to_string());
                after
            }
            "fortran_order" => {
                let (value, after) = if let Some(a) = after.strip_prefix("True") {
                    (true, a)
                } else if let Some(a) = after.strip_prefix("False") {
                    (false, a)
                } else {
                    return Err("fortran_order must be True or False".into());
                };
                fortran = Some(value);
                after
            }
            "shape" => {
                let inner = after.strip_prefix('(').ok_or("shape must be a tuple")?;
                let close = inner.find(')').ok_or("unclosed shape tuple")?;
                let dims = inner[..close]
                    .split(',')
                    .map(str::trim)
                    .filter(|d| !d.is_empty())
                    .map(|d| d.trim_end_matches('L').parse::<usize>().map_err(|_| format!("bad dimension {d:?}")))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                shape = Some(dims);
                &inner[close + 1..]
            }
            other => return Err(format!("unknown header key {other:?}")),
        };
        rest = rest.trim_start();
        rest = rest.strip_prefix(',').unwrap_or(rest).trim_start();
    }
    match (descr, fortran, shape) {
        (Some(d), Some(f), Some(s)) => Ok((d, f, s)),
        _ => Err("header needs descr, fortran_order and shape".into()),
    }
}

/// Splits `'text'rest` (or with double quotes) into `text` and `rest`.
fn quoted(s: &str) -> Option<(&str, &str)> {
    let q = s.chars().next().filter(|&c| c == '\'' || c == '"')?;
    let end = s[1..].find(q)?;
    Some((&s[1..1 + end], &s[2 + end..]))
}

/// Parses a descriptor like `<i8`; returns the type and whether the data is big-endian.
fn parse_descr(descr: &str) -> std::result::Result<(DType, bool), String> {
    let bad = || format!("unsupported dtype {descr:?}");
    let mut chars = descr.chars();
    let order = chars.next().ok_or_else(bad)?;
    let big_endian = match order {
        '<' | '|' => false,
        '>' => true,
        '=' => cfg!(target_endian = "big"),
        _ => return Err(bad()),
    };
    let kind = chars.next().ok_or_else(bad)?;
    let size: usize = chars.as_str().parse().map_err(|_| bad())?;
    let dtype = match (kind, size) {
        ('b', 1) => DType::Bool,
        ('i', 1 | 2 | 4 | 8) => DType::Int(size),
        ('u', 1 | 2 | 4 | 8) => DType::UInt(size),
        ('f', 4 | 8) => DType::Float(size),
        ('S', _) => DType::Bytes(size),
        ('U', _) => DType::Unicode(size),
        _ => return Err(bad()),
    };
    Ok((dtype, big_endian))
}

impl Array {
    /// The number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The elements of an integer array as `i128` (wide enough for every integer dtype).
    fn integers(&self) -> Option<impl Iterator<Item = i128> + '_> {
        let (signed, size) = match self.dtype {
            DType::Int(s) => (true, s),
            DType::UInt(s) => (false, s),
            DType::Bool => (false, 1),
            _ => return None,
        };
        if !matches!(size, 1 | 2 | 4 | 8) {
            return None;
        }
        Some(self.data.chunks_exact(size).map(move |c| {
            let mut b = [0u8; 8];
            b[..size].copy_from_slice(c);
            let raw = u64::from_le_bytes(b);
            if signed && size < 8 {
                let shift = 64 - 8 * size as u32;
                (((raw << shift) as i64) >> shift) as i128
            } else if signed {
                raw as i64 as i128
            } else {
                raw as i128
            }
        }))
    }

    /// The elements converted to an integer type, checking each value's range.
    ///
    /// # Errors
    /// [`GraphError::Binary`] naming the first element that is not an integer in `lo..=hi` (or
    /// the dtype when it is not an integer type).
    pub fn to_ints<T: TryFrom<i128>>(&self, name: &str, lo: i128, hi: i128) -> Result<Vec<T>> {
        let Some(values) = self.integers() else {
            return Err(GraphError::binary(
                name,
                0,
                format!("expected an integer array, found {}", self.dtype.descr()),
            ));
        };
        let size = self.dtype.size() as u64;
        values
            .enumerate()
            .map(|(k, v)| if (lo..=hi).contains(&v) { T::try_from(v).map_err(|_| k) } else { Err(k) })
            .collect::<std::result::Result<Vec<T>, usize>>()
            .map_err(|k| {
                let v = self.integers().and_then(|mut it| it.nth(k)).unwrap_or_default();
                GraphError::binary(
                    name,
                    self.data_offset + k as u64 * size,
                    format!("element {k} = {v} is outside {lo}..={hi}"),
                )
            })
    }

    /// The elements as `f32` (from `f32`, or from `f64` by rounding).
    ///
    /// # Errors
    /// [`GraphError::Binary`] when the dtype is not a float type.
    pub fn to_f32(&self, name: &str) -> Result<Vec<f32>> {
        match self.dtype {
            DType::Float(4) => {
                Ok(self.data.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
            }
            DType::Float(8) => Ok(self
                .data
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f32)
                .collect()),
            _ => Err(GraphError::binary(name, 0, format!("expected a float array, found {}", self.dtype.descr()))),
        }
    }

    /// The elements of a bool (or 0/1 integer) array.
    ///
    /// # Errors
    /// [`GraphError::Binary`] for other dtypes or values.
    pub fn to_bools(&self, name: &str) -> Result<Vec<bool>> {
        Ok(self.to_ints::<u8>(name, 0, 1)?.into_iter().map(|v| v == 1).collect())
    }

    /// The text of a 0-d or 1-element string array (`|S`, `<U`), NUL padding removed.
    pub fn to_text(&self) -> Option<String> {
        match self.dtype {
            DType::Bytes(_) => Some(String::from_utf8_lossy(&self.data).trim_end_matches('\0').to_string()),
            DType::Unicode(_) => Some(
                self.data
                    .chunks_exact(4)
                    .filter_map(|c| char::from_u32(u32::from_le_bytes([c[0], c[1], c[2], c[3]])))
                    .collect::<String>()
                    .trim_end_matches('\0')
                    .to_string(),
            ),
            _ => None,
        }
    }
}

/// The `.npy` v1.0 header (or v2.0 when it does not fit) for an array, padded to 64 bytes.
pub fn header(dtype: DType, shape: &[usize]) -> Vec<u8> {
    let dims = match shape {
        [d] => format!("({d},)"),
        _ => format!("({})", shape.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")),
    };
    let dict = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {dims}, }}", dtype.descr());
    let fixed_v1 = MAGIC.len() + 4;
    let (version, fixed) = if fixed_v1 + dict.len() + 1 < 65536 { (1u8, fixed_v1) } else { (2u8, fixed_v1 + 2) };
    let total = (fixed + dict.len() + 1).next_multiple_of(64);
    let header_len = total - fixed;
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    if version == 1 {
        out.extend_from_slice(&(header_len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(header_len as u32).to_le_bytes());
    }
    out.extend_from_slice(dict.as_bytes());
    out.resize(total - 1, b' ');
    out.push(b'\n');
    out
}

/// Writes a whole `.npy` array whose little-endian data is `data`.
///
/// # Errors
/// Any I/O error of the writer.
pub fn write<W: Write>(mut w: W, dtype: DType, shape: &[usize], data: &[u8]) -> io::Result<()> {
    w.write_all(&header(dtype, shape))?;
    w.write_all(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn npy(descr: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        npy_with(descr, "False", shape, data)
    }

    fn npy_with(descr: &str, fortran: &str, shape: &str, data: &[u8]) -> Vec<u8> {
        let dict = format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}\n");
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&[1, 0]);
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out.extend_from_slice(data);
        out
    }

    #[test]
    fn parses_and_converts() {
        let a = parse(&npy("<i4", "(3,)", &[1, 0, 0, 0, 255, 255, 255, 255, 7, 0, 0, 0]), "a").unwrap();
        assert_eq!(a.shape, vec![3]);
        assert_eq!(a.to_ints::<i64>("a", -10, 10).unwrap(), vec![1, -1, 7]);
        let e = a.to_ints::<u32>("a", 0, u32::MAX as i128).unwrap_err();
        assert!(e.to_string().contains("element 1 = -1"), "{e}");
        assert!(e.to_string().contains("at byte"), "{e}");
        let b = parse(&npy(">u2", "(2,)", &[1, 2, 0, 5]), "b").unwrap();
        assert_eq!(b.to_ints::<u64>("b", 0, 1 << 20).unwrap(), vec![258, 5]);
        let s = parse(&npy("|S3", "()", b"csr"), "s").unwrap();
        assert_eq!(s.to_text().as_deref(), Some("csr"));
        let f = parse(&npy("<f8", "(1, 1)", &2.5f64.to_le_bytes()), "f").unwrap();
        assert_eq!(f.to_f32("f").unwrap(), vec![2.5]);
        assert!(f.to_ints::<i64>("f", 0, 1).is_err());
    }

    #[test]
    fn rejects_malformed_images() {
        let good = npy("<i8", "(2,)", &[0; 16]);
        for (bytes, needle) in [
            (b"garbage".to_vec(), "magic"),
            (good[..good.len() - 3].to_vec(), "truncated data"),
            ([&good[..], &[0]].concat(), "trailing"),
            (good[..20].to_vec(), "truncated header"),
            (npy("<c16", "(1,)", &[0; 16]), "unsupported dtype"),
            (npy("<i8", "(x,)", &[]), "bad dimension"),
            (npy_with("<i8", "True", "(2, 2)", &[0; 32]), "Fortran"),
            (npy_with("<i8", "Maybe", "(2,)", &[0; 16]), "True or False"),
        ] {
            let e = parse(&bytes, "bad.npy").unwrap_err();
            assert!(e.to_string().contains(needle), "{needle}: {e}");
        }
    }

    #[test]
    fn header_round_trip() {
        let data: Vec<u8> = (0..6u32).flat_map(|v| v.to_le_bytes()).collect();
        let mut out = Vec::new();
        write(&mut out, DType::UInt(4), &[2, 3], &data).unwrap();
        assert_eq!(out.len() % 64, 24, "a 64-byte aligned header and 24 data bytes");
        let a = parse(&out, "rt").unwrap();
        assert_eq!((a.dtype, a.shape.clone()), (DType::UInt(4), vec![2, 3]));
        assert_eq!(a.data, data);
        assert_eq!(header(DType::Int(8), &[5]).len() % 64, 0);
    }
}

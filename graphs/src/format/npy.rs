//! NumPy `.npy` arrays (format versions 1.0, 2.0 and 3.0).
//!
//! The header dict and element decoding come from the `npyz` crate. This module adds what a
//! reader of untrusted files needs on top: a bounded header (numpy's own 10,000-byte limit,
//! with little nesting), a shape whose element count cannot overflow and that the bytes back
//! exactly, the element types this crate reads, and errors that name the file and byte offset.

use std::io::{self, Write};

use npyz::{TypeChar, TypeStr, WriterBuilder};

use crate::error::preview;
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

    /// The little-endian descriptor string, e.g. `<i8`.
    pub fn descr(self) -> String {
        match self {
            DType::Bool => "|b1".to_string(),
            DType::Int(s) => format!("<i{s}"),
            DType::UInt(s) => format!("<u{s}"),
            DType::Float(s) => format!("<f{s}"),
            DType::Bytes(n) => format!("|S{n}"),
            DType::Unicode(n) => format!("<U{n}"),
        }
    }

    /// The crate's type for an `npyz` type string, if it is one this crate reads.
    fn of(t: &TypeStr) -> Option<DType> {
        let size = usize::try_from(t.size_field()).ok()?;
        Some(match (t.type_char(), size) {
            (TypeChar::Bool, 1) => DType::Bool,
            (TypeChar::Int, 1 | 2 | 4 | 8) => DType::Int(size),
            (TypeChar::Uint, 1 | 2 | 4 | 8) => DType::UInt(size),
            (TypeChar::Float, 4 | 8) => DType::Float(size),
            (TypeChar::ByteStr, _) => DType::Bytes(size),
            (TypeChar::UnicodeStr, _) => DType::Unicode(size),
            _ => return None,
        })
    }

    /// The `npyz` dtype with this descriptor.
    fn npyz(self) -> io::Result<npyz::DType> {
        let t: TypeStr = self.descr().parse().map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        Ok(npyz::DType::Plain(t))
    }
}

/// A parsed array: element type, shape and the elements as stored.
#[derive(Clone)]
pub struct Array {
    /// The element type.
    pub dtype: DType,
    /// The shape (empty for a 0-d array).
    pub shape: Vec<usize>,
    /// The raw elements in C order, in the file's byte order (see [`Array::big_endian`]).
    pub data: Vec<u8>,
    /// Whether multi-byte elements are stored big-endian.
    pub big_endian: bool,
    /// The byte offset of the data in the `.npy` stream (for error messages).
    pub data_offset: u64,
    /// The header as `npyz` parsed it, for decoding.
    header: npyz::NpyHeader,
}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Array")
            .field("dtype", &self.dtype)
            .field("shape", &self.shape)
            .field("bytes", &self.data.len())
            .field("big_endian", &self.big_endian)
            .field("data_offset", &self.data_offset)
            .finish()
    }
}

/// The magic string of `.npy` files.
const MAGIC: &[u8] = b"\x93NUMPY";

/// The longest header accepted: numpy's own default limit (`max_header_size` of `np.load`).
const MAX_HEADER: usize = 10_000;

/// The deepest bracket nesting accepted in a header (real ones nest 2 deep).
const MAX_NESTING: usize = 16;

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
    if header_len > MAX_HEADER {
        return Err(bad(8, format!("header of {header_len} bytes is longer than numpy's limit of {MAX_HEADER}")));
    }
    let data_start = header_start + header_len;
    if bytes.len() < data_start {
        return Err(bad(bytes.len(), format!("truncated header: needs {data_start} bytes")));
    }
    let text = std::str::from_utf8(&bytes[header_start..data_start])
        .map_err(|_| bad(header_start, format!("header is not text: {}", preview(&bytes[header_start..data_start]))))?;
    let shape = check_header_text(text).map_err(|m| bad(header_start, m))?;
    let header = npyz::NpyHeader::from_reader(&bytes[..data_start]).map_err(|e| {
        bad(
            header_start,
            format!(
                "header is not a valid .npy dict ({e}); expected {{'descr': <type>, 'fortran_order': True or False, \
                 'shape': (<dims>,)}}, found {}",
                preview(text.as_bytes())
            ),
        )
    })?;
    let npyz::DType::Plain(type_str) = header.dtype() else {
        return Err(bad(header_start, format!("unsupported dtype {} (structured arrays)", header.dtype().descr())));
    };
    let dtype = DType::of(&type_str)
        .ok_or_else(|| bad(header_start, format!("unsupported dtype {:?}", type_str.to_string())))?;
    let header_shape: Vec<usize> = header.shape().iter().map(|&d| d as usize).collect();
    if header_shape != shape {
        return Err(bad(header_start, format!("shape {header_shape:?} does not match the header text {shape:?}")));
    }
    let count = shape
        .iter()
        .try_fold(dtype.size(), |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| bad(header_start, format!("shape {shape:?} is too large")))?;
    let available = bytes.len() - data_start;
    if available < count {
        return Err(bad(
            bytes.len(),
            format!("truncated data: shape {shape:?} of {type_str} needs {count} bytes, {available} present"),
        ));
    }
    if available > count {
        return Err(bad(data_start + count, format!("{} bytes of trailing data", available - count)));
    }
    if header.order() == npyz::Order::Fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(bad(header_start, "Fortran-order arrays are not supported".into()));
    }
    Ok(Array {
        dtype,
        shape,
        data: bytes[data_start..].to_vec(),
        big_endian: type_str.endianness() == npyz::Endianness::Big,
        data_offset: data_start as u64,
        header,
    })
}

/// Checks the header text before `npyz` parses it: bounded nesting (its parser recurses), and
/// a `shape` tuple of integers whose product, ignoring zeros, fits 64 bits (`npyz` multiplies
/// the dimensions unchecked). Returns the shape.
fn check_header_text(text: &str) -> std::result::Result<Vec<usize>, String> {
    let mut depth = 0usize;
    for b in text.bytes() {
        match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(format!("header nests deeper than {MAX_NESTING} brackets"));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let key = ["'shape'", "\"shape\""]
        .iter()
        .find_map(|k| text.find(k).map(|at| at + k.len()))
        .ok_or("header has no 'shape' key")?;
    let rest = text[key..].trim_start().strip_prefix(':').ok_or("expected ':' after 'shape'")?.trim_start();
    let inner = rest.strip_prefix('(').ok_or("shape must be a tuple")?;
    let close = inner.find(')').ok_or("unclosed shape tuple")?;
    let dims = inner[..close]
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| {
            d.trim_end_matches('L').parse::<usize>().map_err(|_| format!("bad dimension {}", preview(d.as_bytes())))
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    if dims.iter().filter(|&&d| d != 0).try_fold(1u64, |acc, &d| acc.checked_mul(d as u64)).is_none() {
        return Err(format!("shape {dims:?} is too large"));
    }
    Ok(dims)
}

/// Decodes every element of `array` as `T` with `npyz`, widened to `i128`.
fn widen<'a, T>(array: &'a Array) -> Option<Box<dyn Iterator<Item = i128> + 'a>>
where
    T: npyz::Deserialize + Into<i128> + 'a,
{
    let reader = array.npyz_file().data::<T>().ok()?;
    Some(Box::new(reader.map(|v| v.map_or(0, Into::into))))
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

    /// The array as an `npyz` file over the data bytes.
    fn npyz_file(&self) -> npyz::NpyFile<&[u8]> {
        npyz::NpyFile::with_header(self.header.clone(), &self.data[..])
    }

    /// The elements of an integer (or bool) array as `i128`, wide enough for every integer
    /// dtype.
    fn integers(&self) -> Option<Box<dyn Iterator<Item = i128> + '_>> {
        match self.dtype {
            DType::Bool => Some(Box::new(self.data.iter().map(|&b| b as i128))),
            DType::Int(1) => widen::<i8>(self),
            DType::Int(2) => widen::<i16>(self),
            DType::Int(4) => widen::<i32>(self),
            DType::Int(8) => widen::<i64>(self),
            DType::UInt(1) => widen::<u8>(self),
            DType::UInt(2) => widen::<u16>(self),
            DType::UInt(4) => widen::<u32>(self),
            DType::UInt(8) => widen::<u64>(self),
            _ => None,
        }
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
        let mut out = Vec::with_capacity(self.len());
        for (k, v) in values.enumerate() {
            match T::try_from(v) {
                Ok(x) if (lo..=hi).contains(&v) => out.push(x),
                _ => {
                    return Err(GraphError::binary(
                        name,
                        self.data_offset + k as u64 * size,
                        format!("element {k} = {v} is outside {lo}..={hi}"),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// The elements as `f32` (from `f32`, or from `f64` by rounding).
    ///
    /// # Errors
    /// [`GraphError::Binary`] when the dtype is not a float type.
    pub fn to_f32(&self, name: &str) -> Result<Vec<f32>> {
        let wrong = || GraphError::binary(name, 0, format!("expected a float array, found {}", self.dtype.descr()));
        let file = self.npyz_file();
        let at = |e: io::Error| GraphError::binary(name, self.data_offset, format!("cannot decode floats: {e}"));
        match self.dtype {
            DType::Float(4) => file.into_vec::<f32>().map_err(at),
            DType::Float(8) => Ok(file.into_vec::<f64>().map_err(at)?.into_iter().map(|v| v as f32).collect()),
            _ => Err(wrong()),
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
                    .filter_map(|c| {
                        let b = [c[0], c[1], c[2], c[3]];
                        char::from_u32(if self.big_endian { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
                    })
                    .collect::<String>()
                    .trim_end_matches('\0')
                    .to_string(),
            ),
            _ => None,
        }
    }
}

/// The `.npy` header `npyz` writes for a dtype and shape (v1.0, or v2.0 when it does not fit).
fn header_bytes(dtype: &npyz::DType, shape: &[u64]) -> io::Result<Vec<u8>> {
    let mut out = Vec::new();
    npyz::WriteOptions::new_header_only().dtype(dtype.clone()).shape(shape).writer(&mut out).write_header_only()?;
    Ok(out)
}

/// The `.npy` header for an array of `dtype` and `shape`.
///
/// # Errors
/// Only for a descriptor `npyz` cannot express (none of [`DType`]'s).
pub fn header(dtype: DType, shape: &[usize]) -> io::Result<Vec<u8>> {
    let shape: Vec<u64> = shape.iter().map(|&d| d as u64).collect();
    header_bytes(&dtype.npyz()?, &shape)
}

/// Writes a whole `.npy` array whose little-endian data is `data`.
///
/// # Errors
/// Any I/O error of the writer.
pub fn write<W: Write>(mut w: W, dtype: DType, shape: &[usize], data: &[u8]) -> io::Result<()> {
    w.write_all(&header(dtype, shape)?)?;
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
        let big = parse(&npy(">f4", "(1,)", &1.5f32.to_be_bytes()), "g").unwrap();
        assert_eq!(big.to_f32("g").unwrap(), vec![1.5]);
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
            (npy("<i8", "(4294967296, 4294967296)", &[]), "too large"),
            (npy("<i8", "(0, 4294967296, 4294967296)", &[]), "too large"),
            (npy(&"[".repeat(40), "(1,)", &[]), "nests deeper"),
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
        assert_eq!(header(DType::Int(8), &[5]).unwrap().len() % 64, 0);
    }
}

//! scipy sparse `.npz` files (`scipy.sparse.save_npz` / `load_npz`), and `.npz` archives of
//! named arrays in general ([`NpzArchive`]).
//!
//! A CSR matrix is stored as `indptr`, `indices`, `data`, `shape` and `format` (`b'csr'`).
//! Rows are destinations and columns sources (the crate's orientation), so the arrays map
//! one-to-one onto a [`Csr`]. `format = 'csc'` files are read as the transpose. Index arrays may
//! be any integer dtype (int32 and int64 in practice), little- or big-endian; `data` is optional
//! and, when present, must have one value per edge (values are not kept); `shape` is optional
//! for archives that only have `indptr` and `indices`. Members may be stored or deflated
//! (`np.savez` / `np.savez_compressed`).

use std::fs::File;
use std::io::{BufReader, BufWriter, Cursor, Read, Seek, Write};
use std::path::Path;

use zip::result::ZipError;
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::npy::{self, Array, DType};
use super::{Loaded, ReadOptions};
use crate::csr::{Csr, MAX_NODES};
use crate::error::{GraphError, Result};
use crate::limits::Limits;

/// An open `.npz` archive: read its arrays by name.
pub struct NpzArchive<R> {
    zip: ZipArchive<R>,
    file: String,
    limits: Limits,
}

impl NpzArchive<BufReader<File>> {
    /// Opens an archive file.
    ///
    /// # Errors
    /// [`GraphError::Io`] or [`GraphError::Binary`] when it is not a readable ZIP archive.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        NpzArchive::open_with(path, Limits::default())
    }

    /// Opens an archive file whose members are read within `limits`.
    ///
    /// # Errors
    /// As [`NpzArchive::open`].
    pub fn open_with(path: impl AsRef<Path>, limits: Limits) -> Result<Self> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let file = File::open(path).map_err(|e| GraphError::io(&name, e))?;
        Ok(NpzArchive { limits, ..NpzArchive::new(BufReader::new(file), &name)? })
    }
}

/// A ZIP error as a located error: `offset` is where the failing structure starts.
fn zip_error(file: &str, offset: u64, what: &str, e: ZipError) -> GraphError {
    match e {
        ZipError::Io(e)
            if e.kind() != std::io::ErrorKind::InvalidData && e.kind() != std::io::ErrorKind::UnexpectedEof =>
        {
            GraphError::io(file, e)
        }
        e => GraphError::binary(file, offset, format!("{what}: {e}")),
    }
}

impl<R: Read + Seek> NpzArchive<R> {
    /// Reads the archive's directory from a stream; `file` is used in error messages.
    ///
    /// # Errors
    /// [`GraphError::Binary`] when it is not a readable ZIP archive.
    pub fn new(mut reader: R, file: &str) -> Result<Self> {
        let len = reader.seek(std::io::SeekFrom::End(0)).map_err(|e| GraphError::io(file, e))?;
        let zip = ZipArchive::new(reader)
            .map_err(|e| zip_error(file, len, "not a ZIP archive (its directory is found from the end)", e))?;
        Ok(NpzArchive { zip, file: file.to_string(), limits: Limits::default() })
    }

    /// The array names (member names without `.npy`).
    pub fn names(&self) -> Vec<String> {
        self.zip.file_names().filter_map(|n| n.ok()).map(|n| n.trim_end_matches(".npy").to_string()).collect()
    }

    /// Whether the archive holds an array called `key`.
    pub fn contains(&self, key: &str) -> bool {
        self.names().iter().any(|n| n == key)
    }

    /// Reads and parses the array `key`.
    ///
    /// # Errors
    /// [`GraphError::Content`] when it is missing; [`GraphError::Binary`] when it is malformed.
    pub fn array(&mut self, key: &str) -> Result<Array> {
        let member = [format!("{key}.npy"), key.to_string()]
            .into_iter()
            .find(|m| self.zip.index_for_name(m).is_some())
            .ok_or_else(|| {
                GraphError::content(&self.file, format!("missing array {key:?} (has {:?})", self.names()))
            })?;
        let file = self.file.clone();
        let mut entry = self.zip.by_name(&member).map_err(|e| zip_error(&file, 0, &member, e))?;
        let at = entry.data_start().unwrap_or_else(|| entry.header_start());
        let size = entry.size();
        self.limits
            .check("an .npz member", size)
            .map_err(|e| GraphError::binary(&file, at, format!("{member}: {e}")))?;
        let mut bytes = Vec::with_capacity(size.min(1 << 30) as usize);
        (&mut entry)
            .take(size.saturating_add(1))
            .read_to_end(&mut bytes)
            .map_err(|e| GraphError::binary(&file, at, format!("cannot read member {member}: {e}")))?;
        if bytes.len() as u64 != size {
            return Err(GraphError::binary(
                &file,
                at,
                format!("member {member} holds {} bytes, the directory says {size}", bytes.len()),
            ));
        }
        drop(entry);
        npy::parse(&bytes, &self.member_name(key))
    }

    /// `file:key.npy`, the name errors inside a member carry.
    pub fn member_name(&self, key: &str) -> String {
        format!("{}:{key}.npy", self.file)
    }

    /// Reads the sparse matrix in the archive as a graph, checked or relabelled as `options`
    /// say (the archive's own budget applies to its members).
    ///
    /// # Errors
    /// As [`NpzArchive::csr`], plus [`GraphError::SparseIds`] and [`GraphError::OverBudget`].
    pub fn load(&mut self, options: &ReadOptions) -> Result<Loaded> {
        let graph = self.csr()?;
        super::finish_csr(graph, &self.file, options)
    }

    /// Reads the sparse matrix in the archive as a graph.
    ///
    /// # Errors
    /// [`GraphError::Content`] for missing or inconsistent arrays, [`GraphError::Binary`] for
    /// malformed ones or out-of-range values.
    pub fn csr(&mut self) -> Result<Csr> {
        let file = self.file.clone();
        let format = match self.contains("format") {
            true => self.array("format")?.to_text().unwrap_or_default(),
            false => "csr".to_string(),
        };
        if format != "csr" && format != "csc" {
            return Err(GraphError::content(&file, format!("sparse format {format:?} is not supported (csr, csc)")));
        }
        let indptr_arr = self.array("indptr")?;
        let indptr: Vec<u64> = indptr_arr.to_ints(&self.member_name("indptr"), 0, u64::MAX as i128)?;
        let indices_arr = self.array("indices")?;
        let indices: Vec<u32> = indices_arr.to_ints(&self.member_name("indices"), 0, u32::MAX as i128)?;
        if indptr_arr.shape.len() != 1 || indices_arr.shape.len() != 1 {
            return Err(GraphError::content(&file, "indptr and indices must be 1-d"));
        }
        if self.contains("data") {
            let data = self.array("data")?;
            if data.len() != indices.len() {
                return Err(GraphError::content(
                    &file,
                    format!("data has {} values for {} indices", data.len(), indices.len()),
                ));
            }
        }
        let major = indptr.len().checked_sub(1).ok_or_else(|| GraphError::content(&file, "indptr is empty"))?;
        let (rows, cols) = if self.contains("shape") {
            let shape: Vec<u64> = self.array("shape")?.to_ints(&self.member_name("shape"), 0, MAX_NODES as i128)?;
            match shape[..] {
                [r, c] => (r as usize, c as usize),
                _ => {
                    return Err(GraphError::content(&file, format!("shape must have 2 entries, has {}", shape.len())));
                }
            }
        } else {
            let minor = indices.iter().max().map_or(0, |&m| m as usize + 1);
            if format == "csr" { (major, minor) } else { (minor, major) }
        };
        let wrap = |e: GraphError| GraphError::content(&file, e.to_string());
        if format == "csr" {
            if major != rows {
                return Err(GraphError::content(&file, format!("indptr has {} entries for {rows} rows", indptr.len())));
            }
            Csr::new(rows, cols, indptr, indices).map_err(wrap)
        } else {
            if major != cols {
                return Err(GraphError::content(
                    &file,
                    format!("indptr has {} entries for {cols} columns", indptr.len()),
                ));
            }
            Ok(Csr::new(cols, rows, indptr, indices).map_err(wrap)?.reversed())
        }
    }
}

/// Reads a scipy sparse `.npz` file as a graph.
///
/// # Errors
/// As [`NpzArchive::csr`], plus I/O errors.
pub fn read(path: impl AsRef<Path>) -> Result<Csr> {
    Ok(NpzArchive::open(path)?.load(&ReadOptions::default())?.graph)
}

/// Reads a scipy sparse `.npz` image held in memory.
///
/// # Errors
/// As [`NpzArchive::csr`].
pub fn read_bytes(bytes: &[u8], name: &str) -> Result<Csr> {
    Ok(read_bytes_with(bytes, name, &ReadOptions::default())?.graph)
}

/// Reads a scipy sparse `.npz` image held in memory, as `options` say.
///
/// # Errors
/// As [`NpzArchive::load`].
pub fn read_bytes_with(bytes: &[u8], name: &str, options: &ReadOptions) -> Result<Loaded> {
    NpzArchive { limits: options.limits, ..NpzArchive::new(Cursor::new(bytes), name)? }.load(options)
}

/// Writes a graph as a scipy CSR `.npz` file.
///
/// # Errors
/// [`GraphError::Io`] naming the file.
pub fn write(path: impl AsRef<Path>, g: &Csr) -> Result<()> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let file = File::create(path).map_err(|e| GraphError::io(&name, e))?;
    write_to(BufWriter::with_capacity(1 << 20, file), g).map_err(|e| GraphError::io(&name, e))
}

/// A stored (uncompressed) ZIP member with a fixed timestamp, ZIP64 when it needs it.
fn member_options(size: u64) -> SimpleFileOptions {
    SimpleFileOptions::default().compression_method(CompressionMethod::Stored).large_file(size >= u32::MAX as u64)
}

/// Adds the member `name` holding a `.npy` header and `data`.
fn add_array<W: Write + Seek>(
    zip: &mut ZipWriter<W>,
    name: &str,
    dtype: DType,
    shape: &[usize],
    data: &[u8],
) -> std::io::Result<()> {
    let header = npy::header(dtype, shape)?;
    zip.start_file(name, member_options((header.len() + data.len()) as u64))?;
    zip.write_all(&header)?;
    zip.write_all(data)
}

/// Writes the archive `scipy.sparse.save_npz` would: `indices` (int32 when the columns fit, else
/// int64), `indptr` (int32 when nnz fits, else int64), `format` (`b'csr'`), `shape` (int64) and
/// `data` (bool, all true).
///
/// # Errors
/// Any I/O error of the writer.
pub fn write_to<W: Write + Seek>(writer: W, g: &Csr) -> std::io::Result<()> {
    let mut zip = ZipWriter::new(writer);
    let small_cols = g.num_src() <= i32::MAX as usize;
    let indices: Vec<u8> = if small_cols {
        g.columns().iter().flat_map(|&c| (c as i32).to_le_bytes()).collect()
    } else {
        g.columns().iter().flat_map(|&c| (c as i64).to_le_bytes()).collect()
    };
    let small_ptr = g.nnz() <= i32::MAX as usize && small_cols;
    let indptr: Vec<u8> = if small_ptr {
        g.offsets().iter().flat_map(|&o| (o as i32).to_le_bytes()).collect()
    } else {
        g.offsets().iter().flat_map(|&o| (o as i64).to_le_bytes()).collect()
    };
    let int = |small: bool| if small { DType::Int(4) } else { DType::Int(8) };
    let nnz = [g.nnz()];
    let shape: Vec<u8> = [g.num_dst() as i64, g.num_src() as i64].iter().flat_map(|v| v.to_le_bytes()).collect();
    let data = vec![1u8; g.nnz()];
    add_array(&mut zip, "indices.npy", int(small_cols), &nnz, &indices)?;
    add_array(&mut zip, "indptr.npy", int(small_ptr), &[g.num_dst() + 1], &indptr)?;
    add_array(&mut zip, "format.npy", DType::Bytes(3), &[], b"csr")?;
    add_array(&mut zip, "shape.npy", DType::Int(8), &[2], &shape)?;
    add_array(&mut zip, "data.npy", DType::Bool, &nnz, &data)?;
    zip.finish()?.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn archive(arrays: &[(&str, DType, Vec<usize>, Vec<u8>)]) -> Vec<u8> {
        let mut zip = ZipWriter::new(Cursor::new(Vec::new()));
        for (name, dtype, shape, data) in arrays {
            add_array(&mut zip, &format!("{name}.npy"), *dtype, shape, data).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    fn le64(v: &[i64]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    fn le32(v: &[i32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn round_trip_every_corner_case() {
        for (name, g) in crate::corner::all() {
            let mut bytes = Cursor::new(Vec::new());
            write_to(&mut bytes, &g).unwrap();
            assert_eq!(read_bytes(bytes.get_ref(), name).unwrap(), g, "{name}");
        }
    }

    #[test]
    fn planetoid_style_and_csc_archives() {
        // indptr int64, indices int32, no format or data keys.
        let bytes = archive(&[
            ("indptr", DType::Int(8), vec![3], le64(&[0, 1, 3])),
            ("indices", DType::Int(4), vec![3], le32(&[1, 0, 2])),
            ("shape", DType::Int(8), vec![2], le64(&[2, 3])),
        ]);
        let g = read_bytes(&bytes, "p.npz").unwrap();
        assert_eq!((g.num_dst(), g.num_src()), (2, 3));
        assert_eq!(g.row(1), &[0, 2]);
        // The same matrix stored column-major: columns 0..3 hold rows {1}, {0}, {1}.
        let csc = archive(&[
            ("indptr", DType::Int(4), vec![4], le32(&[0, 1, 2, 3])),
            ("indices", DType::Int(4), vec![3], le32(&[1, 0, 1])),
            ("shape", DType::Int(8), vec![2], le64(&[2, 3])),
            ("format", DType::Bytes(3), vec![], b"csc".to_vec()),
        ]);
        assert_eq!(read_bytes(&csc, "c.npz").unwrap(), g);
    }

    #[test]
    fn malformed_archives_are_errors() {
        let ok = [
            ("indptr", DType::Int(8), vec![3], le64(&[0, 1, 3])),
            ("indices", DType::Int(4), vec![3], le32(&[1, 0, 2])),
            ("shape", DType::Int(8), vec![2], le64(&[2, 3])),
        ];
        let with = |k: usize, item: (&'static str, DType, Vec<usize>, Vec<u8>)| {
            let mut v = ok.to_vec();
            v[k] = item;
            archive(&v)
        };
        let cases = [
            (archive(&ok[1..]), "missing array \"indptr\""),
            (with(1, ("indices", DType::Int(4), vec![3], le32(&[1, -4, 2]))), "element 1 = -4"),
            (with(1, ("indices", DType::Int(4), vec![3], le32(&[1, 0, 3]))), "out of range"),
            (with(0, ("indptr", DType::Int(8), vec![3], le64(&[0, 2, 1]))), "decrease"),
            (with(0, ("indptr", DType::Int(8), vec![2], le64(&[0, 3]))), "2 entries for 2 rows"),
            (with(2, ("shape", DType::Int(8), vec![1], le64(&[2]))), "shape must have 2"),
            (with(1, ("indices", DType::Float(4), vec![3], vec![0; 12])), "integer array"),
            (
                archive(&[ok[0].clone(), ok[1].clone(), ok[2].clone(), ("data", DType::Float(4), vec![2], vec![0; 8])]),
                "data has 2",
            ),
            (
                archive(&[
                    ok[0].clone(),
                    ok[1].clone(),
                    ok[2].clone(),
                    ("format", DType::Bytes(3), vec![], b"coo".to_vec()),
                ]),
                "coo",
            ),
            (b"PK\x03\x04 not really a zip".to_vec(), "not a ZIP"),
        ];
        for (bytes, needle) in cases {
            let e = read_bytes(&bytes, "bad.npz").unwrap_err();
            assert!(e.to_string().contains(needle), "{needle}: {e}");
            assert!(e.to_string().contains("bad.npz"), "{e}");
        }
        let mut good = archive(&ok);
        good.truncate(good.len() - 10);
        assert!(read_bytes(&good, "cut.npz").is_err());
    }

    #[test]
    fn a_flipped_data_byte_fails_the_crc_check() {
        let mut bytes = archive(&[("x", DType::Int(8), vec![2], le64(&[0x0123_4567, 6]))]);
        let at = bytes.windows(4).position(|w| w == [0x67, 0x45, 0x23, 0x01]).unwrap();
        bytes[at] ^= 1;
        let mut a = NpzArchive::new(Cursor::new(bytes), "crc.npz").unwrap();
        let e = a.array("x").unwrap_err();
        assert!(e.to_string().contains("crc.npz") && e.to_string().contains("checksum"), "{e}");
    }

    #[test]
    fn deflated_members_are_read() {
        use flate2::Compression;
        use flate2::write::DeflateEncoder;
        // Build a one-member archive by hand with method 8.
        let payload = [npy::header(DType::Int(8), &[2]).unwrap(), le64(&[5, 6])].concat();
        let mut enc = DeflateEncoder::new(Vec::new(), Compression::default());
        enc.write_all(&payload).unwrap();
        let packed = enc.finish().unwrap();
        let mut crc = flate2::Crc::new();
        crc.update(&payload);
        let name = b"x.npy";
        let mut z = Vec::new();
        let header = |sig: u32, central: bool| {
            let mut h = sig.to_le_bytes().to_vec();
            if central {
                h.extend_from_slice(&20u16.to_le_bytes());
            }
            h.extend_from_slice(&20u16.to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            h.extend_from_slice(&8u16.to_le_bytes());
            h.extend_from_slice(&[0, 0, 0x21, 0]);
            h.extend_from_slice(&crc.sum().to_le_bytes());
            h.extend_from_slice(&(packed.len() as u32).to_le_bytes());
            h.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            h.extend_from_slice(&(name.len() as u16).to_le_bytes());
            h.extend_from_slice(&0u16.to_le_bytes());
            if central {
                h.extend_from_slice(&[0; 14]);
            }
            h.extend_from_slice(name);
            h
        };
        z.extend(header(0x0403_4b50, false));
        z.extend_from_slice(&packed);
        let cd_offset = z.len() as u32;
        let cd = header(0x0201_4b50, true);
        z.extend_from_slice(&cd);
        z.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
        z.extend_from_slice(&[0, 0, 0, 0, 1, 0, 1, 0]);
        z.extend_from_slice(&(cd.len() as u32).to_le_bytes());
        z.extend_from_slice(&cd_offset.to_le_bytes());
        z.extend_from_slice(&[0, 0]);
        let mut a = NpzArchive::new(Cursor::new(z), "d.npz").unwrap();
        let arr = a.array("x").unwrap();
        assert_eq!(arr.to_ints::<i64>("x", 0, 10).unwrap(), vec![5, 6]);
    }
}

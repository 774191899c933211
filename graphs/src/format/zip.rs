//! The part of the ZIP format that `.npz` files use: reading stored and deflated members
//! (with ZIP64 sizes and offsets, CRC-checked) and writing stored members.

use std::io::{self, Read, Seek, SeekFrom, Write};

use flate2::Crc;
use flate2::read::DeflateDecoder;

use crate::error::{GraphError, Result};

const LOCAL_SIG: u32 = 0x0403_4b50;
const CENTRAL_SIG: u32 = 0x0201_4b50;
const END_SIG: u32 = 0x0605_4b50;
const ZIP64_END_SIG: u32 = 0x0606_4b50;
const ZIP64_LOCATOR_SIG: u32 = 0x0706_4b50;
/// The ZIP64 extra field id.
const ZIP64_EXTRA: u16 = 0x0001;

/// One member of an archive, from the central directory.
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub(crate) name: String,
    method: u16,
    flags: u16,
    crc: u32,
    compressed_size: u64,
    size: u64,
    header_offset: u64,
}

/// A ZIP archive opened for reading.
pub(crate) struct ZipReader<R> {
    reader: R,
    file: String,
    pub(crate) entries: Vec<Entry>,
}

/// Little-endian field access with bounds checks that report the archive offset.
struct Fields<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
    file: &'a str,
}

impl Fields<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| GraphError::binary(self.file, self.base + self.pos as u64, "truncated ZIP record"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u16(&mut self) -> Result<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }
}

impl<R: Read + Seek> ZipReader<R> {
    /// Reads the central directory.
    pub(crate) fn open(mut reader: R, file: &str) -> Result<Self> {
        let io = |e| GraphError::io(file, e);
        let len = reader.seek(SeekFrom::End(0)).map_err(io)?;
        let tail_len = len.min(22 + 65_535);
        reader.seek(SeekFrom::Start(len - tail_len)).map_err(io)?;
        let mut tail = vec![0u8; tail_len as usize];
        reader.read_exact(&mut tail).map_err(io)?;
        let end = (0..tail.len().saturating_sub(21))
            .rev()
            .find(|&k| tail[k..k + 4] == END_SIG.to_le_bytes())
            .ok_or_else(|| GraphError::binary(file, len, "not a ZIP archive (no end of central directory record)"))?;
        let end_offset = len - tail_len + end as u64;
        let mut f = Fields { bytes: &tail[end..], pos: 4, base: end_offset, file };
        let (_disk, _cd_disk) = (f.u16()?, f.u16()?);
        let (_, total16) = (f.u16()?, f.u16()?);
        let (size32, offset32) = (f.u32()?, f.u32()?);
        let (mut total, mut cd_size, mut cd_offset) = (total16 as u64, size32 as u64, offset32 as u64);
        if total16 == 0xffff || size32 == 0xffff_ffff || offset32 == 0xffff_ffff {
            // ZIP64: the locator sits right before the end record.
            let loc =
                end.checked_sub(20).ok_or_else(|| GraphError::binary(file, end_offset, "missing ZIP64 locator"))?;
            let mut l = Fields { bytes: &tail[loc..], pos: 0, base: end_offset - 20, file };
            if l.u32()? != ZIP64_LOCATOR_SIG {
                return Err(GraphError::binary(file, end_offset - 20, "missing ZIP64 locator"));
            }
            let _ = l.u32()?;
            let record = l.u64()?;
            let mut buf = vec![0u8; 56];
            reader.seek(SeekFrom::Start(record)).map_err(io)?;
            reader.read_exact(&mut buf).map_err(|_| GraphError::binary(file, record, "truncated ZIP64 end record"))?;
            let mut z = Fields { bytes: &buf, pos: 0, base: record, file };
            if z.u32()? != ZIP64_END_SIG {
                return Err(GraphError::binary(file, record, "bad ZIP64 end record signature"));
            }
            z.take(20)?;
            let _ = z.u64()?;
            total = z.u64()?;
            cd_size = z.u64()?;
            cd_offset = z.u64()?;
        }
        if cd_offset.checked_add(cd_size).is_none_or(|e| e > len) {
            return Err(GraphError::binary(
                file,
                end_offset,
                format!("central directory ({cd_size} bytes at {cd_offset}) lies outside the file"),
            ));
        }
        reader.seek(SeekFrom::Start(cd_offset)).map_err(io)?;
        let mut cd = vec![0u8; cd_size as usize];
        reader.read_exact(&mut cd).map_err(io)?;
        let mut c = Fields { bytes: &cd, pos: 0, base: cd_offset, file };
        let mut entries = Vec::new();
        for _ in 0..total {
            let at = c.offset();
            if c.u32()? != CENTRAL_SIG {
                return Err(GraphError::binary(file, at, "bad central directory entry signature"));
            }
            c.take(4)?;
            let flags = c.u16()?;
            let method = c.u16()?;
            c.take(4)?;
            let crc = c.u32()?;
            let mut compressed_size = c.u32()? as u64;
            let mut size = c.u32()? as u64;
            let (name_len, extra_len, comment_len) = (c.u16()? as usize, c.u16()? as usize, c.u16()? as usize);
            c.take(8)?;
            let mut header_offset = c.u32()? as u64;
            let name = String::from_utf8_lossy(c.take(name_len)?).into_owned();
            let extra_at = c.offset();
            let mut x = Fields { bytes: c.take(extra_len)?, pos: 0, base: extra_at, file };
            while x.pos + 4 <= x.bytes.len() {
                let (id, n) = (x.u16()?, x.u16()? as usize);
                let base = x.offset();
                let mut data = Fields { bytes: x.take(n)?, pos: 0, base, file };
                if id == ZIP64_EXTRA {
                    if size == 0xffff_ffff {
                        size = data.u64()?;
                    }
                    if compressed_size == 0xffff_ffff {
                        compressed_size = data.u64()?;
                    }
                    if header_offset == 0xffff_ffff {
                        header_offset = data.u64()?;
                    }
                }
            }
            c.take(comment_len)?;
            entries.push(Entry { name, method, flags, crc, compressed_size, size, header_offset });
        }
        Ok(ZipReader { reader, file: file.to_string(), entries })
    }

    /// The uncompressed bytes of a member, CRC-checked.
    pub(crate) fn read(&mut self, entry: &Entry) -> Result<Vec<u8>> {
        let file = self.file.clone();
        let at = entry.header_offset;
        let bad = |offset: u64, msg: String| GraphError::binary(&file, offset, msg);
        if entry.flags & 1 != 0 {
            return Err(bad(at, format!("member {} is encrypted", entry.name)));
        }
        self.reader.seek(SeekFrom::Start(at)).map_err(|e| GraphError::io(&file, e))?;
        let mut local = [0u8; 30];
        self.reader.read_exact(&mut local).map_err(|_| bad(at, format!("truncated local header of {}", entry.name)))?;
        let mut l = Fields { bytes: &local, pos: 0, base: at, file: &file };
        if l.u32()? != LOCAL_SIG {
            return Err(bad(at, format!("bad local header signature for {}", entry.name)));
        }
        let skip =
            u16::from_le_bytes([local[26], local[27]]) as u64 + u16::from_le_bytes([local[28], local[29]]) as u64;
        let data_at = at + 30 + skip;
        self.reader.seek(SeekFrom::Start(data_at)).map_err(|e| GraphError::io(&file, e))?;
        let raw = (&mut self.reader).take(entry.compressed_size);
        let mut out = Vec::with_capacity(entry.size.min(1 << 30) as usize);
        let read = match entry.method {
            0 => raw.take(entry.size).read_to_end(&mut out),
            8 => DeflateDecoder::new(raw).take(entry.size + 1).read_to_end(&mut out),
            m => {
                return Err(bad(
                    at,
                    format!(
                        "member {} uses compression method {m}; only stored (0) and deflate (8) are supported",
                        entry.name
                    ),
                ));
            }
        };
        read.map_err(|e| bad(data_at, format!("cannot decompress {}: {e}", entry.name)))?;
        if out.len() as u64 != entry.size {
            return Err(bad(
                data_at,
                format!("member {} holds {} bytes, the directory says {}", entry.name, out.len(), entry.size),
            ));
        }
        let mut crc = Crc::new();
        crc.update(&out);
        if crc.sum() != entry.crc {
            return Err(bad(data_at, format!("CRC mismatch in member {}", entry.name)));
        }
        Ok(out)
    }
}

/// Writes a ZIP archive of stored (uncompressed) members, with ZIP64 records when needed.
pub(crate) struct ZipWriter<W> {
    writer: W,
    offset: u64,
    central: Vec<u8>,
    count: u64,
}

impl<W: Write> ZipWriter<W> {
    pub(crate) fn new(writer: W) -> Self {
        ZipWriter { writer, offset: 0, central: Vec::new(), count: 0 }
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer.write_all(bytes)?;
        self.offset += bytes.len() as u64;
        Ok(())
    }

    /// Adds a stored member whose contents are the concatenation of `parts`.
    pub(crate) fn add(&mut self, name: &str, parts: &[&[u8]]) -> io::Result<()> {
        let mut crc = Crc::new();
        parts.iter().for_each(|p| crc.update(p));
        let size: u64 = parts.iter().map(|p| p.len() as u64).sum();
        let header_offset = self.offset;
        let big = size >= 0xffff_ffff || header_offset >= 0xffff_ffff;
        let clamp = |v: u64| if big { 0xffff_ffff } else { v as u32 };
        // Local header: version 4.5 when ZIP64 fields follow, else 2.0.
        let version: u16 = if big { 45 } else { 20 };
        let mut local = Vec::with_capacity(30 + name.len() + 20);
        local.extend_from_slice(&LOCAL_SIG.to_le_bytes());
        local.extend_from_slice(&version.to_le_bytes());
        local.extend_from_slice(&[0, 0, 0, 0]); // flags, method (stored)
        local.extend_from_slice(&[0, 0, 0x21, 0]); // time 00:00, date 1980-01-01
        local.extend_from_slice(&crc.sum().to_le_bytes());
        local.extend_from_slice(&clamp(size).to_le_bytes());
        local.extend_from_slice(&clamp(size).to_le_bytes());
        local.extend_from_slice(&(name.len() as u16).to_le_bytes());
        local.extend_from_slice(&(if big { 20u16 } else { 0 }).to_le_bytes());
        local.extend_from_slice(name.as_bytes());
        if big {
            local.extend_from_slice(&ZIP64_EXTRA.to_le_bytes());
            local.extend_from_slice(&16u16.to_le_bytes());
            local.extend_from_slice(&size.to_le_bytes());
            local.extend_from_slice(&size.to_le_bytes());
        }
        self.put(&local)?;
        for p in parts {
            self.put(p)?;
        }
        let c = &mut self.central;
        c.extend_from_slice(&CENTRAL_SIG.to_le_bytes());
        c.extend_from_slice(&version.to_le_bytes());
        c.extend_from_slice(&version.to_le_bytes());
        c.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x21, 0]);
        c.extend_from_slice(&crc.sum().to_le_bytes());
        c.extend_from_slice(&clamp(size).to_le_bytes());
        c.extend_from_slice(&clamp(size).to_le_bytes());
        c.extend_from_slice(&(name.len() as u16).to_le_bytes());
        c.extend_from_slice(&(if big { 28u16 } else { 0 }).to_le_bytes());
        c.extend_from_slice(&[0; 8]); // comment length, disk, internal and external attributes
        c.extend_from_slice(&[0; 2]);
        c.extend_from_slice(&clamp(header_offset).to_le_bytes());
        c.extend_from_slice(name.as_bytes());
        if big {
            c.extend_from_slice(&ZIP64_EXTRA.to_le_bytes());
            c.extend_from_slice(&24u16.to_le_bytes());
            c.extend_from_slice(&size.to_le_bytes());
            c.extend_from_slice(&size.to_le_bytes());
            c.extend_from_slice(&header_offset.to_le_bytes());
        }
        self.count += 1;
        Ok(())
    }

    /// Writes the central directory and end records.
    pub(crate) fn finish(mut self) -> io::Result<W> {
        let cd_offset = self.offset;
        let central = std::mem::take(&mut self.central);
        self.put(&central)?;
        let cd_size = central.len() as u64;
        let zip64 = cd_offset >= 0xffff_ffff || self.count >= 0xffff;
        if zip64 {
            let record = self.offset;
            let mut z = Vec::with_capacity(76);
            z.extend_from_slice(&ZIP64_END_SIG.to_le_bytes());
            z.extend_from_slice(&44u64.to_le_bytes());
            z.extend_from_slice(&45u16.to_le_bytes());
            z.extend_from_slice(&45u16.to_le_bytes());
            z.extend_from_slice(&[0; 8]);
            z.extend_from_slice(&self.count.to_le_bytes());
            z.extend_from_slice(&self.count.to_le_bytes());
            z.extend_from_slice(&cd_size.to_le_bytes());
            z.extend_from_slice(&cd_offset.to_le_bytes());
            z.extend_from_slice(&ZIP64_LOCATOR_SIG.to_le_bytes());
            z.extend_from_slice(&0u32.to_le_bytes());
            z.extend_from_slice(&record.to_le_bytes());
            z.extend_from_slice(&1u32.to_le_bytes());
            self.put(&z)?;
        }
        let mut e = Vec::with_capacity(22);
        e.extend_from_slice(&END_SIG.to_le_bytes());
        e.extend_from_slice(&[0; 4]);
        let count16 = if zip64 { 0xffff } else { self.count as u16 };
        e.extend_from_slice(&count16.to_le_bytes());
        e.extend_from_slice(&count16.to_le_bytes());
        e.extend_from_slice(&(if zip64 { 0xffff_ffff } else { cd_size as u32 }).to_le_bytes());
        e.extend_from_slice(&(if zip64 { 0xffff_ffff } else { cd_offset as u32 }).to_le_bytes());
        e.extend_from_slice(&0u16.to_le_bytes());
        self.put(&e)?;
        self.writer.flush()?;
        Ok(self.writer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn stored_round_trip_and_crc_check() {
        let mut w = ZipWriter::new(Vec::new());
        w.add("a.npy", &[b"hello ", b"world"]).unwrap();
        w.add("b.npy", &[b""]).unwrap();
        let mut bytes = w.finish().unwrap();
        let mut r = ZipReader::open(Cursor::new(bytes.clone()), "t.zip").unwrap();
        let names: Vec<_> = r.entries.iter().map(|e| e.name.clone()).collect();
        assert_eq!(names, ["a.npy", "b.npy"]);
        let a = r.entries[0].clone();
        assert_eq!(r.read(&a).unwrap(), b"hello world");
        // Flip a data byte: the CRC check must catch it.
        let at = bytes.windows(5).position(|w| w == b"hello").unwrap();
        bytes[at] = b'j';
        let mut r = ZipReader::open(Cursor::new(bytes), "t.zip").unwrap();
        let e = r.read(&a).unwrap_err();
        assert!(e.to_string().contains("CRC"), "{e}");
    }

    #[test]
    fn truncated_archives_are_errors() {
        let mut w = ZipWriter::new(Vec::new());
        w.add("x", &[&[7u8; 100]]).unwrap();
        let bytes = w.finish().unwrap();
        for cut in [0, 10, 60, bytes.len() - 30, bytes.len() - 1] {
            let result = ZipReader::open(Cursor::new(bytes[..cut].to_vec()), "cut.zip").and_then(|mut r| {
                let e = r.entries.first().cloned().ok_or_else(|| GraphError::binary("cut.zip", 0, "no entries"))?;
                r.read(&e)
            });
            assert!(result.is_err(), "cut at {cut}");
        }
    }
}

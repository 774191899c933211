//! Shared machinery of the text readers: whole-line chunks from a stream, and byte-level number
//! parsing that never allocates.

use std::io::{self, Read};

/// The size of one read; a chunk grows past it only for a longer line.
pub(crate) const CHUNK: usize = 8 << 20;

/// Reads a stream in large chunks that end at a line boundary (the last chunk may end without
/// a newline).
pub(crate) struct LineChunks<R> {
    reader: R,
    buf: Vec<u8>,
    /// Bytes of `buf` handed out by the previous call.
    consumed: usize,
    eof: bool,
}

impl<R: Read> LineChunks<R> {
    pub(crate) fn new(reader: R) -> Self {
        LineChunks { reader, buf: Vec::with_capacity(CHUNK), consumed: 0, eof: false }
    }

    /// The next chunk of whole lines, or `None` at the end of the stream.
    pub(crate) fn next_chunk(&mut self) -> io::Result<Option<&[u8]>> {
        self.buf.drain(..self.consumed);
        self.consumed = 0;
        let mut target = CHUNK;
        loop {
            if !self.eof && self.buf.len() < target {
                self.fill(target)?;
            }
            if self.eof {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                self.consumed = self.buf.len();
                return Ok(Some(&self.buf[..]));
            }
            if let Some(last) = self.buf.iter().rposition(|&b| b == b'\n') {
                self.consumed = last + 1;
                return Ok(Some(&self.buf[..self.consumed]));
            }
            // A line longer than the buffer: read more.
            target = self.buf.len() + CHUNK;
        }
    }

    /// Reads until `buf` holds `target` bytes or the stream ends. Reads go into the spare
    /// capacity, so a small stream costs no 8 MiB clear.
    fn fill(&mut self, target: usize) -> io::Result<()> {
        let want = target.saturating_sub(self.buf.len()) as u64;
        let got = (&mut self.reader).take(want).read_to_end(&mut self.buf)?;
        if (got as u64) < want {
            self.eof = true;
        }
        Ok(())
    }
}

/// Whether a byte separates tokens (space, tab, carriage return, vertical tab, form feed).
#[inline]
pub(crate) fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | 0x0b | 0x0c)
}

/// Advances `pos` past blanks (not past a newline).
#[inline]
pub(crate) fn skip_blanks(line: &[u8], pos: &mut usize) {
    while *pos < line.len() && is_blank(line[*pos]) {
        *pos += 1;
    }
}

/// Parses an unsigned decimal integer at `pos` that must end at a blank or the end of the line.
/// On failure returns a message naming the token.
#[inline]
pub(crate) fn parse_uint(line: &[u8], pos: &mut usize, what: &str) -> Result<u64, String> {
    let start = *pos;
    let mut value: u64 = 0;
    while *pos < line.len() && line[*pos].is_ascii_digit() {
        let digit = (line[*pos] - b'0') as u64;
        value = match value.checked_mul(10).and_then(|v| v.checked_add(digit)) {
            Some(v) => v,
            None => return Err(format!("{what} {} is too large", token(line, start))),
        };
        *pos += 1;
    }
    if *pos == start || (*pos < line.len() && !is_blank(line[*pos])) {
        return Err(if *pos >= line.len() && *pos == start {
            format!("missing {what}")
        } else {
            format!("{what} {} is not a non-negative integer", token(line, start))
        });
    }
    Ok(value)
}

/// The blank-delimited token starting at `start`, quoted for error messages (a short escaped
/// prefix when it is long or binary).
pub(crate) fn token(line: &[u8], start: usize) -> String {
    let end = line[start..].iter().position(|&b| is_blank(b)).map_or(line.len(), |k| start + k);
    crate::error::preview(&line[start..end])
}

/// Splits a chunk into at most `parts` pieces that each end at a line boundary.
pub(crate) fn split_lines(chunk: &[u8], parts: usize) -> Vec<&[u8]> {
    let mut pieces = Vec::with_capacity(parts);
    let mut rest = chunk;
    for k in (1..parts).rev() {
        let target = rest.len() / (k + 1);
        if target == 0 {
            break;
        }
        match rest[target..].iter().position(|&b| b == b'\n') {
            Some(p) => {
                let (head, tail) = rest.split_at(target + p + 1);
                pieces.push(head);
                rest = tail;
            }
            None => break,
        }
    }
    if !rest.is_empty() || pieces.is_empty() {
        pieces.push(rest);
    }
    pieces
}

/// Appends the decimal digits of `v` to `out`.
#[inline]
pub(crate) fn push_uint(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut k = digits.len();
    loop {
        k -= 1;
        digits[k] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[k..]);
}

/// Writes one `a b` line per pair through a 1 MiB buffer, then flushes.
pub(crate) fn write_pairs(w: &mut impl std::io::Write, pairs: impl Iterator<Item = (u64, u64)>) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1 << 20);
    for (a, b) in pairs {
        push_uint(&mut buf, a);
        buf.push(b' ');
        push_uint(&mut buf, b);
        buf.push(b'\n');
        if buf.len() > (1 << 20) - 48 {
            w.write_all(&buf)?;
            buf.clear();
        }
    }
    w.write_all(&buf)?;
    w.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_end_at_newlines_and_cover_everything() {
        let mut text = Vec::new();
        for i in 0..2_000_000u64 {
            push_uint(&mut text, i);
            text.push(b'\n');
        }
        text.extend_from_slice(b"last");
        let mut chunks = LineChunks::new(&text[..]);
        let mut joined = Vec::new();
        let mut count = 0;
        while let Some(c) = chunks.next_chunk().unwrap() {
            count += 1;
            if joined.len() + c.len() < text.len() {
                assert_eq!(c.last(), Some(&b'\n'));
            }
            joined.extend_from_slice(c);
        }
        assert!(count >= 2);
        assert_eq!(joined, text);
    }

    #[test]
    fn a_line_longer_than_a_chunk_stays_whole() {
        let mut text = vec![b'7'; CHUNK + 100];
        text.push(b'\n');
        text.extend_from_slice(b"1 2\n");
        let mut chunks = LineChunks::new(&text[..]);
        let first = chunks.next_chunk().unwrap().unwrap().to_vec();
        assert_eq!(first, text);
        assert!(chunks.next_chunk().unwrap().is_none());
    }

    #[test]
    fn uint_parsing() {
        let line = b"  42\t7x 18446744073709551616";
        let mut pos = 0;
        skip_blanks(line, &mut pos);
        assert_eq!(parse_uint(line, &mut pos, "id"), Ok(42));
        skip_blanks(line, &mut pos);
        assert!(parse_uint(line, &mut pos, "id").unwrap_err().contains("\"7x\""));
        let mut pos = 8;
        assert!(parse_uint(line, &mut pos, "id").unwrap_err().contains("too large"));
        let mut pos = 4;
        assert_eq!(parse_uint(b"abcd", &mut pos, "id"), Err("missing id".into()));
        let pieces = split_lines(b"1\n22\n333\n4444\n", 3);
        assert_eq!(pieces.concat(), b"1\n22\n333\n4444\n");
        assert!(pieces.iter().all(|p| p.ends_with(b"\n")));
        let mut out = Vec::new();
        push_uint(&mut out, 0);
        push_uint(&mut out, 9_876_543_210);
        assert_eq!(out, b"09876543210");
    }
}

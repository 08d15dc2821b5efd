//! A bounds-checked little-endian cursor over the model file's bytes. fastText writes its
//! fields raw in host (x86, little-endian) order; every read names the field it is for so a
//! short file reports exactly where it ends.

use std::path::Path;

use crate::FastTextError;

pub(crate) struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    path: &'a Path,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(data: &'a [u8], path: &'a Path) -> Self {
        Reader { data, pos: 0, path }
    }

    pub(crate) fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    pub(crate) fn truncated(&self, field: &str, needed: usize) -> FastTextError {
        FastTextError::Truncated {
            path: self.path.to_path_buf(),
            field: field.to_string(),
            offset: self.pos as u64,
            needed: (needed - self.remaining()) as u64,
        }
    }

    pub(crate) fn invalid(&self, what: impl Into<String>) -> FastTextError {
        FastTextError::Invalid {
            path: self.path.to_path_buf(),
            what: what.into(),
        }
    }

    pub(crate) fn unsupported(&self, what: impl Into<String>) -> FastTextError {
        FastTextError::Unsupported {
            path: self.path.to_path_buf(),
            what: what.into(),
        }
    }

    pub(crate) fn bytes(&mut self, n: usize, field: &str) -> Result<&'a [u8], FastTextError> {
        if n > self.remaining() {
            return Err(self.truncated(field, n));
        }
        let out = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self, field: &str) -> Result<[u8; N], FastTextError> {
        let b = self.bytes(N, field)?;
        let mut out = [0u8; N];
        out.copy_from_slice(b);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, field: &str) -> Result<u8, FastTextError> {
        Ok(self.array::<1>(field)?[0])
    }

    /// A C++ `bool` written with `out.write(&b, sizeof(bool))`.
    pub(crate) fn bool(&mut self, field: &str) -> Result<bool, FastTextError> {
        Ok(self.u8(field)? != 0)
    }

    pub(crate) fn i32(&mut self, field: &str) -> Result<i32, FastTextError> {
        Ok(i32::from_le_bytes(self.array(field)?))
    }

    pub(crate) fn i64(&mut self, field: &str) -> Result<i64, FastTextError> {
        Ok(i64::from_le_bytes(self.array(field)?))
    }

    pub(crate) fn f64(&mut self, field: &str) -> Result<f64, FastTextError> {
        Ok(f64::from_le_bytes(self.array(field)?))
    }

    /// `count` consecutive f32 values (matrix rows, centroids), copied out once.
    pub(crate) fn f32s(&mut self, count: usize, field: &str) -> Result<Vec<f32>, FastTextError> {
        let n = count
            .checked_mul(4)
            .ok_or_else(|| self.invalid(format!("{field}: {count} floats overflow")))?;
        let b = self.bytes(n, field)?;
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }

    /// A NUL-terminated string (dictionary words), without the NUL.
    pub(crate) fn cstr(&mut self, field: &str) -> Result<&'a [u8], FastTextError> {
        let rest = &self.data[self.pos..];
        match rest.iter().position(|&b| b == 0) {
            Some(len) => {
                self.pos += len + 1;
                Ok(&rest[..len])
            }
            None => Err(self.truncated(field, rest.len() + 1)),
        }
    }
}

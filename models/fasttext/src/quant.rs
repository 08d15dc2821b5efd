//! Product-quantized matrices of `.ftz` models (fastText's `QuantMatrix` and
//! `ProductQuantizer`): each row is one byte per sub-vector, indexing 256 centroids, with an
//! optional separately quantized row norm (`qnorm`).

use crate::FastTextError;
use crate::io::Reader;
use crate::matrix::read_shape;

/// Centroids per sub-quantizer (fastText's `ksub_`, 8-bit codes).
const KSUB: usize = 256;

pub(crate) struct ProductQuantizer {
    nsubq: usize,
    dsub: usize,
    lastdsub: usize,
    centroids: Vec<f32>,
}

impl ProductQuantizer {
    fn read(r: &mut Reader<'_>, what: &str) -> Result<ProductQuantizer, FastTextError> {
        let dim = r.i32(&format!("{what} dim"))?;
        let nsubq = r.i32(&format!("{what} nsubq"))?;
        let dsub = r.i32(&format!("{what} dsub"))?;
        let lastdsub = r.i32(&format!("{what} lastdsub"))?;
        let consistent = dim > 0
            && nsubq > 0
            && dsub > 0
            && lastdsub > 0
            && lastdsub <= dsub
            && (nsubq as i64 - 1) * dsub as i64 + lastdsub as i64 == dim as i64;
        if !consistent {
            return Err(r.invalid(format!(
                "{what} has dim {dim}, nsubq {nsubq}, dsub {dsub}, lastdsub {lastdsub}"
            )));
        }
        let centroids = r.f32s(dim as usize * KSUB, &format!("{what} centroids"))?;
        Ok(ProductQuantizer {
            nsubq: nsubq as usize,
            dsub: dsub as usize,
            lastdsub: lastdsub as usize,
            centroids,
        })
    }

    fn dim(&self) -> usize {
        (self.nsubq - 1) * self.dsub + self.lastdsub
    }

    /// `get_centroids(m, code)`: the last sub-quantizer has its own, possibly shorter, width.
    #[inline]
    fn centroid(&self, m: usize, code: u8) -> &[f32] {
        let code = code as usize;
        if m == self.nsubq - 1 {
            let start = m * KSUB * self.dsub + code * self.lastdsub;
            &self.centroids[start..start + self.lastdsub]
        } else {
            let start = (m * KSUB + code) * self.dsub;
            &self.centroids[start..start + self.dsub]
        }
    }

    /// `ProductQuantizer::mulcode`: one running f32 sum over all sub-vectors, times `alpha`.
    fn mulcode(&self, x: &[f32], code: &[u8], alpha: f32) -> f32 {
        let mut res = 0.0f32;
        for (m, &c) in code.iter().enumerate() {
            let base = m * self.dsub;
            for (n, &w) in self.centroid(m, c).iter().enumerate() {
                res += x[base + n] * w;
            }
        }
        res * alpha
    }

    /// `ProductQuantizer::addcode`: `x += alpha * row`.
    fn addcode(&self, x: &mut [f32], code: &[u8], alpha: f32) {
        for (m, &c) in code.iter().enumerate() {
            let base = m * self.dsub;
            for (n, &w) in self.centroid(m, c).iter().enumerate() {
                x[base + n] += alpha * w;
            }
        }
    }
}

pub(crate) struct QuantMatrix {
    rows: usize,
    cols: usize,
    codes: Vec<u8>,
    pq: ProductQuantizer,
    /// With `qnorm`: one code per row into `npq`, a 1-d quantizer of the row norms.
    norms: Option<(Vec<u8>, ProductQuantizer)>,
}

impl QuantMatrix {
    pub(crate) fn read(r: &mut Reader<'_>, what: &str) -> Result<QuantMatrix, FastTextError> {
        let qnorm = r.bool(&format!("{what} qnorm"))?;
        let (rows, cols) = read_shape(r, what)?;
        let codesize = r.i32(&format!("{what} codesize"))?;
        if codesize < 0 {
            return Err(r.invalid(format!("{what} has codesize {codesize}")));
        }
        let codes = r
            .bytes(codesize as usize, &format!("{what} codes"))?
            .to_vec();
        let pq = ProductQuantizer::read(r, &format!("{what} product quantizer"))?;
        if pq.dim() != cols || rows.checked_mul(pq.nsubq).is_none_or(|n| n > codes.len()) {
            return Err(r.invalid(format!(
                "{what}: {rows} x {cols} matrix with {} codes and a {}-d quantizer of {} sub-vectors",
                codes.len(),
                pq.dim(),
                pq.nsubq
            )));
        }
        let norms = if qnorm {
            let norm_codes = r.bytes(rows, &format!("{what} norm codes"))?.to_vec();
            let npq = ProductQuantizer::read(r, &format!("{what} norm quantizer"))?;
            Some((norm_codes, npq))
        } else {
            None
        };
        Ok(QuantMatrix {
            rows,
            cols,
            codes,
            pq,
            norms,
        })
    }

    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    pub(crate) fn cols(&self) -> usize {
        self.cols
    }

    #[inline]
    fn code(&self, i: usize) -> &[u8] {
        &self.codes[i * self.pq.nsubq..(i + 1) * self.pq.nsubq]
    }

    #[inline]
    fn norm(&self, i: usize) -> f32 {
        match &self.norms {
            Some((codes, npq)) => npq.centroid(0, codes[i])[0],
            None => 1.0,
        }
    }

    pub(crate) fn dot_row(&self, x: &[f32], i: usize) -> f32 {
        self.pq.mulcode(x, self.code(i), self.norm(i))
    }

    pub(crate) fn add_row_to(&self, x: &mut [f32], i: usize) {
        self.pq.addcode(x, self.code(i), self.norm(i));
    }
}

//! The input and output matrices: dense f32 rows, or product-quantized rows (`quant.rs`).
//! Only the two operations prediction needs are here, with fastText's f32 operation order.

use crate::FastTextError;
use crate::io::Reader;
use crate::quant::QuantMatrix;

pub(crate) struct DenseMatrix {
    rows: usize,
    cols: usize,
    data: Vec<f32>,
}

pub(crate) enum Matrix {
    Dense(DenseMatrix),
    Quant(QuantMatrix),
}

/// Reads a matrix's `m` and `n` (int64 each) and checks they fit the remaining bytes.
pub(crate) fn read_shape(r: &mut Reader<'_>, what: &str) -> Result<(usize, usize), FastTextError> {
    let m = r.i64(&format!("{what} rows"))?;
    let n = r.i64(&format!("{what} columns"))?;
    if m < 0 || n < 0 || m.checked_mul(n).is_none() {
        return Err(r.invalid(format!("{what} has shape {m} x {n}")));
    }
    Ok((m as usize, n as usize))
}

impl DenseMatrix {
    pub(crate) fn read(r: &mut Reader<'_>, what: &str) -> Result<DenseMatrix, FastTextError> {
        let (rows, cols) = read_shape(r, what)?;
        let data = r.f32s(
            rows * cols,
            &format!("{what} data ({rows} x {cols} floats)"),
        )?;
        Ok(DenseMatrix { rows, cols, data })
    }

    #[inline]
    fn row(&self, i: usize) -> &[f32] {
        &self.data[i * self.cols..(i + 1) * self.cols]
    }

    /// Adds `rows` to `out` in order. Each column's sum is the same sequence of f32 additions
    /// whatever the vector width, so the wide paths give the same bits.
    fn add_rows(&self, rows: &[i32], out: &mut [f32]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2.
            return unsafe { self.add_rows_avx2(rows, out) };
        }
        self.add_rows_any(rows, out)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn add_rows_avx2(&self, rows: &[i32], out: &mut [f32]) {
        self.add_rows_any(rows, out)
    }

    #[inline(always)]
    fn add_rows_any(&self, rows: &[i32], out: &mut [f32]) {
        // fastText's language identification model (lid.176) has 16 columns: a fixed width
        // keeps the sums in registers.
        match out.len() {
            16 => self.add_rows_fixed::<16>(rows, out),
            _ => {
                for &r in rows {
                    for (o, &w) in out.iter_mut().zip(self.row(r as usize)) {
                        *o += w;
                    }
                }
            }
        }
    }

    #[inline(always)]
    fn add_rows_fixed<const N: usize>(&self, rows: &[i32], out: &mut [f32]) {
        let mut sum: [f32; N] = out.try_into().expect("N columns");
        for &r in rows {
            let at = r as usize * N;
            let row: &[f32; N] = self.data[at..at + N].try_into().expect("N columns");
            for k in 0..N {
                sum[k] += row[k];
            }
        }
        out.copy_from_slice(&sum);
    }
}

impl Matrix {
    pub(crate) fn rows(&self) -> usize {
        match self {
            Matrix::Dense(m) => m.rows,
            Matrix::Quant(m) => m.rows(),
        }
    }

    pub(crate) fn cols(&self) -> usize {
        match self {
            Matrix::Dense(m) => m.cols,
            Matrix::Quant(m) => m.cols(),
        }
    }

    /// fastText 0.9.2's `Model::computeHidden`: zero, add each row in order, then multiply
    /// by `1.0 / n` computed in double and rounded to f32 (not a division by `n`).
    pub(crate) fn average_rows(&self, rows: &[i32], out: &mut [f32]) {
        out.fill(0.0);
        match self {
            Matrix::Dense(m) => m.add_rows(rows, out),
            Matrix::Quant(m) => {
                for &r in rows {
                    m.add_row_to(out, r as usize);
                }
            }
        }
        let scale = (1.0f64 / rows.len() as f64) as f32;
        for o in out.iter_mut() {
            *o *= scale;
        }
    }

    /// `Matrix::dotRow`: a sequential f32 sum of products.
    #[inline]
    pub(crate) fn dot_row(&self, x: &[f32], i: usize) -> f32 {
        match self {
            Matrix::Dense(m) => {
                let mut d = 0.0f32;
                for (&w, &v) in m.row(i).iter().zip(x) {
                    d += w * v;
                }
                d
            }
            Matrix::Quant(m) => m.dot_row(x, i),
        }
    }
}

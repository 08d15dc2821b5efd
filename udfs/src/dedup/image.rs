//! `image_deduplicator`: exact dedup on the perceptual hashes of a sample's images, as Data-Juicer
//! 1.6.1 computes `__dj__imagehash` with imagededup: each distinct image (in the sample's order)
//! is opened as Pillow opens it, resized with Lanczos and made grayscale (see [`crate::py::pil`]),
//! and hashed to 16 hex digits; the sample's hash is their concatenation.
//!
//! - `phash` (the default): the 8x8 low frequencies of the 32x32 image's DCT (scipy's, to the bit:
//!   [`crate::py::pocketfft`]) against their median;
//! - `ahash`: the 8x8 image against its mean; `dhash`: each pixel of the 9x8 image against its
//!   left neighbour; `whash`: the 8x8 approximation of a 5-level Haar wavelet transform (as
//!   PyWavelets computes it) of the 256x256 image against its median.
//!
//! Samples without images are all kept; `consider_text` pairs the image hash with the text's MD5,
//! as there. A file that cannot be read drops its sample with a warning (`skip_op_error`, the
//! default) or fails the job naming it.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, StringBuilder};
use arrow::datatypes::DataType;
use datafusion_common::Result;
use serde_json::json;

use super::document::document_hash;
use crate::columns::IMAGEHASH_COLUMN;
use crate::filter::media_stats::{row_paths, skips_errors, unreadable};
use crate::operator::{DedupKind, DedupOp, DedupReads, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::py::pil::{open_rgb, resize_lanczos, to_luma};
use crate::py::pocketfft::Dct2;
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{OpUdf, UdfIdentity};

pub(crate) fn image_deduplicator_spec() -> OpSpec {
    OpSpec {
        name: "image_deduplicator",
        kind: OpKind::Deduplicator,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "method",
                    ParamType::Choice(&["phash", "dhash", "whash", "ahash"]),
                    json!("phash"),
                    "the image hash",
                ),
                ParamSpec::new(
                    "consider_text",
                    ParamType::Bool,
                    json!(false),
                    "pair the image hash with the text's MD5",
                ),
            ]
        },
        build,
        doc: "Keep the first sample of each set with the same image hashes (and text, with consider_text).",
    }
}

/// imagededup's hash methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    Perceptual,
    Average,
    Difference,
    Wavelet,
}

impl Method {
    /// The grayscale size the image is resized to (width, height).
    fn size(self) -> (usize, usize) {
        match self {
            Method::Perceptual => (32, 32),
            Method::Average => (8, 8),
            Method::Difference => (9, 8),
            Method::Wavelet => (256, 256),
        }
    }

    /// The 64 bits (row-major) of a resized grayscale image.
    fn bits(self, gray: &[u8]) -> [bool; 64] {
        let mut bits = [false; 64];
        match self {
            Method::Average => {
                // np.mean of 64 integers is exact: compare 64 * pixel with the sum.
                let sum: u32 = gray.iter().map(|&v| u32::from(v)).sum();
                for (b, &v) in bits.iter_mut().zip(gray) {
                    *b = 64 * u32::from(v) >= sum;
                }
            }
            Method::Difference => {
                for r in 0..8 {
                    for c in 0..8 {
                        bits[r * 8 + c] = gray[r * 9 + c + 1] > gray[r * 9 + c];
                    }
                }
            }
            Method::Perceptual => {
                let coef = dct_2d(gray);
                let low: Vec<f64> = (0..64).map(|i| coef[(i / 8) * 32 + i % 8]).collect();
                let median = median(&low[1..]);
                for (b, &v) in bits.iter_mut().zip(&low) {
                    *b = v >= median;
                }
            }
            Method::Wavelet => {
                let ll = haar_approximation(gray, 256, 5);
                let median = median(&ll);
                for (b, &v) in bits.iter_mut().zip(&ll) {
                    *b = v >= median;
                }
            }
        }
        bits
    }
}

/// `scipy.fftpack.dct(scipy.fftpack.dct(a, axis=0), axis=1)` of a 32x32 image.
fn dct_2d(gray: &[u8]) -> Vec<f64> {
    thread_local! {
        static DCT: Dct2 = Dct2::new(32);
    }
    DCT.with(|dct| {
        let mut a: Vec<f64> = gray.iter().map(|&v| f64::from(v)).collect();
        let mut col = [0.0; 32];
        for x in 0..32 {
            for (y, c) in col.iter_mut().enumerate() {
                *c = a[y * 32 + x];
            }
            dct.apply(&mut col);
            for (y, c) in col.iter().enumerate() {
                a[y * 32 + x] = *c;
            }
        }
        for row in a.chunks_mut(32) {
            dct.apply(row);
        }
        a
    })
}

/// `np.median`: the middle value, or the mean of the two middle values.
fn median(values: &[f64]) -> f64 {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// `pywt.wavedec2(gray / 255, 'haar', level=levels)[0]` of a `size` x `size` image: each level
/// filters the columns, then the rows, with PyWavelets' order of operations
/// (`c * x[2i+1] + c * x[2i]`).
fn haar_approximation(gray: &[u8], size: usize, levels: usize) -> Vec<f64> {
    const C: f64 = std::f64::consts::FRAC_1_SQRT_2;
    let mut a: Vec<f64> = gray.iter().map(|&v| f64::from(v) / 255.0).collect();
    let mut n = size;
    for _ in 0..levels {
        let half = n / 2;
        let mut cols = vec![0.0; half * n];
        for i in 0..half {
            for j in 0..n {
                cols[i * n + j] = C * a[(2 * i + 1) * n + j] + C * a[2 * i * n + j];
            }
        }
        let mut next = vec![0.0; half * half];
        for i in 0..half {
            for j in 0..half {
                next[i * half + j] = C * cols[i * n + 2 * j + 1] + C * cols[i * n + 2 * j];
            }
        }
        a = next;
        n = half;
    }
    a
}

/// The 16 hex digits of one image's hash (`np.packbits`, most significant bit first).
fn image_hash(method: Method, path: &str) -> std::result::Result<String, String> {
    let local = crate::remote_media::local_file(path)?;
    let rgb = open_rgb(Path::new(local.as_ref()))?;
    if rgb.width == 0 || rgb.height == 0 {
        return Err("the image is empty".into());
    }
    let (w, h) = method.size();
    let gray = to_luma(&resize_lanczos(&rgb, w, h));
    let bits = method.bits(&gray);
    Ok(bits
        .chunks(8)
        .map(|byte| {
            let b = byte
                .iter()
                .fold(0u8, |acc, &bit| (acc << 1) | u8::from(bit));
            format!("{b:02x}")
        })
        .collect())
}

/// The concatenated hashes of `paths`' distinct images, in first-seen order.
fn images_hash(method: Method, paths: &[String]) -> std::result::Result<String, (String, String)> {
    let mut seen: Vec<&str> = Vec::with_capacity(paths.len());
    let mut out = String::with_capacity(16 * paths.len());
    for path in paths {
        if seen.contains(&path.as_str()) {
            continue;
        }
        seen.push(path);
        out.push_str(&image_hash(method, path).map_err(|e| (path.clone(), e))?);
    }
    Ok(out)
}

fn build(p: &Params) -> std::result::Result<Operator, ParamError> {
    let method = match p.str("method").unwrap_or("phash") {
        "ahash" => Method::Average,
        "dhash" => Method::Difference,
        "whash" => Method::Wavelet,
        _ => Method::Perceptual,
    };
    let consider_text = p.bool("consider_text");
    let skip_errors = skips_errors(p);
    let op = p.op().to_string();
    let f = Arc::new(move |args: &[ArrayRef]| -> Result<ArrayRef> {
        let paths = &args[0];
        let texts = match args.get(1) {
            Some(t) => Some(arrow::compute::cast(t, &DataType::Utf8)?),
            None => None,
        };
        let texts = texts.as_ref().map(|t| t.as_string::<i32>());
        let mut out = StringBuilder::new();
        for row in 0..paths.len() {
            let files = row_paths(&op, paths, row)?.unwrap_or_default();
            let image_hash = if files.is_empty() {
                String::new()
            } else {
                match images_hash(method, &files) {
                    Ok(hash) => hash,
                    Err((path, e)) => {
                        unreadable(&op, skip_errors, "read image", &path, &e)?;
                        out.append_value("");
                        continue;
                    }
                }
            };
            match texts {
                Some(texts) => {
                    let text = texts.is_valid(row).then(|| texts.value(row));
                    let text_hash = document_hash(text.unwrap_or_default(), false, false);
                    out.append_value(format!("{image_hash}\t{text_hash}"));
                }
                None if image_hash.is_empty() => out.append_null(),
                None => out.append_value(image_hash),
            }
        }
        Ok(Arc::new(out.finish()))
    });
    Ok(Operator::Deduplicator(DedupOp {
        hash_column: IMAGEHASH_COLUMN,
        hash_udf: OpUdf::from_fn(UdfIdentity::of(p, ""), Some(DataType::Utf8), f),
        kind: DedupKind::Exact,
        reads: DedupReads::Media {
            column: p.str("image_key").unwrap_or("images").to_string(),
            and_text: consider_text,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_and_simple_images_hash_as_imagededup_does() {
        let flat = vec![77u8; 64];
        // A flat image: every pixel equals the mean.
        assert_eq!(Method::Average.bits(&flat), [true; 64]);
        assert_eq!(Method::Difference.bits(&[5u8; 72]), [false; 64]);
        // A left-to-right ramp: every pixel is brighter than its left neighbour.
        let ramp: Vec<u8> = (0..72).map(|i| (i % 9) as u8 * 20).collect();
        assert_eq!(Method::Difference.bits(&ramp), [true; 64]);
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        // One Haar level of a 2x2 block is half its sum.
        let ll = haar_approximation(&[255, 255, 255, 255], 2, 1);
        assert!((ll[0] - 2.0).abs() < 1e-15, "{ll:?}");
    }
}

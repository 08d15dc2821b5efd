//! The loaded model and its `predict`: file layout (`FastText::loadModel`), consistency checks
//! so prediction can index without bounds surprises, and the per-thread scratch buffers
//! that keep prediction free of allocations after warm-up.

use std::cell::RefCell;
use std::fs::File;
use std::path::Path;

use crate::FastTextError;
use crate::args::{Args, LossKind};
use crate::dictionary::{Dictionary, TokenScratch};
use crate::io::Reader;
use crate::loss::{Loss, LossScratch};
use crate::matrix::{DenseMatrix, Matrix};
use crate::quant::QuantMatrix;

const MAGIC: i32 = 793_712_314;
/// The newest file version fastText 0.9.x writes.
const MAX_VERSION: i32 = 12;
/// Version 11 supervised models were trained without char n-grams.
const VERSION_WITHOUT_SUBWORDS: i32 = 11;
/// `buildTree`'s count of not-yet-built nodes; label counts must stay below it.
const HS_MAX_COUNT: i64 = 1_000_000_000_000_000;

/// A fastText supervised model (`.bin` or quantized `.ftz`), ready to `predict`.
///
/// Immutable after loading, so one instance can serve many threads.
pub struct FastText {
    dim: usize,
    loss_kind: LossKind,
    quantized: bool,
    dict: Dictionary,
    input: Matrix,
    output: Matrix,
    loss: Loss,
    labels: Vec<String>,
}

/// Reusable buffers for [`FastText::predict_with`]; [`FastText::predict`] keeps one per thread.
#[derive(Default)]
pub struct Scratch {
    tokens: TokenScratch,
    hidden: Vec<f32>,
    loss: LossScratch,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl FastText {
    /// Loads a `.bin` or a quantized `.ftz` model as written by fastText 0.9.x.
    pub fn open(path: &Path) -> Result<FastText, FastTextError> {
        let io_err = |source| FastTextError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = File::open(path).map_err(io_err)?;
        // SAFETY: the mapping is read-only and lives only while parsing; everything needed
        // afterwards is copied out. (Truncating the file concurrently would fault, as with
        // any mmap reader.)
        let map = unsafe { memmap2::Mmap::map(&file) }.map_err(io_err)?;
        Self::parse(&map, path)
    }

    /// Parses a model from bytes already in memory; `path` only labels errors.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<FastText, FastTextError> {
        Self::parse(bytes, path)
    }

    fn parse(bytes: &[u8], path: &Path) -> Result<FastText, FastTextError> {
        let mut r = Reader::new(bytes, path);
        let magic = r.i32("header magic number")?;
        if magic != MAGIC {
            return Err(FastTextError::WrongMagic {
                path: path.to_path_buf(),
                found: magic as u32,
                expected: MAGIC as u32,
            });
        }
        let version = r.i32("header version")?;
        if version > MAX_VERSION {
            return Err(FastTextError::UnsupportedVersion {
                path: path.to_path_buf(),
                found: version,
                max: MAX_VERSION,
            });
        }
        let mut args = Args::read(&mut r)?;
        if version == VERSION_WITHOUT_SUBWORDS {
            args.maxn = 0;
        }
        let dict = Dictionary::read(&mut r, &args)?;
        let quantized = r.bool("quantized-input flag")?;
        let input = if quantized {
            Matrix::Quant(QuantMatrix::read(&mut r, "input matrix")?)
        } else {
            Matrix::Dense(DenseMatrix::read(&mut r, "input matrix")?)
        };
        let qout = r.bool("quantized-output flag")?;
        let output = if quantized && qout {
            Matrix::Quant(QuantMatrix::read(&mut r, "output matrix")?)
        } else {
            Matrix::Dense(DenseMatrix::read(&mut r, "output matrix")?)
        };
        check_shapes(&r, &args, &dict, &input, &output, quantized)?;
        let labels = (0..dict.nlabels())
            .map(|i| String::from_utf8_lossy(dict.label(i)).into_owned())
            .collect();
        Ok(FastText {
            dim: args.dim as usize,
            loss_kind: args.loss,
            quantized,
            loss: Loss::new(args.loss, dict.label_counts()),
            dict,
            input,
            output,
            labels,
        })
    }

    /// Exactly Python `fasttext.load_model(p).predict(text, k, threshold)` for one line:
    /// up to `k` `(label, probability)` pairs, best first, labels with their `__label__`
    /// prefix, probabilities as the f32 the C++ computes.
    ///
    /// Python refuses `k <= 0` and text containing `'\n'`; here `k == 0` gives no labels,
    /// `k` above the label count means all labels (Python's `k=-1`), and text after the
    /// first `'\n'` is ignored, as fastText's own line reader does.
    pub fn predict(&self, text: &str, k: usize, threshold: f32) -> Vec<(String, f32)> {
        let mut out = Vec::new();
        self.predict_into(text, k, threshold, &mut out);
        out.into_iter().map(|(l, p)| (l.to_string(), p)).collect()
    }

    /// [`predict`](Self::predict) into a caller-owned vector of borrowed labels, using this
    /// thread's scratch buffers: no allocation once the buffers have grown.
    pub fn predict_into<'a>(
        &'a self,
        text: &str,
        k: usize,
        threshold: f32,
        out: &mut Vec<(&'a str, f32)>,
    ) {
        SCRATCH.with(|cell| match cell.try_borrow_mut() {
            Ok(mut scratch) => self.predict_with(&mut scratch, text, k, threshold, out),
            Err(_) => self.predict_with(&mut Scratch::default(), text, k, threshold, out),
        })
    }

    /// [`predict_into`](Self::predict_into) with explicit scratch buffers.
    pub fn predict_with<'a>(
        &'a self,
        scratch: &mut Scratch,
        text: &str,
        k: usize,
        threshold: f32,
        out: &mut Vec<(&'a str, f32)>,
    ) {
        out.clear();
        let k = k.min(self.labels.len());
        if k == 0 {
            return;
        }
        self.dict.line_to_rows(text.as_bytes(), &mut scratch.tokens);
        let rows = &scratch.tokens.rows;
        if rows.is_empty() {
            return;
        }
        scratch.hidden.resize(self.dim, 0.0);
        self.input.average_rows(rows, &mut scratch.hidden);
        self.loss.predict(
            &self.output,
            &scratch.hidden,
            self.labels.len(),
            k,
            threshold,
            &mut scratch.loss,
        );
        // `FastText::predictLine` reports `std::exp` of the f32 log-score (float `expf`).
        out.extend(
            scratch
                .loss
                .top
                .iter()
                .map(|&(score, label)| (self.labels[label as usize].as_str(), score.exp())),
        );
    }

    /// The labels, in the model's order (by decreasing training count).
    pub fn labels(&self) -> &[String] {
        &self.labels
    }

    /// The vector dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The training loss, which decides how prediction scores labels.
    pub fn loss(&self) -> LossKind {
        self.loss_kind
    }

    /// Whether the input matrix is product-quantized (a `.ftz` model).
    pub fn is_quantized(&self) -> bool {
        self.quantized
    }
}

/// Everything prediction indexes must exist: rows for every id tokenization can produce,
/// output rows for every label (hs: every internal tree node), and matching widths.
fn check_shapes(
    r: &Reader<'_>,
    args: &Args,
    dict: &Dictionary,
    input: &Matrix,
    output: &Matrix,
    quantized: bool,
) -> Result<(), FastTextError> {
    let dim = args.dim as usize;
    if input.cols() != dim || output.cols() != dim {
        return Err(r.invalid(format!(
            "args.dim is {dim} but the input matrix has {} columns and the output matrix {}",
            input.cols(),
            output.cols()
        )));
    }
    if args.uses_buckets() && args.bucket == 0 {
        return Err(r.invalid(format!(
            "args.bucket is 0 but maxn is {} and wordNgrams {}",
            args.maxn, args.word_ngrams
        )));
    }
    let needed = dict.rows_needed();
    if (input.rows() as u64) < needed {
        return Err(r.invalid(format!(
            "input matrix has {} rows, the dictionary needs {needed}",
            input.rows()
        )));
    }
    if !quantized && dict.is_pruned() {
        return Err(r.invalid(
            "pruned dictionary with a dense input matrix (fastText refuses such files; see fastText issue #332)",
        ));
    }
    let nlabels = dict.nlabels();
    if output.rows() < nlabels {
        return Err(r.invalid(format!(
            "output matrix has {} rows for {nlabels} labels",
            output.rows()
        )));
    }
    if args.loss == LossKind::HierarchicalSoftmax
        && dict
            .label_counts()
            .iter()
            .any(|&c| !(0..HS_MAX_COUNT).contains(&c))
    {
        return Err(r.invalid("label count out of range for the hierarchical-softmax tree"));
    }
    Ok(())
}

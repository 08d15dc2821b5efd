//! The model hyper-parameters stored after the file header (fastText's `Args::save`): only
//! the ones prediction needs are kept, the rest (epoch, lr update rate, ...) are skipped.

use crate::FastTextError;
use crate::io::Reader;

/// The training loss, which decides how `predict` turns the hidden vector into labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossKind {
    /// Hierarchical softmax over a Huffman tree of the label counts.
    HierarchicalSoftmax,
    /// Negative sampling: independent sigmoids per label.
    NegativeSampling,
    /// Softmax over all labels.
    Softmax,
    /// One-vs-all: independent sigmoids per label.
    OneVsAll,
}

#[derive(Debug, Clone)]
pub(crate) struct Args {
    pub dim: i32,
    pub word_ngrams: i32,
    pub loss: LossKind,
    pub bucket: i32,
    pub minn: i32,
    pub maxn: i32,
}

const MODEL_SUPERVISED: i32 = 3;

impl Args {
    pub(crate) fn read(r: &mut Reader<'_>) -> Result<Args, FastTextError> {
        let dim = r.i32("args.dim")?;
        let _ws = r.i32("args.ws")?;
        let _epoch = r.i32("args.epoch")?;
        let _min_count = r.i32("args.minCount")?;
        let _neg = r.i32("args.neg")?;
        let word_ngrams = r.i32("args.wordNgrams")?;
        let loss = r.i32("args.loss")?;
        let model = r.i32("args.model")?;
        let bucket = r.i32("args.bucket")?;
        let minn = r.i32("args.minn")?;
        let maxn = r.i32("args.maxn")?;
        let _lr_update_rate = r.i32("args.lrUpdateRate")?;
        let _t = r.f64("args.t")?;
        match model {
            MODEL_SUPERVISED => {}
            1 => {
                return Err(r.unsupported(
                    "unsupervised cbow model (only supervised classifiers can predict)",
                ));
            }
            2 => {
                return Err(r.unsupported(
                    "unsupervised skipgram model (only supervised classifiers can predict)",
                ));
            }
            other => return Err(r.invalid(format!("unknown model kind {other} in args.model"))),
        }
        let loss = match loss {
            1 => LossKind::HierarchicalSoftmax,
            2 => LossKind::NegativeSampling,
            3 => LossKind::Softmax,
            4 => LossKind::OneVsAll,
            other => return Err(r.unsupported(format!("unknown loss {other} in args.loss"))),
        };
        if dim <= 0 {
            return Err(r.invalid(format!("args.dim is {dim}")));
        }
        if bucket < 0 {
            return Err(r.invalid(format!("args.bucket is {bucket}")));
        }
        Ok(Args {
            dim,
            word_ngrams,
            loss,
            bucket,
            minn,
            maxn,
        })
    }

    /// Whether tokenization can produce hashed rows (char n-grams or word n-grams).
    pub(crate) fn uses_buckets(&self) -> bool {
        self.maxn > 0 || self.word_ngrams > 1
    }
}

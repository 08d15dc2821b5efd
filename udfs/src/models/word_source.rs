//! Where Data-Juicer's word-level ops get their words (`get_words_from_document`): a split on
//! space, newline and tab, or, with `tokenization: true`, the pieces of the `{lang}.sp.model`
//! SentencePiece model.

use std::sync::Arc;

use super::SentencePiece;
use crate::params::{ParamError, Params};
use crate::text::words_from_document;

/// The word splitter of one op instance.
#[derive(Debug, Clone)]
pub enum WordSource {
    /// Split on ASCII space, `\n` and `\t`, empty words dropped.
    Whitespace,
    /// `sp_model.encode_as_pieces(text)`.
    Pieces(Arc<SentencePiece>),
}

impl WordSource {
    /// From the op's `tokenization` and `lang` parameters: with tokenization, the SentencePiece
    /// model of `lang`, loaded (once per process) now, so a missing model fails before any work.
    pub(crate) fn from_params(p: &Params) -> Result<WordSource, ParamError> {
        if !p.bool("tokenization") {
            return Ok(WordSource::Whitespace);
        }
        let lang = p
            .str("lang")
            .ok_or_else(|| p.invalid("lang", "must be a language name, got null"))?;
        let (model, _) =
            super::sentencepiece(lang, super::model_dir_of(p)).map_err(|e| p.model_error(e))?;
        Ok(WordSource::Pieces(model))
    }

    /// Calls `f` with the words of `text`.
    pub(crate) fn with_words<R>(
        &self,
        text: &str,
        f: impl FnOnce(&mut dyn Iterator<Item = &str>) -> R,
    ) -> R {
        match self {
            WordSource::Whitespace => f(&mut words_from_document(text)),
            WordSource::Pieces(sp) => super::pieces::with_pieces(sp, text, f),
        }
    }
}

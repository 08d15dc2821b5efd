//! A minimal protobuf (proto2 wire format) decoder for `sentencepiece_model.proto`:
//! only the `ModelProto` fields that influence `encode_as_pieces` are kept, everything else
//! is skipped by wire type, as a protobuf parser would.

/// `ModelProto.SentencePiece.Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PieceType {
    Normal,
    Unknown,
    Control,
    UserDefined,
    Unused,
    Byte,
}

impl PieceType {
    /// Unknown enum numbers leave a proto2 field at its default (NORMAL).
    fn from_wire(value: u64) -> Option<PieceType> {
        Some(match value {
            1 => PieceType::Normal,
            2 => PieceType::Unknown,
            3 => PieceType::Control,
            4 => PieceType::UserDefined,
            5 => PieceType::Unused,
            6 => PieceType::Byte,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub(crate) struct PieceProto {
    pub piece: Vec<u8>,
    pub score: f32,
    pub kind: PieceType,
}

/// `TrainerSpec.model_type`; the raw number is kept so errors can name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ModelType {
    Unigram,
    Bpe,
    Word,
    Char,
}

#[derive(Debug, Clone)]
pub(crate) struct TrainerSpec {
    pub model_type: ModelType,
    /// Set when the file names a model type this crate (and sentencepiece) does not know.
    pub unknown_model_type: Option<u64>,
    pub byte_fallback: bool,
    pub treat_whitespace_as_suffix: bool,
}

impl Default for TrainerSpec {
    fn default() -> Self {
        TrainerSpec {
            model_type: ModelType::Unigram,
            unknown_model_type: None,
            byte_fallback: false,
            treat_whitespace_as_suffix: false,
        }
    }
}

#[derive(Debug, Clone)]
pub(crate) struct NormalizerSpec {
    pub name: String,
    pub precompiled_charsmap: Vec<u8>,
    pub add_dummy_prefix: bool,
    pub remove_extra_whitespaces: bool,
    pub escape_whitespaces: bool,
}

impl Default for NormalizerSpec {
    fn default() -> Self {
        NormalizerSpec {
            name: String::new(),
            precompiled_charsmap: Vec::new(),
            add_dummy_prefix: true,
            remove_extra_whitespaces: true,
            escape_whitespaces: true,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub(crate) struct ModelProto {
    pub pieces: Vec<PieceProto>,
    pub trainer: TrainerSpec,
    pub normalizer: NormalizerSpec,
}

/// Why the bytes are not a `ModelProto`; `offset` is where decoding stopped.
#[derive(Debug, Clone)]
pub(crate) struct DecodeError {
    pub offset: usize,
    pub what: &'static str,
}

enum Value<'a> {
    Varint(u64),
    Fixed64,
    Fixed32(u32),
    Bytes(&'a [u8]),
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    /// Offset of `buf` inside the whole file, for error messages.
    base: usize,
}

impl<'a> Reader<'a> {
    fn new(buf: &'a [u8], base: usize) -> Self {
        Reader { buf, pos: 0, base }
    }

    fn err(&self, what: &'static str) -> DecodeError {
        DecodeError {
            offset: self.base + self.pos,
            what,
        }
    }

    fn varint(&mut self) -> Result<u64, DecodeError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(&byte) = self.buf.get(self.pos) else {
                return Err(self.err("truncated varint"));
            };
            self.pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(value);
            }
        }
        Err(self.err("varint longer than 10 bytes"))
    }

    fn take(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let end = self
            .pos
            .checked_add(len)
            .filter(|&end| end <= self.buf.len())
            .ok_or_else(|| self.err("field extends past the end of its message"))?;
        let bytes = &self.buf[self.pos..end];
        self.pos = end;
        Ok(bytes)
    }

    /// Next `(field number, value)`, or `None` at the end of the message.
    fn field(&mut self) -> Result<Option<(u64, Value<'a>, usize)>, DecodeError> {
        if self.pos >= self.buf.len() {
            return Ok(None);
        }
        let key = self.varint()?;
        let number = key >> 3;
        if number == 0 {
            return Err(self.err("field number 0"));
        }
        let value = match key & 7 {
            0 => Value::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Value::Fixed64
            }
            2 => {
                let len = usize::try_from(self.varint()?)
                    .map_err(|_| self.err("length does not fit in memory"))?;
                let offset = self.base + self.pos;
                let bytes = self.take(len)?;
                return Ok(Some((number, Value::Bytes(bytes), offset)));
            }
            5 => {
                let b = self.take(4)?;
                Value::Fixed32(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            _ => return Err(self.err("unsupported wire type (groups or invalid)")),
        };
        Ok(Some((number, value, self.base + self.pos)))
    }
}

fn expect_bytes<'a>(value: Value<'a>, at: usize) -> Result<&'a [u8], DecodeError> {
    match value {
        Value::Bytes(b) => Ok(b),
        _ => Err(DecodeError {
            offset: at,
            what: "expected a length-delimited field",
        }),
    }
}

fn expect_varint(value: Value<'_>, at: usize) -> Result<u64, DecodeError> {
    match value {
        Value::Varint(v) => Ok(v),
        _ => Err(DecodeError {
            offset: at,
            what: "expected a varint field",
        }),
    }
}

fn parse_piece(buf: &[u8], base: usize) -> Result<PieceProto, DecodeError> {
    let mut piece = PieceProto {
        piece: Vec::new(),
        score: 0.0,
        kind: PieceType::Normal,
    };
    let mut r = Reader::new(buf, base);
    while let Some((number, value, at)) = r.field()? {
        match (number, value) {
            (1, v) => piece.piece = expect_bytes(v, at)?.to_vec(),
            (2, Value::Fixed32(bits)) => piece.score = f32::from_bits(bits),
            (2, _) => return Err(r.err("piece score is not a float")),
            (3, v) => {
                if let Some(kind) = PieceType::from_wire(expect_varint(v, at)?) {
                    piece.kind = kind;
                }
            }
            _ => {}
        }
    }
    Ok(piece)
}

fn parse_trainer(buf: &[u8], base: usize, spec: &mut TrainerSpec) -> Result<(), DecodeError> {
    let mut r = Reader::new(buf, base);
    while let Some((number, value, at)) = r.field()? {
        match number {
            3 => {
                let raw = expect_varint(value, at)?;
                match raw {
                    1 => spec.model_type = ModelType::Unigram,
                    2 => spec.model_type = ModelType::Bpe,
                    3 => spec.model_type = ModelType::Word,
                    4 => spec.model_type = ModelType::Char,
                    other => spec.unknown_model_type = Some(other),
                }
                if (1..=4).contains(&raw) {
                    spec.unknown_model_type = None;
                }
            }
            24 => spec.treat_whitespace_as_suffix = expect_varint(value, at)? != 0,
            35 => spec.byte_fallback = expect_varint(value, at)? != 0,
            _ => {}
        }
    }
    Ok(())
}

fn parse_normalizer(buf: &[u8], base: usize, spec: &mut NormalizerSpec) -> Result<(), DecodeError> {
    let mut r = Reader::new(buf, base);
    while let Some((number, value, at)) = r.field()? {
        match number {
            1 => spec.name = String::from_utf8_lossy(expect_bytes(value, at)?).into_owned(),
            2 => spec.precompiled_charsmap = expect_bytes(value, at)?.to_vec(),
            3 => spec.add_dummy_prefix = expect_varint(value, at)? != 0,
            4 => spec.remove_extra_whitespaces = expect_varint(value, at)? != 0,
            5 => spec.escape_whitespaces = expect_varint(value, at)? != 0,
            _ => {}
        }
    }
    Ok(())
}

/// Decodes a serialized `ModelProto`. Repeated occurrences of a message field merge,
/// and later scalars win, as in protobuf's own parser.
pub(crate) fn parse_model(buf: &[u8]) -> Result<ModelProto, DecodeError> {
    let mut model = ModelProto::default();
    let mut r = Reader::new(buf, 0);
    while let Some((number, value, at)) = r.field()? {
        match number {
            1 => model
                .pieces
                .push(parse_piece(expect_bytes(value, at)?, at)?),
            2 => parse_trainer(expect_bytes(value, at)?, at, &mut model.trainer)?,
            3 => parse_normalizer(expect_bytes(value, at)?, at, &mut model.normalizer)?,
            // 4 (self_test_data) is only checked by sentencepiece's own tests, and
            // 5 (denormalizer_spec) only affects decoding, so both are skipped.
            _ => {}
        }
    }
    Ok(model)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_a_hand_built_model() {
        // pieces { piece: "a" score: -1.5 type: UNKNOWN }, trainer_spec { model_type: BPE }
        let mut piece = vec![0x0a, 1, b'a', 0x15];
        piece.extend_from_slice(&(-1.5f32).to_le_bytes());
        piece.extend_from_slice(&[0x18, 2]);
        let mut buf = vec![0x0a, piece.len() as u8];
        buf.extend_from_slice(&piece);
        buf.extend_from_slice(&[0x12, 2, 0x18, 2]);
        let model = parse_model(&buf).unwrap();
        assert_eq!(model.pieces.len(), 1);
        assert_eq!(model.pieces[0].piece, b"a");
        assert_eq!(model.pieces[0].score, -1.5);
        assert_eq!(model.pieces[0].kind, PieceType::Unknown);
        assert_eq!(model.trainer.model_type, ModelType::Bpe);
        assert!(model.normalizer.add_dummy_prefix);
    }

    #[test]
    fn rejects_truncation() {
        assert!(parse_model(&[0x0a, 5, 1, 2]).is_err());
        assert!(parse_model(&[0x08]).is_err());
        assert!(parse_model(&[0x0b]).is_err());
    }
}

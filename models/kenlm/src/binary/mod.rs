//! Reading KenLM binary files (`build_binary` output) in place: validates the header and
//! computes where each structure lives, exactly as kenlm sizes them, without copying.

pub(crate) mod header;
pub(crate) mod probing;
pub(crate) mod quantize;
pub(crate) mod trie;

use crate::search::MAX_ORDER;
use crate::vocab::{PROBING_VOCAB_ENTRY, ProbingVocab, SortedVocab, Vocab};
use probing::{LONGEST_ENTRY, MIDDLE_ENTRY, ProbingSearch, Table, UNIGRAM_ENTRY, buckets_for};
use quantize::{QUANT_VERSION, Quant};
use trie::{BHIKSHA_VERSION, Middle, Next, Packed, TrieSearch};

const MODEL_NAMES: [&str; 6] = [
    "probing hash tables",
    "probing hash tables with rest costs",
    "trie",
    "trie with quantization",
    "trie with array-compressed pointers",
    "trie with quantization and array-compressed pointers",
];

/// The data structure a model's bytes hold.
#[derive(Debug, Clone)]
pub(crate) enum Structure {
    Probing(ProbingSearch),
    Trie(TrieSearch),
}

/// Where everything lives inside a model's bytes.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub vocab: Vocab,
    pub structure: Structure,
    pub order: usize,
}

/// Running byte offset with overflow-checked advances.
struct Cursor(u64);

impl Cursor {
    fn take(&mut self, bytes: Option<u64>, what: &str) -> Result<usize, String> {
        let start = self.0;
        self.0 = bytes.and_then(|b| start.checked_add(b)).ok_or_else(|| {
            format!("size of the {what} overflows (corrupt n-gram counts in the header)")
        })?;
        usize::try_from(start).map_err(|_| format!("offset of the {what} does not fit in memory"))
    }
}

/// Lays out a binary file whose header `detect` accepted.
pub(crate) fn load(data: &[u8]) -> Result<Layout, String> {
    let head = header::parse(data)?;
    let order = head.counts.len();
    if order > MAX_ORDER {
        return Err(format!(
            "header field order = {order}, but kenlm (and this reader) supports at most order {MAX_ORDER}"
        ));
    }
    if order < 2 {
        return Err(format!(
            "header field order = {order}; at least a bigram model is required"
        ));
    }
    let (name, version) = match head.model_type {
        0 => (MODEL_NAMES[0], 0),
        1 => {
            return Err(format!(
                "header field model_type = 1 ({}) is not supported",
                MODEL_NAMES[1]
            ));
        }
        2..=5 => (MODEL_NAMES[head.model_type as usize], 1),
        t => {
            return Err(format!(
                "header field model_type = {t} is not a known kenlm model type"
            ));
        }
    };
    if head.search_version != version {
        return Err(format!(
            "header field search_version = {} but {name} files have version {version}",
            head.search_version
        ));
    }
    let (vocab, structure, end) = if head.model_type == 0 {
        probing_layout(data, &head)?
    } else {
        trie_layout(data, &head)?
    };
    if (data.len() as u64) < end {
        return Err(format!(
            "truncated: file has {} bytes but its header says the {name} data end at byte {end}",
            data.len()
        ));
    }
    if head.has_vocabulary {
        let at = end as usize;
        if data.get(at..at.saturating_add(6)) != Some(b"<unk>\0".as_slice()) {
            return Err(format!(
                "vocabulary strings should start with \"<unk>\\0\" at byte {at} (truncated or corrupt file)"
            ));
        }
    }
    Ok(Layout {
        vocab,
        structure,
        order,
    })
}

fn probing_layout(data: &[u8], head: &header::Header) -> Result<(Vocab, Structure, u64), String> {
    let multiplier = head.probing_multiplier;
    if multiplier.is_nan() || multiplier < 1.0 {
        return Err(format!(
            "header field probing_multiplier = {multiplier} is below 1.0"
        ));
    }
    let counts = &head.counts;
    let entries = |n: u64, size: usize| buckets_for(n, multiplier).checked_mul(size as u64);
    let mut at = Cursor(head.size as u64);
    let vocab_start = at.take(
        entries(counts[0], PROBING_VOCAB_ENTRY).and_then(|b| b.checked_add(8)),
        "vocabulary",
    )?;
    let version = crate::bytes::u32_at(data, vocab_start);
    if version != 0 {
        return Err(format!(
            "probing vocabulary version {version} at byte {vocab_start}; expected 0"
        ));
    }
    let vocab = ProbingVocab {
        table: vocab_start + 8,
        buckets: buckets_for(counts[0], multiplier),
    };
    let unigrams = at.take(
        counts[0]
            .checked_add(1)
            .and_then(|n| n.checked_mul(UNIGRAM_ENTRY as u64)),
        "unigrams",
    )?;
    let mut middles = Vec::new();
    for &count in &counts[1..counts.len() - 1] {
        let offset = at.take(entries(count, MIDDLE_ENTRY), "middle-order table")?;
        middles.push(Table {
            offset,
            buckets: buckets_for(count, multiplier),
        });
    }
    let last = counts[counts.len() - 1];
    let offset = at.take(entries(last, LONGEST_ENTRY), "highest-order table")?;
    let longest = Table {
        offset,
        buckets: buckets_for(last, multiplier),
    };
    let search = ProbingSearch {
        unigrams,
        unigram_count: counts[0] + 1,
        middles,
        longest,
    };
    Ok((Vocab::Probing(vocab), Structure::Probing(search), at.0))
}

fn trie_layout(data: &[u8], head: &header::Header) -> Result<(Vocab, Structure, u64), String> {
    let counts = &head.counts;
    let order = counts.len();
    let unigram_count = counts[0];
    let mut at = Cursor(head.size as u64);
    let vocab_start = at.take(
        unigram_count.checked_mul(8).and_then(|n| n.checked_add(8)),
        "vocabulary",
    )?;
    let words = crate::bytes::u64_at(data, vocab_start);
    if words > unigram_count {
        return Err(format!(
            "vocabulary at byte {vocab_start} claims {words} words but the header counts {unigram_count} unigrams"
        ));
    }
    let vocab = SortedVocab {
        begin: vocab_start + 8,
        len: words,
    };

    let search_start = at.0 as usize;
    let quantized = matches!(head.model_type, 3 | 5);
    let quant = if quantized {
        let bytes = data
            .get(search_start..search_start.saturating_add(3))
            .ok_or("truncated before the quantization header")?;
        let (version, prob_bits, backoff_bits) = (bytes[0], bytes[1], bytes[2]);
        if version != QUANT_VERSION {
            return Err(format!(
                "quantization version {version} at byte {search_start}; expected {QUANT_VERSION}"
            ));
        }
        if !(1..=25).contains(&prob_bits) || !(1..=25).contains(&backoff_bits) {
            return Err(format!(
                "quantization bits at byte {} (prob {prob_bits}, backoff {backoff_bits}) must be 1..=25",
                search_start + 1
            ));
        }
        at.take(
            Some(Quant::size(order, Some((prob_bits, backoff_bits)))),
            "quantization tables",
        )?;
        Quant::separate(search_start, order, prob_bits, backoff_bits)
    } else {
        Quant::Raw
    };
    let unigrams = at.take(
        unigram_count.checked_add(2).and_then(|n| n.checked_mul(16)),
        "unigrams",
    )?;

    let array_bits = if matches!(head.model_type, 4 | 5) && order > 2 {
        let start = at.0 as usize;
        let bytes = data
            .get(start..start.saturating_add(2))
            .ok_or("truncated before the pointer-compression header")?;
        if bytes[0] != BHIKSHA_VERSION {
            return Err(format!(
                "pointer-compression version {} at byte {start}; expected {BHIKSHA_VERSION}",
                bytes[0]
            ));
        }
        Some(bytes[1])
    } else {
        None
    };
    if crate::bytes::required_bits(unigram_count) > 57 {
        return Err(format!(
            "header counts {unigram_count} unigrams; word ids over 57 bits are not supported"
        ));
    }
    let mut middles = Vec::with_capacity(order - 2);
    for i in 1..order - 1 {
        let (entries, max_next) = (counts[i], counts[i + 1]);
        if entries >= (1 << 57) - 1 || max_next >= 1 << 57 {
            return Err(format!(
                "header counts {entries} {}-grams; at most 2^57 are supported",
                i + 1
            ));
        }
        let base = at.0 as usize;
        let (next, array_size) = Next::layout(base, entries, max_next, array_bits);
        let value_bits = quant.middle_bits() + next.inline_bits();
        let size = Packed::size(entries, unigram_count, value_bits)
            .and_then(|s| s.checked_add(array_size));
        at.take(size, "middle-order array")?;
        let packed = Packed::new(base + array_size as usize, unigram_count, value_bits);
        middles.push(Middle {
            packed,
            quant_bits: quant.middle_bits(),
            next,
        });
    }
    let longest_bits = quant.longest_bits();
    let base = at.take(
        Packed::size(counts[order - 1], unigram_count, longest_bits),
        "highest-order array",
    )?;
    let longest = Packed::new(base, unigram_count, longest_bits);
    let search = TrieSearch {
        unigrams,
        unigram_count,
        quant,
        middles,
        longest,
    };
    Ok((Vocab::Sorted(vocab), Structure::Trie(search), at.0))
}

/// Layout of the probing structure an ARPA file was built into (no file header).
pub(crate) fn probing_from_arpa(data: &[u8], counts: Vec<u64>) -> Result<Layout, String> {
    let head = header::Header {
        probing_multiplier: crate::arpa::PROBING_MULTIPLIER,
        model_type: 0,
        has_vocabulary: false,
        search_version: 0,
        size: 0,
        counts,
    };
    let (vocab, structure, end) = probing_layout(data, &head)?;
    debug_assert_eq!(end, data.len() as u64);
    Ok(Layout {
        vocab,
        structure,
        order: head.counts.len(),
    })
}

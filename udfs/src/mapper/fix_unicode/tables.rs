//! ftfy 6.3.1's data (regexes, single-byte codecs, HTML entities, translate maps) and the code
//! points CPython 3.11's `unicodedata` leaves unassigned, generated from the Python package by
//! `udfs/data/gen_ftfy_tables.py` and parsed once on first use.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::{Regex, RegexBuilder, bytes};

fn parse_cps(s: &str) -> String {
    s.split(' ')
        .filter(|t| !t.is_empty())
        .map(|t| char::from_u32(u32::from_str_radix(t, 16).expect("hex")).expect("code point"))
        .collect()
}

fn regex_source(name: &str) -> &'static str {
    include_str!("../../../data/ftfy_regexes.txt")
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix('\t'))
        .unwrap_or_else(|| panic!("ftfy regex {name} missing"))
}

fn str_regex(name: &str) -> Regex {
    RegexBuilder::new(regex_source(name))
        .size_limit(64 << 20)
        .build()
        .expect("ftfy regex")
}

fn bytes_regex(name: &str) -> bytes::Regex {
    bytes::Regex::new(regex_source(name)).expect("ftfy bytes regex")
}

/// `badness.BADNESS_RE` (only searched: `is_bad`).
pub(crate) static BADNESS: LazyLock<Regex> = LazyLock::new(|| str_regex("BADNESS"));
/// `chardata.UTF8_DETECTOR_RE` without its leading one-character negative lookbehind…
pub(crate) static UTF8_DETECTOR: LazyLock<Regex> = LazyLock::new(|| str_regex("UTF8_DETECTOR"));
/// …which is this class, checked by hand against the character before a match.
pub(crate) static UTF8_DETECTOR_LOOKBEHIND: LazyLock<Regex> =
    LazyLock::new(|| str_regex("UTF8_DETECTOR_LOOKBEHIND"));
pub(crate) static HTML_ENTITY: LazyLock<Regex> = LazyLock::new(|| str_regex("HTML_ENTITY"));
pub(crate) static ANSI: LazyLock<Regex> = LazyLock::new(|| str_regex("ANSI"));
pub(crate) static ALTERED_UTF8: LazyLock<bytes::Regex> =
    LazyLock::new(|| bytes_regex("ALTERED_UTF8"));
pub(crate) static LOSSY_UTF8: LazyLock<bytes::Regex> = LazyLock::new(|| bytes_regex("LOSSY_UTF8"));

/// One of ftfy's single-byte codecs (Python's charmap, or ftfy's "sloppy-" variant of it).
pub(crate) struct Charmap {
    pub name: &'static str,
    /// `bytes([b]).decode(name)`, `None` where strict decoding fails.
    pub decode: [Option<char>; 256],
    /// The inverse of `decode` over bytes 0x80..=0xFF and 0x1A: the non-ASCII part of the set
    /// `possible_encoding` accepts (ASCII other than 0x1A encodes as itself in every codec here).
    encode: HashMap<char, u8>,
}

impl Charmap {
    fn parse(line: &'static str) -> Charmap {
        let (name, table) = line.split_once('\t').expect("charmap line");
        let mut decode = [None; 256];
        for (b, t) in table.split(' ').enumerate() {
            if t != "-" {
                decode[b] = char::from_u32(u32::from_str_radix(t, 16).expect("hex"));
            }
        }
        let mut encode = HashMap::new();
        for b in (0x80..=0xFFu8).chain([0x1A]) {
            if let Some(c) = decode[b as usize] {
                encode.insert(c, b);
            }
        }
        Charmap {
            name,
            decode,
            encode,
        }
    }

    #[inline]
    fn byte_of(&self, c: char) -> Option<u8> {
        if c.is_ascii() && c != '\x1a' {
            Some(c as u8)
        } else {
            self.encode.get(&c).copied()
        }
    }

    /// `text.encode(name)` if every character is encodable (`chardata.possible_encoding`).
    pub fn encode(&self, text: &str) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(text.len());
        for c in text.chars() {
            out.push(self.byte_of(c)?);
        }
        Some(out)
    }

    pub(crate) fn is_sloppy(&self) -> bool {
        self.name.starts_with("sloppy")
    }
}

struct Charmaps {
    /// `chardata.CHARMAP_ENCODINGS`, in ftfy's order of preference.
    candidates: Vec<Charmap>,
    /// Python's strict `windows-1252`.
    windows_1252: Charmap,
}

static CHARMAPS: LazyLock<Charmaps> = LazyLock::new(|| {
    let mut all: Vec<Charmap> = include_str!("../../../data/ftfy_charmaps.txt")
        .lines()
        .map(Charmap::parse)
        .collect();
    let windows_1252 = all.pop().expect("windows-1252 last");
    assert_eq!(windows_1252.name, "windows-1252");
    Charmaps {
        candidates: all,
        windows_1252,
    }
});

pub(crate) fn candidate_charmaps() -> &'static [Charmap] {
    &CHARMAPS.candidates
}

pub(crate) fn windows_1252() -> &'static Charmap {
    &CHARMAPS.windows_1252
}

pub(crate) fn sloppy_windows_1252() -> &'static Charmap {
    &CHARMAPS.candidates[1]
}

pub(crate) struct Html {
    /// ftfy's `HTML_ENTITIES`: `&name;` (and upper-case variants) -> text.
    pub entities: HashMap<&'static str, String>,
    /// `html._invalid_charrefs`.
    pub invalid_charrefs: HashMap<u32, String>,
    /// `html._invalid_codepoints`.
    pub invalid_codepoints: std::collections::HashSet<u32>,
}

pub static HTML: LazyLock<Html> = LazyLock::new(|| {
    let mut html = Html {
        entities: HashMap::new(),
        invalid_charrefs: HashMap::new(),
        invalid_codepoints: Default::default(),
    };
    for line in include_str!("../../../data/ftfy_html.txt").lines() {
        let mut f = line.split('\t');
        match (f.next(), f.next(), f.next()) {
            (Some("E"), Some(name), Some(cps)) => {
                html.entities.insert(name, parse_cps(cps));
            }
            (Some("R"), Some(num), Some(cps)) => {
                let num = u32::from_str_radix(num, 16).expect("hex");
                html.invalid_charrefs.insert(num, parse_cps(cps));
            }
            (Some("X"), Some(num), None) => {
                html.invalid_codepoints
                    .insert(u32::from_str_radix(num, 16).expect("hex"));
            }
            _ => panic!("bad ftfy_html.txt line {line:?}"),
        }
    }
    html
});

pub(crate) struct Translate {
    /// `chardata.WIDTH_MAP`.
    pub width: HashMap<char, String>,
    /// `chardata.LIGATURES`.
    pub ligatures: HashMap<char, String>,
}

pub(crate) static TRANSLATE: LazyLock<Translate> = LazyLock::new(|| {
    let mut t = Translate {
        width: HashMap::new(),
        ligatures: HashMap::new(),
    };
    for line in include_str!("../../../data/ftfy_translate.txt").lines() {
        let mut f = line.split('\t');
        let (kind, key, value) = (f.next(), f.next(), f.next());
        let key = key
            .and_then(|k| u32::from_str_radix(k, 16).ok())
            .and_then(char::from_u32)
            .expect("translate key");
        let value = parse_cps(value.expect("translate value"));
        match kind {
            Some("W") => t.width.insert(key, value),
            Some("L") => t.ligatures.insert(key, value),
            _ => panic!("bad ftfy_translate.txt line {line:?}"),
        };
    }
    t
});

/// Ranges (first, last) of the code points unassigned in CPython 3.11's `unicodedata` (Unicode
/// 14.0.0), sorted.
static UNASSIGNED: LazyLock<Vec<(u32, u32)>> = LazyLock::new(|| {
    include_str!("../../../data/ftfy_unassigned.txt")
        .lines()
        .map(|line| {
            let (a, b) = line.split_once('\t').expect("unassigned range");
            let hex = |t: &str| u32::from_str_radix(t, 16).expect("hex");
            (hex(a), hex(b))
        })
        .collect()
});

/// Is `c` unassigned in Unicode 14.0.0 (the version ftfy's `unicodedata.normalize` knows)?
pub(crate) fn is_unassigned(c: char) -> bool {
    let c = c as u32;
    // Everything below U+0378 is assigned: spares the lookup for most Latin text.
    if c < 0x378 {
        return false;
    }
    let i = UNASSIGNED.partition_point(|&(_, last)| last < c);
    UNASSIGNED.get(i).is_some_and(|&(first, _)| first <= c)
}

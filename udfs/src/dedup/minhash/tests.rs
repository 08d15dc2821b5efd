//! MinHash against Data-Juicer 1.6.1: numpy permutations, signatures, band bytes, scipy integrals
//! and band parameters, and the kept rows of the golden corpus.

use super::permute::MAX_HASH;
use super::*;
use crate::test_support::{big_texts, build, invoke, udf};
use arrow::array::{LargeStringArray, ListArray, StringArray, StringViewArray};
use md5::Md5;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn md5_hex(bytes: &[u8]) -> String {
    hex(&Md5::digest(bytes))
}

/// MD5 of the values as big-endian u64 bytes (numpy's `hash_values.byteswap().tobytes()`).
fn sig_md5(sig: &[u32]) -> String {
    let bytes: Vec<u8> = sig.iter().flat_map(|&v| (v as u64).to_be_bytes()).collect();
    md5_hex(&bytes)
}

/// Python's `float.hex()` text back to a float.
fn from_py_hex(s: &str) -> f64 {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let s = s.strip_prefix("0x").unwrap();
    let (mant, exp) = s.split_once('p').unwrap();
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let mut m = u64::from_str_radix(int, 16).unwrap() as f64;
    for (i, c) in frac.chars().enumerate() {
        m += c.to_digit(16).unwrap() as f64 * 16f64.powi(-(i as i32 + 1));
    }
    let v = m * 2f64.powi(exp.parse().unwrap());
    if neg { -v } else { v }
}

fn hasher(
    tok: &str,
    window_size: usize,
    lowercase: bool,
    ignore: Option<&str>,
    bands: (usize, usize),
) -> MinHasher {
    MinHasher::new(&MinHashConfig {
        tokenization: Tokenization::from_name(tok).unwrap(),
        window_size,
        lowercase,
        ignore_pattern: ignore.map(String::from),
        num_bands: Some(bands.0),
        num_rows_per_band: Some(bands.1),
        ..MinHashConfig::default()
    })
    .unwrap()
}

/// Every value as its own band, so the signature is checked whole.
fn all_values(tok: &str, window_size: usize, lowercase: bool, ignore: Option<&str>) -> MinHasher {
    hasher(tok, window_size, lowercase, ignore, (256, 1))
}

/// The texts of the signature cases (the same strings as the Python generator).
const TEXTS: [&str; 7] = [
    "The quick brown fox jumps over the lazy dog. The quick brown fox jumps again!",
    "Hello,  World!\tThis is a  TEST of the MinHash deduplicator;\nnew line here, ok?",
    "数据处理是一个很重要的步骤，数据清洗和去重都很常见。",
    "short text",
    "",
    "a b c d e",
    "İstanbul ΣΑΣ straße ﬁ — “quotes” … end, of: the; text!",
];

/// (text index, tokenization, window_size, lowercase, ignore_pattern `\p{P}`, first four
/// values, MD5 of all 256 values as big-endian u64 bytes), from Data-Juicer 1.6.1 run with
/// 256 bands of 1 row (so its `__dj__minhash` holds every value).
type SignatureCase = (usize, String, usize, bool, bool, [u32; 4], String);

fn signature_cases() -> Vec<SignatureCase> {
    serde_json::from_str(include_str!("../../../data/golden/minhash_signatures.json"))
        .expect("minhash_signatures.json")
}

/// All 256 values (hex u32s) under the defaults for text 1 and each tokenization.
const FULL_SIGNATURES: &[(&str, &str)] = &[
    (
        "space",
        "144c38e5259067b33c409f3f0ad2fae41e6cac8022d933670d2d4ca70ae7bbb837894aee0f621b32347fc200\
         0a4680fe2fa9ca3a0d06bda61fe0bc1c22a8ad2203a35b240539258661f731d0292e942d0c5e64ba2b39750e\
         2ecf5ad003ad7526037b4d0a182a89d90b8701970cf6d91504b80a0312df14d705620a63017dd07102c20e7e\
         12e4f8e12011a6b80ba357b122d986ae3a600cab0b4556e3378ea667174148e440f44b7a0660e9062973c086\
         16b7899620fac7f20b70fc8922021a8b06d90c010104eba81b8dfb7100b50a34282bb0bc470cb1c752869455\
         0de0dfdd2392afd4293e41290b985e6d2b6b5386205ad8fa0cf966490efa314316c0755402b132334006395b\
         25a2bb2a0ad3f63202981d0f250ce087503f2da108b90c3b09219d58328a48224dd32a0224137f8b2e92f398\
         35a3c29e111692bf1fca00fb312762531cf12dea33e673fe27c01e8b0d04d7c73a2d5b8d3edb127e15a44de8\
         040680892347d3021a00a1ee003bdb6c165703571aaaf1c9076ade272ed6898e34c148d6167c891921831e07\
         12d406311e2662b81f8b50781217b65f0152b8ca161c7e631295c66e19b45a9b3d7cc8fd2035b227084a525e\
         08a4f6311f1d96ed15c3de9400291f4c1fef1a36346056b22a35f4054f2c92251dad40ec047e1aab298a7177\
         06217b5021e27a1a0aafac3e2c03a9044963adc81e8610e42c2ef1651382faf50d575ccb1ade1d053b838a67\
         73dcd924098bfca6134c23c72bf7322b066b17e1033771cd300f6ade1ea7da340f23f80105d6c52b28187fcf\
         0446132f06e285280c44b60a00aa5f801bf900ae741a97ea1051ee6719ac260106f8608025cd9fb54fcc1c16\
         53c2583a13787a7b0eaa4ca10839c56928f7fcc2106a7027519f9f80370b2784288e0cf3382279391d2bb069\
         0b4801ed065f496b37c1788f3e0672c61a9e506c0bb130fc0e2e2f4f3badae54004c4fa5540faf3d0155967e\
         1198511114389ef72ef7a8d40c65320c011b50645ccfb6d712bd5cb9154a56914a834acb0d7a4ee20c084994\
         109bbc1f31a0b39f0db819c9287b16932e9bbb116242223b142be0cc00a772ff4bce84170cc04c112251760b\
         14d3532b1a6245d40d31f99d3d878a563272a17f1fb9e5d9105c7e890df8ee5513a9c50325ebb5b504ebadaa\
         151edb850d055bda000d0c2b7731e2400b37710f31acd2e006273b7614553daa161dc1721359545a22337da3\
         03c68fb0021accbe09f6abd00a89a6961af6aaa2439010572e14cab713bc8f2816fba2d21cb09f64431fa121\
         041b20ee0f10ee8707dcb25f338519ba1a086e14053a98d2052a71c62b8ce5e327159ba318636e86027e4b50\
         111747c4076ad7384407b8b93b41788211825c6e059244223420205839a1dc2c02261bad03679bd809dbb6a2\
         03b322d512f371ce0f4ed82c",
    ),
    (
        "punctuation",
        "485213e0910e4d34c08e5abfb4b9b9b83ab35e259590902f454912e88cb26b970ff9d1e66182e93fa33245fc\
         05d5ea001f71a6ba8b1cdaa45e0209de869925d8146b3ae215e994317ca9ba33ac74d32c92dcf0852413cae2\
         fb96deb17e8d662f57b209f283a4313a48488a49a244ee131ff9a8341809c0da2717da0d72209492d105ec3d\
         3cb39ebb9bbca16e6023d1e484122459156e6411a38401da442fc005a5dad49636675e7a3882c821cb209154\
         045287202008d097005c640a960fed593b05960d2bc608c5060a06d1de95297c13df17996cbf07963f15c980\
         5b36e8e9d21f34e67c3729a37ae8d0921164ad8b13a87bb417fdf98662979ce61f6fc10125601cb5a314b768\
         94683a437854609386bb7a30ecb1e2b5918e0b5c01e6dc81199fa19de659cce4115aa4fb12872edc0b7ce09c\
         d89ce9e41cabefb95f1e21709a766d7c9bfc6dc11b67211c0ce0f740503414933260bdf3014855bc8b8de309\
         3fe656313d11c4b172e790977ce359a943dee79b3f40faa445dad34764039d0f9ee32e7c59c16fbd7b7554d5\
         0dbb237bc5d8249988c0cefb61251c689efafa027d57f87c04cdb220dfc54e1001515a46944412b7b127aae5\
         79e134b52cd28648164c72f6895878c28b07fa03a4f2e4ba2f4bb9a391968bbf1ba86e3318a042ac07690c9a\
         cb297ead59b2255405251f14a3db70c36696b199d8be403f5244ff79987b6de6056f02ac777a3b5559538992\
         5525839c53db211c3d2bed45d4b29fa33eb223760f194fb11fad805092f79307604b205b20a5e0a89cbb2c15\
         beb1abac01116bb891c625fb0838ee2827fb163a3cf4e038584d1bf7229cccdf9ae147370a753fc416b59c3c\
         16509ead0d42236c0ae5d2a529bd6f896e8083d72544e61b8a70f038691509386e96ddeb8fe13672412557f5\
         46b1b1266a919b4fc2ba2f1b33726cbc9e34281b6123bdb84e90f0ab1fe096e41a6c9f0e163d50ba0e2544dc\
         4a583fa8e60d1e4585e470112046bce2d857deb360b3be9f014599a2284659353e85ba1537713dbba09daa9f\
         326ea00e74353f250cbdaf5499446788a07d16395c9601619bbb09f80c58e9432c8beb9a1ab1622379cfdf3d\
         5a4102e6443f304012a27c5a1e0e542cd17fa6cd0fd83b52321dad5477aaff5065196eccb5a5489644109190\
         35311788b63c347a0b24819115e7ba15ac58536b759b92b002c8ade22041e52f7faea35fbe63a662659e3b98\
         378996db9142bd1003f9018c0b4c030023a6fca4477b4e586f0ebe782b8ceea91580d169b01104192663d84f\
         780bdb7685c74df07b91a4b5566e0c10bb2a8567dcc16be58a08d04f02913923299d291962418bdb54b03914\
         2c44f97106c842775fe0adab147237d82bbe708c4efa275c1da633d5b29436720fa994b130fe7ba44bdc4cc3\
         256ae818bc665e941d31c322",
    ),
    (
        "character",
        "07f287e100870c5f0107aec2036efd4103d9ab12036d5cc800f73167023e41bb0021407b004ed312055a18d7\
         02053383014bd95200f0dfdc009f4c0002a3eb7b007203c903281cfe0118ced20228d81300fcd94e0169e0df\
         02b83a5e0005bd9f000ebf590b7fc35c00e5baf804e0e00102d4362d003ed74e02d06bc1076e18ae05809bb5\
         06dab46b006b5adc03c51bd80047b74b0160b11b05e0656208545ccc01d74fdf012312c2066aaf4100760db0\
         00dc039a0500ad3e00b532480147daa005e81d8505c9791b079ece9400cd4d77058cd85a073b0e4f03434e9e\
         00fa7eb70146f79801cfce7a02dc78c30047303f03208ef7005ec100043f577d022f22ed012948b3019e67eb\
         01909d4e00d25e48011b225004b58a25069bf4ce01d307fa083b4f4903cd1f4f0074eaa40123146605376343\
         0072315e089b52c502ba32f7035bb67403e658e4017f6a8f03aa246d06a9727f01c7c3cb03156b0501cfe87a\
         03a41b8401ae8c47011a3e120efa2e9f003b638c03dbf8270245380e03a12d48012f5d3c01dc79ec03546915\
         05260664048265d702c17f5410418afb0917069a002003df02b6419007d56adb012c37f90bc90b9701032fc2\
         01ccf72f01df9b7e01523a4c0103a91201cf2a4603305f750772bfb600f03fa40334361607c30ab208c25edc\
         033e047d01eb01e90596f9cb02fc9e9303298423037580c201c4fdb3009e446a0212e9eb00c051360282b377\
         0d1b2297042d450b02f98a6000eae0dc0403286b00db58bf008c96b205e4609801292b8101008b1809c6541b\
         03f60dd50081b8e502aa950c01cf8cc006af3dd20098244301330d1600ee189e00835876023bd42203cd8e04\
         000e993e0312e5cc0092dd1f07435c3600e239c805a65c1a03cd77d90043e0f1015aebbe0454bd56022fe445\
         1226f80a00ea69a903de6e6a01eb1faf0200ddbc005082270689821e15d8e23d0083fa5f0042132700134b98\
         00073bee004325b80124efec0c2535ea001d16ac03542d4300092f650a10ba7909b7af0904083fc0013920ca\
         0267be2002531af6052b332605bcb8af01f2941600b0ebde044182d800bee8390049ffd3043f914d02ee518a\
         005264b90283b52d01b445af00b8368200a9c9640066943901d9460601eb5873081911d100d6fefb01fd8ff2\
         0c9af4be00fd1f0603036b57001e82e001c507a8066019e101a812a000460578029b473a0277139710f55ed0\
         037579d70104f7e903e9700202bc5bec0206ddbe02e05bad0335f69e0423332d0407e7040084302e030cf7f1\
         04d7d34b02b9901c06dbd0c007d2d5370088c0900615c589060c53c4050acd7e085495c801a5a115008151b7\
         0521574304c5037300fd16b60a48ac2402bef9f5062b6ab10304e45b003849170019e89004fbc3e800f8a8e0\
         0473120601c877d014b3b304",
    ),
];

/// (threshold, num_perm, b, r): Data-Juicer's `optimal_param` with scipy 1.17.1. Thresholds
/// are Python reprs, parsed here (exactly) rather than by the JSON reader.
fn optimal_cases() -> Vec<(f64, usize, usize, usize)> {
    let rows: Vec<(String, usize, usize, usize)> = serde_json::from_str(include_str!(
        "../../../data/golden/minhash_optimal_params.json"
    ))
    .expect("minhash_optimal_params.json");
    rows.into_iter()
        .map(|(t, n, b, r)| (t.parse().expect("a float"), n, b, r))
        .collect()
}

/// (threshold, b, r, FP, FP abserr, FN, FN abserr) from `scipy.integrate.quad`, as hex floats.
/// Thresholds are Python reprs, parsed here (exactly) rather than by the JSON reader.
type IntegralCase = (String, usize, usize, String, String, String, String);

fn integral_cases() -> Vec<IntegralCase> {
    serde_json::from_str(include_str!("../../../data/golden/minhash_integrals.json"))
        .expect("minhash_integrals.json")
}

#[test]
fn permutations_match_data_juicer() {
    let (a, b) = permutations(256);
    assert_eq!(
        a[..5],
        [
            2297359619001564596,
            1973689801170867272,
            572192888165898362,
            1071453510346823115,
            1865242737500154728
        ]
    );
    assert_eq!(
        b[..5],
        [
            1396682528897996046,
            1819927849474927636,
            571748048327668950,
            2143071682933157236,
            1532418594269339778
        ]
    );
    assert_eq!((a[255], b[255]), (2092141031243851673, 797693216700694537));
    let sum = |v: &[u64]| v.iter().fold(0u64, |s, &x| s.wrapping_add(x));
    assert_eq!(sum(&a), 10096008028169204450);
    assert_eq!(sum(&b), 76026049901293307);
    let (a1k, b1k) = permutations(1000);
    assert_eq!(a1k[..256], a[..]);
    assert_eq!(b1k[..256], b[..]);
    assert_eq!(
        (a1k[999], b1k[999]),
        (1052473880581149290, 593746849069409621)
    );
}

#[test]
fn token_hashes_match_data_juicer() {
    for (s, want) in [
        ("", 4003674586u32),
        ("a", 937752454),
        ("hello world", 896314922),
        ("数据处理", 369308349),
        ("the quick brown fox jumps", 1208285777),
        ("😀 x", 787239091),
    ] {
        assert_eq!(sha1_hash32(s.as_bytes()), want, "{s:?}");
    }
    // Reduction modulo 2^61 - 1 agrees with `%` everywhere, including the wrap-around.
    for x in [
        0,
        1,
        MERSENNE_PRIME - 1,
        MERSENNE_PRIME,
        MERSENNE_PRIME + 1,
        u64::MAX,
        1 << 63,
    ] {
        assert_eq!(permute::mod_mersenne(x), x % MERSENNE_PRIME, "{x}");
    }
    let (h, a, b) = (u32::MAX, u64::MAX - 5, u64::MAX - 1);
    let want = (((h as u64).wrapping_mul(a).wrapping_add(b)) % MERSENNE_PRIME) & 0xffff_ffff;
    assert_eq!(permute(h, a, b) as u64, want);
}

#[test]
fn signatures_match_data_juicer() {
    let mut hashers: HashMap<(&str, usize, bool, bool), MinHasher> = HashMap::new();
    let cases = signature_cases();
    for (t, tok, w, lower, ignore, first, md5) in &cases {
        let (t, tok, w, lower, ignore) = (*t, tok.as_str(), *w, *lower, *ignore);
        let h = hashers
            .entry((tok, w, lower, ignore))
            .or_insert_with(|| all_values(tok, w, lower, ignore.then_some(r"\p{P}")));
        let sig = h.signature(TEXTS[t]);
        let case = format!("text {t} {tok} w={w} lower={lower} ignore={ignore}");
        assert_eq!(sig.len(), 256, "{case}");
        assert_eq!(sig[..4], first[..], "{case}");
        assert_eq!(sig_md5(&sig), *md5, "{case}");
        // Data-Juicer's band bytes of one-row bands are the values' 8 big-endian bytes.
        assert_eq!(h.dj_band(&sig, 3), (sig[3] as u64).to_be_bytes(), "{case}");
    }
    for &(tok, want) in FULL_SIGNATURES {
        let sig = all_values(tok, 5, true, None).signature(TEXTS[1]);
        let got: String = sig.iter().map(|v| format!("{v:08x}")).collect();
        assert_eq!(got, want, "{tok}");
    }
}

#[test]
fn long_texts_match_data_juicer() {
    // MD5 of the concatenated default `__dj__minhash` bands of big_texts() per tokenization.
    let want = [
        (
            "space",
            [
                "dd76d7b03bbd3c623914e93ca193605e",
                "039ac8a784ac0eaddd405714e01d2ff2",
                "039ac8a784ac0eaddd405714e01d2ff2",
            ],
        ),
        (
            "punctuation",
            [
                "46517f7224f374ff26f71e31a3f583fe",
                "039ac8a784ac0eaddd405714e01d2ff2",
                "039ac8a784ac0eaddd405714e01d2ff2",
            ],
        ),
        (
            "character",
            [
                "9306d06a5650218b74ce40d33caf7911",
                "3f8128b956a74520795b4dfd1373754d",
                "064795f0d964f081a3b4fa675052ac49",
            ],
        ),
    ];
    let texts = big_texts();
    for (tok, want) in want {
        let h = hasher(tok, 5, true, None, (25, 10));
        for (text, want) in texts.iter().zip(want) {
            assert_eq!(md5_hex(&h.dj_minhash(text).concat()), want, "{tok}");
        }
    }
}

#[test]
fn band_bytes_match_data_juicer() {
    let h = MinHasher::new(&MinHashConfig::default()).unwrap();
    assert_eq!((h.num_bands(), h.rows_per_band()), (25, 10));
    let bands = h.dj_minhash(TEXTS[0]);
    assert_eq!(bands.len(), 25);
    assert!(bands.iter().all(|b| b.len() == 80));
    assert_eq!(
        hex(&bands[0]),
        "000000000b24e302000000000385cf540000000003d3b1e30000000026103bd5000000001116c0c5\
         0000000033b29c5f00000000473aea27000000001cc5dc6c000000000756678d0000000005ccf36f"
    );
    assert_eq!(
        hex(&bands[24]),
        "0000000001cc8d260000000002bbc287000000001940ac5500000000048948bd0000000022d28be8\
         0000000067c22a4b000000000650ec3a00000000326505e2000000000935b12f000000000a6933fc"
    );
    assert_eq!(md5_hex(&bands.concat()), "12f5a1004cea121480c1905b43ac9505");
    // Keys: the band index as a big-endian u32, then the band bytes.
    let keys = h.band_keys(TEXTS[0]);
    for (i, (k, b)) in keys.iter().zip(&bands).enumerate() {
        assert_eq!(k[..4], (i as u32).to_be_bytes());
        assert_eq!(k[4..], b[..]);
    }

    // Bands reaching past the signature are cut (Python slicing), here 16 permutations.
    let cfg = |b, r| MinHashConfig {
        num_permutations: 16,
        num_bands: Some(b),
        num_rows_per_band: Some(r),
        ..MinHashConfig::default()
    };
    let h = MinHasher::new(&cfg(5, 4)).unwrap();
    let got: Vec<String> = h.dj_minhash(TEXTS[0]).iter().map(|b| hex(b)).collect();
    assert_eq!(
        got,
        [
            "000000000b24e302000000000385cf540000000003d3b1e30000000026103bd5",
            "000000001116c0c50000000033b29c5f00000000473aea27000000001cc5dc6c",
            "000000000756678d0000000005ccf36f0000000000eee0db00000000096ae228",
            "00000000084d569b00000000055fd6240000000007f00c180000000009d94e2d",
            "",
        ]
    );
    // ...so every text shares the key of the empty band 4, as all of Data-Juicer's rows do.
    assert_eq!(h.band_keys("anything at all")[4], [0, 0, 0, 4]);
    let h = MinHasher::new(&cfg(3, 7)).unwrap();
    let got: Vec<String> = h.dj_minhash(TEXTS[0]).iter().map(|b| hex(b)).collect();
    assert_eq!(
        got,
        [
            "000000000b24e302000000000385cf540000000003d3b1e30000000026103bd5000000001116c0c5\
             0000000033b29c5f00000000473aea27",
            "000000001cc5dc6c000000000756678d0000000005ccf36f0000000000eee0db00000000096ae228\
             00000000084d569b00000000055fd624",
            "0000000007f00c180000000009d94e2d",
        ]
    );
}

#[test]
fn empty_shingle_sets_are_all_max_hash() {
    // Fewer tokens than the window: Data-Juicer 1.6.1 stores MAX_HASH for every permutation
    // (see the all-0xffffffff rows of minhash_signatures.json: "", "short text", one CJK "word").
    let h = MinHasher::new(&MinHashConfig::default()).unwrap();
    for text in ["", "   ", "short text", "a b c d", TEXTS[2]] {
        assert!(h.shingle_hashes(text).is_empty(), "{text:?}");
        assert!(h.signature(text).iter().all(|&v| v == MAX_HASH), "{text:?}");
        let bands = h.dj_minhash(text);
        assert_eq!(hex(&bands[0]), "00000000ffffffff".repeat(10));
    }
    let c = hasher("character", 5, true, None, (25, 10));
    assert!(c.shingle_hashes("abcd").is_empty());
    assert_eq!(c.shingle_hashes("abcde").len(), 1);
    // One window exactly.
    assert_eq!(h.shingle_hashes("a b c d e"), [sha1_hash32(b"a b c d e")]);
    let p = hasher("punctuation", 5, true, None, (25, 10));
    assert!(p.shingle_hashes("a,b,c,d").is_empty());
    assert_eq!(p.shingle_hashes("a,b,,d"), Vec::<u32>::new());
    assert_eq!(p.shingle_hashes(",b,,d,"), [sha1_hash32(b" b  d ")]);
}

#[test]
fn shingles() {
    let collect = |h: &MinHasher, text: &str| {
        let mut out = Vec::new();
        h.for_each_shingle(text, |s| out.push(String::from_utf8(s.to_vec()).unwrap()));
        out
    };
    // Space: only ' ' separates; "\n" and "\t" stay inside tokens; runs of spaces collapse.
    let s = hasher("space", 2, false, None, (1, 1));
    assert_eq!(collect(&s, " a  b\tc\nd "), ["a b\tc\nd"]);
    assert_eq!(collect(&s, "x y x y"), ["x y", "y x", "x y"]);
    assert_eq!(s.shingle_hashes("x y x y").len(), 2);
    // Punctuation: split on each `\p{P}` character (the regex module's tables), empties kept.
    let p = hasher("punctuation", 2, false, None, (1, 1));
    assert_eq!(
        collect(&p, ",a,,b\u{2e60}c,"),
        [" a", "a ", " b", "b c", "c "]
    );
    assert!(is_regex_punctuation('\u{2e60}') && is_regex_punctuation('\u{10ed0}'));
    assert!(is_regex_punctuation('_') && is_regex_punctuation('。'));
    assert!(!is_regex_punctuation('$') && !is_regex_punctuation('+'));
    // Character: code points, not bytes.
    let c = hasher("character", 2, false, None, (1, 1));
    assert_eq!(collect(&c, "数据a😀"), ["数据", "据a", "a😀"]);
}

#[test]
fn lowercase_and_ignore_pattern() {
    let lower = hasher("space", 2, true, None, (4, 2));
    let keep_case = hasher("space", 2, false, None, (4, 2));
    assert_eq!(lower.normalize("İstanbul ΣΑΣ"), "i\u{307}stanbul σας");
    assert_eq!(
        lower.signature("HELLO World foo"),
        lower.signature("hello world foo")
    );
    assert_ne!(
        keep_case.signature("HELLO World foo"),
        keep_case.signature("hello world foo")
    );
    assert!(matches!(keep_case.normalize("ABC"), Cow::Borrowed("ABC")));

    // The pattern is deleted after lower-casing, without DOTALL.
    let h = hasher("character", 1, true, Some("."), (1, 1));
    assert_eq!(h.normalize("A.b\nC"), "\n");
    let h = hasher("space", 2, true, Some("[0-9]+"), (4, 2));
    assert_eq!(h.signature("a1 b22 c3"), h.signature("a b c"));
    let h = hasher("space", 2, false, Some("(?i)x"), (4, 2));
    assert_eq!(h.normalize("aXbx c"), "ab c");
    let h = hasher("space", 2, true, Some(r"\p{P}"), (4, 2));
    assert_eq!(h.normalize("Hello, World! “Quote”…"), "hello world quote");
    // `\p{..}` outside a class survives the pattern translation; inside one it is left alone.
    assert_eq!(
        bracket_unicode_classes(r"a\p{P}+[\p{L}\]]\\p{x}"),
        r"a[\p{P}]+[\p{L}\]]\\p{x}"
    );
    assert_eq!(
        bracket_unicode_classes(r"[]\p{P}]\P{Han}"),
        r"[]\p{P}][\P{Han}]"
    );
    let h = hasher("space", 1, false, Some(r"\p{Han}|\P{L}"), (4, 2));
    assert_eq!(h.normalize("ab数 c-d"), "abcd");
    // An empty pattern is no pattern (Python's `if self.ignore_pattern:`).
    let h = hasher("space", 2, true, Some(""), (4, 2));
    assert_eq!(h.normalize("a.b"), "a.b");
    assert!(
        MinHasher::new(&MinHashConfig {
            ignore_pattern: Some("(".into()),
            num_bands: Some(1),
            num_rows_per_band: Some(1),
            ..MinHashConfig::default()
        })
        .is_err()
    );
}

#[test]
fn integrals_match_scipy_bit_for_bit() {
    for (th, b, r, fp, fpe, fn_, fne) in integral_cases() {
        let th: f64 = th.parse().expect("a float");
        let (fp, fpe, fn_, fne) = (fp.as_str(), fpe.as_str(), fn_.as_str(), fne.as_str());
        let (rf, bf) = (r as f64, b as f64);
        let got_fp = quad(|s| 1.0 - (1.0 - s.powf(rf)).powf(bf), 0.0, th);
        let got_fn = quad(|s| 1.0 - (1.0 - (1.0 - s.powf(rf)).powf(bf)), th, 1.0);
        let case = format!("t={th} b={b} r={r}");
        assert_eq!(got_fp.0.to_bits(), from_py_hex(fp).to_bits(), "FP {case}");
        assert_eq!(
            got_fp.1.to_bits(),
            from_py_hex(fpe).to_bits(),
            "FP err {case}"
        );
        assert_eq!(got_fn.0.to_bits(), from_py_hex(fn_).to_bits(), "FN {case}");
        assert_eq!(
            got_fn.1.to_bits(),
            from_py_hex(fne).to_bits(),
            "FN err {case}"
        );
        assert_eq!(false_positive_probability(th, b, r), got_fp.0);
        assert_eq!(false_negative_probability(th, b, r), got_fn.0);
    }
    // A smooth integrand that needs subdivision and extrapolation: scipy gives 2/3 +- 1e-14.
    let (v, e) = quad(f64::sqrt, 0.0, 1.0);
    assert!((v - 2.0 / 3.0).abs() < 1e-12 && e < 1e-8, "{v} {e}");
}

#[test]
fn optimal_params_match_data_juicer() {
    assert_eq!(optimal_param(0.7, 256), (25, 10));
    for (th, n, b, r) in optimal_cases() {
        assert_eq!(
            optimal_param(th, n),
            (b, r),
            "threshold {th}, {n} permutations"
        );
    }
}

#[test]
fn udf_over_arrow_arrays() {
    let op = build("document_minhash_deduplicator", json!({})).unwrap();
    let Operator::Deduplicator(d) = &op else {
        panic!()
    };
    assert_eq!(d.hash_column, "__dj__minhash");
    assert_eq!(d.kind, DedupKind::MinHashBands);
    let h = MinHasher::new(&MinHashConfig::default()).unwrap();
    let texts = [
        Some(TEXTS[0]),
        None,
        Some(TEXTS[1]),
        Some(""),
        Some(TEXTS[0]),
    ];
    let inputs: [ArrayRef; 3] = [
        Arc::new(StringArray::from(texts.to_vec())),
        Arc::new(LargeStringArray::from(texts.to_vec())),
        Arc::new(StringViewArray::from(texts.to_vec())),
    ];
    for input in inputs {
        let out = invoke(udf(&op), input);
        assert_eq!(out.data_type(), &band_keys_type());
        let DataType::List(f) = out.data_type() else {
            panic!()
        };
        assert_eq!((f.name().as_str(), f.is_nullable()), ("item", true));
        let list = out.as_any().downcast_ref::<ListArray>().unwrap();
        assert_eq!(list.len(), 5);
        for (i, text) in texts.iter().enumerate() {
            match text {
                None => assert!(list.is_null(i)),
                Some(t) => {
                    let row = list.value(i);
                    let row = row.as_binary::<i32>();
                    let got: Vec<&[u8]> = row.iter().map(|v| v.unwrap()).collect();
                    let want = h.band_keys(t);
                    assert_eq!(got.len(), 25);
                    assert!(got.iter().all(|k| k.len() == 84));
                    assert_eq!(got, want.iter().map(Vec::as_slice).collect::<Vec<_>>());
                }
            }
        }
    }
    // UDF identity: name + canonical parameters.
    let again = build("document_minhash_deduplicator", json!({"window_size": 5})).unwrap();
    let other = build("document_minhash_deduplicator", json!({"window_size": 4})).unwrap();
    assert_eq!(udf(&op), udf(&again));
    assert_ne!(udf(&op), udf(&other));
    assert_eq!(udf(&op).name(), "document_minhash_deduplicator");
}

#[test]
fn params() {
    let err = |params: Value| {
        build("document_minhash_deduplicator", params)
            .unwrap_err()
            .to_string()
    };
    assert!(
        err(json!({"tokenization": "sentencepiece", "tokenizer_model": "no-such.model"}))
            .starts_with(
                "operator document_minhash_deduplicator: model file no-such.model not found"
            )
    );
    assert_eq!(
        err(json!({"tokenization": "sentencepiece"})),
        "parameter `tokenizer_model` of document_minhash_deduplicator: To use \
         'sentencepiece' tokenization, 'tokenizer_model' is required."
    );
    assert!(err(json!({"tokenization": "words"})).contains("must be one of space, punctuation"));
    assert!(err(json!({"jaccard_threshold": 1.5})).contains("must be in [0, 1], got 1.5"));
    assert!(err(json!({"jaccard_threshold": -0.1})).contains("must be in [0, 1]"));
    assert!(err(json!({"window_size": 0})).contains("must be a positive integer, got 0"));
    assert!(err(json!({"num_permutations": -3})).contains("must be a positive integer"));
    assert!(err(json!({"num_bands": 0, "num_rows_per_band": 2})).contains("num_bands"));
    assert!(err(json!({"ignore_pattern": "(unclosed"})).contains("invalid regular expression"));
    assert!(err(json!({"window": 3})).contains("did you mean window_size"));
    // Integers are accepted for the threshold, as Python accepts them.
    let ok = |params: Value| build("document_minhash_deduplicator", params).is_ok();
    assert!(ok(json!({"jaccard_threshold": 1})));
    assert!(ok(json!({"jaccard_threshold": 0, "num_permutations": 8})));
    assert!(ok(json!({"ignore_pattern": null, "num_bands": null})));
    // Only one band parameter given: both come from optimal_param, as in Data-Juicer.
    let p = |v: Value| {
        let spec = crate::registry::lookup("document_minhash_deduplicator").unwrap();
        spec.instantiate(v.as_object().unwrap()).unwrap().0
    };
    let cfg = config_from_params(&p(json!({"num_bands": 3}))).unwrap();
    let h = MinHasher::new(&cfg).unwrap();
    assert_eq!((h.num_bands(), h.rows_per_band()), (25, 10));
    let cfg = config_from_params(&p(json!({"num_bands": 3, "num_rows_per_band": 7}))).unwrap();
    let h = MinHasher::new(&cfg).unwrap();
    assert_eq!((h.num_bands(), h.rows_per_band()), (3, 7));
}

/// Data-Juicer's clustering over band keys: rows sharing a key are united to the smallest
/// index of the bucket; row i is kept iff it is its own root.
fn kept_rows(keys: &ListArray) -> Vec<usize> {
    fn find(parent: &mut [usize], x: usize) -> usize {
        let mut r = x;
        while parent[r] != r {
            r = parent[r];
        }
        parent[x] = r;
        r
    }
    let n = keys.len();
    let mut parent: Vec<usize> = (0..n).collect();
    let mut first: HashMap<Vec<u8>, usize> = HashMap::new();
    for i in 0..n {
        let row = keys.value(i);
        for k in row.as_binary::<i32>().iter() {
            let k = k.unwrap().to_vec();
            let j = *first.entry(k).or_insert(i);
            let (pi, pj) = (find(&mut parent, i), find(&mut parent, j));
            let m = pi.min(pj);
            parent[pi] = m;
            parent[pj] = m;
        }
    }
    (0..n).filter(|&i| find(&mut parent, i) == i).collect()
}

#[test]
fn keeps_what_data_juicer_keeps_on_the_golden_corpus() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("data/minhash_expected_keep.json")).unwrap(),
    )
    .unwrap();
    let corpus = std::fs::read_to_string(root.join("../tests/golden/corpus.jsonl")).unwrap();
    let texts: Vec<Option<String>> = corpus
        .lines()
        .map(|l| {
            let row: Value = serde_json::from_str(l).unwrap();
            row["text"].as_str().map(String::from)
        })
        .collect();
    assert_eq!(texts.len(), expected["rows"].as_u64().unwrap() as usize);
    let input: ArrayRef = Arc::new(StringArray::from(texts));
    let cases = expected["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 5);
    for case in cases {
        let op = build("document_minhash_deduplicator", case["params"].clone()).unwrap();
        let out = invoke(udf(&op), input.clone());
        let got = kept_rows(out.as_any().downcast_ref::<ListArray>().unwrap());
        let want: Vec<usize> = case["keep"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as usize)
            .collect();
        assert_eq!(got, want, "{}", case["name"]);
    }
}

/// The one-block fast path of `sha1_hash32` equals the hasher's digest at every length around
/// the block boundary.
#[test]
fn sha1_hash32_fast_path_equals_the_digest() {
    let data: Vec<u8> = (0..200u32).map(|i| (i * 7 + 3) as u8).collect();
    for len in 0..data.len() {
        let d = Sha1::digest(&data[..len]);
        assert_eq!(
            sha1_hash32(&data[..len]),
            u32::from_le_bytes([d[0], d[1], d[2], d[3]]),
            "length {len}"
        );
    }
}

/// Space shingles taken as slices of the text equal the joined tokens, with runs of spaces,
/// leading and trailing spaces, and other whitespace inside tokens.
#[test]
fn space_windows_equal_joined_tokens() {
    for text in [
        "",
        "one",
        "a b c d e f g",
        "  a  b c   d e f  g h ",
        "a\tb c\nd e f g h i j",
        "ünï cödé  😀 x y z w",
    ] {
        for w in [1, 2, 3, 5] {
            let tokens: Vec<&str> = text.split(' ').filter(|t| !t.is_empty()).collect();
            let want: Vec<Vec<u8>> = tokens
                .windows(w)
                .map(|t| t.join(" ").into_bytes())
                .collect();
            let mut got = Vec::new();
            space_windows(text, w, |s| got.push(s.to_vec()));
            assert_eq!(got, want, "{text:?} w={w}");
        }
    }
}

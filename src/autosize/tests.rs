//! Expected values marked "DJ" were computed by calling py-data-juicer 1.6.1's own functions
//! (`partition_size_optimizer.py`, `ray_executor_partitioned.py`) on the same inputs; the others
//! are worked out by hand in the comments.

use serde_json::{Value, json};

use super::characteristics::{DataCharacteristics, ModalityCounts, Sampling, analyze};
use super::complexity::{OpComplexity, op_complexity, pipeline_complexity};
use super::constants::{GB, MB};
use super::count::{driver_concurrency, partition_count};
use super::decisions::{WorkerRule, max_size_mb, partition_size, recommend_for, worker_count};
use super::resources::{TargetSource, memory_tier_mb, target_partition_mb};
use super::samples::{
    Modality, py_deep_sizeof, py_dict_size, py_int_size, py_list_size, py_str_size,
};
use super::*;

const GIB: u64 = 1024 * 1024 * 1024;

fn res(cores: usize, available_gb: f64) -> Resources {
    let bytes = (available_gb * GB) as u64;
    Resources {
        available_memory_bytes: bytes,
        total_memory_bytes: bytes,
        cpu_cores: cores,
    }
}

fn stats(row: &str) -> SampleStats {
    SampleStats::from_json(&serde_json::from_str(row).unwrap(), &SampleKeys::default())
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * b.abs().max(1.0)
}

/// Characteristics as Data-Juicer's tests build them (only the fields the sizing reads).
fn dc(
    modality: Modality,
    avg_text: f64,
    mem_mb: f64,
    total: u64,
    skew: f64,
) -> DataCharacteristics {
    DataCharacteristics {
        primary_modality: modality,
        avg_text_length: avg_text,
        memory_per_sample_mb: mem_mb,
        total_samples: total,
        data_skew_factor: skew,
        ..sampling_failed(total)
    }
}

// -- sampling ---------------------------------------------------------------------------------

#[test]
fn sample_size_follows_the_document() {
    assert_eq!(sample_size(0), 0);
    assert_eq!(sample_size(999), 999); // < 1,000: all
    assert_eq!(sample_size(1_000), 1_000);
    // 1,000..=100,000: 1% but at least 1,000. DJ's code: min(1000, total // 100) = 500 and 999.
    assert_eq!(sample_size(50_000), 1_000);
    assert_eq!(sample_size(99_999), 1_000);
    assert_eq!(sample_size(100_000), 1_000); // the document puts 100,000 in the 1% range
    // > 100,000: 0.1% capped at 10,000 (same as DJ's code).
    assert_eq!(sample_size(100_001), 100);
    assert_eq!(sample_size(2_000_000), 2_000);
    assert_eq!(sample_size(9_999_999), 9_999);
    assert_eq!(sample_size(10_000_000), 10_000);
    assert_eq!(sample_size(50_000_000), 10_000);
}

// -- target size --------------------------------------------------------------------------------

#[test]
fn memory_tier_boundaries() {
    // DJ: calculate_target_partition_mb without partition.target_size_mb.
    for (gb, mb) in [
        (0.0, 32),
        (15.999, 32),
        (16.0, 64),
        (63.99, 64),
        (64.0, 128),
        (255.99, 128),
        (256.0, 256),
        (1000.0, 256),
    ] {
        assert_eq!(memory_tier_mb(gb), mb, "{gb} GB");
    }
    // DJ, from bytes: one byte under each boundary stays in the lower tier.
    for (bytes, mb) in [
        (16 * GIB - 1, 32),
        (16 * GIB, 64),
        (64 * GIB - 1, 64),
        (64 * GIB, 128),
        (256 * GIB - 1, 128),
        (256 * GIB, 256),
    ] {
        let r = Resources {
            available_memory_bytes: bytes,
            total_memory_bytes: bytes,
            cpu_cores: 1,
        };
        let t = target_partition_mb(r.available_memory_gb(), None);
        assert_eq!((t.target_mb, t.source), (mb, TargetSource::AvailableMemory));
    }
}

#[test]
fn configured_target_wins_and_is_kept_as_is() {
    // DJ: 256 with 1 GB, 0 with 1 GB, -5 with 300 GB.
    for (gb, cfg) in [(1.0, 256), (1.0, 0), (300.0, -5)] {
        let t = target_partition_mb(gb, Some(cfg));
        assert_eq!((t.target_mb, t.source), (cfg, TargetSource::Recipe));
    }
}

// -- complexity ---------------------------------------------------------------------------------

#[test]
fn op_complexity_from_names() {
    use OpComplexity::*;
    for (name, kind) in [
        ("image_text_similarity_filter", High), // similarity before filter
        ("video_captioning_from_audio_mapper", High),
        ("text_embedding_similarity_filter", High),
        ("neural_x", High),
        ("vision_y", High),
        ("Model_Z", High), // lower-cased
        ("audio_duration_filter", High),
        // A registered op that decodes video (unknown, so medium, in a build without FFmpeg).
        (
            "video_resolution_filter",
            if cfg!(feature = "media") {
                High
            } else {
                Medium
            },
        ),
        ("Text_Length_FILTER", Medium),
        ("language_id_score_filter", High),
        ("perplexity_filter", High),
        ("token_num_filter", High),
        ("document_minhash_deduplicator", Medium),
        ("clean_email_mapper", Medium),
        ("random_selector", Low),
        ("naive_grouper", Low),
        ("entity_attribute_aggregator", Low),
        ("topk_specified_field_selector", Low),
    ] {
        assert_eq!(op_complexity(name), kind, "{name}");
    }
    assert_eq!(
        (High.weight(), Medium.weight(), Low.weight()),
        (0.3, 0.2, 0.1)
    );
}

#[test]
fn pipeline_complexity_scores() {
    // DJ: analyze_processing_complexity with the ops as dicts.
    let none: [&str; 0] = [];
    assert_eq!(pipeline_complexity(&none).score, 1.0);
    let demo = [
        "whitespace_normalization_mapper",
        "clean_email_mapper",
        "clean_links_mapper",
        "fix_unicode_mapper",
        "text_length_filter",
        "words_num_filter",
        "character_repetition_filter",
        "special_characters_filter",
        "language_id_score_filter",
        "document_deduplicator",
    ];
    let c = pipeline_complexity(&demo);
    // Data-Juicer rates language_id_score_filter medium (0, 10, 0, 3.0); it runs a model on
    // every sample, so here it is high.
    assert_eq!((c.high, c.medium, c.low, c.score), (1, 9, 0, 3.1));
    let kinds: Vec<String> = [
        "image_text_similarity_filter",
        "video_captioning_from_audio_mapper",
        "text_embedding_similarity_filter",
        "neural_x",
        "vision_y",
        "Model_Z",
        "audio_duration_filter",
        "Text_Length_FILTER",
        "document_minhash_deduplicator",
        "random_selector",
        "naive_grouper",
        "entity_attribute_aggregator",
        "topk_specified_field_selector",
    ]
    .map(String::from)
    .to_vec();
    let c = pipeline_complexity(&kinds);
    assert_eq!((c.high, c.medium, c.low), (7, 2, 4));
    assert_eq!(c.score, 3.9); // 1 + (7 x 0.3 + 2 x 0.2 + 4 x 0.1), DJ 3.9
    assert_eq!(c.ops[0].complexity, OpComplexity::High);
    // Data-Juicer's executor passes op objects, which it skips: always 1.0 there. Here the
    // names count.
    assert_eq!(pipeline_complexity(&["text_length_filter"]).score, 1.2);
}

// -- samples ------------------------------------------------------------------------------------

#[test]
fn modality_detection_per_sample() {
    use Modality::*;
    // DJ: detect_modality on the same dicts.
    for (row, m) in [
        (r#"{"text": "hi"}"#, Text),
        (r#"{"images": ["a"]}"#, Image),
        (r#"{"text": "hi", "images": ["a"]}"#, Multimodal),
        (r#"{}"#, Text),
        (
            r#"{"text": "hi", "audios": ["x"], "videos": ["v"]}"#,
            Multimodal,
        ),
        (r#"{"text": "", "images": []}"#, Text),
        (r#"{"audios": ["a", "b"]}"#, Audio),
        (r#"{"videos": ["v"]}"#, Video),
        (r#"{"text": null}"#, Text),
        (r#"{"text": ["ab", "cde"]}"#, Text),
        (r#"{"text": 0}"#, Text),
        (r#"{"images": "abc"}"#, Image),
    ] {
        assert_eq!(stats(row).modality(), m, "{row}");
    }
    let s = stats(r#"{"text": ["ab", "cde"], "images": "abc", "videos": [1, 2]}"#);
    assert_eq!(
        (s.has_text, s.text_chars, s.images, s.audios, s.videos),
        (true, 5, 3, 0, 2)
    );
    assert!(!stats(r#"{"text": 0}"#).has_text);
    assert_eq!(stats(r#"{"images": null, "audios": true}"#).images, 0);
    assert_eq!(stats(r#"{"images": null, "audios": true}"#).audios, 1);
}

#[test]
fn modality_distribution_and_averages() {
    let rows = [
        r#"{"text": "hi"}"#,
        r#"{"images": ["a"]}"#,
        r#"{"text": "hi", "images": ["a"]}"#,
        r#"{}"#,
        r#"{"text": "hi", "audios": ["x"], "videos": ["v"]}"#,
        r#"{"text": "", "images": []}"#,
        r#"{"audios": ["a", "b"]}"#,
        r#"{"videos": ["v"]}"#,
        r#"{"text": null}"#,
        r#"{"text": ["ab", "cde"]}"#,
        r#"{"text": 0}"#,
        r#"{"images": "abc"}"#,
    ];
    let samples: Vec<_> = rows.iter().map(|r| stats(r)).collect();
    let d = analyze(12, &samples);
    // DJ: analyze_dataset_characteristics on the same rows.
    assert_eq!(
        d.modality_distribution,
        ModalityCounts {
            text: 6,
            image: 2,
            audio: 1,
            video: 1,
            multimodal: 2
        }
    );
    assert_eq!(d.primary_modality, Modality::Text);
    assert_eq!(d.avg_text_length, 0.9166666666666666);
    assert_eq!(d.avg_images_per_sample, 0.4166666666666667);
    assert_eq!(d.avg_audio_per_sample, 0.25);
    assert_eq!(d.avg_video_per_sample, 0.16666666666666666);
    // (json.loads rows: `["a"]` is a list appended to, 88 bytes, not a 64-byte literal.)
    assert_eq!(d.memory_per_sample_mb, 0.00045871734619140625);
    assert!(close(d.data_skew_factor, 0.4121024775863373));
    assert_eq!(d.sample_size_analyzed, 12);
}

#[test]
fn primary_modality_majority_and_ties() {
    let img = SampleStats {
        images: 1,
        ..SampleStats::default()
    };
    let vid = SampleStats {
        videos: 1,
        ..SampleStats::default()
    };
    let txt = text_sample(5, 100);
    assert_eq!(
        analyze(3, &[img, img, txt]).primary_modality,
        Modality::Image
    );
    // Ties go to the first in Data-Juicer's enum order.
    assert_eq!(analyze(2, &[vid, txt]).primary_modality, Modality::Text);
    assert_eq!(analyze(2, &[vid, img]).primary_modality, Modality::Image);
    assert_eq!(analyze(0, &[]).primary_modality, Modality::Text);
}

/// Media rows are sized by the files they reference, relative paths joined to the dataset's
/// directory; the P90 then sets the video partition size (the tuning document's media memory).
#[test]
fn media_files_count_in_the_memory_per_sample() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.mp4"), vec![0u8; 3_000_000]).unwrap();
    std::fs::write(dir.path().join("b.wav"), vec![0u8; 1_000]).unwrap();
    let d = dir.path().to_str().unwrap();
    let keys = SampleKeys::default();
    let row = json!({"text": "x", "videos": ["a.mp4", "missing.mp4", "s3://b/c.mp4"], "audios": ["b.wav"]});
    assert_eq!(media_file_bytes(&row, &keys, Some(d)), 3_001_000);
    assert_eq!(
        media_file_bytes(&row, &keys, None),
        0,
        "relative to the cwd"
    );
    let video = SampleStats {
        media_bytes: media_file_bytes(&json!({"videos": ["a.mp4"]}), &keys, Some(d)),
        ..stats(r#"{"videos": ["a.mp4"]}"#)
    };
    let data = analyze(10, &[video; 10]);
    assert!(data.includes_media_files);
    assert_eq!(data.primary_modality, Modality::Video);
    assert!(close(
        data.memory_per_sample_mb,
        (3_000_000 + video.memory_bytes) as f64 / MB
    ));
    // 256 MB / (2.86 MB x complexity 1) = 89 rows, where the row alone would give the video max.
    let size = partition_size(&data, 1.0, 256, 16.0, 4);
    assert_eq!(size.steps[0].after, 89, "{:?}", size.steps[0]);
    assert!(!analyze(10, &[stats(r#"{"videos": ["a.mp4"]}"#); 10]).includes_media_files);
}

#[test]
fn nested_text_key() {
    let keys = SampleKeys::with_text_key("meta.content");
    // DJ: nested_query(row, "meta.content") and detect_modality(row + images) == multimodal.
    for (row, has_text, chars) in [
        (json!({"meta": {"content": "hello"}}), true, 5),
        (json!({"meta.content": "flat wins"}), true, 9),
        (json!({"meta": {"content": null}}), false, 0),
        (json!({"meta": "str"}), false, 0),
        (
            json!({"meta": [{"content": "a"}, {"content": "bb"}]}),
            true,
            3,
        ),
        (
            json!({"meta.content": null, "meta": {"content": "xyz"}}),
            false,
            0,
        ),
        (json!({"meta": [{"content": null}]}), true, 0), // [None]: DJ raises on len(None)
        (json!({"meta": []}), false, 0),
        (json!({"meta": {"content": ""}}), false, 0),
    ] {
        let s = SampleStats::from_json(&row, &keys);
        assert_eq!((s.has_text, s.text_chars), (has_text, chars), "{row}");
    }
    let none = SampleKeys {
        text_key: None,
        ..SampleKeys::default()
    };
    assert!(!SampleStats::from_json(&json!({"text": "x"}), &none).has_text);
}

#[test]
fn deep_sizeof_matches_cpython() {
    // DJ: _deep_getsizeof(json.loads(row)) under CPython 3.11.7.
    let big = format!(
        r#"{{"t": "{}", "n": [{}]}}"#,
        "a".repeat(1000),
        (0..300)
            .map(|i| i.to_string())
            .collect::<Vec<_>>()
            .join(",")
    );
    let strs = format!(
        r#"{{"k": [{}]}}"#,
        (0..100)
            .map(|i| format!("\"s{i}\""))
            .collect::<Vec<_>>()
            .join(",")
    );
    for (row, size) in [
        ("{}", 64),
        (r#"{"text": ""}"#, 286),
        (r#"{"text": "a"}"#, 287),
        (r#"{"text": "hello world"}"#, 297),
        ("{\"text\": \"caf\u{e9} au lait\"}", 322),
        ("{\"text\": \"\u{4e2d}\u{6587}\u{6587}\u{672c}\"}", 319),
        (r#"{"text": "emoji \ud83d\ude00 here"}"#, 361),
        ("{\"text\": \"emoji \u{1F600} here\"}", 361),
        (r#"{"text": "line\nbreak \u00e9 \"q\""}"#, 326),
        (r#"{"text": "\u00e9"}"#, 311),
        (r#"{"x": "\u0100"}"#, 310),
        (
            r#"{"text": "x", "meta": {"a": 1, "b": 1, "c": null, "d": true, "e": false, "f": 1.5, "g": 300, "h": -7, "i": 1073741824, "j": 18446744073709551615, "k": -9223372036854775808}}"#,
            1638,
        ),
        (
            r#"{"text": "abc", "images": ["a.jpg", "b.jpg"], "list": [1, 2, 3, 4, 5], "empty": [], "edict": {}}"#,
            1081,
        ),
        (
            r#"{"rows": [{"name": "n1", "value": "v"}, {"name": "n2", "value": "v"}, {"name": "n3", "value": "\u00e9"}]}"#,
            1261,
        ),
        (r#"{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6}"#, 825),
        (r#"{"text": "same", "other": "same", "same": "text"}"#, 503),
        (r#"{"a": {"a": {"a": "a"}}, "": ""}"#, 651),
        (r#"{"x": [1.0, -0.0, 1e5, 257, -6, -5, 256, 0]}"#, 566),
        (
            r#"{"x": [[], {}, [[]], [null, null], [true, false, true]]}"#,
            866,
        ),
        (big.as_str(), 12253),
        (strs.as_str(), 6344),
    ] {
        let v: Value = serde_json::from_str(row).unwrap();
        assert_eq!(py_deep_sizeof(&v), size, "{row:.80}");
    }
}

#[test]
fn cpython_container_sizes() {
    // sys.getsizeof of a dict built by n insertions / a list built by n appends (CPython 3.11).
    for (n, size) in [
        (0, 64),
        (1, 184),
        (5, 184),
        (6, 272),
        (10, 272),
        (11, 464),
        (21, 464),
        (22, 832),
        (42, 832),
        (43, 1584),
        (85, 1584),
        (86, 3328), // 256 slots: 2-byte indices
        (170, 3328),
        (171, 6576),
        (10_922, 207_616),
        (10_923, 415_152),
        (21_845, 415_152),
        (21_846, 961_280), // 65,536 slots: 4-byte indices
        (50_000, 1_922_480),
    ] {
        assert_eq!(py_dict_size(n), size, "dict of {n}");
    }
    for (n, size) in [
        (0, 56),
        (1, 88),
        (4, 88),
        (5, 120),
        (8, 120),
        (9, 184),
        (16, 184),
        (17, 248),
        (76, 664),
        (77, 792),
        (92, 792),
        (93, 920),
        (1_000, 8_856),
        (100_000, 800_984),
    ] {
        assert_eq!(py_list_size(n), size, "list of {n}");
    }
    for (s, size) in [
        ("", 49),
        ("ab", 51),
        ("\u{e9}a", 75),
        ("\u{4e2d}a", 78),
        ("\u{1F600}a", 84),
    ] {
        assert_eq!(py_str_size(s), size, "{s}");
    }
    // 0 and 2^30 - 1: one digit; 2^30: two; 2^60 and 2^64 - 1: three.
    for (abs, size) in [
        (0, 28),
        ((1 << 30) - 1, 28),
        (1 << 30, 32),
        (1 << 60, 36),
        (u64::MAX, 36),
    ] {
        assert_eq!(py_int_size(abs), size, "{abs}");
    }
}

fn text_rows(lens: &[usize]) -> Vec<SampleStats> {
    lens.iter()
        .map(|l| SampleStats::from_json(&json!({ "text": "a".repeat(*l) }), &SampleKeys::default()))
        .collect()
}

#[test]
fn p90_index_and_sample_stdev_skew() {
    // DJ: analyze_dataset_characteristics on {"text": "a" * len} rows; sizes 286 + len bytes.
    // P90 = sorted[int(n * 0.9)]: n=2 -> 1 (the max), n=10 -> 9 (the max), n=11 -> 9 (not the
    // max 1386), n=20 -> 18.
    let lens = |n: usize, step: usize| (1..=n).map(|i| i * step).collect::<Vec<_>>();
    let cases = [
        ("two", vec![10, 1000], Some(1), 1286, 0.8850009018643262),
        ("ten", lens(10, 100), Some(9), 1286, 0.36215913326525023),
        ("eleven", lens(11, 100), Some(9), 1286, 0.3743368837872912),
        ("twenty", lens(20, 50), Some(18), 1236, 0.36473981400120936),
    ];
    for (name, lens, idx, p90_bytes, skew) in cases {
        let samples = text_rows(&lens);
        let d = analyze(lens.len() as u64, &samples);
        assert_eq!(d.memory_p90_index, idx, "{name}");
        assert_eq!(d.memory_per_sample_mb, p90_bytes as f64 / MB, "{name}");
        assert!(
            close(d.data_skew_factor, skew),
            "{name}: {}",
            d.data_skew_factor
        );
    }
    // Hand check of "two": sizes 296 and 1286 bytes; mean 791, sample variance
    // (495^2 + 495^2) / 1, stdev 700.0357, / 791 = 0.88500.
    let d = analyze(2, &text_rows(&[10, 1000]));
    assert!(close(d.mean_memory_per_sample_mb.unwrap(), 791.0 / MB));
    assert!(close(
        d.memory_stdev_mb.unwrap(),
        (2.0f64 * 495.0 * 495.0).sqrt() / MB
    ));
    // Skew is capped at 1: sizes 296, 296, 296, 100286 (DJ 1.0, P90 = the outlier).
    let d = analyze(4, &text_rows(&[10, 10, 10, 100_000]));
    assert_eq!(d.data_skew_factor, 1.0);
    assert_eq!(d.memory_per_sample_mb, 0.09564018249511719);
    assert_eq!(d.avg_text_length, 25007.5);
}

#[test]
fn fewer_than_two_samples() {
    // DJ: one row -> its size and skew 0.5; none -> 0.002 MB and skew 0.5.
    let d = analyze(1, &text_rows(&[500]));
    assert_eq!(
        (
            d.memory_per_sample_mb,
            d.data_skew_factor,
            d.memory_p90_index
        ),
        (0.0007495880126953125, 0.5, None)
    );
    let d = analyze(0, &[]);
    assert_eq!(
        (
            d.memory_per_sample_mb,
            d.data_skew_factor,
            d.avg_text_length
        ),
        (0.002, 0.5, 0.0)
    );
    // All sizes 0: the mean is 0, so skew 0.
    let zero = SampleStats::default();
    assert_eq!(analyze(2, &[zero, zero]).data_skew_factor, 0.0);
}

// -- partition size -----------------------------------------------------------------------------

#[test]
fn text_target_size() {
    // DJ: calculate_text_partition_size_simple(avg_len, complexity, target_mb).
    // 500 chars -> 1000 bytes = 0.00095367 MB; 256 / that = 268435 -> capped at 50,000.
    // 10,000 chars -> 0.019073 MB: 13421; with complexity 1.5: 8947.
    // 2,000,000 chars -> 3.8147 MB: 67 -> raised to the 100 floor. Target 0 or negative -> 100.
    // Length 0 -> the default 10,000.
    for (avg, cx, target, size) in [
        (500.0, 1.0, 256, 50_000),
        (10_000.0, 1.0, 256, 13_421),
        (10_000.0, 1.5, 256, 8_947),
        (2_000_000.0, 1.0, 256, 100),
        (0.0, 1.0, 256, 10_000),
        (10_000.0, 1.0, 0, 100),
        (10_000.0, 1.0, -64, 100),
        (1_000.0, 2.1, 64, 15_978),
        (131_072.0, 1.0, 32, 128),
    ] {
        let d = dc(Modality::Text, avg, 0.0, 1_000_000_000, 0.0);
        let s = partition_size(&d, cx, target, 1000.0, 1);
        assert_eq!(s.steps[0].after, size, "{avg}/{cx}/{target}");
    }
    let d = dc(Modality::Text, 2_000_000.0, 0.0, 1_000_000_000, 0.0);
    let s = partition_size(&d, 1.0, 256, 1000.0, 1);
    assert_eq!((s.raw_target_size, s.steps[0].applied), (Some(67), true));
    assert_eq!(s.text_mb_per_sample, Some(4_000_000.0 / MB));
    let d = dc(Modality::Text, 0.0, 0.0, 1_000_000_000, 0.0);
    assert_eq!(
        partition_size(&d, 1.0, 256, 1000.0, 1).raw_target_size,
        None
    );
}

/// One call of DJ's `calculate_resource_aware_partition_size`.
#[derive(Clone, Copy)]
struct Case {
    m: Modality,
    avg_text: f64,
    mem_mb: f64,
    total: u64,
    skew: f64,
    cores: usize,
    gb: f64,
    cx: f64,
    /// `partition.target_size_mb` (None: the memory tier).
    target: Option<i64>,
}

impl Case {
    fn size(self) -> usize {
        let d = dc(self.m, self.avg_text, self.mem_mb, self.total, self.skew);
        let target = target_partition_mb(self.gb, self.target).target_mb;
        let s = partition_size(&d, self.cx, target, self.gb, self.cores);
        assert_eq!(s.steps.last().unwrap().after, s.size);
        s.size
    }
}

#[test]
fn resource_aware_size_matches_data_juicer() {
    use Modality::*;
    // DJ: calculate_resource_aware_partition_size(DataCharacteristics, LocalResources(cores,
    // GB), None, complexity) for each case.
    let text = Case {
        m: Text,
        avg_text: 500.0,
        mem_mb: 0.001,
        total: 5_000,
        skew: 0.3,
        cores: 4,
        gb: 32.0,
        cx: 1.0,
        target: None,
    };
    // 32 GB: 64 MB; int(64 / 0.00095) -> 50,000; 5,000 <= 10,000 rows need 1 partition:
    // 5000 / 50000 < 1 -> int(5000 / 1).
    assert_eq!(text.size(), 5_000);
    assert_eq!(
        Case {
            total: 10_000,
            ..text
        }
        .size(),
        10_000
    );
    // Above 10,000: 6 partitions for 4 cores: int(10001 / 6) = 1666.
    assert_eq!(
        Case {
            total: 10_001,
            ..text
        }
        .size(),
        1_666
    );
    // Skew 0.71 > 0.7: int(1666 x 0.8) = 1332; exactly 0.7 is not above.
    assert_eq!(
        Case {
            total: 10_001,
            skew: 0.71,
            ..text
        }
        .size(),
        1_332
    );
    assert_eq!(
        Case {
            total: 10_001,
            skew: 0.7,
            ..text
        }
        .size(),
        1_666
    );
    // No rows (length 0: default 10,000): int(0 / 1) = 0 -> at least 10.
    let empty = Case {
        avg_text: 0.0,
        mem_mb: 0.002,
        total: 0,
        skew: 0.5,
        ..text
    };
    assert_eq!(empty.size(), 10);
    // Memory guard: 1 GB -> 32 MB, 204.8 MB per partition; 33,554 x 0.01 x 2 = 671 > 204.8:
    // int(204.8 / 0.02) = 10240; with 100 MB rows int(204.8 / 200) = 1 -> 10.
    let guard = Case {
        mem_mb: 0.01,
        total: 1_000_000,
        cores: 2,
        gb: 1.0,
        ..text
    };
    assert_eq!(guard.size(), 10_240);
    assert_eq!(
        Case {
            mem_mb: 100.0,
            ..guard
        }
        .size(),
        10
    );
    let big = Case {
        total: 100_000_000,
        skew: 0.0,
        cores: 8,
        gb: 512.0,
        ..text
    };
    assert_eq!(big.size(), 50_000);
    // 1 core: int(1.5) = 1 partition; 3 cores: int(4.5) = 4 -> int(20000 / 4) = 5000.
    let cores = Case {
        total: 20_000,
        skew: 0.0,
        ..text
    };
    assert_eq!(Case { cores: 1, ..cores }.size(), 20_000);
    assert_eq!(Case { cores: 3, ..cores }.size(), 5_000);
    // Media (32 GB: 64 MB): int(64 / 0.5) = 128; 50 MB -> 1 -> floor 10; tiny -> capped at
    // 10,000 then 5,000 rows; 0 MB -> the image default 2,000.
    let image = Case {
        m: Image,
        avg_text: 0.0,
        mem_mb: 0.5,
        skew: 0.2,
        ..text
    };
    assert_eq!(image.size(), 128);
    assert_eq!(
        Case {
            mem_mb: 50.0,
            ..image
        }
        .size(),
        10
    );
    assert_eq!(
        Case {
            mem_mb: 0.0001,
            ..image
        }
        .size(),
        5_000
    );
    assert_eq!(
        Case {
            mem_mb: 0.0,
            ..image
        }
        .size(),
        2_000
    );
    // 300 GB: 256 MB; int(256 / (2 x 1.3)) = 98, skew 0.9 -> int(78.4) = 78.
    let video = Case {
        m: Video,
        avg_text: 0.0,
        mem_mb: 2.0,
        total: 1_000_000,
        skew: 0.9,
        cores: 16,
        gb: 300.0,
        cx: 1.3,
        target: None,
    };
    assert_eq!(video.size(), 78);
    // Configured 128 MB: int(128 / (0.3 x 1.7)) = 250.
    let audio = Case {
        m: Audio,
        mem_mb: 0.3,
        total: 3_000,
        skew: 0.1,
        cores: 2,
        gb: 8.0,
        cx: 1.7,
        target: Some(128),
        ..video
    };
    assert_eq!(audio.size(), 250);
    // 20 GB: 64 MB; int(64 / (0.05 x 1.2)) = 1066, skew 0.8 -> 852.
    let multi = Case {
        m: Multimodal,
        avg_text: 50.0,
        mem_mb: 0.05,
        total: 50_000,
        skew: 0.8,
        cores: 4,
        gb: 20.0,
        cx: 1.2,
        target: None,
    };
    assert_eq!(multi.size(), 852);
    // int(64 / 100) = 0 -> floor 10; 10 x 100 x 2 = 2000 MB fits 6553.6; 100 / 10 >= 1;
    // skew: int(10 x 0.8) = 8 -> final bounds 10.
    let floor = Case {
        mem_mb: 100.0,
        total: 100,
        cores: 4,
        gb: 32.0,
        cx: 1.0,
        ..video
    };
    assert_eq!(floor.size(), 10);
}

#[test]
fn size_steps_record_before_and_after() {
    // text_skew: 50,000 -> guard fits -> parallelism 1666 -> skew 1332 -> bounds 1332.
    let d = dc(Modality::Text, 500.0, 0.001, 10_001, 0.71);
    let s = partition_size(&d, 1.0, 64, 32.0, 4);
    let got: Vec<_> = s
        .steps
        .iter()
        .map(|st| (st.step, st.before, st.after, st.applied))
        .collect();
    assert_eq!(
        got,
        [
            ("modality_target", None, 50_000, true),
            ("memory_guard", Some(50_000), 50_000, false),
            ("parallelism", Some(50_000), 1_666, true),
            ("data_skew", Some(1_666), 1_332, true),
            ("final_bounds", Some(1_332), 1_332, false),
        ]
    );
    assert_eq!(s.min_partitions, 6);
    assert_eq!(s.max_partition_memory_mb, 32.0 * 1024.0 * 0.8 / 4.0);
    assert_eq!(s.raw_target_size, Some(67_108)); // int(64 / (1000 / 2^20))
    // Guard (1 GB: 32 MB): 33,554 x 0.01 x 2 = 671 MB > 204.8: int(204.8 / (0.01 x 2)) = 10,240.
    let d = dc(Modality::Text, 500.0, 0.01, 1_000_000, 0.3);
    let s = partition_size(&d, 1.0, 32, 1.0, 2);
    assert_eq!(
        (s.steps[1].before, s.steps[1].after, s.steps[1].applied),
        (Some(33_554), 10_240, true)
    );
}

#[test]
fn max_size_mb_clamps() {
    // DJ: calculate_optimal_max_size_mb. (target, complexity, GB, MB)
    for (name, target, cx, gb, mb) in [
        ("tier 32 GB", 64, 1.0, 32.0, 64),
        ("25% of 0.5 GB = 128", 256, 1.0, 0.5, 128),
        ("25% of 0.1 GB = 25 -> 32", 256, 1.0, 0.1, 32),
        ("1024 -> 512", 1024, 1.0, 100.0, 512),
        ("complexity 2", 256, 2.0, 32.0, 128),
        ("negative -> 32", -10, 1.0, 32.0, 32),
        ("zero -> 32", 0, 1.0, 32.0, 32),
        ("int(128 / 1.7) = 75", 128, 1.7, 3.0, 75),
        ("tier 8 GB", 32, 1.0, 8.0, 32),
        ("int(256 / 1.3) = 196", 256, 1.3, 300.0, 196),
    ] {
        assert_eq!(max_size_mb(target, cx, gb).max_size_mb, mb, "{name}");
    }
    let m = max_size_mb(256, 1.0, 0.1);
    assert_eq!(
        (m.complexity_adjusted_mb, m.max_by_memory_mb, m.unclamped_mb),
        (256, 25, 25)
    );
}

#[test]
fn worker_rules() {
    use WorkerRule::*;
    // DJ: calculate_optimal_worker_count(cores, partition_size, total). 8 cores: base 6.
    for (cores, size, total, workers, rule) in [
        (8, 100, 200, 1, FewPartitions),       // 2 < 6: int(1.6)
        (8, 100, 590, 4, FewPartitions),       // 5.9 < 6: int(4.72)
        (8, 100, 600, 6, Balanced),            // 6
        (8, 100, 1_200, 6, Balanced),          // 12 is not > 12
        (8, 100, 1_250, 7, ManyPartitions),    // 12.5 > 12: min(8, int(7.2))
        (1, 100, 50, 1, FewPartitions),        // base max(1, int(0.75)) = 1; int(0.4) -> 1
        (2, 100, 300, 1, ManyPartitions),      // base 1; 3 > 2: int(1.2)
        (8, 100, 0, 6, NoWorkloadInfo),        // no rows
        (0, 100, 100, 1, Balanced),            // at least 1
        (16, 10, 100_000, 14, ManyPartitions), // base 12: int(14.4)
        (3, 10, 45, 2, ManyPartitions),        // base int(2.25) = 2; 4.5 > 4: int(2.4)
        (4, 1_000, 1_001, 1, FewPartitions),   // base 3; 1.001: int(0.8)
    ] {
        let w = worker_count(cores, size, total);
        assert_eq!(
            (w.worker_count, w.rule),
            (workers, rule),
            "{cores}/{size}/{total}"
        );
    }
    assert_eq!(worker_count(8, 100, 200).base_workers, 6);
}

// -- end to end ---------------------------------------------------------------------------------

/// Rows DJ's end-to-end run read through `json.loads`.
fn row(i: usize, kind: &str) -> String {
    if kind == "skew" && i == 5 {
        return format!(r#"{{"text": "{}"}}"#, "z".repeat(400_000));
    }
    let mut t = "w".repeat((i * 37) % 1000 + 1);
    if i.is_multiple_of(7) {
        t.push('\u{e9}');
    }
    if i.is_multiple_of(11) {
        t.push('\u{4e2d}');
    }
    let mut s = format!(r#"{{"text": "{t}", "meta": {{"id": {i}, "score": {i}.5}}"#);
    if kind == "mixed" && i.is_multiple_of(3) {
        s += &format!(r#", "images": ["img{i}.jpg"]"#);
    }
    if kind == "video" && !i.is_multiple_of(4) {
        s += &format!(r#", "videos": ["v{i}.mp4", "w{i}.mp4"]"#);
    }
    if kind == "video" && i.is_multiple_of(4) {
        s += r#", "text": """#;
    }
    s + "}"
}

fn sample(kind: &str, total: u64) -> Vec<SampleStats> {
    (0..sample_size(total))
        .map(|i| stats(&row(i, kind)))
        .collect()
}

#[test]
fn row_sizes_match_cpython() {
    // DJ: _deep_getsizeof(json.loads(row(i))) for i in 0..12.
    #[rustfmt::skip]
    let cases = [
        ("text",  [711, 718, 755, 792, 829, 866, 903, 965, 977, 1014, 1051, 1523]),
        ("mixed", [911, 718, 755, 992, 829, 866, 1103, 965, 977, 1214, 1051, 1523]),
        ("video", [680, 971, 1008, 1045, 680, 1119, 1156, 1218, 680, 1267, 1306, 1778]),
        ("skew",  [711, 718, 755, 792, 829, 400_286, 903, 965, 977, 1014, 1051, 1523]),
    ];
    for (kind, sizes) in cases {
        let got: Vec<u64> = (0..12).map(|i| stats(&row(i, kind)).memory_bytes).collect();
        assert_eq!(got, sizes, "{kind}");
    }
}

/// What DJ's `get_partition_recommendations` returned.
struct Expected {
    size: usize,
    max_mb: i64,
    workers: usize,
    modality: Modality,
    avg_text: f64,
    avg_images: f64,
    avg_videos: f64,
    p90_mb: f64,
    skew: f64,
}

fn check_end_to_end(
    (kind, total): (&str, u64),
    (cores, gb, target): (usize, u64, Option<i64>),
    ops: &[&str],
    e: Expected,
) {
    let r = Resources {
        available_memory_bytes: gb * GIB,
        total_memory_bytes: gb * GIB,
        cpu_cores: cores,
    };
    let rec = recommend(total, &sample(kind, total), ops, &r, target);
    let what = format!("{kind}/{total}");
    assert_eq!(rec.partition_size, Some(e.size), "{what}");
    assert_eq!(rec.max_size_mb, Some(e.max_mb), "{what}");
    assert_eq!(rec.worker_count, Some(e.workers), "{what}");
    let d = &rec.analysis.as_ref().unwrap().data;
    assert_eq!(d.primary_modality, e.modality, "{what}");
    assert!(close(d.avg_text_length, e.avg_text), "{what}");
    assert!(close(d.avg_images_per_sample, e.avg_images), "{what}");
    assert!(close(d.avg_video_per_sample, e.avg_videos), "{what}");
    assert_eq!(d.memory_per_sample_mb, e.p90_mb, "{what}");
    assert!(close(d.data_skew_factor, e.skew), "{what}");
    assert_eq!(d.total_samples, total);
    assert_eq!(rec.estimated_partitions, Some(total as f64 / e.size as f64));
}

#[test]
fn recommend_matches_data_juicer_end_to_end() {
    // DJ: get_partition_recommendations(dataset, ops as dicts) with these local resources
    // (cores, GB available, partition.target_size_mb).
    let demo = [
        "whitespace_normalization_mapper",
        "clean_email_mapper",
        "text_length_filter",
        "document_deduplicator",
    ];
    // 8 GB: 32 MB tier; complexity 1.8; 800 rows <= 10,000: one partition of all 800 rows.
    let e = Expected {
        size: 800,
        max_mb: 32,
        workers: 1,
        modality: Modality::Text,
        avg_text: 500.235,
        avg_images: 0.0,
        avg_videos: 0.0,
        p90_mb: 0.0015535354614257812,
        skew: 0.2897976111484416,
    };
    check_end_to_end(("text", 800), (4, 8, None), &demo, e);
    // A third of the rows carry an image: still text-majority; complexity 2.1.
    let mut with_sim = demo.to_vec();
    with_sim.push("image_text_similarity_filter");
    let e = Expected {
        size: 50_000,
        max_mb: 121,
        workers: 14,
        modality: Modality::Text,
        avg_text: 500.734,
        avg_images: 0.3335,
        avg_videos: 0.0,
        p90_mb: 0.001651763916015625,
        skew: 0.28753789736516877,
    };
    check_end_to_end(("mixed", 2_000_000), (16, 100, Some(256)), &with_sim, e);
    // Text + 2 videos in 3 of 4 rows: multimodal, sized by memory per sample.
    let e = Expected {
        size: 500,
        max_mb: 106,
        workers: 1,
        modality: Modality::Multimodal,
        avg_text: 378.426,
        avg_images: 0.0,
        avg_videos: 1.5,
        p90_mb: 0.00177001953125,
        skew: 0.3633660004702545,
    };
    check_end_to_end(
        ("video", 500),
        (2, 3, Some(128)),
        &["video_motion_score_filter"],
        e,
    );
    // One 400,000-character row: skew 1.0 -> int(300 x 0.8) = 240.
    let e = Expected {
        size: 240,
        max_mb: 64,
        workers: 1,
        modality: Modality::Text,
        avg_text: 1842.1166666666666,
        avg_images: 0.0,
        avg_videos: 0.0,
        p90_mb: 0.0015649795532226562,
        skew: 1.0,
    };
    check_end_to_end(("skew", 300), (4, 40, None), &[], e);
    let e = Expected {
        size: 50_000,
        max_mb: 142,
        workers: 1,
        modality: Modality::Text,
        avg_text: 500.734,
        avg_images: 0.0,
        avg_videos: 0.0,
        p90_mb: 0.001552581787109375,
        skew: 0.29139083120053766,
    };
    check_end_to_end(("text", 5_000_000), (2, 2, Some(256)), &demo, e);
}

#[test]
fn sampling_failure_uses_data_juicer_defaults() {
    // DJ: take() raising -> text, 500 chars, 0.002 MB, skew 0.5; 100,000 rows, 4 cores, 8 GB:
    // int(32 / 0.00095367) = 33554 -> 6 partitions: int(100000 / 6) = 16666; max 32 MB;
    // 100000 / 16666 = 6.0002 > 2 x 3 -> min(4, int(3.6)) = 3 workers.
    let none: [&str; 0] = [];
    let rec = recommend_for(sampling_failed(100_000), &none, &res(4, 8.0), None);
    assert_eq!(
        (rec.partition_size, rec.max_size_mb, rec.worker_count),
        (Some(16_666), Some(32), Some(3))
    );
    assert!(!rec.is_fallback());
    assert_eq!(
        rec.analysis.as_ref().unwrap().data.sampling,
        Sampling::Failed
    );
}

#[test]
fn recommendation_records_its_inputs() {
    let samples = text_rows(&[10, 10, 10, 100_000]);
    let ops = ["text_embedding_similarity_filter", "clean_links_mapper"];
    let rec = recommend(20_000, &samples, &ops, &res(4, 8.0), Some(256));
    let a = rec.analysis.as_ref().unwrap();
    assert_eq!(a.complexity.score, 1.5);
    assert_eq!(a.target.source, TargetSource::Recipe);
    assert_eq!(a.target.target_mb, 256);
    assert_eq!(a.resources.cpu_cores, 4);
    assert_eq!(a.data.data_skew_factor, 1.0);
    // avg 25007.5 chars -> 0.047699 MB; int(256 / (0.047699 x 1.5)) = 3578; memory guard
    // fits (3578 x 0.0956 x 2 = 684 < 1638.4); 20000 / 3578 = 5.6 < 6 -> 3333; skew -> 2666.
    let after: Vec<usize> = a.size.steps.iter().map(|s| s.after).collect();
    assert_eq!(after, [3_578, 3_578, 3_333, 2_666, 2_666]);
    assert_eq!(rec.partition_size, Some(2_666));
    // max: min(int(256 / 1.5) = 170, int(8 x 1024 x 0.25) = 2048) = 170.
    assert_eq!(rec.max_size_mb, Some(170));
    // DJ: 2666, 170 MB, 3 workers (20000 / 2666 = 7.5 > 2 x 3: min(4, int(3.6))).
    assert_eq!((a.workers.base_workers, a.workers.worker_count), (3, 3));
    assert!(
        rec.reasoning
            .iter()
            .any(|r| r.starts_with("data_skew: skew 1.000 > 0.7"))
    );
    assert!(
        rec.reasoning
            .iter()
            .any(|r| r.contains("complexity factor 1.50"))
    );

    let v = serde_json::to_value(&rec).unwrap();
    assert_eq!(v["partition_size"], 2_666);
    assert_eq!(v["fallback_reason"], Value::Null);
    assert_eq!(v["analysis"]["data"]["primary_modality"], "text");
    assert_eq!(v["analysis"]["target"]["source"], "recipe");
    assert_eq!(v["analysis"]["size"]["steps"][3]["step"], "data_skew");
    assert_eq!(v["analysis"]["complexity"]["ops"][0]["complexity"], "high");
    assert_eq!(v["analysis"]["workers"]["rule"], "many_partitions");
    assert_eq!(v["partitions"], Value::Null);
    // 20,000 / 2666 = 7.5 rounds to 8 partitions, within max(32, 6) and 2 x 4 concurrent.
    let mut rec = rec;
    assert_eq!(rec.count_partitions(20_000, &cfg(4, None, None)), 8);
}

#[test]
fn fallback_recommendation() {
    let rec = Recommendation::fallback(Some(5_000), "could not read the input");
    assert!(rec.is_fallback());
    assert_eq!(
        (rec.partition_size, rec.max_size_mb, rec.worker_count),
        (Some(5_000), None, None)
    );
    assert!(rec.reasoning[0].contains("could not read the input"));
    assert!(rec.reasoning[0].contains("5000 samples per partition"));
    let v = serde_json::to_value(&rec).unwrap();
    assert_eq!(v["analysis"], Value::Null);
    assert_eq!(v["fallback_reason"], "could not read the input");
    let mut rec = rec;
    let n = rec.count_partitions(100_000, &cfg(4, Some(16), None));
    assert_eq!(n, 20);
    assert_eq!(
        rec.partitions.as_ref().unwrap().size_source,
        "partition.size fallback"
    );
    assert!(
        rec.reasoning
            .last()
            .unwrap()
            .starts_with("partitions: cluster bound")
    );
    let v = serde_json::to_value(&rec).unwrap();
    assert_eq!(v["partitions"]["count"], 20);
    let none = Recommendation::fallback(None, "x");
    assert_eq!(none.partition_size, None);
    assert_eq!(Recommendation::fallback(Some(0), "x").partition_size, None);
}

// -- partition count and concurrency -------------------------------------------------------------

fn rec_with(size: usize, workers: usize) -> Recommendation {
    Recommendation {
        partition_size: Some(size),
        max_size_mb: Some(64),
        worker_count: Some(workers),
        estimated_partitions: None,
        fallback_reason: None,
        reasoning: vec![],
        analysis: None,
        partitions: None,
    }
}

fn cfg(np: usize, mcp: Option<usize>, ppn: Option<usize>) -> CountConfig {
    CountConfig {
        np,
        num_of_partitions: 4,
        max_concurrent_partitions: mcp,
        partitions_per_node: ppn,
        max_size_mb: 64,
        input_bytes: 0,
    }
}

/// `max_size_mb` is the fallback's limit: with the fallback, the count rises until no
/// partition holds more (at most one partition per row); the optimizer's answer is untouched.
#[test]
fn fallback_keeps_partitions_within_max_size_mb() {
    let fallback = Recommendation::fallback(Some(5000), "cannot sample the input");
    let big = CountConfig {
        input_bytes: 1000 * 1024 * 1024,
        ..cfg(2, None, None)
    };
    // 10,000 rows / 5000 = 2 partitions, under the cluster bound of 4; 1000 MB / 64 MB = 16.
    let c = partition_count(10_000, &fallback.advice(), &big);
    assert_eq!((c.count, c.max_size_floor), (16, Some(16)));
    assert!(
        c.reasoning
            .last()
            .unwrap()
            .starts_with("fallback max size: 1048576000 input bytes in partitions of at most 64 MB need 16: 2 -> 16"),
        "{:?}",
        c.reasoning
    );
    // Never more partitions than rows.
    assert_eq!(partition_count(5, &fallback.advice(), &big).count, 5);
    // A larger limit leaves the count alone.
    let roomy = CountConfig {
        max_size_mb: 1024,
        ..big
    };
    let c = partition_count(10_000, &fallback.advice(), &roomy);
    assert_eq!((c.count, c.max_size_floor), (2, Some(1)));
    // Not a fallback: the limit does not apply.
    let c = partition_count(10_000, &rec_with(5000, 2).advice(), &big);
    assert_eq!((c.count, c.max_size_floor), (2, None));
}

#[test]
fn partition_count_matches_data_juicer() {
    // DJ: _configure_auto_partitioning + _apply_cluster_partition_bounds on one CPU node with
    // `np` CPUs, the optimizer returning (size, workers). (name, rows, size, workers, np,
    // max_concurrent, per_node, count, data_driven, cluster_target)
    #[rustfmt::skip]
    let cases = [
        // nearest 60, cap max(32, 14) = 32, concurrency 4 -> max(8, 2) = 8.
        ("a",              100_000,   1_666, 7,  4, None,      None,     8,  32, 8),
        ("round_up",       25,        10,    3,  8, None,      None,     3,  3,  8),
        ("round_down",     24,        10,    3,  8, None,      None,     2,  2,  8),
        ("half_rounds_up", 15,        10,    3,  8, None,      None,     2,  2,  8),
        ("zero_rows",      0,         10,    1,  4, None,      None,     1,  1,  8),
        ("few_rows",       3,         10,    1,  4, None,      None,     1,  1,  8),
        ("np2",            100_000,   1_000, 1,  2, None,      None,     4,  32, 4),
        ("np1",            100_000,   1_000, 1,  1, None,      None,     2,  32, 2),
        ("explicit16",     100_000,   5_000, 6,  4, Some(16),  None,     20, 20, 32),
        ("explicit1",      100_000,   5_000, 6,  4, Some(1),   None,     2,  20, 2),
        ("ppn50",          100_000,   1_000, 6,  4, None,      Some(50), 32, 32, 50),
        ("ppn50_mcp32",    1_000_000, 1_000, 6,  4, Some(32),  Some(50), 32, 32, 64),
        ("cap32",          1_000_000, 1_000, 6,  4, Some(100), None,     32, 32, 200),
        ("cap_workers",    1_000_000, 1_000, 20, 4, Some(100), None,     40, 40, 200),
    ];
    for (name, rows, size, workers, np, mcp, ppn, count, data_driven, target) in cases {
        let c = partition_count(rows, &rec_with(size, workers).advice(), &cfg(np, mcp, ppn));
        assert_eq!(
            (c.count, c.data_driven, c.cluster_target),
            (count, data_driven, target),
            "{name}: {:?}",
            c.reasoning
        );
        assert_eq!(c.size_source, "optimizer");
    }
    let c = partition_count(100_000, &rec_with(1_666, 7).advice(), &cfg(4, None, None));
    assert_eq!(
        (
            c.from_size,
            c.submission_cap,
            c.concurrency,
            c.partitions_per_node
        ),
        (Some(60), Some(32), 4, 2)
    );
}

#[test]
fn partition_count_after_a_fallback() {
    // DJ: the optimizer raising; partition.size used if set (workers = np), else the
    // configured num_of_partitions; then the same cluster bound.
    let with_size = Recommendation::fallback(Some(5_000), "boom");
    let c = partition_count(100_000, &with_size.advice(), &cfg(4, Some(16), None));
    assert_eq!(
        (c.count, c.size_source, c.worker_count),
        (20, "partition.size fallback", 4)
    );
    // 1,000,000 / 5000 = 200, cap max(32, 2 x np 20) = 40.
    let c = partition_count(1_000_000, &with_size.advice(), &cfg(20, Some(100), None));
    assert_eq!((c.count, c.submission_cap), (40, Some(40)));
    let no_size = Recommendation::fallback(None, "boom");
    let c = partition_count(100_000, &no_size.advice(), &cfg(4, None, None));
    assert_eq!(
        (c.count, c.size_source, c.submission_cap),
        (4, "num_of_partitions", None)
    );
    let two = CountConfig {
        num_of_partitions: 2,
        ..cfg(4, None, None)
    };
    assert_eq!(partition_count(100_000, &no_size.advice(), &two).count, 2);
    // Never more partitions than rows (DJ: 3 from 4).
    let c = partition_count(3, &no_size.advice(), &cfg(4, None, None));
    assert_eq!((c.count, c.data_driven), (3, 4));
}

#[test]
fn concurrency_rules() {
    // DJ: _resolve_max_concurrent_partitions: auto on 8 CPUs -> 4, on 2 -> 2; explicit 0 -> 1,
    // 10 -> 10. Here `np` stands for the CPUs.
    assert_eq!(driver_concurrency(None, 8), 4);
    assert_eq!(driver_concurrency(None, 2), 2);
    assert_eq!(driver_concurrency(None, 0), 1);
    assert_eq!(driver_concurrency(Some(0), 4), 1);
    assert_eq!(driver_concurrency(Some(10), 4), 10);
    // Bounded by the partitions.
    assert_eq!(max_concurrent_partitions(None, 10, 8), 4);
    assert_eq!(max_concurrent_partitions(None, 3, 8), 3);
    assert_eq!(max_concurrent_partitions(None, 10, 2), 2);
    assert_eq!(max_concurrent_partitions(Some(10), 3, 4), 3);
    assert_eq!(max_concurrent_partitions(Some(10), 20, 4), 10);
    assert_eq!(max_concurrent_partitions(None, 1, 8), 1);
    assert_eq!(max_concurrent_partitions(None, 0, 8), 1);
}

// -- resources and constants -------------------------------------------------------------------

#[test]
fn detect_reads_this_machine() {
    let r = Resources::detect().expect("sysinfo");
    assert!(r.cpu_cores >= 1);
    assert!(r.total_memory_bytes > 0);
    assert!(r.available_memory_bytes <= r.total_memory_bytes);
}

#[test]
fn modality_table() {
    let t: Vec<_> = Modality::ALL
        .iter()
        .map(|m| {
            (
                m.as_str(),
                m.default_partition_size(),
                m.max_partition_size(),
                m.memory_multiplier(),
            )
        })
        .collect();
    assert_eq!(
        t,
        [
            ("text", 10_000, 50_000, 1.0),
            ("image", 2_000, 10_000, 5.0),
            ("audio", 1_000, 4_000, 8.0),
            ("video", 400, 2_000, 20.0),
            ("multimodal", 1_600, 6_000, 10.0),
        ]
    );
}

/// Data-Juicer's characteristics when sampling fails.
fn sampling_failed(total_samples: u64) -> DataCharacteristics {
    DataCharacteristics {
        sampling: Sampling::Failed,
        primary_modality: Modality::Text,
        modality_distribution: ModalityCounts {
            text: 1,
            ..ModalityCounts::default()
        },
        avg_text_length: 500.0,
        avg_images_per_sample: 0.0,
        avg_audio_per_sample: 0.0,
        avg_video_per_sample: 0.0,
        total_samples,
        sample_size_analyzed: 0,
        memory_per_sample_mb: 0.002,
        memory_p90_index: None,
        mean_memory_per_sample_mb: None,
        memory_stdev_mb: None,
        data_skew_factor: 0.5,
        includes_media_files: false,
    }
}

/// A text-only row of `chars` characters taking `memory_bytes`.
fn text_sample(chars: u64, memory_bytes: u64) -> SampleStats {
    SampleStats {
        has_text: chars > 0,
        text_chars: chars,
        memory_bytes,
        ..SampleStats::default()
    }
}

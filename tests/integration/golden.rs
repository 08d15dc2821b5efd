//! Differential tests against the real Data-Juicer: every recipe in tests/golden/recipes was run
//! through py-data-juicer 1.6.1 (tests/golden/regenerate.sh); our export and stats file must be
//! byte-for-byte the same.

#![allow(non_snake_case)] // test names are the golden recipe file names

use std::path::Path;

use crate::common::{load, repo, run_recipe};

fn check(name: &str, overrides: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join(format!("{name}.jsonl"));
    let export_s = export.to_str().unwrap().to_string();
    let mut o: Vec<(&str, &str)> = vec![("export_path", &export_s)];
    o.extend_from_slice(overrides);
    let recipe = load(
        &repo().join(format!("tests/golden/recipes/{name}.yaml")),
        &o,
    );
    run_recipe(&recipe);
    let expected_dir = repo().join("tests/golden/expected");
    compare(&expected_dir.join(format!("{name}.jsonl")), &export);
    let expected_stats = expected_dir.join(format!("{name}_stats.jsonl"));
    let stats = dir.path().join(format!("{name}_stats.jsonl"));
    assert_eq!(
        expected_stats.exists(),
        stats.exists(),
        "{name}: stats file presence differs"
    );
    if expected_stats.exists() {
        compare(&expected_stats, &stats);
    }
}

fn compare(expected: &Path, actual: &Path) {
    let e = std::fs::read_to_string(expected).unwrap();
    let a = std::fs::read_to_string(actual)
        .unwrap_or_else(|_| panic!("{} was not written", actual.display()));
    let (el, al): (Vec<&str>, Vec<&str>) = (e.lines().collect(), a.lines().collect());
    for (i, (x, y)) in el.iter().zip(&al).enumerate() {
        assert_eq!(x, y, "{}: line {} differs", expected.display(), i + 1);
    }
    assert_eq!(
        el.len(),
        al.len(),
        "{}: row count differs",
        expected.display()
    );
    assert_eq!(e, a, "{}: bytes differ", expected.display());
}

macro_rules! golden {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check(stringify!($name), &[]);
            }
        )*
    };
}

golden!(
    whitespace_normalization_mapper,
    punctuation_normalization_mapper,
    clean_email_mapper,
    clean_email_mapper__params,
    clean_email_mapper__pattern,
    clean_links_mapper,
    clean_links_mapper__params,
    text_length_filter,
    text_length_filter__params,
    text_length_filter__reversed,
    words_num_filter,
    words_num_filter__params,
    words_num_filter__open_min,
    alphanumeric_filter,
    alphanumeric_filter__params,
    alphanumeric_filter__open,
    special_characters_filter,
    special_characters_filter__params,
    special_characters_filter__reversed,
    character_repetition_filter,
    character_repetition_filter__params,
    document_deduplicator,
    document_deduplicator__lowercase,
    document_deduplicator__params,
    document_deduplicator__hashes,
    pipeline,
);

/// Row order and global dedup hold whatever the partitioning: the same golden output with the
/// input cut into 3 and 7 row-range partitions.
#[test]
fn pipeline_is_partitioning_independent() {
    check("pipeline", &[("np", "3")]);
    check("pipeline", &[("np", "7")]);
    check("document_deduplicator__params", &[("np", "5")]);
}

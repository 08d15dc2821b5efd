//! Throughput of every registered operator's UDF on one 8192-row batch of web-like text.
//!
//! Each op in `registry()` is built with its default parameters; the UDF the planner would call
//! (mapper `udf`, filter `stat_udf`, dedup `hash_udf`) runs via `invoke_with_args` on the same
//! deterministic `StringArray`. Run: `cargo bench -p dj-udfs --bench ops [-- FILTER]`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use arrow::array::{Array, ArrayRef, StringArray};
use arrow::datatypes::{DataType, Field};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use datafusion_common::config::ConfigOptions;
use datafusion_expr::{ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF};
use dj_udfs::{Operator, registry};

const ROWS: usize = 8192;

/// splitmix64: a fixed, dependency-free generator so the batch is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.below(hi - lo + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        ((self.next() >> 11) as f64 / (1u64 << 53) as f64) < p
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

const WORDS: &[&str] = &[
    "data",
    "model",
    "training",
    "language",
    "large",
    "corpus",
    "clean",
    "filter",
    "token",
    "text",
    "web",
    "page",
    "quality",
    "the",
    "of",
    "and",
    "to",
    "in",
    "is",
    "that",
    "for",
    "it",
    "with",
    "as",
    "on",
    "was",
    "by",
    "this",
    "be",
    "are",
    "from",
    "at",
    "or",
    "an",
    "have",
    "not",
    "which",
    "but",
    "they",
    "their",
    "has",
    "been",
    "one",
    "all",
    "would",
    "there",
    "what",
    "so",
    "if",
    "out",
    "about",
    "who",
    "get",
    "can",
    "more",
    "when",
    "up",
    "some",
    "time",
    "other",
    "could",
    "into",
    "than",
    "then",
    "only",
    "new",
    "also",
    "two",
    "after",
    "first",
    "well",
    "way",
    "even",
    "because",
    "any",
    "these",
    "give",
    "day",
    "most",
    "us",
    "research",
    "system",
    "results",
    "2024",
    "v1.2",
    "e.g.",
    "don't",
    "it's",
    "(see",
    "below)",
    "—",
    "“quoted”",
    "100%",
    "$19.99",
];

const CHINESE: &[&str] = &[
    "数据处理是大模型训练中非常重要的一步。",
    "我们使用多种过滤器来提高语料的质量，例如长度过滤和重复过滤。",
    "這是一段繁體中文的文字，用於測試轉換功能。",
    "网页文本通常包含大量的广告、导航和版权声明。",
    "请联系我们获取更多信息！",
];

const HTML: &[&str] = &[
    "<div class=\"nav\"><a href=\"/home\">Home</a> | <a href=\"/about\">About us</a></div>",
    "<p>Read the <b>full</b> article&nbsp;here.</p>",
    "<ul><li>first item</li><li>second item</li></ul>",
    "<br/><span style=\"color:red\">Sale!</span>",
];

const BOILERPLATE: &[&str] = &[
    "Click here to subscribe! ",
    "All rights reserved. ",
    "Cookie policy | Privacy | Terms of use. ",
];

fn sentence(rng: &mut Rng, out: &mut String) {
    let n = rng.range(5, 30);
    for i in 0..n {
        let w = rng.pick(WORDS);
        if i == 0 {
            let mut cs = w.chars();
            if let Some(c) = cs.next() {
                out.extend(c.to_uppercase());
                out.push_str(cs.as_str());
            }
        } else {
            out.push(' ');
            out.push_str(w);
        }
        match rng.below(60) {
            0 => out.push_str(&format!(" user{}@example.com", rng.below(9999))),
            1 => out.push_str(&format!(
                " https://www.site{}.org/page/{}?q=a&b=2",
                rng.below(500),
                rng.below(99_999)
            )),
            2 => out.push(','),
            _ => {}
        }
    }
    out.push_str(rng.pick(&[".", ".", ".", "!", "?", "..."]));
}

/// One document: 1-4 paragraphs of English sentences, with occasional html, Chinese,
/// boilerplate repetition and duplicated rows (about what `benches/gen_data.py` writes).
fn document(rng: &mut Rng) -> String {
    let mut s = String::new();
    if rng.chance(0.1) {
        let b = rng.pick(BOILERPLATE);
        for _ in 0..rng.range(3, 10) {
            s.push_str(b);
        }
    }
    for p in 0..rng.range(1, 4) {
        if p > 0 {
            s.push_str(if rng.chance(0.5) { "\n\n" } else { "\n" });
        }
        if rng.chance(0.1) {
            s.push_str(rng.pick(HTML));
            s.push(' ');
        }
        if rng.chance(0.08) {
            for _ in 0..rng.range(1, 5) {
                s.push_str(rng.pick(CHINESE));
            }
            continue;
        }
        for k in 0..rng.range(1, 5) {
            if k > 0 {
                s.push(' ');
            }
            sentence(rng, &mut s);
        }
    }
    s
}

fn batch() -> ArrayRef {
    let mut rng = Rng(42);
    let mut rows: Vec<String> = Vec::with_capacity(ROWS);
    while rows.len() < ROWS {
        if !rows.is_empty() && rng.chance(0.08) {
            let d = rows[rng.below(rows.len())].clone();
            rows.push(d);
        } else {
            rows.push(document(&mut rng));
        }
    }
    Arc::new(StringArray::from(rows))
}

/// The UDF the planner would run on the text column, or why this op has none.
fn text_udf(op: &Operator) -> Result<Arc<ScalarUDF>, &'static str> {
    match op {
        Operator::Mapper { udf } => Ok(udf.clone()),
        Operator::Filter(f) => Ok(f.stat_udf.clone()),
        Operator::Deduplicator(d) => Ok(d.hash_udf.clone()),
        Operator::FieldFilter(_) => Err("reads a non-text field"),
        Operator::Selector(_) => Err("a global selector over a field, no text UDF"),
        Operator::MediaMapper(_) => Err("rewrites media files, no text UDF"),
    }
}

fn invoke(
    udf: &ScalarUDF,
    input: &ArrayRef,
    arg: &Arc<Field>,
    ret: &Arc<Field>,
    cfg: &Arc<ConfigOptions>,
) -> ColumnarValue {
    udf.invoke_with_args(ScalarFunctionArgs {
        args: vec![ColumnarValue::Array(input.clone())],
        arg_fields: vec![arg.clone()],
        number_rows: input.len(),
        return_field: ret.clone(),
        config_options: cfg.clone(),
    })
    .expect("udf failed")
}

fn ops(c: &mut Criterion) {
    let input = batch();
    let bytes = input
        .as_any()
        .downcast_ref::<StringArray>()
        .map(|a| a.values().len() as u64)
        .unwrap_or_default();
    let arg = Arc::new(Field::new("text", DataType::Utf8, true));
    let cfg = Arc::new(ConfigOptions::default());
    let mut group = c.benchmark_group("ops");
    group.throughput(Throughput::Bytes(bytes));
    for spec in registry() {
        let op = match spec.instantiate(&serde_json::Map::new()) {
            Ok((_, op)) => op,
            Err(e) => {
                eprintln!("skip {}: defaults do not build: {e}", spec.name);
                continue;
            }
        };
        let udf = match text_udf(&op) {
            Ok(u) => u,
            Err(why) => {
                eprintln!("skip {}: {why}", spec.name);
                continue;
            }
        };
        let ret = match udf.return_field_from_args(ReturnFieldArgs {
            arg_fields: std::slice::from_ref(&arg),
            scalar_arguments: &[None],
        }) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("skip {}: no return type for Utf8: {e}", spec.name);
                continue;
            }
        };
        group.bench_function(spec.name, |b| {
            b.iter(|| black_box(invoke(&udf, &input, &arg, &ret, &cfg)))
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = ops
}
criterion_main!(benches);

//! The analysis on disk, in Data-Juicer's names where it has them: `overall.csv` (pandas'
//! `describe` layout), `{stat}-hist.png` (sqrt(n) bins, at least 10, with the filter's bounds
//! drawn in red), and dj-fusion's `analysis.json` and `report.html` (self-contained: the
//! histograms are embedded). Every file is written atomically.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Once;

use anyhow::{Context, Result};
use base64::Engine as _;
use image::ImageEncoder as _;
use plotters::prelude::*;

use super::{Analysis, Describe, StatAnalysis, Summary, TextDescribe};
use crate::job::write_atomic;

/// The font the histograms are labelled with (DejaVu Sans, shipped in `assets/`).
static FONT: &[u8] = include_bytes!("../../assets/DejaVuSans.ttf");
const FAMILY: &str = "dejavu-sans";

/// Writes the analysis into `dir` (created if needed); returns the files written.
pub(crate) fn write_report(analysis: &Analysis, dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    let csv = dir.join("overall.csv");
    write_atomic(&csv, overall_csv(analysis).as_bytes())?;
    written.push(csv);
    let json = dir.join("analysis.json");
    write_atomic(
        &json,
        (serde_json::to_string_pretty(analysis)? + "\n").as_bytes(),
    )?;
    written.push(json);
    let mut images = Vec::new();
    for stat in &analysis.stats {
        let png = dir.join(format!("{}-hist.png", stat.stat));
        let bytes = stat_png(stat)
            .with_context(|| format!("cannot draw the histogram of {}", stat.stat))?;
        write_atomic(&png, &bytes)?;
        written.push(png);
        images.push(bytes);
    }
    let html = dir.join("report.html");
    write_atomic(&html, report_html(analysis, &images).as_bytes())?;
    written.push(html);
    Ok(written)
}

/// pandas' `to_csv` quoting (`QUOTE_MINIMAL`): a field with a comma, quote or line break is
/// quoted, quotes doubled.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One column of `overall.csv`: (row label, cell). pandas' transposed frame holds every number as
/// a float when any column is numeric; with only string columns the counts stay integers.
fn summary_cells(summary: &Summary, counts_as_ints: bool) -> Vec<(&'static str, String)> {
    let float = |v: f64| {
        if v.is_nan() {
            String::new()
        } else {
            dj_udfs::py::pyfloat::repr(v)
        }
    };
    let count = |n: u64| {
        if counts_as_ints {
            n.to_string()
        } else {
            float(n as f64)
        }
    };
    match summary {
        Summary::Numeric { describe, .. } => describe
            .rows()
            .into_iter()
            .map(|(label, v)| (label, float(v)))
            .collect(),
        Summary::Text(t) => vec![
            ("count", count(t.count)),
            ("unique", count(t.unique)),
            ("top", t.top.clone()),
            ("freq", count(t.freq)),
        ],
    }
}

/// pandas' `DataFrame([describe() per stat]).T.to_csv()`: one column per stat, the row labels in
/// the order they first appear, NaN as an empty field.
fn overall_csv(analysis: &Analysis) -> String {
    let counts_as_ints = analysis
        .stats
        .iter()
        .all(|s| matches!(s.summary, Summary::Text(_)));
    let columns: Vec<Vec<(&str, String)>> = analysis
        .stats
        .iter()
        .map(|s| summary_cells(&s.summary, counts_as_ints))
        .collect();
    let mut labels: Vec<&str> = Vec::new();
    for (label, _) in columns.iter().flatten() {
        if !labels.contains(label) {
            labels.push(label);
        }
    }
    let mut out = String::new();
    for s in &analysis.stats {
        out.push(',');
        out.push_str(&csv_field(&s.stat));
    }
    out.push('\n');
    for label in labels {
        out.push_str(label);
        for column in &columns {
            out.push(',');
            if let Some((_, cell)) = column.iter().find(|(l, _)| *l == label) {
                out.push_str(&csv_field(cell));
            }
        }
        out.push('\n');
    }
    out
}

fn register_font() {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

/// Which filters test a stat, for captions.
fn used_by(stat: &StatAnalysis) -> String {
    if stat.filters.is_empty() {
        return "carried by the input".to_string();
    }
    stat.filters
        .iter()
        .map(|f| format!("#{} {}", f.op_index, f.op))
        .collect::<Vec<_>>()
        .join(", ")
}

fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>> {
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(rgb, w, h, image::ExtendedColorType::Rgb8)
        .context("cannot encode PNG")?;
    Ok(png)
}

/// The image of one stat: a histogram of numbers, or the counts of the most frequent strings.
fn stat_png(stat: &StatAnalysis) -> Result<Vec<u8>> {
    match &stat.summary {
        Summary::Numeric { describe, .. } => histogram_png(stat, describe),
        Summary::Text(t) => bars_png(stat, t),
    }
}

/// The most frequent values of a string stat as horizontal bars.
fn bars_png(stat: &StatAnalysis, t: &TextDescribe) -> Result<Vec<u8>> {
    register_font();
    let (w, h) = (900u32, 500u32);
    let mut rgb = vec![255u8; (w * h * 3) as usize];
    let n = t.values.len() as u32;
    let top = t.values.first().map_or(1, |v| v.1) + 1;
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let caption = format!("{}: {}", stat.stat, used_by(stat));
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, (FAMILY, 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(140)
            .build_cartesian_2d(0u64..top, (0u32..n).into_segmented())
            .map_err(draw_error)?;
        let labels: Vec<String> = t.values.iter().map(|(v, _)| v.clone()).collect();
        chart
            .configure_mesh()
            .x_desc("rows")
            .y_labels(n as usize)
            .y_label_formatter(&|y| match y {
                SegmentValue::CenterOf(i) => labels
                    .get(*i as usize)
                    .map(|l| l.chars().take(20).collect())
                    .unwrap_or_default(),
                _ => String::new(),
            })
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 16))
            .draw()
            .map_err(draw_error)?;
        chart
            .draw_series(t.values.iter().enumerate().map(|(i, (_, c))| {
                let i = i as u32;
                Rectangle::new(
                    [
                        (0, SegmentValue::Exact(i)),
                        (*c, SegmentValue::Exact(i + 1)),
                    ],
                    BLUE.mix(0.6).filled(),
                )
            }))
            .map_err(draw_error)?;
        root.present().map_err(draw_error)?;
    }
    encode_png(&rgb, w, h)
}

/// The histogram of one stat as PNG bytes.
fn histogram_png(stat: &StatAnalysis, describe: &Describe) -> Result<Vec<u8>> {
    register_font();
    let name = &stat.stat;
    let (w, h) = (900u32, 500u32);
    let mut rgb = vec![255u8; (w * h * 3) as usize];
    let (lo, hi) = match (describe.min, describe.max) {
        (a, b) if a.is_finite() && b.is_finite() && b > a => (a, b),
        (a, _) if a.is_finite() => (a - 0.5, a + 0.5),
        _ => (0.0, 1.0),
    };
    let bins = ((stat.values.len() as f64).sqrt() as usize).max(10);
    let width = (hi - lo) / bins as f64;
    let mut counts = vec![0u64; bins];
    for v in &stat.values {
        let b = (((v - lo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    let top = counts.iter().copied().max().unwrap_or(0) + 1;
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(draw_error)?;
        let caption = format!("{name}: {}", used_by(stat));
        let mut chart = ChartBuilder::on(&root)
            .caption(caption, (FAMILY, 22))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(lo..hi, 0u64..top)
            .map_err(draw_error)?;
        chart
            .configure_mesh()
            .x_desc(name)
            .y_desc("rows")
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 16))
            .draw()
            .map_err(draw_error)?;
        chart
            .draw_series(counts.iter().enumerate().map(|(i, c)| {
                let x0 = lo + width * i as f64;
                Rectangle::new([(x0, 0), (x0 + width, *c)], BLUE.mix(0.6).filled())
            }))
            .map_err(draw_error)?;
        let bounds = stat.filters.iter().flat_map(|f| [f.min, f.max]).flatten();
        for bound in bounds {
            if bound >= lo && bound <= hi {
                chart
                    .draw_series(LineSeries::new(
                        [(bound, 0), (bound, top)],
                        RED.stroke_width(3),
                    ))
                    .map_err(draw_error)?;
            }
        }
        root.present().map_err(draw_error)?;
    }
    encode_png(&rgb, w, h)
}

fn draw_error<E: std::error::Error + Send + Sync + 'static>(e: E) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn number(v: f64) -> String {
    if v.is_nan() {
        "-".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
    }
}

fn share(kept: u64, of: u64) -> String {
    if of == 0 {
        "-".into()
    } else {
        format!("{kept} ({:.1}%)", 100.0 * kept as f64 / of as f64)
    }
}

/// One self-contained page: every stat's histogram (embedded), summary, and what its bounds and
/// candidate thresholds keep.
fn report_html(analysis: &Analysis, images: &[Vec<u8>]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>dj-analyze: {}</title>\n\
         <style>body{{font-family:sans-serif;margin:2em;max-width:1000px}}\
         table{{border-collapse:collapse;margin:0.5em 0 1.5em}}\
         td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}\
         th{{background:#f3f3f3}} img{{max-width:100%}}</style></head><body>\n\
         <h1>Analysis of {}</h1>\n<p>Input {}: {} rows. Stats of every filter over the whole \
         input, without filtering (as Data-Juicer's analyzer); stats the rows already carry are \
         read, not recomputed.</p>\n",
        escape(&analysis.recipe),
        escape(&analysis.recipe),
        escape(&analysis.dataset_path),
        analysis.rows
    );
    for (stat, png) in analysis.stats.iter().zip(images) {
        let name = &stat.stat;
        let source = if stat.from_input {
            "read from the input's stats"
        } else {
            "computed"
        };
        let _ = write!(
            s,
            "<h2>{} <small>({}; {})</small></h2>\n\
             <img alt=\"histogram of {}\" src=\"data:image/png;base64,{}\">\n",
            escape(name),
            escape(&used_by(stat)),
            source,
            escape(name),
            base64::engine::general_purpose::STANDARD.encode(png)
        );
        match &stat.summary {
            Summary::Numeric { describe, .. } => {
                s.push_str("<table><tr>");
                for (label, _) in describe.rows() {
                    let _ = write!(s, "<th>{label}</th>");
                }
                s.push_str("</tr><tr>");
                for (_, v) in describe.rows() {
                    let _ = write!(s, "<td>{}</td>", number(v));
                }
                s.push_str("</tr></table>\n");
            }
            Summary::Text(t) => {
                let _ = write!(
                    s,
                    "<p>{} values, {} distinct; the most frequent:</p>\n\
                     <table><tr><th>value</th><th>rows</th></tr>\n",
                    t.count, t.unique
                );
                for (v, n) in &t.values {
                    let _ = writeln!(s, "<tr><td>{}</td><td>{}</td></tr>", escape(v), n);
                }
                s.push_str("</table>\n");
            }
        }
        for f in &stat.filters {
            let bounds = if f.min.is_some() || f.max.is_some() {
                format!(
                    " with bounds {} .. {}",
                    f.min.map_or("-".into(), number),
                    f.max.map_or("-".into(), number)
                )
            } else {
                String::new()
            };
            let _ = writeln!(
                s,
                "<p>#{} {}{} keeps {} of {} rows.</p>",
                f.op_index,
                escape(&f.op),
                bounds,
                share(f.kept, analysis.rows),
                analysis.rows
            );
        }
        if let Summary::Numeric {
            describe,
            thresholds,
        } = &stat.summary
        {
            s.push_str(
                "<table><tr><th>quantile</th><th>threshold</th><th>kept as min</th>\
                 <th>kept as max</th></tr>\n",
            );
            for t in thresholds {
                let _ = writeln!(
                    s,
                    "<tr><td>{:.0}%</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                    t.quantile * 100.0,
                    number(t.value),
                    share(t.kept_as_min, describe.count),
                    share(t.kept_as_max, describe.count)
                );
            }
            s.push_str("</table>\n");
        }
    }
    if !analysis.skipped.is_empty() {
        s.push_str("<h2>Not analyzed</h2>\n<ul>\n");
        for line in &analysis.skipped {
            let _ = writeln!(s, "<li>{}</li>", escape(line));
        }
        s.push_str("</ul>\n");
    }
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::TextDescribe;

    fn text_stat(name: &str, values: &[&str]) -> StatAnalysis {
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        StatAnalysis {
            stat: name.to_string(),
            from_input: true,
            filters: Vec::new(),
            summary: Summary::Text(TextDescribe::of(&values)),
            values: Vec::new(),
        }
    }

    /// pandas, `pd.DataFrame([pd.Series(['b', 'a', 'a', 'b', 'c']).describe()]).T.to_csv()`:
    /// with only string columns the counts stay integers; a value with a comma is quoted.
    #[test]
    fn string_only_overall_csv_matches_pandas() {
        let analysis = Analysis {
            recipe: "r.yaml".into(),
            dataset_path: "d.jsonl".into(),
            rows: 5,
            stats: vec![
                text_stat("lang", &["b", "a", "a", "b", "c"]),
                text_stat("tag", &["x,y", "z", "x,y", "x,y", "z"]),
            ],
            skipped: Vec::new(),
        };
        assert_eq!(
            overall_csv(&analysis),
            ",lang,tag\ncount,5,5\nunique,3,2\ntop,b,\"x,y\"\nfreq,2,3\n"
        );
    }
}

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

use super::{Analysis, StatAnalysis};
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
    for (stat, name) in analysis.stats.iter().zip(column_names(analysis)) {
        let png = dir.join(format!("{name}-hist.png"));
        let bytes = histogram_png(stat, &name)
            .with_context(|| format!("cannot draw the histogram of {name}"))?;
        write_atomic(&png, &bytes)?;
        written.push(png);
        images.push(bytes);
    }
    let html = dir.join("report.html");
    write_atomic(&html, report_html(analysis, &images).as_bytes())?;
    written.push(html);
    Ok(written)
}

/// Column names: the stat keys, with the op index added where two filters share a key.
fn column_names(analysis: &Analysis) -> Vec<String> {
    analysis
        .stats
        .iter()
        .map(|s| {
            let shared = analysis.stats.iter().filter(|o| o.stat == s.stat).count() > 1;
            if shared {
                format!("{}_op{}", s.stat, s.op_index)
            } else {
                s.stat.clone()
            }
        })
        .collect()
}

/// pandas' `describe().to_csv()`: one column per stat, one row per summary, floats as Python
/// prints them, NaN as an empty field.
fn overall_csv(analysis: &Analysis) -> String {
    let mut out = String::new();
    for name in column_names(analysis) {
        out.push(',');
        out.push_str(&name);
    }
    out.push('\n');
    let rows: Vec<_> = analysis.stats.iter().map(|s| s.describe.rows()).collect();
    for r in 0..8 {
        out.push_str(rows.first().map_or("", |row| row[r].0));
        for row in &rows {
            out.push(',');
            let v = row[r].1;
            if !v.is_nan() {
                out.push_str(&dj_udfs::py::pyfloat::repr(v));
            }
        }
        out.push('\n');
    }
    out
}

/// The histogram of one stat as PNG bytes.
fn histogram_png(stat: &StatAnalysis, name: &str) -> Result<Vec<u8>> {
    static REGISTER: Once = Once::new();
    REGISTER.call_once(|| {
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
    let (w, h) = (900u32, 500u32);
    let mut rgb = vec![255u8; (w * h * 3) as usize];
    let (lo, hi) = match (stat.describe.min, stat.describe.max) {
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
        let caption = format!("{name}: {} (op #{})", stat.op, stat.op_index);
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
        for bound in [stat.min, stat.max].into_iter().flatten() {
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
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgb, w, h, image::ExtendedColorType::Rgb8)
        .context("cannot encode PNG")?;
    Ok(png)
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
         input, without filtering (as Data-Juicer's analyzer).</p>\n",
        escape(&analysis.recipe),
        escape(&analysis.recipe),
        escape(&analysis.dataset_path),
        analysis.rows
    );
    for ((stat, name), png) in analysis
        .stats
        .iter()
        .zip(column_names(analysis))
        .zip(images)
    {
        let d = &stat.describe;
        let bounds = format!(
            "{} .. {}",
            stat.min.map_or("-".into(), number),
            stat.max.map_or("-".into(), number)
        );
        let _ = write!(
            s,
            "<h2>{} <small>(#{} {})</small></h2>\n\
             <img alt=\"histogram of {}\" src=\"data:image/png;base64,{}\">\n\
             <table><tr><th>count</th><th>mean</th><th>std</th><th>min</th><th>25%</th>\
             <th>50%</th><th>75%</th><th>max</th></tr><tr>",
            escape(&name),
            stat.op_index,
            escape(&stat.op),
            escape(&name),
            base64::engine::general_purpose::STANDARD.encode(png)
        );
        for (_, v) in d.rows() {
            let _ = write!(s, "<td>{}</td>", number(v));
        }
        let _ = write!(
            s,
            "</tr></table>\n<p>Current bounds {bounds} keep {} of {} rows.</p>\n\
             <table><tr><th>quantile</th><th>threshold</th><th>kept as min</th>\
             <th>kept as max</th></tr>\n",
            share(stat.kept_by_bounds, d.count),
            d.count
        );
        for t in &stat.thresholds {
            let _ = writeln!(
                s,
                "<tr><td>{:.0}%</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                t.quantile * 100.0,
                number(t.value),
                share(t.kept_as_min, d.count),
                share(t.kept_as_max, d.count)
            );
        }
        s.push_str("</table>\n");
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

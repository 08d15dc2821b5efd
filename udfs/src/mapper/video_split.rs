//! `video_split_by_duration_mapper`: each video longer than `split_duration` is cut into clips
//! of that length (consecutive clips overlapping by `overlap_duration`), and a new sample holds
//! the clips, after the original sample unless `keep_original_sample` is false.
//!
//! As Data-Juicer's default `ffmpeg` backend does, the duration is the one `ffprobe` prints
//! (see [`crate::media::VideoInfo::ffprobe_duration`]) and each clip is cut by the `ffmpeg`
//! command with the same arguments (`-y -ss START -i SRC [-t LENGTH] -c copy -f mp4
//! {ffmpeg_extra_args} OUT`): a stream copy, so the clip files are byte for byte the ones
//! Data-Juicer writes with the same FFmpeg. A clip the command fails to write is left out, as
//! there. The clips are named `{stem}__dj_hash_#{hash}#_{n}{ext}` (see
//! [`crate::mapper::produced`]) and written atomically; a resumed job keeps the clips its first
//! run finished. With `legacy_split_by_text_token` (the default) the videos are split in the
//! order of the text's `<__dj__video>` tokens, chunk by chunk, and each token becomes one token
//! per clip; without it every video is split and the new sample's text is empty, as there.
//!
//! Deliberate deviations: a video that cannot be read drops its own sample (and the new one),
//! where Data-Juicer drops the whole batch of up to 1,000 samples it was processed with; the
//! same goes for a text with more `<__dj__video>` tokens than the sample has videos.
//! `__dj__source_file__` of the kept original lists its videos unless it already lists files.
//! Not supported, and refused when the recipe is read: `video_backend: av` (it decodes and
//! re-encodes with PyAV), `output_format: bytes` and `save_field`.

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, AsArray, ListBuilder, StringBuilder, StructBuilder};
use arrow::datatypes::{DataType, Field, Fields};
use datafusion_common::Result;
use serde_json::json;

use crate::filter::media_stats::{row_paths, skips_errors, unreadable};
use crate::mapper::produced::{add_suffix, produced_path, save_dir_param, write_atomically};
use crate::mapper::{EOC_TOKEN, VIDEO_TOKEN};
use crate::operator::{MediaMapperOp, MediaMapperShape, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::py::pyfloat::repr;
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::text::py_strip;
use crate::udf::{OpUdf, UdfIdentity};

pub(crate) fn video_split_by_duration_spec() -> OpSpec {
    OpSpec {
        name: "video_split_by_duration_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "split_duration",
                    ParamType::Float,
                    json!(10),
                    "length of each clip in seconds",
                ),
                ParamSpec::new(
                    "overlap_duration",
                    ParamType::Float,
                    json!(0),
                    "seconds consecutive clips share (at least 0, less than split_duration)",
                ),
                ParamSpec::new(
                    "min_last_split_duration",
                    ParamType::Float,
                    json!(0),
                    "the last clip is dropped if shorter",
                ),
                ParamSpec::new(
                    "keep_original_sample",
                    ParamType::Bool,
                    json!(true),
                    "keep the original sample before the new one",
                ),
                save_dir_param(),
                ParamSpec::new(
                    "video_backend",
                    ParamType::Choice(&["ffmpeg", "av"]),
                    json!("ffmpeg"),
                    "ffmpeg (av is not supported here)",
                ),
                ParamSpec::new(
                    "ffmpeg_extra_args",
                    ParamType::Str,
                    json!(""),
                    "more ffmpeg output options, split as a shell splits them",
                ),
                ParamSpec::new(
                    "output_format",
                    ParamType::Str,
                    json!("path"),
                    "path (bytes is not supported here)",
                ),
                ParamSpec::new(
                    "save_field",
                    ParamType::Any,
                    serde_json::Value::Null,
                    "not supported here: the clips replace the video list",
                ),
                ParamSpec::new(
                    "legacy_split_by_text_token",
                    ParamType::Bool,
                    json!(true),
                    "split the videos in the order of the text's video tokens",
                ),
            ]
        },
        build,
        doc: "Split videos into clips of a fixed duration, in a new sample.",
    }
}

/// What one sample's split needs.
struct Splitter {
    op: String,
    split: f64,
    overlap: f64,
    min_last: f64,
    keep_original: bool,
    save_dir: Option<String>,
    extra_args: Vec<String>,
    legacy: bool,
    skip_errors: bool,
    /// The op's parameters as JSON without `save_dir` (they name the clips).
    params: String,
}

fn build(p: &Params) -> std::result::Result<Operator, ParamError> {
    let split = p.float("split_duration").unwrap_or(10.0);
    let overlap = p.float("overlap_duration").unwrap_or(0.0);
    if overlap < 0.0 {
        return Err(p.invalid(
            "overlap_duration",
            format!("must be >= 0, got {}", repr(overlap)),
        ));
    }
    if overlap >= split {
        return Err(p.invalid(
            "overlap_duration",
            format!(
                "({}) must be less than split_duration ({})",
                repr(overlap),
                repr(split)
            ),
        ));
    }
    if p.str("video_backend") == Some("av") {
        return Err(p.invalid(
            "video_backend",
            "`av` (cutting by decoding and encoding again with PyAV) is not supported; use \
             `ffmpeg` (the default), which copies the streams",
        ));
    }
    match p
        .str("output_format")
        .unwrap_or("path")
        .to_lowercase()
        .as_str()
    {
        "path" => {}
        "bytes" => {
            return Err(p.invalid(
                "output_format",
                "`bytes` (the clips' bytes in the video list) is not supported; use `path`",
            ));
        }
        other => {
            return Err(p.invalid(
                "output_format",
                format!("'{other}' is not supported. Can only be one of ['path', 'bytes']."),
            ));
        }
    }
    if !p.raw("save_field").is_null() {
        return Err(p.invalid(
            "save_field",
            "is not supported: the clips replace the sample's video list",
        ));
    }
    let extra = p.str("ffmpeg_extra_args").unwrap_or("");
    let extra_args = shlex::split(extra).ok_or_else(|| {
        p.invalid(
            "ffmpeg_extra_args",
            format!("`{extra}` is not a valid shell word list (an unclosed quote?)"),
        )
    })?;
    let splitter = Arc::new(Splitter {
        op: p.op().to_string(),
        split,
        overlap,
        min_last: p.float("min_last_split_duration").unwrap_or(0.0),
        keep_original: p.raw("keep_original_sample").as_bool().unwrap_or(true),
        save_dir: p.str("save_dir").map(str::to_string),
        extra_args,
        legacy: p
            .raw("legacy_split_by_text_token")
            .as_bool()
            .unwrap_or(true),
        skip_errors: skips_errors(p),
        params: {
            let mut json = p.to_json();
            if let Some(o) = json.as_object_mut() {
                o.remove("save_dir");
            }
            json.to_string()
        },
    });
    let f = Arc::new(move |args: &[ArrayRef]| splitter.run(args));
    Ok(Operator::MediaMapper(MediaMapperOp {
        column: p.str("video_key").unwrap_or("videos").to_string(),
        udf: OpUdf::from_fn(
            UdfIdentity::of(p, ""),
            Some(DataType::new_list(DataType::Struct(sample_fields()), true)),
            f,
        ),
        shape: MediaMapperShape::Expands,
    }))
}

fn sample_fields() -> Fields {
    let list = DataType::new_list(DataType::Utf8, true);
    Fields::from(vec![
        Field::new("text", DataType::Utf8, true),
        Field::new("paths", list.clone(), true),
        Field::new("source_file", list, true),
    ])
}

/// One output sample.
struct Sample<'a> {
    text: Option<&'a str>,
    /// `None`: a null video list.
    paths: Option<&'a [String]>,
    source_file: &'a [String],
}

fn append(out: &mut ListBuilder<StructBuilder>, s: &Sample<'_>) {
    let fields = out.values();
    let text = fields.field_builder::<StringBuilder>(0).unwrap();
    match s.text {
        Some(t) => text.append_value(t),
        None => text.append_null(),
    }
    let paths = fields
        .field_builder::<ListBuilder<StringBuilder>>(1)
        .unwrap();
    match s.paths {
        Some(list) => {
            for p in list {
                paths.values().append_value(p);
            }
            paths.append(true);
        }
        None => paths.append_null(),
    }
    let sources = fields
        .field_builder::<ListBuilder<StringBuilder>>(2)
        .unwrap();
    for p in s.source_file {
        sources.values().append_value(p);
    }
    sources.append(true);
    fields.append(true);
}

impl Splitter {
    fn run(&self, args: &[ArrayRef]) -> Result<ArrayRef> {
        let text = arrow::compute::cast(&args[0], &DataType::Utf8)?;
        let text = text.as_string::<i32>();
        let (media, sources) = (&args[1], &args[2]);
        let mut out = ListBuilder::new(StructBuilder::new(
            sample_fields(),
            vec![
                Box::new(StringBuilder::new()),
                Box::new(ListBuilder::new(StringBuilder::new())),
                Box::new(ListBuilder::new(StringBuilder::new())),
            ],
        ));
        for row in 0..text.len() {
            let body = text.is_valid(row).then(|| text.value(row));
            let videos = row_paths(&self.op, media, row)?;
            let files = videos.as_deref().unwrap_or_default();
            if files.is_empty() {
                // No video: the sources are emptied, as there, and no new sample is made.
                if self.keep_original {
                    let paths = videos.as_deref();
                    append(
                        &mut out,
                        &Sample {
                            text: body,
                            paths,
                            source_file: &[],
                        },
                    );
                }
                out.append(true);
                continue;
            }
            // Every clip would be left out without the command: the job fails instead.
            crate::media::require_ffmpeg_command(&self.op, "cuts clips")?;
            match self.split_sample(body.unwrap_or_default(), files) {
                Ok((new_text, clips, clip_sources)) => {
                    if self.keep_original {
                        let kept = row_paths(&self.op, sources, row)?.filter(|s| !s.is_empty());
                        append(
                            &mut out,
                            &Sample {
                                text: body,
                                paths: Some(files),
                                source_file: kept.as_deref().unwrap_or(files),
                            },
                        );
                    }
                    append(
                        &mut out,
                        &Sample {
                            text: Some(&new_text),
                            paths: Some(&clips),
                            source_file: &clip_sources,
                        },
                    );
                }
                Err((path, e)) => unreadable(&self.op, self.skip_errors, "split video", &path, &e)?,
            }
            out.append(true);
        }
        Ok(Arc::new(out.finish()))
    }

    /// The new sample's text, clips and their sources; or the video that failed, and why.
    #[allow(clippy::type_complexity)]
    fn split_sample(
        &self,
        text: &str,
        videos: &[String],
    ) -> std::result::Result<(String, Vec<String>, Vec<String>), (String, String)> {
        let (mut clips, mut sources) = (Vec::new(), Vec::new());
        let mut split = |video: &String| -> std::result::Result<usize, (String, String)> {
            let new = self.split_video(video).map_err(|e| (video.clone(), e))?;
            sources.extend(std::iter::repeat_n(video.clone(), new.len()));
            let n = new.len();
            clips.extend(new);
            Ok(n)
        };
        if !self.legacy {
            for video in videos {
                split(video)?;
            }
            return Ok((String::new(), clips, sources));
        }
        let mut new_text = String::with_capacity(text.len());
        let mut offset = 0;
        for chunk in text.split(EOC_TOKEN) {
            if py_strip(chunk).is_empty() {
                continue;
            }
            let mut pieces = chunk.split(VIDEO_TOKEN);
            new_text.push_str(pieces.next().unwrap_or_default());
            for piece in pieces {
                let video = videos.get(offset).ok_or_else(|| {
                    (
                        format!("video #{offset}"),
                        format!(
                            "the text has more {VIDEO_TOKEN} tokens than the sample's {} videos",
                            videos.len()
                        ),
                    )
                })?;
                let n = split(video)?;
                new_text.push_str(&VIDEO_TOKEN.repeat(n));
                new_text.push_str(piece);
                offset += 1;
            }
            new_text.push_str(EOC_TOKEN);
        }
        Ok((new_text, clips, sources))
    }

    /// `split_videos_by_duration`: the clips of one video, or the video itself if it is not
    /// longer than `split_duration`.
    fn split_video(&self, path: &str) -> std::result::Result<Vec<String>, String> {
        let local = crate::remote_media::local_file(path)?;
        let duration = crate::media::video_info(&local)?.ffprobe_duration();
        if duration <= self.split {
            return Ok(vec![path.to_string()]);
        }
        let base = produced_path(
            &self.op,
            self.save_dir.as_deref(),
            path,
            &local,
            &self.params,
        )?;
        let mut clips = Vec::new();
        for (start, end) in clip_spans(duration, self.split, self.overlap, self.min_last) {
            let clip = add_suffix(&base, &format!("_{}", clips.len()));
            if clip.exists() || self.cut(&local, &clip, start, end) {
                clips.push(
                    clip.into_os_string()
                        .into_string()
                        .map_err(|p| format!("the clip path {p:?} is not UTF-8"))?,
                );
            }
        }
        Ok(clips)
    }

    /// Runs `ffmpeg` to write `[start, end)` of `src` as `clip`; false if the command fails.
    fn cut(&self, src: &str, clip: &Path, start: f64, end: Option<f64>) -> bool {
        let written = write_atomically(clip, |tmp| {
            let mut cmd = Command::new("ffmpeg");
            cmd.args(["-y", "-ss", &repr(start), "-i", src]);
            if let Some(end) = end {
                cmd.args(["-t", &repr(end - start)]);
            }
            cmd.args(["-c", "copy", "-f", "mp4"])
                .args(&self.extra_args)
                .arg(tmp)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped());
            let output = cmd
                .output()
                .map_err(|e| format!("cannot run ffmpeg: {e}"))?;
            if output.status.success() {
                Ok(())
            } else {
                let stderr = String::from_utf8_lossy(&output.stderr);
                let last = stderr.lines().rev().find(|l| !l.trim().is_empty());
                Err(format!("ffmpeg failed: {}", last.unwrap_or("no message")))
            }
        });
        if let Err(e) = &written {
            tracing::warn!("{}: left out the clip {}: {e}", self.op, clip.display());
        }
        written.is_ok()
    }
}

/// The clips' (start, end) of a video of `duration` seconds, `end` none for the last one that
/// runs to the end; as `split_videos_by_duration` computes them, with numpy's `arange` of the
/// start times.
fn clip_spans(duration: f64, split: f64, overlap: f64, min_last: f64) -> Vec<(f64, Option<f64>)> {
    let step = split - overlap;
    let count = (duration / step).ceil().max(0.0) as usize;
    let mut spans = Vec::new();
    for i in 0..count {
        let start = i as f64 * step;
        let end = start + split;
        if end >= duration {
            if duration - start >= min_last {
                spans.push((start, None));
            }
            break;
        }
        spans.push((start, Some(end)));
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_follow_arange_and_the_last_clip_rule() {
        assert_eq!(
            clip_spans(2.0, 0.5, 0.0, 0.0),
            vec![
                (0.0, Some(0.5)),
                (0.5, Some(1.0)),
                (1.0, Some(1.5)),
                (1.5, None)
            ]
        );
        // A short last clip is dropped below min_last_split_duration.
        assert_eq!(
            clip_spans(1.3, 0.5, 0.0, 0.4),
            vec![(0.0, Some(0.5)), (0.5, Some(1.0))]
        );
        assert_eq!(
            clip_spans(1.3, 0.5, 0.0, 0.3),
            vec![(0.0, Some(0.5)), (0.5, Some(1.0)), (1.0, None)]
        );
        // Overlap: starts every split - overlap seconds; the first clip that reaches the end
        // is the last.
        assert_eq!(
            clip_spans(3.709, 2.0, 0.5, 0.0),
            vec![(0.0, Some(2.0)), (1.5, Some(3.5)), (3.0, None)]
        );
        // 0.1 steps: start = i * 0.1 in floating point (0.30000000000000004), as numpy has it.
        let spans = clip_spans(0.35, 0.1, 0.0, 0.0);
        assert_eq!(spans[3], (0.30000000000000004, None));
        assert_eq!(repr(spans[3].0), "0.30000000000000004");
    }

    fn splitter(legacy: bool) -> Splitter {
        Splitter {
            op: "video_split_by_duration_mapper".into(),
            split: 10.0,
            overlap: 0.0,
            min_last: 0.0,
            keep_original: true,
            save_dir: None,
            extra_args: vec![],
            legacy,
            skip_errors: true,
            params: "{}".into(),
        }
    }

    #[test]
    fn too_many_video_tokens_fail_the_sample_naming_the_missing_video() {
        let err = splitter(true)
            .split_sample(
                "<__dj__video> a <__dj__video> b",
                &["/nonexistent.mp4".into()],
            )
            .unwrap_err();
        // The first video fails to open before the missing second one is reached.
        assert_eq!(err.0, "/nonexistent.mp4");
        let err = splitter(true)
            .split_sample("<__dj__video><__dj__video>", &[])
            .unwrap_err();
        assert_eq!(err.0, "video #0");
        assert!(err.1.contains("more <__dj__video> tokens"), "{}", err.1);
    }

    #[test]
    fn chunks_without_content_are_skipped_and_each_chunk_ends_with_eoc() {
        // No video token: nothing is split, the chunks are rebuilt with their end tokens.
        let (text, clips, _) = splitter(true)
            .split_sample("a <|__dj__eoc|>  <|__dj__eoc|> b", &["/x.mp4".into()])
            .unwrap();
        assert_eq!(text, "a <|__dj__eoc|> b<|__dj__eoc|>");
        assert!(clips.is_empty());
    }
}

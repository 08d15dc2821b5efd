//! `video_extract_frames_mapper`: writes frames of each video as JPEG files,
//! `{frame_dir}/{video file stem}/frame_{i}.jpg`, and records their paths per video in a new
//! field (`frame_field`, `video_frames` by default; a sample that has it already is left alone).
//! It is one of Data-Juicer's tagging ops, so the sample also gets an empty `__dj__meta__`.
//!
//! Frames are taken as Data-Juicer's backends take them (see [`crate::frames`]): `av` (the
//! default) or `ffmpeg`, with `frame_sampling_method` `all_keyframes` (the default),
//! `all_frames` or `uniform` (`frame_num` frames). Each file is written once, atomically: a
//! frame file that exists is kept, as there, so a resumed job finds the files its first run
//! wrote. The frames are encoded with Pillow's JPEG defaults through libjpeg-turbo from this
//! FFmpeg's conversion to RGB (PyAV's bilinear one for `av`); on the fixtures the files are
//! byte for byte Data-Juicer's. With `legacy_split_by_text_token` (the default) only the videos
//! the text's `<__dj__video>` tokens reach are read, chunk by chunk; the others get no frames.
//!
//! Deliberate deviations: a sample without videos gets an empty list (Data-Juicer 1.6.1 fails
//! on it and drops its whole batch), and a video that cannot be read drops its own sample (there,
//! the batch). Not supported, and refused when the recipe is read: `duration` above 0 with the
//! `av` backend for key frames or uniform frames (it re-encodes each segment with libx264 there,
//! whose key frames are not reproducible; `all_frames` ignores `duration`, as there) and
//! `output_format: bytes`.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, AsArray, BooleanBuilder, ListBuilder, StringBuilder, StructArray,
};
use arrow::datatypes::{DataType, Field, Fields};
use datafusion_common::Result;
use serde_json::json;

use crate::filter::media_stats::{row_paths, skips_errors, unreadable};
use crate::frames::{RgbFrame, Sampling, av_frames, ffmpeg_frames};
use crate::mapper::produced::write_atomically;
use crate::mapper::{EOC_TOKEN, VIDEO_TOKEN};
use crate::operator::{MediaMapperOp, MediaMapperShape, Operator};
use crate::params::{ParamError, ParamSpec, ParamType, Params};
use crate::py::os_path;
use crate::spec::{ModelUse, OpKind, OpSpec};
use crate::udf::{OpUdf, UdfIdentity};

pub(crate) fn video_extract_frames_spec() -> OpSpec {
    OpSpec {
        name: "video_extract_frames_mapper",
        kind: OpKind::Mapper,
        model_use: ModelUse::None,
        params: || {
            vec![
                ParamSpec::new(
                    "frame_sampling_method",
                    ParamType::Str,
                    json!("all_keyframes"),
                    "all_keyframes, all_frames or uniform",
                ),
                ParamSpec::new(
                    "output_format",
                    ParamType::Str,
                    json!("path"),
                    "path (bytes is not supported here)",
                ),
                ParamSpec::new(
                    "frame_num",
                    ParamType::Int,
                    json!(3),
                    "frames for uniform: the middle one, or the first, the last and between",
                ),
                ParamSpec::new(
                    "duration",
                    ParamType::Float,
                    json!(0),
                    "seconds per segment (0: the whole video); the ffmpeg backend",
                ),
                ParamSpec::new(
                    "frame_dir",
                    ParamType::Any,
                    serde_json::Value::Null,
                    "directory of the frame files (required)",
                ),
                ParamSpec::new(
                    "frame_key",
                    ParamType::Any,
                    serde_json::Value::Null,
                    "deprecated name of frame_field",
                ),
                ParamSpec::new(
                    "frame_field",
                    ParamType::Str,
                    json!("video_frames"),
                    "the field of the frame paths",
                ),
                ParamSpec::new(
                    "legacy_split_by_text_token",
                    ParamType::Bool,
                    json!(true),
                    "read the videos in the order of the text's video tokens",
                ),
                ParamSpec::new(
                    "video_backend",
                    ParamType::Choice(&["ffmpeg", "av"]),
                    json!("av"),
                    "how frames are decoded",
                ),
            ]
        },
        build,
        doc: "Write key frames or all frames of videos as JPEG files, their paths in a new field.",
    }
}

struct Extractor {
    op: String,
    sampling: Sampling,
    av: bool,
    /// `duration` seconds per segment (the `ffmpeg` backend), if above 0.
    segment: Option<f64>,
    frame_dir: String,
    legacy: bool,
    skip_errors: bool,
}

fn build(p: &Params) -> std::result::Result<Operator, ParamError> {
    let output = p.str("output_format").unwrap_or("path").to_lowercase();
    match output.as_str() {
        "path" => {}
        "bytes" => {
            return Err(p.invalid(
                "output_format",
                "`bytes` (frames' JPEG bytes in the field) is not supported; use `path`",
            ));
        }
        other => {
            return Err(p.invalid(
                "output_format",
                format!("'{other}' is not supported. Can only be one of ['path', 'bytes']."),
            ));
        }
    }
    let sampling = match p.str("frame_sampling_method").unwrap_or("all_keyframes") {
        "all_keyframes" => Sampling::KeyFrames,
        "all_frames" => Sampling::AllFrames,
        "uniform" => {
            let n = p.int("frame_num").unwrap_or(3);
            if n < 1 {
                return Err(p.invalid("frame_num", format!("must be a positive integer, got {n}")));
            }
            Sampling::Uniform(n as usize)
        }
        other => {
            return Err(p.invalid(
                "frame_sampling_method",
                format!(
                    "Frame sampling method [{other}] is not supported. Can only be one of \
                     [\"all_keyframes\", \"all_frames\", \"uniform\"]."
                ),
            ));
        }
    };
    let av = p.str("video_backend") != Some("ffmpeg");
    let segment = p.float("duration").filter(|d| *d > 0.0);
    if segment.is_some() && av && sampling != Sampling::AllFrames {
        return Err(p.invalid(
            "duration",
            "segments (duration > 0) with the `av` backend are not supported (Data-Juicer \
             re-encodes each one with libx264, whose key frames are not reproducible); use \
             `video_backend: ffmpeg` or duration 0",
        ));
    }
    let frame_dir = p.str("frame_dir").map(str::to_string).ok_or_else(|| {
        p.invalid(
            "frame_dir",
            "'frame_dir' must be specified when output_format is in ['path'].",
        )
    })?;
    let field = p
        .str("frame_key")
        .or(p.str("frame_field"))
        .unwrap_or("video_frames")
        .to_string();
    let extractor = Arc::new(Extractor {
        op: p.op().to_string(),
        sampling,
        av,
        segment,
        frame_dir,
        legacy: p
            .raw("legacy_split_by_text_token")
            .as_bool()
            .unwrap_or(true),
        skip_errors: skips_errors(p),
    });
    let f = Arc::new(move |args: &[ArrayRef]| extractor.run(args));
    Ok(Operator::MediaMapper(MediaMapperOp {
        column: p.str("video_key").unwrap_or("videos").to_string(),
        udf: OpUdf::from_fn(
            UdfIdentity::of(p, ""),
            Some(DataType::Struct(struct_fields())),
            f,
        ),
        shape: MediaMapperShape::AddsField { field },
    }))
}

fn frames_type() -> DataType {
    DataType::new_list(DataType::new_list(DataType::Utf8, true), true)
}

fn struct_fields() -> Fields {
    Fields::from(vec![
        Field::new("value", frames_type(), true),
        Field::new("ok", DataType::Boolean, false),
        // An empty `__dj__meta__` for samples without one.
        Field::new("meta", DataType::Struct(Fields::empty()), false),
    ])
}

impl Extractor {
    fn run(&self, args: &[ArrayRef]) -> Result<ArrayRef> {
        let text = arrow::compute::cast(&args[0], &DataType::Utf8)?;
        let text = text.as_string::<i32>();
        let media = &args[1];
        let existing = match args[2].data_type() {
            DataType::Null => None,
            _ => Some(arrow::compute::cast(&args[2], &frames_type())?),
        };
        let mut value = ListBuilder::new(ListBuilder::new(StringBuilder::new()));
        let mut ok = BooleanBuilder::new();
        for row in 0..text.len() {
            // Generated already: left as it is.
            if let Some(existing) = existing.as_ref().map(|e| e.as_list::<i32>())
                && existing.is_valid(row)
                && !existing.value(row).is_empty()
            {
                let lists = existing.value(row);
                for video in lists.as_list::<i32>().iter() {
                    match video {
                        Some(paths) => {
                            for p in paths.as_string::<i32>().iter() {
                                value.values().values().append_option(p);
                            }
                            value.values().append(true);
                        }
                        None => value.values().append_null(),
                    }
                }
                value.append(true);
                ok.append_value(true);
                continue;
            }
            let videos = row_paths(&self.op, media, row)?.unwrap_or_default();
            if !self.av && !videos.is_empty() {
                crate::media::require_ffmpeg_command(&self.op, "reads frames")?;
            }
            let body = if text.is_valid(row) {
                text.value(row)
            } else {
                ""
            };
            match self.sample_frames(body, &videos) {
                Ok(per_video) => {
                    for paths in per_video {
                        for p in paths {
                            value.values().values().append_value(p);
                        }
                        value.values().append(true);
                    }
                    value.append(true);
                    ok.append_value(true);
                }
                Err((path, e)) => {
                    unreadable(&self.op, self.skip_errors, "extract frames from", &path, &e)?;
                    value.append_null();
                    ok.append_value(false);
                }
            }
        }
        let meta = StructArray::new_empty_fields(text.len(), None);
        Ok(Arc::new(StructArray::new(
            struct_fields(),
            vec![
                Arc::new(value.finish()),
                Arc::new(ok.finish()),
                Arc::new(meta),
            ],
            None,
        )))
    }

    /// The frame paths of each of `videos` (empty for the ones not read).
    #[allow(clippy::type_complexity)]
    fn sample_frames(
        &self,
        text: &str,
        videos: &[String],
    ) -> std::result::Result<Vec<Vec<String>>, (String, String)> {
        let mut frames = vec![Vec::new(); videos.len()];
        if self.av {
            // PyAV opens every video of the sample first.
            let mut seen: Vec<&str> = Vec::new();
            for v in videos {
                if !seen.contains(&v.as_str()) {
                    seen.push(v);
                    crate::remote_media::local_file(v)
                        .and_then(|l| crate::media::video_info(&l).map(|_| ()))
                        .map_err(|e| (v.clone(), e))?;
                }
            }
        }
        let mut extract = |video: &String| -> std::result::Result<(), (String, String)> {
            let idx = videos.iter().position(|v| v == video).unwrap_or_default();
            frames[idx] = self.video_frames(video).map_err(|e| (video.clone(), e))?;
            Ok(())
        };
        if !self.legacy {
            for video in videos {
                extract(video)?;
            }
            return Ok(frames);
        }
        let mut offset = 0;
        for chunk in text.split(EOC_TOKEN) {
            let count = chunk.matches(VIDEO_TOKEN).count();
            if count == 0 || chunk.is_empty() {
                continue;
            }
            for video in videos.iter().skip(offset).take(count) {
                extract(video)?;
            }
            offset += count;
        }
        Ok(frames)
    }

    /// Writes `video`'s frames (those not written already) and returns their paths.
    fn video_frames(&self, video: &str) -> std::result::Result<Vec<String>, String> {
        let local = crate::remote_media::local_file(video)?;
        let file = video.rsplit('/').next().unwrap_or(video);
        let (stem, _) = crate::mapper::produced::split_ext(file);
        let dir = os_path::join(&self.frame_dir, stem);
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {dir}: {e}"))?;
        let mut paths = Vec::new();
        let mut save = |frame: RgbFrame<'_>| -> std::result::Result<(), String> {
            let path = os_path::join(&dir, &format!("frame_{}.jpg", paths.len()));
            if !Path::new(&path).exists() {
                let jpeg = crate::py::pil::jpeg_bytes(frame.width, frame.height, frame.data)?;
                write_atomically(Path::new(&path), |tmp| {
                    std::fs::write(tmp, &jpeg).map_err(|e| format!("cannot write {path}: {e}"))
                })?;
            }
            paths.push(path);
            Ok(())
        };
        if self.av {
            av_frames(&local, self.sampling, &mut save)?;
        } else {
            ffmpeg_frames(&local, self.sampling, self.segment, &mut save)?;
        }
        Ok(paths)
    }
}

//! Audio and video recipes as jobs: partitioned with every_op checkpoints (a video resizer
//! writing new files and a video deduplicator deciding across partitions among them) they give
//! the local export, survive kill -9 at any moment, refuse a strict resume when a referenced file changed,
//! and treat corrupt or missing files as Data-Juicer does (the sample dropped, or with
//! `skip_op_error: false` an error naming the file).

use std::path::Path;

use crate::common::{ok, repo};
use crate::resume::{
    Job, events, fails_with, forget_completion, fresh, kill_9_after_event, partition_hashes,
    saved_files_verify,
};

/// A recipe of three partitions with a checkpoint after every op, running `process`.
macro_rules! partitioned_job {
    ($process:literal) => {
        concat!(
            "dataset_path: DATA
export_path: EXPORT
work_dir: WORK
np: 2
executor_type: ray_partitioned
partition:
  mode: manual
  num_of_partitions: 3
checkpoint:
  strategy: every_op
process:
",
            $process
        )
    };
}

const AUDIO: &str = partitioned_job!(
    "  - audio_size_filter:
      min_size: 5KB
  - audio_duration_filter:
      min_duration: 1
      max_duration: 3
"
);

const VIDEO: &str = partitioned_job!(
    "  - video_duration_filter:
      min_duration: 1.2
  - video_deduplicator:
  - video_resize_resolution_mapper:
      max_width: 300
  - video_resolution_filter:
      min_width: 150
      any_or_all: all
  - video_aspect_ratio_filter:
      min_ratio: 1/1
"
);

const VIDEO_SPLIT: &str = partitioned_job!(
    "  - video_split_by_duration_mapper:
      split_duration: 1
      keep_original_sample: false
  - video_deduplicator:
  - video_duration_filter:
      max_duration: 1.2
"
);

const VIDEO_FRAMES: &str = partitioned_job!(
    "  - video_extract_frames_mapper:
      frame_dir: frames
  - video_duration_filter:
      max_duration: 10
"
);

/// A job over `corpus` with a copy of the fixture media next to it, where the corpus's
/// relative paths (`media/...`) find them.
fn media_job(recipe: &str, corpus: &str) -> Job {
    let job = Job::with_corpus(recipe, corpus);
    let from = repo().join("tests/golden/media");
    std::fs::create_dir(job.path("media")).unwrap();
    for entry in std::fs::read_dir(&from).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, job.path("media").join(path.file_name().unwrap())).unwrap();
    }
    job
}

/// The export of the same job run by the local executor.
fn local_export(job: &Job) -> String {
    ok(&job.run(&["--executor_type", "default"]));
    job.export()
}

fn kill_sweep(recipe: &str, corpus: &str) {
    let reference = media_job(recipe, corpus);
    let want_local = local_export(&reference);
    let (id, want) = fresh(&reference);
    assert_eq!(want, want_local, "partitioned export equals the local one");
    assert!(want.lines().count() >= 2, "some rows kept: {want}");
    assert!(
        want.lines().count() < 8,
        "some rows dropped by the filters: {want}"
    );
    let reference_dir = reference.job_dir(&id);
    let total = events(&reference_dir).len();
    let moments: Vec<usize> = (1..total).step_by((total / 8).max(1)).collect();
    assert!(moments.len() >= 6, "{total} events");
    for n in moments {
        let job = media_job(recipe, corpus);
        let id = format!("kill_{n}");
        kill_9_after_event(&job, &id, n, total);
        saved_files_verify(&job.job_dir(&id), n);
        ok(&job.run(&["--resume", &id]));
        // Media paths are absolute in the export, under each job's own directory, and the
        // names of resized copies hash their source's path and mtime.
        let export = job.export();
        if recipe.contains("video_resize") || recipe.contains("video_split") {
            produced_files_are_whole(&export, n, recipe.contains("video_resize"));
        }
        let export = unhashed(&export.replace(job.dir.path().to_str().unwrap(), "DIR"));
        let want = unhashed(&want.replace(reference.dir.path().to_str().unwrap(), "DIR"));
        assert_eq!(export, want, "after kill at event {n}");
        assert_eq!(
            partition_hashes(&job.job_dir(&id)).len(),
            partition_hashes(&reference_dir).len()
        );
    }
}

/// `text` with the hashes in produced file names masked.
fn unhashed(text: &str) -> String {
    regex::Regex::new("__dj_hash_#[0-9a-f]+#")
        .unwrap()
        .replace_all(text, "__dj_hash_#<hash>#")
        .into_owned()
}

/// Every video the export names exists and opens (a resized one at most 300 wide), and each
/// produced one is the only file of its name but for the hash (the name is stable across the
/// kill and the resume) with no temporary left.
fn produced_files_are_whole(export: &str, moment: usize, resized: bool) {
    let mut produced_dirs = std::collections::BTreeSet::new();
    for line in export.lines() {
        let row: serde_json::Value = serde_json::from_str(line).unwrap();
        for v in row["videos"].as_array().into_iter().flatten() {
            let path = v.as_str().unwrap();
            let info = dj_udfs::media::video_info(path)
                .unwrap_or_else(|e| panic!("after kill at event {moment}: {path}: {e}"));
            if path.contains("__dj__produced_data__") {
                if resized {
                    assert!(info.width <= 300, "{path}: {}x{}", info.width, info.height);
                }
                produced_dirs.insert(Path::new(path).parent().unwrap().to_path_buf());
            }
        }
    }
    assert!(!produced_dirs.is_empty(), "no video was written: {export}");
    for dir in produced_dirs {
        let files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            files.iter().all(|f| !f.contains(".tmp.")),
            "after kill at event {moment}: a temporary is left in {files:?}"
        );
        let unique: std::collections::BTreeSet<_> = files.iter().map(|f| unhashed(f)).collect();
        assert_eq!(unique.len(), files.len(), "one file per name: {files:?}");
    }
}

#[test]
fn an_audio_job_runs_partitioned_and_survives_kill_9() {
    kill_sweep(AUDIO, "tests/golden/corpus_audio.jsonl");
}

#[test]
fn a_video_job_runs_partitioned_and_survives_kill_9() {
    kill_sweep(VIDEO, "tests/golden/corpus_video_dedup.jsonl");
}

/// The content hash covers the files rows reference: the same rows over a changed file are
/// different input, and strict resume refuses them, leaving the checkpoints as they were.
#[test]
fn a_video_splitting_job_runs_partitioned_and_survives_kill_9() {
    kill_sweep(VIDEO_SPLIT, "tests/golden/corpus_video.jsonl");
}

/// Frames are written once under stable names; the checkpoints carry the frame lists and the
/// empty `__dj__meta__` the tagging op adds (an empty struct, which parquet stores with a
/// placeholder field).
#[test]
fn a_frame_extracting_job_runs_partitioned_and_survives_kill_9() {
    kill_sweep(VIDEO_FRAMES, "tests/golden/corpus_video.jsonl");
}

#[test]
fn a_changed_media_file_refuses_strict_resume() {
    let job = media_job(VIDEO, "tests/golden/corpus_video.jsonl");
    let (id, _) = fresh(&job);
    forget_completion(&job.job_dir(&id));
    let before = job.checkpoints(&id);
    let clip = job.path("media/bars_176x144.mkv");
    let mut bytes = std::fs::read(&clip).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&clip, &bytes).unwrap();
    fails_with(
        &job.run(&["--resume", &id]),
        "content hashes do not match the current input",
    );
    assert!(job.checkpoints(&id) == before, "checkpoints changed");
}

/// Rows over a corrupt, a truncated and a missing file.
fn broken_corpus(dir: &Path) {
    let rows = [
        r#"{"text": "good audio", "audios": ["media/tone_1370ms.wav"], "videos": ["media/testsrc_320x240.mp4"]}"#,
        r#"{"text": "corrupt audio", "audios": ["media/corrupt_audio.wav"], "videos": ["media/testsrc_320x240.mp4"]}"#,
        r#"{"text": "missing audio", "audios": ["media/no_such.wav"], "videos": ["media/testsrc_320x240.mp4"]}"#,
        r#"{"text": "corrupt video", "audios": ["media/tone_1370ms.wav"], "videos": ["media/corrupt_video.mp4"]}"#,
        r#"{"text": "missing video", "audios": ["media/tone_1370ms.wav"], "videos": ["media/no_such.mp4"]}"#,
    ];
    std::fs::write(dir.join("data.jsonl"), rows.join("\n") + "\n").unwrap();
}

const BROKEN: &str = "project_name: broken_media
dataset_path: DATA
export_path: EXPORT
work_dir: WORK
np: 1
process:
  - audio_duration_filter:
  - video_duration_filter:
";

#[test]
fn unreadable_media_drops_the_sample_or_names_the_file() {
    let job = media_job(BROKEN, "tests/golden/corpus_audio.jsonl");
    broken_corpus(job.dir.path());
    let out = job.run(&[]);
    ok(&out);
    let texts: Vec<String> = job
        .export()
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["text"].to_string())
        .collect();
    assert_eq!(
        texts,
        ["\"good audio\""],
        "only the readable sample is kept"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    for file in [
        "corrupt_audio.wav",
        "no_such.wav",
        "corrupt_video.mp4",
        "no_such.mp4",
    ] {
        assert!(err.contains(file), "no warning names {file}:\n{err}");
    }

    let recipe = std::fs::read_to_string(job.recipe()).unwrap();
    std::fs::write(job.recipe(), format!("skip_op_error: false\n{recipe}")).unwrap();
    let before = job.export();
    fails_with(&job.run(&[]), "audio_duration_filter: cannot read audio `");
    fails_with(&job.run(&[]), "media/corrupt_audio.wav");
    assert_eq!(job.export(), before, "a failed run leaves the export alone");
}

#[test]
fn audio_duration_bounds_are_integers_as_in_data_juicer() {
    let job = media_job(
        &AUDIO.replace("min_duration: 1", "min_duration: 0.5"),
        "tests/golden/corpus_audio.jsonl",
    );
    fails_with(&job.run(&[]), "min_duration");
    assert!(!job.path("out/result.jsonl").exists());
}

/// Auto partitioning sizes media rows by the files they reference, and says so.
#[test]
fn explain_shows_auto_sizing_from_media_files() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_dj-plan"))
        .args(["explain", "configs/video.yaml", "--partition.mode", "auto"])
        .current_dir(repo())
        .output()
        .unwrap();
    let text = ok(&out);
    assert!(
        text.contains("multimodal 14)"),
        "text + video rows are multimodal, as Data-Juicer detects them:\n{text}"
    );
    // The 16 rows reference about 40 KB of video each at the 90th percentile; the rows alone
    // are under 1 KB.
    let p90: f64 = text
        .split("memory per sample (P90) ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|mb| mb.parse().ok())
        .unwrap_or_else(|| panic!("no P90 line:\n{text}"));
    assert!((0.01..0.2).contains(&p90), "{p90} MB:\n{text}");
    assert!(text.contains("(the row and the media files it references)"));
    assert!(text.contains("complexity factor 2.20 (4 high"), "{text}");
}

/// The video resizers record the files samples came from, write each resized copy once under a
/// name that a rerun finds again, and drop a sample whose video cannot be read.
#[test]
fn resized_videos_keep_their_sources_and_stable_names() {
    let recipe = "project_name: resize
dataset_path: DATA
export_path: EXPORT
np: 1
process:
  - video_resize_aspect_ratio_mapper:
      min_ratio: 1/1
      max_ratio: 4/3
";
    let job = media_job(recipe, "tests/golden/corpus_video.jsonl");
    let mut data = std::fs::read_to_string(job.path("data.jsonl")).unwrap();
    data.push_str("{\"text\": \"broken\", \"videos\": [\"media/corrupt_video.mp4\"]}\n");
    std::fs::write(job.path("data.jsonl"), data).unwrap();
    let out = job.run(&[]);
    ok(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("corrupt_video.mp4"));
    let export = job.export();
    let rows: Vec<serde_json::Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 10, "the broken row is dropped: {export}");
    let media = job.path("media");
    let media = media.to_str().unwrap();
    // 640x360 (16:9) is widened to 4:3 = 640x480 (increase, the default strategy).
    let wide = &rows[1];
    let new = wide["videos"][0].as_str().unwrap();
    assert!(
        new.starts_with(&format!(
            "{media}/__dj__produced_data__/video_resize_aspect_ratio_mapper/wide_640x360__dj_hash_#"
        )) && new.ends_with("#.webm"),
        "{new}"
    );
    let info = dj_udfs::media::video_info(new).unwrap();
    assert_eq!((info.width, info.height), (640, 480));
    assert_eq!(
        wide["__dj__source_file__"],
        serde_json::json!([format!("{media}/wide_640x360.webm")])
    );
    // A 4:3 video stays; its source is itself. No videos: no sources.
    assert_eq!(
        rows[0]["videos"],
        serde_json::json!([format!("{media}/testsrc_320x240.mp4")])
    );
    assert_eq!(rows[0]["__dj__source_file__"], rows[0]["videos"]);
    assert_eq!(rows[6]["__dj__source_file__"], serde_json::json!([]));
    // Run again: the same names, and the files are not written again.
    let written = std::fs::metadata(new).unwrap().modified().unwrap();
    ok(&job.run(&[]));
    assert_eq!(job.export(), export);
    assert_eq!(std::fs::metadata(new).unwrap().modified().unwrap(), written);
}

/// The splitter keeps the original first (its sources its own videos), names each clip's source
/// in the new sample, leaves a video no longer than `split_duration` as it is, writes the clips
/// once under names a rerun finds again, and refuses what it does not support.
#[test]
fn split_videos_keep_their_sources_and_stable_names() {
    let recipe = "project_name: split
dataset_path: DATA
export_path: EXPORT
np: 1
process:
  - video_split_by_duration_mapper:
      split_duration: 1.5
";
    let job = media_job(recipe, "tests/golden/corpus_video.jsonl");
    ok(&job.run(&[]));
    let export = job.export();
    let rows: Vec<serde_json::Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let media = job.path("media");
    let media = media.to_str().unwrap();
    let testsrc = format!("{media}/testsrc_320x240.mp4");
    // testsrc (2 s): the original, then a sample of its two clips, both sourced from it.
    assert_eq!(rows[0]["videos"], serde_json::json!([testsrc]));
    assert_eq!(rows[0]["__dj__source_file__"], rows[0]["videos"]);
    let clips: Vec<&str> = rows[1]["videos"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(clips.len(), 2, "{export}");
    let dir = format!("{media}/__dj__produced_data__/video_split_by_duration_mapper");
    assert!(
        clips[0].starts_with(&format!("{dir}/testsrc_320x240__dj_hash_#"))
            && clips[0].ends_with("#_0.mp4")
            && clips[1].ends_with("#_1.mp4"),
        "{clips:?}"
    );
    assert_eq!(
        rows[1]["__dj__source_file__"],
        serde_json::json!([testsrc, testsrc])
    );
    assert_eq!(
        rows[1]["text"],
        "<__dj__video><__dj__video> A video sample, number 0. <|__dj__eoc|>"
    );
    // wide (1.3 s) is not longer than 1.5 s: the new sample keeps the video itself.
    assert_eq!(rows[3]["videos"], rows[2]["videos"]);
    // The same command, run by hand, writes the same bytes.
    let by_hand = job.path("by_hand.mp4");
    let status = std::process::Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-ss", "1.5", "-i", &testsrc])
        .args(["-c", "copy", "-f", "mp4"])
        .arg(&by_hand)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(
        std::fs::read(clips[1]).unwrap(),
        std::fs::read(&by_hand).unwrap()
    );
    // Run again: the same names, and the clips are not written again.
    let written = std::fs::metadata(clips[0]).unwrap().modified().unwrap();
    ok(&job.run(&[]));
    assert_eq!(job.export(), export);
    assert_eq!(
        std::fs::metadata(clips[0]).unwrap().modified().unwrap(),
        written
    );

    let written = std::fs::read_to_string(job.recipe()).unwrap();
    for (param, want) in [
        ("video_backend: av", "`av` (cutting by decoding"),
        ("output_format: bytes", "`bytes` (the clips' bytes"),
        ("save_field: clips", "save_field"),
        (
            "overlap_duration: 2",
            "must be less than split_duration (1.5)",
        ),
        (
            "ffmpeg_extra_args: \"-metadata 'a=b\"",
            "not a valid shell word list",
        ),
    ] {
        let with = written.replace(
            "      split_duration: 1.5\n",
            &format!("      split_duration: 1.5\n      {param}\n"),
        );
        std::fs::write(job.recipe(), with).unwrap();
        fails_with(&job.run(&[]), want);
        assert_eq!(
            job.export(),
            export,
            "a refused recipe leaves the export alone"
        );
    }
}

/// Without the ffmpeg command the splitter fails the job naming what to install, instead of
/// leaving every clip out.
#[test]
fn splitting_without_the_ffmpeg_command_fails_clearly() {
    let recipe = "project_name: split
dataset_path: DATA
export_path: EXPORT
np: 1
process:
  - video_split_by_duration_mapper:
      split_duration: 1
";
    let job = media_job(recipe, "tests/golden/corpus_video.jsonl");
    let out = job
        .command(&[])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    fails_with(
        &out,
        "cuts clips with the ffmpeg command, which cannot run here",
    );
    fails_with(&out, "apt-get install ffmpeg");
    assert!(!job.path("out/result.jsonl").exists());
}

/// A sample that has frames already keeps them; one without videos gets none; the frame files
/// are not written again; what the op does not support is refused naming the parameter.
#[test]
fn extracted_frames_are_kept_and_unsupported_parameters_refused() {
    let recipe = "project_name: frames
dataset_path: DATA
export_path: EXPORT
np: 1
process:
  - video_extract_frames_mapper:
      frame_dir: frames
";
    let job = media_job(recipe, "tests/golden/corpus_video.jsonl");
    let mut data = std::fs::read_to_string(job.path("data.jsonl")).unwrap();
    data.push_str(
        "{\"text\": \"<__dj__video> done\", \"videos\": [\"media/testsrc_320x240.mp4\"], \
         \"video_frames\": [[\"elsewhere/frame_0.jpg\"]]}\n",
    );
    std::fs::write(job.path("data.jsonl"), data).unwrap();
    let out = job.run(&[]);
    ok(&out);
    let export = job.export();
    let rows: Vec<serde_json::Value> = export
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let frames = |i: usize| rows[i]["video_frames"].clone();
    assert_eq!(
        frames(0),
        serde_json::json!([["frames/testsrc_320x240/frame_0.jpg"]])
    );
    let ids: Vec<i64> = rows
        .iter()
        .filter_map(|r| r["meta"]["id"].as_i64())
        .collect();
    // MKV and WebM have no stream duration in PyAV: their samples are dropped, with a warning.
    assert_eq!(ids, [0, 3, 4, 5, 6, 7, 8], "{export}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("bars_176x144.mkv"));
    assert_eq!(frames(4), serde_json::json!([]), "no videos, no frames");
    assert_eq!(
        rows[7]["video_frames"],
        serde_json::json!([["elsewhere/frame_0.jpg"]])
    );
    assert_eq!(
        rows[0]["__dj__meta__"],
        serde_json::Value::Null,
        "dropped from the export"
    );
    let jpeg = job.path("frames/testsrc_320x240/frame_0.jpg");
    let bytes = std::fs::read(&jpeg).unwrap();
    assert_eq!(&bytes[..4], &[0xFF, 0xD8, 0xFF, 0xE0], "a JFIF JPEG");
    let written = std::fs::metadata(&jpeg).unwrap().modified().unwrap();
    ok(&job.run(&[]));
    assert_eq!(job.export(), export);
    assert_eq!(
        std::fs::metadata(&jpeg).unwrap().modified().unwrap(),
        written
    );

    let written = std::fs::read_to_string(job.recipe()).unwrap();
    for (param, want) in [
        (
            "frame_sampling_method: uniform\n      frame_num: 0",
            "must be a positive integer, got 0",
        ),
        ("duration: 2", "duration > 0"),
        ("output_format: bytes", "`bytes`"),
        (
            "frame_sampling_method: middle",
            "Frame sampling method [middle] is not supported",
        ),
    ] {
        let with = written.replace(
            "      frame_dir: frames\n",
            &format!("      frame_dir: frames\n      {param}\n"),
        );
        std::fs::write(job.recipe(), with).unwrap();
        fails_with(&job.run(&[]), want);
    }
    let without = written.replace(
        "      frame_dir: frames\n",
        "      frame_sampling_method: all_frames\n",
    );
    std::fs::write(job.recipe(), without).unwrap();
    fails_with(&job.run(&[]), "'frame_dir' must be specified");
}

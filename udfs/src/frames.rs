//! Frames of a video as `video_extract_frames_mapper` takes them (the `media` feature), one RGB
//! image at a time, with Data-Juicer's two backends:
//!
//! - `av` (PyAV, its default): the first video stream decoded from a seek to 0; key frames
//!   (`AVReader.extract_keyframes`) are those the decoder flags as key whose time from the
//!   stream's start is below the stream's duration, all frames (`extract_frames`) those whose
//!   timestamp is below `int(duration / time_base)`, uniform ones (`mm_utils.
//!   extract_video_frames_uniformly`) the first frames at or after each target time, found
//!   from the key frame before it. Frames become RGB through swscale's bilinear conversion, as
//!   PyAV's `reformat` does.
//! - `ffmpeg`: the `ffmpeg` command with Data-Juicer's arguments, its raw RGB frames read from
//!   its output; for key frames, as many I-frames as `showinfo` reports key frames; uniform
//!   ones by frame number (`select=eq(n,i)+...`).

use std::io::Read;
use std::process::{Command, Stdio};

use ffmpeg::media::Type;
use ffmpeg_next as ffmpeg;

/// One RGB24 frame.
pub struct RgbFrame<'a> {
    pub width: usize,
    pub height: usize,
    pub data: &'a [u8],
}

/// Which frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sampling {
    KeyFrames,
    AllFrames,
    /// This many frames spread over the video, first and last included (one: the middle).
    Uniform(usize),
}

/// The first video stream of a file, opened for decoding as PyAV decodes it.
struct AvVideo {
    ictx: ffmpeg::format::context::Input,
    index: usize,
    /// The stream's time base.
    tb: (i128, i128),
    start: i64,
    frames: i64,
    decoder: ffmpeg::decoder::Video,
    scaler: Option<ffmpeg::software::scaling::Context>,
}

/// A decoded frame's timestamp (PyAV's `frame.pts`, which must be set where it is used).
fn pts_of(frame: &ffmpeg::frame::Video) -> Result<i64, String> {
    frame
        .pts()
        .ok_or_else(|| "a frame has no timestamp (PyAV gives None)".to_string())
}

impl AvVideo {
    fn open(path: &str) -> Result<AvVideo, String> {
        crate::media::init();
        let ictx = ffmpeg::format::input(&path).map_err(|e| format!("PyAV cannot open it: {e}"))?;
        let stream = ictx
            .streams()
            .find(|s| s.parameters().medium() == Type::Video)
            .ok_or("Not found video stream")?;
        let tb = stream.time_base();
        let decoder = ffmpeg::codec::context::Context::from_parameters(stream.parameters())
            .and_then(|c| c.decoder().video())
            .map_err(|e| format!("no decoder for its video: {e}"))?;
        Ok(AvVideo {
            index: stream.index(),
            tb: (i128::from(tb.numerator()), i128::from(tb.denominator())),
            start: stream.start_time(),
            frames: stream.frames(),
            ictx,
            decoder,
            scaler: None,
        })
    }

    /// `container.seek(ts, stream=...)`: backward to a key frame, the decoder flushed.
    fn seek(&mut self, ts: i64, this_stream: bool) -> Result<(), String> {
        let stream = if this_stream { self.index as i32 } else { -1 };
        // SAFETY: the context is open and owned by `ictx`; av_seek_frame only repositions it.
        let sought = unsafe {
            ffmpeg::ffi::av_seek_frame(
                self.ictx.as_mut_ptr(),
                stream,
                ts,
                ffmpeg::ffi::AVSEEK_FLAG_BACKWARD,
            )
        };
        if sought < 0 {
            return Err(format!(
                "cannot seek in it ({})",
                ffmpeg::Error::from(sought)
            ));
        }
        self.decoder.flush();
        Ok(())
    }

    /// Only key frames come out of the decoder (`skip_frame = "NONKEY"`), or all of them.
    fn skip_non_key(&mut self, skip: bool) {
        use ffmpeg::ffi::AVDiscard;
        let value = if skip {
            AVDiscard::AVDISCARD_NONKEY
        } else {
            AVDiscard::AVDISCARD_DEFAULT
        };
        // SAFETY: a plain field of the open codec context, read at the next decode call.
        unsafe { (*self.decoder.as_mut_ptr()).skip_frame = value };
    }

    /// Decodes from the current position to the end (the decoder drained), calling `f` with each
    /// frame until it returns false.
    fn decode(
        &mut self,
        f: &mut dyn FnMut(&mut AvVideo, &ffmpeg::frame::Video) -> Result<bool, String>,
    ) -> Result<(), String> {
        let mut decoded = ffmpeg::frame::Video::empty();
        let index = self.index;
        loop {
            let packet = {
                let mut packets = self.ictx.packets();
                loop {
                    match packets.next() {
                        Some((s, p)) if s.index() == index => break Some(p),
                        Some(_) => continue,
                        None => break None,
                    }
                }
            };
            match &packet {
                Some(p) => self.decoder.send_packet(p),
                None => self.decoder.send_eof(),
            }
            .map_err(|e| format!("its video does not decode: {e}"))?;
            while self.decoder.receive_frame(&mut decoded).is_ok() {
                if !f(self, &decoded)? {
                    return Ok(());
                }
            }
            if packet.is_none() {
                return Ok(());
            }
        }
    }

    /// The frame as packed RGB24, converted as PyAV's `reformat(format="rgb24")` converts it.
    fn rgb(&mut self, frame: &ffmpeg::frame::Video) -> Result<Vec<u8>, String> {
        let (w, h) = (frame.width(), frame.height());
        let fits = self.scaler.as_ref().is_some_and(|s| {
            let input = s.input();
            input.format == frame.format() && input.width == w && input.height == h
        });
        if !fits {
            self.scaler = Some(
                ffmpeg::software::scaling::Context::get(
                    frame.format(),
                    w,
                    h,
                    ffmpeg::format::Pixel::RGB24,
                    w,
                    h,
                    ffmpeg::software::scaling::Flags::BILINEAR,
                )
                .map_err(|e| format!("cannot convert its frames to RGB: {e}"))?,
            );
        }
        let mut rgb = ffmpeg::frame::Video::empty();
        self.scaler
            .as_mut()
            .expect("set above")
            .run(frame, &mut rgb)
            .map_err(|e| format!("cannot convert a frame to RGB: {e}"))?;
        let (w, h) = (w as usize, h as usize);
        let stride = rgb.stride(0);
        let mut packed = Vec::with_capacity(w * h * 3);
        for row in rgb.data(0).chunks(stride).take(h) {
            packed.extend_from_slice(&row[..w * 3]);
        }
        Ok(packed)
    }
}

/// Calls `each` with the frames of `path`'s first video stream, taken as PyAV takes them.
pub fn av_frames(
    path: &str,
    sampling: Sampling,
    each: &mut dyn FnMut(RgbFrame<'_>) -> Result<(), String>,
) -> Result<(), String> {
    let info = crate::media::video_info(path)?;
    let mut video = AvVideo::open(path)?;
    let emit = |each: &mut dyn FnMut(RgbFrame<'_>) -> Result<(), String>,
                frame: &ffmpeg::frame::Video,
                data: &[u8]| {
        each(RgbFrame {
            width: frame.width() as usize,
            height: frame.height() as usize,
            data,
        })
    };
    match sampling {
        Sampling::KeyFrames => {
            // AVReader.extract_keyframes: key frames whose time from the stream's start is below
            // the (float) duration.
            let end = info.av_duration()?;
            if video.start == ffmpeg::ffi::AV_NOPTS_VALUE {
                return Err("its video stream has no start time (PyAV gives None)".into());
            }
            let (start, (num, den)) = (i128::from(video.start), video.tb);
            video.seek(0, false)?;
            video.decode(&mut |v, frame| {
                let t = (start + i128::from(pts_of(frame)?)) * num;
                if crate::filter::video::cmp_exact(end, (t, den)) != std::cmp::Ordering::Greater {
                    return Ok(false);
                }
                if frame.is_key() && t >= 0 {
                    let data = v.rgb(frame)?;
                    emit(each, frame, &data)?;
                }
                Ok(true)
            })
        }
        Sampling::AllFrames => {
            // AVReader.extract_frames: timestamps in [0, int(duration / float(time_base))).
            let end = info.av_duration()?;
            let (num, den) = video.tb;
            let end_pts = (end / (num as f64 / den as f64)) as i64;
            video.seek(0, true)?;
            video.decode(&mut |v, frame| match frame.pts() {
                None => Ok(true),
                Some(p) if p < 0 => Ok(true),
                Some(p) if p >= end_pts => Ok(false),
                Some(_) => {
                    let data = v.rgb(frame)?;
                    emit(each, frame, &data)?;
                    Ok(true)
                }
            })
        }
        Sampling::Uniform(frame_num) => {
            for (width, height, data) in uniform_frames(&mut video, &info, frame_num)? {
                each(RgbFrame {
                    width,
                    height,
                    data: &data,
                })?;
            }
            Ok(())
        }
    }
}

/// A fraction p/q, q > 0.
type Fraction = (i128, i128);

/// `mm_utils.extract_video_frames_uniformly`: the target times, grouped by the key frames
/// before them, each group found by decoding from its key frame.
fn uniform_frames(
    video: &mut AvVideo,
    info: &crate::media::VideoInfo,
    frame_num: usize,
) -> Result<Vec<(usize, usize, Vec<u8>)>, String> {
    let n = (frame_num as i64).min(video.frames);
    let (ts, tn, td) = info
        .stream_duration
        .ok_or("its video stream has no duration (PyAV gives None)")?;
    let duration: Fraction = (i128::from(ts) * i128::from(tn), i128::from(td));
    let seconds: Vec<Fraction> = if n == 1 {
        vec![(duration.0, duration.1 * 2)]
    } else {
        (0..n.max(0))
            .map(|i| (duration.0 * i128::from(i), duration.1 * i128::from(n - 1)))
            .collect()
    };
    let (num, den) = video.tb;
    // get_key_frame_seconds: the decoder's key frames from the start (or the first frame).
    let mut key_seconds: Vec<f64> = Vec::new();
    video.skip_non_key(true);
    video.seek(0, false)?;
    video.decode(&mut |_, frame| {
        let pts = i128::from(pts_of(frame)?);
        key_seconds.push(crate::media::fraction_to_f64(pts * num, den));
        Ok(true)
    })?;
    video.skip_non_key(false);
    if key_seconds.is_empty() {
        video.seek(0, false)?;
        video.decode(&mut |_, frame| {
            let pts = i128::from(pts_of(frame)?);
            key_seconds.push(crate::media::fraction_to_f64(pts * num, den));
            Ok(false)
        })?;
    }
    key_seconds.sort_by(f64::total_cmp);
    if !key_seconds.contains(&0.0) {
        key_seconds.insert(0, 0.0);
    }
    let groups = group_seconds(&seconds, &key_seconds);
    let mut out = Vec::new();
    // The last frame decoded, which Python's loop variable keeps from group to group.
    let mut last: Option<ffmpeg::frame::Video> = None;
    for (group, &key) in groups.iter().zip(&key_seconds) {
        if group.is_empty() {
            continue;
        }
        // frame.pts >= second / time_base
        let reached = |pts: i64, (p, q): Fraction| i128::from(pts) * q * num >= p * den;
        if key == 0.0 {
            video.seek(0, false)?;
        } else {
            video.seek((key * 1e6) as i64, false)?;
        }
        let mut found = 0;
        let mut picked: Vec<ffmpeg::frame::Video> = Vec::new();
        video.decode(&mut |_, frame| {
            last = Some(frame.clone());
            if reached(pts_of(frame)?, group[found]) {
                picked.push(frame.clone());
                found += 1;
                if found >= group.len() {
                    return Ok(false);
                }
            }
            Ok(true)
        })?;
        if found < group.len()
            && let Some(frame) = &last
        {
            picked.push(frame.clone());
        }
        for frame in &picked {
            let data = video.rgb(frame)?;
            out.push((frame.width() as usize, frame.height() as usize, data));
        }
    }
    Ok(out)
}

/// The grouping of `extract_video_frames_uniformly`: consecutive target times below each next
/// key frame time form a group; times past the last key frame form the last group.
fn group_seconds(seconds: &[Fraction], keys: &[f64]) -> Vec<Vec<Fraction>> {
    if keys.len() == 1 {
        return vec![seconds.to_vec()];
    }
    // Fraction < float, exactly.
    let below = |t: Fraction, bound: f64| {
        crate::filter::video::cmp_exact(bound, t) == std::cmp::Ordering::Greater
    };
    let mut groups = Vec::new();
    let (mut idx, mut group_id) = (0, 0);
    let mut current = Vec::new();
    let mut upper = keys[1];
    while idx < seconds.len() {
        if below(seconds[idx], upper) {
            current.push(seconds[idx]);
            idx += 1;
        } else {
            groups.push(std::mem::take(&mut current));
            group_id += 1;
            if group_id >= keys.len() - 1 {
                break;
            }
            upper = keys[group_id + 1];
        }
    }
    if !current.is_empty() {
        groups.push(current);
    }
    if idx < seconds.len() {
        groups.push(seconds[idx..].to_vec());
    }
    groups
}

/// Calls `each` with the frames the `ffmpeg` command gives for `path`, as Data-Juicer's
/// `ffmpeg` backend runs it; with `segment` seconds, key frames and uniform frames are taken per
/// segment (`extract_keyframes(start, end)` per segment, `extract_frames_uniformly_by_seconds`).
pub fn ffmpeg_frames(
    path: &str,
    sampling: Sampling,
    segment: Option<f64>,
    each: &mut dyn FnMut(RgbFrame<'_>) -> Result<(), String>,
) -> Result<(), String> {
    use crate::py::pyfloat::repr;
    let info = crate::media::video_info(path)?;
    let raw = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-"].map(String::from);
    let key_filter =
        ["-vf", r"showinfo,select=eq(pict_type\,I)", "-vsync", "vfr"].map(String::from);
    let input = ["-i".to_string(), path.to_string()];
    let run = |args: Vec<String>,
               keys: bool,
               wanted: usize,
               each: &mut dyn FnMut(RgbFrame<'_>) -> Result<(), String>| {
        run_ffmpeg(&args, &info, keys, wanted, each)
    };
    let mut each = each;
    match (sampling, segment) {
        (Sampling::KeyFrames, None) => run(
            [&input[..], &key_filter, &raw].concat(),
            true,
            usize::MAX,
            &mut each,
        ),
        (Sampling::AllFrames, _) => {
            let args = [
                &["-v", "quiet", "-ss", "0.0"].map(String::from)[..],
                &input,
                &raw,
            ]
            .concat();
            run(args, false, usize::MAX, &mut each)
        }
        (Sampling::Uniform(frame_num), None) => {
            let indices = uniform_indices(&info, frame_num);
            if indices.is_empty() {
                return Ok(());
            }
            let select: Vec<String> = indices.iter().map(|i| format!(r"eq(n\,{i})")).collect();
            let filter = [
                "-vf".to_string(),
                format!("select='{}'", select.join("+")),
                "-vsync".into(),
                "vfr".into(),
            ];
            let args = [
                &["-v".to_string(), "quiet".into()][..],
                &input,
                &filter,
                &raw,
            ]
            .concat();
            run(args, false, uniform_count(&info, frame_num), &mut each)
        }
        (Sampling::KeyFrames, Some(seconds)) => {
            let duration = info.ffprobe_duration();
            let mut bounds = arange(duration, seconds);
            bounds.push(duration);
            for pair in bounds.windows(2) {
                let (start, end) = (pair[0], pair[1]);
                if end <= start {
                    return Err("end_time must be greater than start_time".into());
                }
                let span = ["-ss".to_string(), repr(start), "-to".into(), repr(end)];
                run(
                    [&span[..], &input, &key_filter, &raw].concat(),
                    true,
                    usize::MAX,
                    &mut each,
                )?;
            }
            Ok(())
        }
        (Sampling::Uniform(frame_num), Some(seconds)) => {
            let starts = arange(info.ffprobe_duration(), seconds);
            for pair in starts.windows(2) {
                let (start, length) = (pair[0], pair[1] - pair[0]);
                if length <= 0.0 {
                    continue;
                }
                let times: Vec<f64> = if frame_num == 1 {
                    vec![start + length / 2.0]
                } else {
                    let step = length / (frame_num as f64 - 1.0);
                    (0..frame_num).map(|j| start + step * j as f64).collect()
                };
                for t in times {
                    let args = [
                        &["-v", "quiet", "-ss"].map(String::from)[..],
                        &[repr(t)],
                        &input,
                        &raw,
                    ]
                    .concat();
                    run(args, false, 1, &mut each)?;
                }
            }
            Ok(())
        }
    }
}

/// `np.arange(0, stop, step).tolist()` of floats.
fn arange(stop: f64, step: f64) -> Vec<f64> {
    let n = (stop / step).ceil().max(0.0) as usize;
    (0..n).map(|i| i as f64 * step).collect()
}

/// Runs `ffmpeg args`, reading at most `wanted` raw RGB frames of the video's size; with
/// `keys`, as many as `showinfo` reported key frames (Data-Juicer pairs each frame with one of
/// its lines and stops when none is left).
fn run_ffmpeg(
    args: &[String],
    info: &crate::media::VideoInfo,
    keys: bool,
    wanted: usize,
    each: &mut dyn FnMut(RgbFrame<'_>) -> Result<(), String>,
) -> Result<(), String> {
    let (w, h) = (info.width as usize, info.height as usize);
    let mut child = Command::new("ffmpeg")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run ffmpeg: {e}"))?;
    let mut stderr = child.stderr.take().expect("piped");
    let key_lines = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = stderr.read_to_end(&mut text);
        String::from_utf8_lossy(&text)
            .lines()
            .filter(|l| l.contains("iskey:1") && l.contains("pts_time:"))
            .count()
    });
    let mut stdout = child.stdout.take().expect("piped");
    let size = w * h * 3;
    let mut frame = vec![0u8; size];
    let mut held: Vec<Vec<u8>> = Vec::new();
    let mut failed = None;
    let mut read = 0;
    while size > 0 && read < wanted && stdout.read_exact(&mut frame).is_ok() {
        read += 1;
        if keys {
            held.push(frame.clone());
        } else if let Err(e) = each(RgbFrame {
            width: w,
            height: h,
            data: &frame,
        }) {
            failed = Some(e);
            break;
        }
    }
    // Closing the pipe ends a command whose remaining frames are not wanted.
    drop(stdout);
    if failed.is_some() {
        let _ = child.kill();
    }
    let _ = child.wait();
    let key_count = key_lines.join().unwrap_or(0);
    if let Some(e) = failed {
        return Err(e);
    }
    for data in held.iter().take(key_count) {
        each(RgbFrame {
            width: w,
            height: h,
            data,
        })?;
    }
    Ok(())
}

/// `FFmpegReader.extract_frames_uniformly`'s frame count: `frame_num`, at most the stream's
/// frames (as ffprobe states them, else `round(duration * fps)`).
fn uniform_count(info: &crate::media::VideoInfo, frame_num: usize) -> usize {
    let total = total_frames(info);
    if (total as i128) < frame_num as i128 {
        total.max(0) as usize
    } else {
        frame_num
    }
}

fn fps(info: &crate::media::VideoInfo) -> f64 {
    let (n, d) = info.avg_frame_rate;
    if d == 0 {
        0.0
    } else {
        f64::from(n) / f64::from(d)
    }
}

fn total_frames(info: &crate::media::VideoInfo) -> i64 {
    let (duration, fps) = (info.ffprobe_duration(), fps(info));
    if info.frames <= 0 && duration > 0.0 && fps > 0.0 {
        (duration * fps).round_ties_even() as i64
    } else {
        info.frames
    }
}

/// The frame numbers `extract_frames_uniformly` selects (`eq(n, i)`), in order.
fn uniform_indices(info: &crate::media::VideoInfo, frame_num: usize) -> Vec<i64> {
    let n = uniform_count(info, frame_num);
    let (duration, fps, total) = (info.ffprobe_duration(), fps(info), total_frames(info));
    let seconds: Vec<f64> = if n == 1 {
        vec![duration / 2.0]
    } else {
        let step = duration / (n as f64 - 1.0);
        (0..n).map(|i| step * i as f64).collect()
    };
    seconds
        .iter()
        .map(|t| ((t * fps) as i64).min((total - 1).max(0)))
        .collect()
}

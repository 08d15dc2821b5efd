//! Frames of a video as `video_extract_frames_mapper` takes them (the `media` feature), one RGB
//! image at a time, with Data-Juicer's two backends:
//!
//! - `av` (PyAV, its default): the first video stream decoded from a seek to 0; key frames
//!   (`AVReader.extract_keyframes`) are those the decoder flags as key whose time from the
//!   stream's start is below the stream's duration, all frames (`extract_frames`) those whose
//!   timestamp is below `int(duration / time_base)`. Frames become RGB through swscale's
//!   bilinear conversion, as PyAV's `reformat` does.
//! - `ffmpeg`: the `ffmpeg` command with Data-Juicer's arguments, its raw RGB frames read from
//!   its output; for key frames, as many I-frames as `showinfo` reports key frames.

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
}

/// Calls `each` with the frames of `path`'s first video stream, decoded as PyAV decodes them.
pub fn av_frames(
    path: &str,
    sampling: Sampling,
    each: &mut dyn FnMut(RgbFrame<'_>) -> Result<(), String>,
) -> Result<(), String> {
    let info = crate::media::video_info(path)?;
    let end = info.av_duration()?;
    crate::media::init();
    let mut ictx = ffmpeg::format::input(&path).map_err(|e| format!("PyAV cannot open it: {e}"))?;
    let stream = ictx
        .streams()
        .find(|s| s.parameters().medium() == Type::Video)
        .ok_or("Not found video stream")?;
    let (index, tb) = (stream.index(), stream.time_base());
    let (num, den) = (i128::from(tb.numerator()), i128::from(tb.denominator()));
    let start = stream.start_time();
    if sampling == Sampling::KeyFrames && start == ffmpeg::ffi::AV_NOPTS_VALUE {
        return Err("its video stream has no start time (PyAV gives None)".into());
    }
    // int(end_time / time_base): a float divided by float(time_base), truncated.
    let end_pts = (end / (num as f64 / den as f64)) as i64;
    let mut decoder = ffmpeg::codec::context::Context::from_parameters(stream.parameters())
        .and_then(|c| c.decoder().video())
        .map_err(|e| format!("no decoder for its video: {e}"))?;
    // container.seek(0) (key frames: any stream; all frames: this stream), backward.
    let seek_stream = match sampling {
        Sampling::KeyFrames => -1,
        Sampling::AllFrames => index as i32,
    };
    // SAFETY: the context is open and owned by `ictx`; av_seek_frame only repositions it.
    let sought = unsafe {
        ffmpeg::ffi::av_seek_frame(
            ictx.as_mut_ptr(),
            seek_stream,
            0,
            ffmpeg::ffi::AVSEEK_FLAG_BACKWARD,
        )
    };
    if sought < 0 {
        return Err(format!(
            "cannot seek to its start ({})",
            ffmpeg::Error::from(sought)
        ));
    }
    let mut scaler: Option<ffmpeg::software::scaling::Context> = None;
    let mut decoded = ffmpeg::frame::Video::empty();
    let mut rgb = ffmpeg::frame::Video::empty();
    let mut packed = Vec::new();
    // Returns false once the frames are past the end.
    let mut take = |decoded: &ffmpeg::frame::Video| -> Result<bool, String> {
        let pts = decoded.pts();
        let keep = match sampling {
            Sampling::KeyFrames => {
                let pts = pts.ok_or("a frame has no timestamp (PyAV gives None)")?;
                let t = (i128::from(start) + i128::from(pts)) * num;
                // (start + pts) * time_base >= end, exactly
                if crate::filter::video::cmp_exact(end, (t, den)) != std::cmp::Ordering::Greater {
                    return Ok(false);
                }
                decoded.is_key() && t >= 0
            }
            Sampling::AllFrames => match pts {
                None => false,
                Some(p) if p < 0 => false,
                Some(p) if p >= end_pts => return Ok(false),
                Some(_) => true,
            },
        };
        if keep {
            let (w, h) = (decoded.width(), decoded.height());
            let fits = scaler.as_ref().is_some_and(|s| {
                let input = s.input();
                input.format == decoded.format() && input.width == w && input.height == h
            });
            if !fits {
                scaler = Some(
                    ffmpeg::software::scaling::Context::get(
                        decoded.format(),
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
            let sws = scaler.as_mut().expect("set above");
            sws.run(decoded, &mut rgb)
                .map_err(|e| format!("cannot convert a frame to RGB: {e}"))?;
            let (w, h) = (w as usize, h as usize);
            let stride = rgb.stride(0);
            packed.clear();
            for row in rgb.data(0).chunks(stride).take(h) {
                packed.extend_from_slice(&row[..w * 3]);
            }
            each(RgbFrame {
                width: w,
                height: h,
                data: &packed,
            })?;
        }
        Ok(true)
    };
    for (s, packet) in ictx.packets() {
        if s.index() != index {
            continue;
        }
        decoder
            .send_packet(&packet)
            .map_err(|e| format!("its video does not decode: {e}"))?;
        while decoder.receive_frame(&mut decoded).is_ok() {
            if !take(&decoded)? {
                return Ok(());
            }
        }
    }
    decoder
        .send_eof()
        .map_err(|e| format!("its video does not decode: {e}"))?;
    while decoder.receive_frame(&mut decoded).is_ok() {
        if !take(&decoded)? {
            break;
        }
    }
    Ok(())
}

/// Calls `each` with the frames the `ffmpeg` command gives for `path`, as Data-Juicer's
/// `ffmpeg` backend runs it.
pub fn ffmpeg_frames(
    path: &str,
    sampling: Sampling,
    each: &mut dyn FnMut(RgbFrame<'_>) -> Result<(), String>,
) -> Result<(), String> {
    let info = crate::media::video_info(path)?;
    let (w, h) = (info.width as usize, info.height as usize);
    let mut cmd = Command::new("ffmpeg");
    match sampling {
        Sampling::KeyFrames => cmd.args([
            "-i",
            path,
            "-vf",
            r"showinfo,select=eq(pict_type\,I)",
            "-vsync",
            "vfr",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ]),
        Sampling::AllFrames => cmd.args([
            "-v", "quiet", "-ss", "0.0", "-i", path, "-f", "rawvideo", "-pix_fmt", "rgb24", "-",
        ]),
    };
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run ffmpeg: {e}"))?;
    let mut stderr = child.stderr.take().expect("piped");
    // showinfo's lines for key frames: Data-Juicer pairs each frame with one and stops when none
    // is left.
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
    let mut frames: Vec<Vec<u8>> = Vec::new();
    let mut failed = None;
    while size > 0 && stdout.read_exact(&mut frame).is_ok() {
        match sampling {
            Sampling::KeyFrames => frames.push(frame.clone()),
            Sampling::AllFrames => {
                if let Err(e) = each(RgbFrame {
                    width: w,
                    height: h,
                    data: &frame,
                }) {
                    failed = Some(e);
                    break;
                }
            }
        }
    }
    drop(stdout);
    if failed.is_some() {
        let _ = child.kill();
    }
    let _ = child.wait();
    let keys = key_lines.join().unwrap_or(0);
    if let Some(e) = failed {
        return Err(e);
    }
    for data in frames.iter().take(keys) {
        each(RgbFrame {
            width: w,
            height: h,
            data,
        })?;
    }
    Ok(())
}

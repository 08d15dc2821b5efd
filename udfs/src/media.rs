//! Audio and video files read through FFmpeg's libraries (the `media` feature): what Data-Juicer's
//! media operators measure, computed the way its decoders compute it: audio durations as
//! torchcodec decodes them (through FFmpeg), video durations as `ffprobe` prints them or PyAV
//! reads them, frame sizes from the first video stream's codec parameters.

use std::sync::Once;

use ffmpeg::media::Type;
use ffmpeg_next as ffmpeg;

pub(crate) fn init() {
    static INIT: Once = Once::new();
    INIT.call_once(|| {
        // Registration is a no-op on FFmpeg >= 4 but harmless; silence FFmpeg's own stderr
        // logging: a corrupt file is reported once, as an error naming it.
        let _ = ffmpeg::init();
        ffmpeg::util::log::set_level(ffmpeg::util::log::Level::Quiet);
    });
}

/// Fails, whatever `skip_op_error` says, if the `ffmpeg` command (which `op` `does` with) cannot
/// run here; checked once per process.
pub(crate) fn require_ffmpeg_command(op: &str, does: &str) -> datafusion_common::Result<()> {
    use std::process::{Command, Stdio};
    static RUNS: std::sync::OnceLock<Result<(), String>> = std::sync::OnceLock::new();
    let runs = RUNS.get_or_init(|| {
        let status = Command::new("ffmpeg")
            .arg("-version")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        match status {
            Ok(s) if s.success() => Ok(()),
            Ok(s) => Err(format!("`ffmpeg -version` exited with {s}")),
            Err(e) => Err(e.to_string()),
        }
    });
    match runs {
        Ok(()) => Ok(()),
        Err(e) => datafusion_common::exec_err!(
            "{op}: {does} with the ffmpeg command, which cannot run here ({e}); install FFmpeg \
             (Debian: apt-get install ffmpeg) so that `ffmpeg` is on the PATH"
        ),
    }
}

fn open(path: &str) -> Result<ffmpeg::format::context::Input, String> {
    init();
    if !std::path::Path::new(path).exists() {
        return Err("no such file".into());
    }
    ffmpeg::format::input(&path).map_err(|e| format!("FFmpeg cannot open it: {e}"))
}

/// Seconds of audio in the file's best audio stream, as Data-Juicer measures it: datasets'
/// `Audio` feature decodes every sample with torchcodec, and `librosa.get_duration` divides
/// their count by the stream's sample rate.
///
/// torchcodec's `get_all_samples` is the range [0, end): frames that end at or before time 0
/// (encoder priming that the container gives negative timestamps) are skipped, and of a frame
/// that straddles 0 the samples before 0 are cut (rounded half up, as its `offset_of`).
pub fn audio_duration(path: &str) -> Result<f64, String> {
    let mut input = open(path)?;
    let stream = input
        .streams()
        .best(Type::Audio)
        .ok_or("it has no audio stream")?;
    let index = stream.index();
    let time_base = f64::from(stream.time_base());
    let context = ffmpeg::codec::context::Context::from_parameters(stream.parameters())
        .map_err(|e| format!("bad audio stream parameters: {e}"))?;
    let mut decoder = context.decoder();
    // As ffprobe and torchcodec do: the decoder needs the packets' time base to move a frame's
    // timestamp past the priming samples it drops (Opus pre-skip, AAC/MP3 encoder delay).
    decoder.set_packet_time_base(stream.time_base());
    let mut decoder = decoder
        .audio()
        .map_err(|e| format!("no decoder for its audio: {e}"))?;
    let rate = decoder.rate();
    if rate == 0 {
        return Err("its audio stream has no sample rate".into());
    }
    let mut count = SampleCount::new(rate as f64, time_base);
    let mut frame = ffmpeg::frame::Audio::empty();
    for (packet_stream, packet) in input.packets() {
        if packet_stream.index() != index {
            continue;
        }
        decoder
            .send_packet(&packet)
            .map_err(|e| format!("its audio does not decode: {e}"))?;
        while decoder.receive_frame(&mut frame).is_ok() {
            count.add(frame.timestamp().or(frame.pts()), frame.samples());
        }
    }
    decoder
        .send_eof()
        .map_err(|e| format!("its audio does not decode: {e}"))?;
    while decoder.receive_frame(&mut frame).is_ok() {
        count.add(frame.timestamp().or(frame.pts()), frame.samples());
    }
    Ok(count.samples() as f64 / rate as f64)
}

/// Decoded frames' samples over [0, end), as torchcodec's range decoding counts them.
struct SampleCount {
    rate: f64,
    time_base: f64,
    first_pts: Option<f64>,
    total: u64,
}

impl SampleCount {
    fn new(rate: f64, time_base: f64) -> SampleCount {
        SampleCount {
            rate,
            time_base,
            first_pts: None,
            total: 0,
        }
    }

    fn add(&mut self, pts: Option<i64>, samples: usize) {
        let start = pts.map_or(0.0, |p| p as f64 * self.time_base);
        if start + samples as f64 / self.rate <= 0.0 {
            return;
        }
        self.first_pts.get_or_insert(start);
        self.total += samples as u64;
    }

    fn samples(&self) -> u64 {
        let cut = match self.first_pts {
            Some(first) if first < 0.0 => ((0.0 - first) * self.rate + 0.5).floor() as u64,
            _ => 0,
        };
        self.total.saturating_sub(cut)
    }
}

/// The first video stream's measurements.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VideoInfo {
    pub width: i64,
    pub height: i64,
    /// The stream's duration in its time base, if the container gives one, with that time base
    /// as (numerator, denominator).
    pub stream_duration: Option<(i64, i32, i32)>,
    /// The container's duration in microseconds (`AV_TIME_BASE`), if known.
    pub format_duration: Option<i64>,
    /// The stream's frame count as the container states it (0: not stated).
    pub frames: i64,
    /// The stream's average frame rate (numerator, denominator; 0/0 if unknown).
    pub avg_frame_rate: (i32, i32),
}

impl VideoInfo {
    /// Data-Juicer's default `ffmpeg` video backend: `ffprobe`'s stream duration, printed with
    /// `%f` (six decimals) and parsed back, or the container's when the stream has none (WebM,
    /// Matroska), or 0.
    pub fn ffprobe_duration(&self) -> f64 {
        let printed = |seconds: f64| format!("{seconds:.6}").parse::<f64>().unwrap_or(0.0);
        match (self.stream_duration, self.format_duration) {
            (Some((ts, num, den)), _) => printed(ts as f64 * (num as f64 / den as f64)),
            (None, Some(us)) => printed(us as f64 * (1.0 / 1_000_000.0)),
            (None, None) => 0.0,
        }
    }

    /// Data-Juicer's `av` backend: PyAV's `float(stream.duration * stream.time_base)`, an exact
    /// fraction rounded once; a stream without a duration is an error there too.
    pub fn av_duration(&self) -> Result<f64, String> {
        let (ts, num, den) = self
            .stream_duration
            .ok_or("its video stream has no duration (PyAV gives None)")?;
        Ok(fraction_to_f64(ts as i128 * num as i128, den as i128))
    }
}

/// `p / q` rounded once to the nearest double, as Python's `float(Fraction)`.
pub(crate) fn fraction_to_f64(p: i128, q: i128) -> f64 {
    const EXACT: i128 = 1 << 53;
    if p.abs() <= EXACT && q.abs() <= EXACT {
        return p as f64 / q as f64;
    }
    // Scale both down to 53 bits, dropping low bits, which can move the result by an ulp at most.
    let shift = (128 - p.abs().max(q.abs()).leading_zeros()).saturating_sub(53);
    (p >> shift) as f64 / (q >> shift) as f64
}

/// Reads the first video stream's size and durations (as `ffprobe -select_streams v:0` and
/// PyAV's `streams.video[0]`).
pub fn video_info(path: &str) -> Result<VideoInfo, String> {
    let input = open(path)?;
    let stream = input
        .streams()
        .find(|s| s.parameters().medium() == Type::Video)
        .ok_or("it has no video stream")?;
    let parameters = stream.parameters();
    // SAFETY: `parameters` wraps the stream's live AVCodecParameters, read while `input` lives.
    let (width, height) = unsafe {
        let raw = parameters.as_ptr();
        ((*raw).width as i64, (*raw).height as i64)
    };
    let tb = stream.time_base();
    let duration = stream.duration();
    let no_value = ffmpeg::ffi::AV_NOPTS_VALUE;
    Ok(VideoInfo {
        width,
        height,
        stream_duration: (duration != no_value && tb.denominator() != 0).then_some((
            duration,
            tb.numerator(),
            tb.denominator(),
        )),
        format_duration: (input.duration() != no_value).then_some(input.duration()),
        frames: stream.frames(),
        avg_frame_rate: {
            let r = stream.avg_frame_rate();
            (r.numerator(), r.denominator())
        },
    })
}

/// Feeds the data of every packet of the file's video streams to `out`, in demuxing order: what
/// Data-Juicer's `video_deduplicator` hashes (PyAV's `demux()` over all streams, keeping the
/// packets whose stream is video). Streams that appear after the header was read are skipped,
/// as PyAV skips them; a read error other than the end of the file fails, as PyAV raises it.
pub fn feed_video_packets(path: &str, out: &mut dyn FnMut(&[u8])) -> Result<(), String> {
    let mut input = open(path)?;
    let video: Vec<bool> = input
        .streams()
        .map(|s| s.parameters().medium() == Type::Video)
        .collect();
    loop {
        // A fresh packet each time: av_read_frame fills an unreferenced one.
        let mut packet = ffmpeg::Packet::empty();
        match packet.read(&mut input) {
            Ok(()) => {}
            Err(ffmpeg::Error::Eof) => return Ok(()),
            Err(e) => return Err(format!("its packets do not read: {e}")),
        }
        if video.get(packet.stream()).copied().unwrap_or(false)
            && let Some(data) = packet.data()
        {
            out(data);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_before_time_zero_are_cut_as_torchcodec_cuts_them() {
        // 48 kHz, time base 1/48000: a priming frame wholly before 0 is skipped, one straddling
        // 0 loses its first 312 samples.
        let mut c = SampleCount::new(48000.0, 1.0 / 48000.0);
        c.add(Some(-1272), 960);
        c.add(Some(-312), 960);
        c.add(Some(648), 960);
        assert_eq!(c.samples(), 960 * 2 - 312);
        let mut plain = SampleCount::new(16000.0, 1.0 / 16000.0);
        plain.add(Some(0), 100);
        plain.add(None, 50);
        assert_eq!(plain.samples(), 150);
    }

    #[test]
    fn durations_read_as_ffprobe_prints_and_pyav_divides() {
        let info = VideoInfo {
            width: 4,
            height: 3,
            stream_duration: Some((91, 1, 30)),
            format_duration: Some(3_100_000),
            frames: 91,
            avg_frame_rate: (30, 1),
        };
        assert_eq!(info.ffprobe_duration(), 3.033333);
        assert_eq!(info.av_duration(), Ok(91.0 / 30.0));
        let container_only = VideoInfo {
            stream_duration: None,
            ..info
        };
        assert_eq!(container_only.ffprobe_duration(), 3.1);
        assert!(container_only.av_duration().is_err());
        assert_eq!(fraction_to_f64(1 << 60, 3 << 58), 4.0 / 3.0);
    }

    /// The bytes of every video packet of a fixture, in order.
    fn video_packets(name: &str) -> Result<Vec<u8>, String> {
        let mut bytes = Vec::new();
        feed_video_packets(&fixture(name), &mut |d| bytes.extend_from_slice(d))?;
        Ok(bytes)
    }

    #[test]
    fn video_packets_ignore_audio_streams_and_file_names() {
        let with_audio = video_packets("with_audio_96x64.mov").unwrap();
        assert!(with_audio.len() > 1000);
        assert_eq!(video_packets("muted_96x64.mov").unwrap(), with_audio);
        assert_eq!(
            video_packets("testsrc_copy.mp4").unwrap(),
            video_packets("testsrc_320x240.mp4").unwrap()
        );
        assert_ne!(video_packets("testsrc_320x240.mp4").unwrap(), with_audio);
        assert!(video_packets("corrupt_video.mp4").is_err());
        assert!(video_packets("no_such.mp4").is_err());
    }

    fn fixture(name: &str) -> String {
        format!(
            "{}/../tests/golden/media/{name}",
            env!("CARGO_MANIFEST_DIR")
        )
    }

    /// Sample counts and rates that Data-Juicer's `load_audio` (datasets 5.2 + torchcodec 0.17)
    /// gives for the fixtures (`tests/golden/media/make_media.sh`).
    #[test]
    fn audio_durations_match_data_juicers_decoder() {
        for (name, samples, rate) in [
            ("tone_1370ms.wav", 21920, 16000),
            ("speech.flac", 108609, 22050),
            ("chirp_stereo.mp3", 110250, 44100),
            ("noise_730ms.ogg", 23424, 32000),
            ("noisy_speech.m4a", 78848, 16000),
            ("beep_250ms.opus", 12000, 48000),
            ("with_audio_96x64.mov", 49152, 44100),
        ] {
            let expected = samples as f64 / rate as f64;
            assert_eq!(audio_duration(&fixture(name)), Ok(expected), "{name}");
        }
        let e = audio_duration(&fixture("testsrc_320x240.mp4")).unwrap_err();
        assert_eq!(e, "it has no audio stream");
    }

    /// What `ffprobe -select_streams v:0` prints and PyAV 13.1 reads for the fixtures.
    #[test]
    fn video_info_matches_ffprobe_and_pyav() {
        for (name, width, height, ffprobe, av) in [
            ("testsrc_320x240.mp4", 320, 240, 2.0, Some(2.0)),
            ("vfr_160x120.mp4", 160, 120, 29.4, Some(29.4)),
            ("wide_640x360.webm", 640, 360, 1.3, None),
            ("bars_176x144.mkv", 176, 144, 3.709, None),
            ("tall_200x400.avi", 200, 400, 1.5, Some(1.5)),
            (
                "with_audio_96x64.mov",
                96,
                64,
                1.133333,
                Some(1.1333333333333333),
            ),
        ] {
            let info = video_info(&fixture(name)).unwrap();
            assert_eq!((info.width, info.height), (width, height), "{name}");
            assert_eq!(info.ffprobe_duration(), ffprobe, "{name}");
            assert_eq!(info.av_duration().ok(), av, "{name}");
        }
        for name in ["truncated.mp4", "corrupt_video.mp4"] {
            assert!(video_info(&fixture(name)).is_err(), "{name}");
        }
        assert!(audio_duration(&fixture("corrupt_audio.wav")).is_err());
    }

    #[test]
    fn missing_and_corrupt_files_are_errors_naming_the_cause() {
        assert_eq!(
            video_info("/nonexistent/clip.mp4").unwrap_err(),
            "no such file"
        );
        let dir = tempfile::tempdir().unwrap();
        let junk = dir.path().join("junk.mp4");
        std::fs::write(&junk, b"not a video at all, just some bytes").unwrap();
        let e = video_info(junk.to_str().unwrap()).unwrap_err();
        assert!(e.starts_with("FFmpeg cannot open it"), "{e}");
        let e = audio_duration(junk.to_str().unwrap()).unwrap_err();
        assert!(e.starts_with("FFmpeg cannot open it"), "{e}");
    }
}

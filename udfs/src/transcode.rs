//! Writing resized videos (the `media` feature): what Data-Juicer's resize mappers have the
//! `ffmpeg` command do (`-i SRC -vf scale=W:H DST`), through FFmpeg's libraries. The best video
//! stream is decoded, scaled with swscale's bicubic filter (the `scale` filter's default) and
//! encoded with the output container's default encoder (H.264 for MP4, MKV and MOV, VP9 for
//! WebM, MPEG-4 for AVI), with the sample aspect ratio adjusted as `scale` adjusts it. The best
//! audio stream is copied, where the command would re-encode it: the sound is unchanged and the
//! file is written faster. The file appears atomically: it is written under a temporary name
//! in the same directory, synced and renamed.
//!
//! The encoded bytes are not reproducible from run to run (libx264 under this engine gave
//! different bitstreams for identical frames, timestamps and settings, one encode at a time and
//! single-threaded alike), so nothing downstream should depend on them: a resumed job keeps the
//! files its first run finished and writes the others again, equal in size and content but not
//! necessarily in bytes.

use std::path::Path;

use ffmpeg::{Packet, Rational, codec, encoder, format, frame, media, picture};
use ffmpeg_next as ffmpeg;

/// Writes `src` scaled to `width` x `height` as `dst` (its format from its extension),
/// atomically.
pub fn write_scaled(src: &str, dst: &Path, width: u32, height: u32) -> Result<(), String> {
    crate::mapper::produced::write_atomically(dst, |tmp| transcode(src, tmp, width, height))
}

fn transcode(src: &str, dst: &Path, width: u32, height: u32) -> Result<(), String> {
    crate::media::init();
    let av = |what: &'static str| move |e: ffmpeg::Error| format!("{what}: {e}");
    let mut ictx = format::input(&src).map_err(av("FFmpeg cannot open it"))?;
    let mut octx = format::output(&dst).map_err(av("cannot create the output"))?;
    let ist = ictx
        .streams()
        .best(media::Type::Video)
        .ok_or("it has no video stream")?;
    let (video_in, video_tb) = (ist.index(), ist.time_base());
    let mut decoder = codec::context::Context::from_parameters(ist.parameters())
        .map_err(av("bad video stream parameters"))?
        .decoder()
        .video()
        .map_err(av("no decoder for its video"))?;
    let id = octx.format().codec(dst, media::Type::Video);
    let codec = encoder::find(id).ok_or(format!("no encoder for {id:?}"))?;
    let formats: Vec<format::Pixel> = codec
        .video()
        .ok()
        .and_then(|v| v.formats())
        .map(|f| f.collect())
        .unwrap_or_default();
    let pixel = if formats.is_empty() || formats.contains(&decoder.format()) {
        decoder.format()
    } else {
        formats[0]
    };
    let global_header = octx.format().flags().contains(format::Flags::GLOBAL_HEADER);
    let mut ost = octx.add_stream(codec).map_err(av("cannot add a stream"))?;
    let video_out = ost.index();
    let mut enc = codec::context::Context::new_with_codec(codec)
        .encoder()
        .video()
        .map_err(av("no video encoder"))?;
    enc.set_width(width);
    enc.set_height(height);
    enc.set_format(pixel);
    let sar = decoder.aspect_ratio();
    if sar.numerator() != 0 {
        // As the scale filter keeps the display aspect ratio.
        let scaled = Rational::new(
            (height as i64 * decoder.width() as i64) as i32,
            (width as i64 * decoder.height() as i64) as i32,
        );
        enc.set_aspect_ratio((sar * scaled).reduce());
    }
    let rate = ist.avg_frame_rate();
    if rate.numerator() > 0 {
        enc.set_frame_rate(Some(rate));
    }
    enc.set_time_base(video_tb);
    if global_header {
        enc.set_flags(codec::Flags::GLOBAL_HEADER);
    }
    let mut enc = enc.open_as(codec).map_err(av("cannot open the encoder"))?;
    ost.set_parameters(&enc);
    let audio = ictx.streams().best(media::Type::Audio).map(|a| {
        let mut ost = octx.add_stream(encoder::find(codec::Id::None)).ok()?;
        ost.set_parameters(a.parameters());
        // SAFETY: the stream's parameters are owned by the output context; a zero tag lets the
        // muxer pick its own for the copied codec.
        unsafe { (*ost.parameters().as_mut_ptr()).codec_tag = 0 };
        Some((a.index(), a.time_base(), ost.index()))
    });
    let audio = audio.flatten();
    octx.write_header().map_err(av("cannot write the header"))?;
    let out_tb = |octx: &format::context::Output, i: usize| octx.stream(i).map(|s| s.time_base());
    let video_out_tb = out_tb(&octx, video_out).ok_or("no output stream")?;
    let audio_out_tb = audio.and_then(|(_, _, o)| out_tb(&octx, o));
    let mut scaler = ffmpeg::software::scaling::Context::get(
        decoder.format(),
        decoder.width(),
        decoder.height(),
        pixel,
        width,
        height,
        ffmpeg::software::scaling::Flags::BICUBIC,
    )
    .map_err(av("cannot scale its frames"))?;
    let mut decoded = frame::Video::empty();
    let mut encode = |decoder: &mut ffmpeg::decoder::Video,
                      enc: &mut encoder::Video,
                      octx: &mut format::context::Output|
     -> Result<(), String> {
        while decoder.receive_frame(&mut decoded).is_ok() {
            // A new frame each time: an encoder may keep a reference to a frame it was sent,
            // which a buffer scaled into again would change.
            let mut scaled = frame::Video::empty();
            scaler
                .run(&decoded, &mut scaled)
                .map_err(av("cannot scale a frame"))?;
            scaled.set_pts(decoded.timestamp());
            scaled.set_kind(picture::Type::None);
            enc.send_frame(&scaled).map_err(av("cannot encode"))?;
            write_packets(enc, octx, video_out, video_tb, video_out_tb)?;
        }
        Ok(())
    };
    for (stream, mut packet) in ictx.packets() {
        if stream.index() == video_in {
            decoder
                .send_packet(&packet)
                .map_err(av("its video does not decode"))?;
            encode(&mut decoder, &mut enc, &mut octx)?;
        } else if let (Some((a_in, a_tb, a_out)), Some(tb)) = (audio, audio_out_tb)
            && stream.index() == a_in
        {
            packet.rescale_ts(a_tb, tb);
            packet.set_position(-1);
            packet.set_stream(a_out);
            packet
                .write_interleaved(&mut octx)
                .map_err(av("cannot write"))?;
        }
    }
    decoder
        .send_eof()
        .map_err(av("its video does not decode"))?;
    encode(&mut decoder, &mut enc, &mut octx)?;
    enc.send_eof().map_err(av("cannot encode"))?;
    write_packets(&mut enc, &mut octx, video_out, video_tb, video_out_tb)?;
    octx.write_trailer().map_err(av("cannot finish the file"))
}

fn write_packets(
    enc: &mut encoder::Video,
    octx: &mut format::context::Output,
    stream: usize,
    from: Rational,
    to: Rational,
) -> Result<(), String> {
    let mut packet = Packet::empty();
    while enc.receive_packet(&mut packet).is_ok() {
        packet.set_stream(stream);
        packet.rescale_ts(from, to);
        packet
            .write_interleaved(octx)
            .map_err(|e| format!("cannot write: {e}"))?;
    }
    Ok(())
}

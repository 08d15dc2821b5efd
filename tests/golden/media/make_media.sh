#!/usr/bin/env bash
# make_media.sh — the audio and video fixtures of the media goldens, made with Debian's ffmpeg, sox and
# espeak-ng (apt-get install ffmpeg sox espeak-ng). Deterministic inputs (synthetic tones, test
# patterns, synthesized speech); encoders may differ across versions, so the files are committed and
# this script documents how they were made (ffmpeg 5.1, sox 14.4, espeak-ng 1.51 on Debian 12).
#
#   cd tests/golden/media && ./make_media.sh
#
# Covers several containers and codecs (WAV/PCM, FLAC, MP3, Ogg Vorbis, M4A/AAC, Opus; MP4/H.264,
# WebM/VP9, MKV/MPEG-4, AVI/MJPEG, MOV), odd durations, a variable-frame-rate video, stereo and
# mono, speech and noise, and corrupt files (random bytes; a truncated MP4).
set -euo pipefail
cd "$(dirname "$0")"
ff() { ffmpeg -nostdin -hide_banner -loglevel error -y -bitexact "$@"; }

# --- audio ---
sox -n -r 16000 -c 1 -b 16 tone_1370ms.wav synth 1.37 sine 440 vol 0.5
espeak-ng -w /tmp/dj_speech.wav "Data Juicer cleans training data for large language models, one operator at a time."
sox /tmp/dj_speech.wav -r 22050 speech.flac
sox -n -r 44100 -c 2 /tmp/dj_chirp.wav synth 2.5 sine 200-2000 vol 0.4
ff -i /tmp/dj_chirp.wav -c:a libmp3lame -b:a 64k chirp_stereo.mp3
sox -n -r 32000 -c 1 /tmp/dj_noise.wav synth 0.73 whitenoise vol 0.3
ff -i /tmp/dj_noise.wav -c:a libvorbis -q:a 2 noise_730ms.ogg
# speech with noise under it: a mid SNR for audio_nmf_snr_filter
sox -n -r 22050 -c 1 /tmp/dj_hiss.wav synth "$(soxi -D /tmp/dj_speech.wav)" whitenoise vol 0.05
sox -m /tmp/dj_speech.wav /tmp/dj_hiss.wav -r 16000 /tmp/dj_noisy.wav
ff -i /tmp/dj_noisy.wav -c:a aac -b:a 48k noisy_speech.m4a
sox -n -r 48000 -c 1 /tmp/dj_short.wav synth 0.25 square 300 vol 0.3
ff -i /tmp/dj_short.wav -c:a libopus -b:a 24k beep_250ms.opus
head -c 6000 /dev/urandom > /tmp/dj_rand.bin; printf 'RIFF' | cat - /tmp/dj_rand.bin > corrupt_audio.wav

# --- video ---
ff -f lavfi -i testsrc=size=320x240:rate=25:duration=2 -c:v libx264 -preset veryfast -pix_fmt yuv420p testsrc_320x240.mp4
ff -f lavfi -i testsrc2=size=640x360:rate=30:duration=1.3 -c:v libvpx-vp9 -b:v 100k -deadline realtime wide_640x360.webm
ff -f lavfi -i smptebars=size=176x144:rate=24:duration=3.7 -c:v mpeg4 -q:v 8 bars_176x144.mkv
# variable frame rate: timestamps stretched over time, kept as-is (-fps_mode passthrough)
ff -f lavfi -i testsrc=size=160x120:rate=20:duration=2 -vf "setpts='PTS+0.02*N*N/TB'" -fps_mode passthrough -c:v libx264 -preset veryfast -pix_fmt yuv420p vfr_160x120.mp4
ff -f lavfi -i "mandelbrot=size=200x400:rate=10" -t 1.5 -c:v mjpeg -q:v 31 tall_200x400.avi
ff -f lavfi -i testsrc=size=96x64:rate=15:duration=1.1 -f lavfi -i "sine=frequency=500:duration=1.1" -c:v libx264 -preset veryfast -pix_fmt yuv420p -c:a aac -shortest with_audio_96x64.mov
# the same video packets under another name, in another container, and without the audio
# stream: duplicates for video_deduplicator, which hashes video packets only
cp testsrc_320x240.mp4 testsrc_copy.mp4
ff -i testsrc_320x240.mp4 -c copy testsrc_remux.mkv
ff -i with_audio_96x64.mov -an -c copy muted_96x64.mov
head -c 3000 testsrc_320x240.mp4 > truncated.mp4
head -c 4000 /dev/urandom > corrupt_video.mp4
rm -f /tmp/dj_speech.wav /tmp/dj_chirp.wav /tmp/dj_noise.wav /tmp/dj_hiss.wav /tmp/dj_noisy.wav /tmp/dj_short.wav /tmp/dj_rand.bin
ls -l

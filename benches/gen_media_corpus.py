#!/usr/bin/env python3
"""Short audio and video clips for benches/media.sh, made with ffmpeg (deterministic choices).

    gen_media_corpus.py OUT_DIR ROWS

Writes OUT_DIR/media/ (about 0.8 x ROWS distinct video clips and as many audio clips: several
sources, sizes, frame rates, durations of 0.5-4 s, H.264/MP4, VP9/WebM and MPEG-4/MKV; WAV, FLAC,
MP3, Vorbis, AAC and Opus), then OUT_DIR/video.jsonl and OUT_DIR/audio.jsonl: ROWS rows each, one
clip per row, the other fifth repeating earlier clips or byte copies of them (duplicates), with
relative paths as Data-Juicer datasets carry them.
"""
import json
import os
import random
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

out, rows = sys.argv[1], int(sys.argv[2])
media = os.path.join(out, "media")
os.makedirs(media, exist_ok=True)
rng = random.Random(32)
unique = max(1, rows * 4 // 5)

SOURCES = ["testsrc", "testsrc2", "smptebars", "rgbtestsrc", "mandelbrot"]
SIZES = [(160, 120), (320, 240), (640, 360), (240, 426), (200, 200), (426, 240)]
VIDEO_CODECS = [
    ("mp4", ["-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p"]),
    ("webm", ["-c:v", "libvpx-vp9", "-b:v", "150k", "-deadline", "realtime", "-cpu-used", "8"]),
    ("mkv", ["-c:v", "mpeg4", "-q:v", "6"]),
]
AUDIO_CODECS = [
    ("wav", []),
    ("flac", []),
    ("mp3", ["-c:a", "libmp3lame", "-b:a", "64k"]),
    ("ogg", ["-c:a", "libvorbis", "-q:a", "2"]),
    ("m4a", ["-c:a", "aac", "-b:a", "48k"]),
    ("opus", ["-c:a", "libopus", "-b:a", "24k"]),
]
AUDIO_SOURCES = ["sine=frequency={f}", "anoisesrc=color=pink:amplitude=0.3", "sine=frequency={f}:beep_factor=4"]

jobs = []
videos, audios = [], []
for i in range(unique):
    src = rng.choice(SOURCES)
    w, h = rng.choice(SIZES)
    rate = rng.choice([15, 24, 25, 30])
    dur = rng.randint(5, 40) / 10
    ext, codec = rng.choice(VIDEO_CODECS)
    name = f"v{i:05d}.{ext}"
    videos.append(name)
    jobs.append(["-f", "lavfi", "-i", f"{src}=size={w}x{h}:rate={rate}", "-t", str(dur), *codec, os.path.join(media, name)])
    asrc = rng.choice(AUDIO_SOURCES).format(f=rng.randint(200, 2000))
    rate = rng.choice([16000, 22050, 44100, 48000])
    dur = rng.randint(3, 50) / 10
    ext, codec = rng.choice(AUDIO_CODECS)
    name = f"a{i:05d}.{ext}"
    audios.append(name)
    jobs.append(["-f", "lavfi", "-i", f"{asrc}:sample_rate={rate}", "-t", str(dur), *codec, os.path.join(media, name)])


def make(args):
    if not os.path.exists(args[-1]):
        subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args], check=True)


with ThreadPoolExecutor(os.cpu_count() or 2) as pool:
    list(pool.map(make, jobs))


def rows_of(names, key, noun):
    lines = []
    for i in range(rows):
        if i < unique:
            name = names[i]
        else:
            # a repeat of an earlier clip, every other one through a byte copy under a new name
            name = names[rng.randrange(unique)]
            if i % 2:
                copy = f"copy{i:05d}_{name}"
                shutil.copyfile(os.path.join(media, name), os.path.join(media, copy))
                name = copy
        text = f"<__dj__{noun}> Clip {i} of the benchmark corpus. <|__dj__eoc|>"
        lines.append(json.dumps({"text": text, key: [f"media/{name}"], "meta": {"id": i}}))
    rng.shuffle(lines)
    return "\n".join(lines) + "\n"


with open(os.path.join(out, "video.jsonl"), "w") as f:
    f.write(rows_of(videos, "videos", "video"))
with open(os.path.join(out, "audio.jsonl"), "w") as f:
    f.write(rows_of(audios, "audios", "audio"))
print(f"{rows} video rows, {rows} audio rows, {len(os.listdir(media))} files in {media}")

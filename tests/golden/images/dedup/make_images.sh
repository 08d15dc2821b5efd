#!/usr/bin/env bash
# Makes the image_deduplicator fixtures with ffmpeg (Debian's 5.1): one picture in several formats,
# sizes and pixel formats (so near-duplicates meet), flat colours (ties in every hash), a
# gradient, an image smaller than the hashes' 8x8 grid, and a corrupt file.
set -euo pipefail
cd "$(dirname "$0")"
ff() { ffmpeg -v error -y "$@"; }
ff -f lavfi -i "testsrc2=size=320x240:rate=1" -frames:v 1 -pix_fmt rgb24 scene.png
ff -i scene.png -q:v 3 scene.jpg
ff -i scene.png -q:v 20 scene_low.jpg
ff -i scene.png -vf scale=160:120 -pix_fmt rgb24 scene_small.png
ff -i scene.png -pix_fmt rgba scene_rgba.png
ff -i scene.png -pix_fmt pal8 scene_palette.png
ff -i scene.png -pix_fmt rgb48be scene_16bit.png
ff -i scene.png -pix_fmt gray scene_gray.png
ff -i scene.png -pix_fmt gray -q:v 4 scene_gray.jpg
ff -i scene.png -vf hflip -pix_fmt rgb24 scene_flipped.png
ff -f lavfi -i "mandelbrot=size=256x256:end_pts=1" -frames:v 1 -pix_fmt rgb24 fractal.png
ff -i fractal.png -q:v 2 -pix_fmt yuvj444p fractal_444.jpg
ff -f lavfi -i "color=c=red:size=64x64" -frames:v 1 -pix_fmt rgb24 flat_red.png
ff -f lavfi -i "color=c=0x2040c0:size=100x50" -frames:v 1 -pix_fmt rgb24 flat_blue.png
ff -f lavfi -i "color=c=white:size=640x360" -frames:v 1 -q:v 2 flat_white.jpg
ff -f lavfi -i "color=c=gray:size=300x200" -frames:v 1 -pix_fmt gray16be flat_gray16.png
ff -f lavfi -i "gradients=size=200x150:c0=black:c1=white:x0=0:y0=0:x1=199:y1=0:seed=1" -frames:v 1 \
  -pix_fmt rgb24 gradient.png
ff -f lavfi -i "testsrc=size=5x3:rate=1" -frames:v 1 -pix_fmt rgb24 tiny_5x3.png
head -c 300 scene.jpg > truncated.jpg
printf 'not an image at all' > corrupt.png

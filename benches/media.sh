#!/usr/bin/env bash
# dj-fusion against the real Python Data-Juicer on short audio and video clips, in one run: wall
# time, peak RSS, the ratio, and a byte comparison of the two exports. Clips: gen_media_corpus.py
# (ROWS rows of each kind, a fifth of them repeats or byte copies of earlier clips). Recipes:
#   video: video_duration_filter, video_resolution_filter, video_aspect_ratio_filter and
#          video_deduplicator (every file opened by each op: four decodes of its headers plus a
#          read of every video packet);
#   audio: audio_duration_filter (every sample decoded) and audio_size_filter.
# Both sides run with `np: 2`. dj-fusion's figure is the median of DJ_BENCH_RUNS runs (default 3),
# Data-Juicer's one run.
# Usage: [DJ_BENCH_PROFILE=bench-fast|release|debug] [DJ_BENCH_RUNS=N] benches/media.sh [ROWS] [RECIPE...]
#        (default 300 rows; video audio)
source "$(dirname "$0")/common.sh"
build
rows=${1:-300}; shift || true
recipes=${*:-video audio}
dir=$WORK/media_$rows
[ -s "$dir/video.jsonl" ] || python3 "$ROOT/benches/gen_media_corpus.py" "$dir" "$rows" >&2
echo "corpus: $dir ($(du -sm "$dir/media" | cut -f1) MB of clips)"
ref=${DJ_REFERENCE:-$ROOT/../shared/tools/dj-reference}
"$ref" >/dev/null 2>&1 || true
venv=${DJ_REFERENCE_HOME:-$HOME/.cache/dj-reference}/venv-${DJ_REFERENCE_VERSION:-1.6.1}
# Data-Juicer 1.6.1 imports aiohttp without declaring it; its audio loading needs torchcodec
# (0.17 matches the venv's torch; the 0.7 Data-Juicer pins does not load) and its video ops PyAV
# 13 (the release its close_video works with).
"$venv/bin/python" -c 'import aiohttp, av, torchcodec' 2>/dev/null ||
  "$venv/bin/pip" install -q aiohttp==3.12.13 av==13.1.0 torchcodec==0.17.0 >&2
mkdir -p "$WORK/out"
export HF_DATASETS_CACHE=$WORK/hf-datasets-cache
declare -A PROCESS INPUT
PROCESS[video]='  - video_duration_filter:
      min_duration: 1
      max_duration: 3.5
  - video_resolution_filter:
      min_width: 200
  - video_aspect_ratio_filter:
  - video_deduplicator:'
INPUT[video]=$dir/video.jsonl
PROCESS[audio]='  - audio_duration_filter:
      min_duration: 1
      max_duration: 4
  - audio_size_filter:
      min_size: 10KB'
INPUT[audio]=$dir/audio.jsonl
for name in $recipes; do
  for side in dj py; do
    printf 'project_name: media_%s\ndataset_path: %s\nexport_path: %s\nnp: 2\nopen_tracer: false\nprocess:\n%s\n' \
      "$name" "${INPUT[$name]}" "$WORK/out/media_${name}${rows}_${side}.jsonl" "${PROCESS[$name]}" > "$WORK/media_${name}_${side}.yaml"
  done
  cat "$dir"/media/* "${INPUT[$name]}" > /dev/null
  against_reference "$ref" "$name ${rows} clips" "$WORK/media_${name}_dj.yaml" "$WORK/media_${name}_py.yaml" \
    "$WORK/out/media_${name}${rows}_dj.jsonl" "$WORK/out/media_${name}${rows}_py.jsonl"
done

#!/usr/bin/env bash
# Bounded memory for recipes without global ops: peak RSS of dj-run on growing generated inputs
# (default 256 MB, 1 GB, 4 GB) with a mapper + filter recipe. RSS should stay flat while the input
# grows. Usage: benches/streaming.sh [SIZES_MB...]
source "$(dirname "$0")/common.sh"
build
sizes=${*:-256 1024 4096}
for mb in $sizes; do
  input=$WORK/corpus_${mb}mb.jsonl
  data "$input" "$mb"
  cat > "$WORK/streaming.yaml" <<YAML
dataset_path: $input
export_path: $WORK/out/streaming_${mb}.jsonl
np: 2
process:
  - whitespace_normalization_mapper:
  - clean_email_mapper:
  - clean_links_mapper:
  - text_length_filter:
      min_len: 50
  - words_num_filter:
      min_num: 10
  - alphanumeric_filter:
  - character_repetition_filter:
YAML
  measure "streaming ${mb} MB input" "$BIN/dj-run" --config "$WORK/streaming.yaml"
  rm -f "$WORK/out/streaming_${mb}"*.jsonl
done

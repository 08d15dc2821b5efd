#!/usr/bin/env bash
# Peak RSS as the input grows: a mapper + filter recipe (no global operator: RSS should stay flat)
# and MinHash dedup (global: keeps band keys per document; target 1M documents within 4 GB), on
# gen_apt_corpus.py documents.
# Usage: benches/scale.sh [ROWS...]   (default 100000 1000000)
source "$(dirname "$0")/common.sh"
build
mkdir -p "$WORK/out"
for rows in ${*:-100000 1000000}; do
  input=$WORK/apt_${rows}.jsonl
  [ -s "$input" ] || python3 "$ROOT/benches/gen_apt_corpus.py" "$input" "$rows" >&2
  cat > "$WORK/scale_filters.yaml" <<YAML
dataset_path: $input
export_path: $WORK/out/scale_filters_${rows}.jsonl
np: 2
process:
  - whitespace_normalization_mapper:
  - clean_links_mapper:
  - text_length_filter:
      min_len: 50
  - words_num_filter:
      min_num: 10
  - alphanumeric_filter:
  - character_repetition_filter:
YAML
  cat > "$WORK/scale_minhash.yaml" <<YAML
dataset_path: $input
export_path: $WORK/out/scale_minhash_${rows}.jsonl
np: 2
process:
  - document_minhash_deduplicator:
YAML
  measure "mapper+filters ${rows} docs" "$BIN/dj-run" --config "$WORK/scale_filters.yaml"
  measure "minhash dedup ${rows} docs" "$BIN/dj-run" --config "$WORK/scale_minhash.yaml"
  echo "  minhash rows out: $(wc -l < "$WORK/out/scale_minhash_${rows}.jsonl")"
  rm -f "$WORK/out/scale_"*"_${rows}.jsonl"
done

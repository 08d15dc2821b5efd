#!/usr/bin/env bash
# dj-fusion against the real Python Data-Juicer (../shared/tools/dj-reference) on the same recipe
# and data, in one run: wall time, peak RSS and the throughput ratio, and a byte comparison of the
# two exports. Recipes: cheap mappers, filter-heavy, exact dedup.
# Usage: benches/vs_data_juicer.sh [SIZE_MB]   (default 64)
source "$(dirname "$0")/common.sh"
build
mb=${1:-64}
input=$WORK/corpus_${mb}mb.jsonl
data "$input" "$mb"
ref=${DJ_REFERENCE:-$ROOT/../shared/tools/dj-reference}
recipe() {  # recipe NAME OUT PROCESS
  printf 'project_name: %s\ndataset_path: %s\nexport_path: %s\nnp: 2\nopen_tracer: false\nprocess:\n%s\n' "$1" "$input" "$2" "$3" > "$WORK/vs_$1_$4.yaml"
}
declare -A PROCESS
PROCESS[mappers]='  - whitespace_normalization_mapper:
  - punctuation_normalization_mapper:
  - clean_email_mapper:
  - clean_links_mapper:'
PROCESS[filters]='  - text_length_filter:
      min_len: 50
  - words_num_filter:
      min_num: 10
  - alphanumeric_filter:
  - special_characters_filter:
  - character_repetition_filter:'
PROCESS[dedup]='  - whitespace_normalization_mapper:
  - document_deduplicator:
      lowercase: true
      ignore_non_character: true'
for name in mappers filters dedup; do
  recipe "$name" "$WORK/out/vs_${name}_dj.jsonl" "${PROCESS[$name]}" dj
  recipe "$name" "$WORK/out/vs_${name}_py.jsonl" "${PROCESS[$name]}" py
  a=$(measure "dj-fusion $name ${mb}MB" "$BIN/dj-run" --config "$WORK/vs_${name}_dj.yaml")
  b=$(measure "data-juicer $name ${mb}MB" "$ref" "$WORK/vs_${name}_py.yaml")
  echo "$a"; echo "$b"
  ta=$(echo "$a" | awk '{print $(NF-3)}'); tb=$(echo "$b" | awk '{print $(NF-3)}')
  echo "  speed-up: $(python3 -c "print(f'{$tb/$ta:.1f}x')")"
  if cmp -s "$WORK/out/vs_${name}_dj.jsonl" "$WORK/out/vs_${name}_py.jsonl"; then echo "  exports identical"; else echo "  EXPORTS DIFFER"; fi
done

#!/usr/bin/env bash
# A one-trivial-mapper recipe (whitespace_normalization_mapper, parquet in, parquet out, np 2)
# against DataFusion's own parquet scan-and-write of the same file (benches/df_parquet_copy.rs,
# 2 target partitions): what the dj-fusion machinery (row-range source, op boundary, staging,
# ordered export) costs over the engine alone.
# Usage: benches/scan_write.sh [ROWS]   (default 1000000 documents of gen_apt_corpus.py)
source "$(dirname "$0")/common.sh"
build
[ -n "${DJ_BENCH_NOBUILD:-}" ] || (cd "$ROOT" && cargo build --profile "$PROFILE" --example df_parquet_copy >&2)
rows=${1:-1000000}
jsonl=$WORK/apt_${rows}.jsonl
parquet=$WORK/apt_${rows}.parquet
[ -s "$jsonl" ] || python3 "$ROOT/benches/gen_apt_corpus.py" "$jsonl" "$rows" >&2
mkdir -p "$WORK/out"
if [ ! -s "$parquet" ]; then
  printf 'dataset_path: %s\nexport_path: %s\nnp: 2\nprocess: []\n' "$jsonl" "$parquet" > "$WORK/to_parquet.yaml"
  "$BIN/dj-run" --config "$WORK/to_parquet.yaml" > /dev/null
fi
printf 'dataset_path: %s\nexport_path: %s\nnp: 2\nprocess:\n  - whitespace_normalization_mapper:\n' \
  "$parquet" "$WORK/out/scan_write_dj.parquet" > "$WORK/scan_write.yaml"
a=$(measure "dj-fusion 1 mapper ${rows} docs" "$BIN/dj-run" --config "$WORK/scan_write.yaml")
b=$(measure "datafusion parquet copy ${rows} docs" "$BIN/examples/df_parquet_copy" "$parquet" "$WORK/out/scan_write_df.parquet" 2)
echo "$a"; echo "$b"
ta=$(seconds_of "$a"); tb=$(seconds_of "$b")
echo "  dj-fusion / datafusion: $(python3 -c "print(f'{$ta/$tb:.2f}x')")"

#!/usr/bin/env bash
# Cluster overhead: the same checkpointed recipe (5 mappers and filters, every_n_ops n=2, 8
# partitions) and data run locally and on 1 Ballista scheduler + 2 executors (one slot each) on
# this machine. No speed-up is expected on 2 cores; this reports the cost. Peak RSS is the
# client's; the scheduler's and executors' peaks are read from /proc before they are stopped.
# Then a recipe with two deduplicators (exact and MinHash) after 4 ops, on DEDUP_ROWS documents
# (default 100000): on the cluster the rows before each dedup are computed once.
# Usage: benches/cluster.sh [ROWS [DEDUP_ROWS]]   (default 1000000 100000)
source "$(dirname "$0")/common.sh"
build
rows=${1:-1000000}
dedup_rows=${2:-100000}
input=$WORK/apt_${rows}.jsonl
[ -s "$input" ] || python3 "$ROOT/benches/gen_apt_corpus.py" "$input" "$rows" >&2
cat > "$WORK/cluster.yaml" <<YAML
dataset_path: $input
export_path: $WORK/out/cluster.jsonl
work_dir: $WORK/jobs
executor_type: ray_partitioned
partition:
  mode: manual
  num_of_partitions: 8
  max_concurrent_partitions: 2
checkpoint:
  strategy: every_n_ops
  n_ops: 2
process:
  - whitespace_normalization_mapper:
  - clean_links_mapper:
  - text_length_filter:
      min_len: 50
  - words_num_filter:
      min_num: 10
  - special_characters_filter:
YAML
dedup_input=$WORK/apt_${dedup_rows}.jsonl
[ -s "$dedup_input" ] || python3 "$ROOT/benches/gen_apt_corpus.py" "$dedup_input" "$dedup_rows" >&2
cat > "$WORK/cluster_dedup.yaml" <<YAML
dataset_path: $dedup_input
export_path: $WORK/out/cluster_dedup.jsonl
work_dir: $WORK/jobs_dedup
executor_type: ray_partitioned
partition:
  mode: manual
  num_of_partitions: 8
  max_concurrent_partitions: 2
checkpoint:
  strategy: every_n_ops
  n_ops: 3
process:
  - whitespace_normalization_mapper:
  - punctuation_normalization_mapper:
  - character_repetition_filter:
      rep_len: 10
      max_ratio: 0.4
  - word_repetition_filter:
      rep_len: 10
      max_ratio: 0.4
  - document_deduplicator:
  - document_minhash_deduplicator:
YAML
rm -rf "$WORK/jobs" "$WORK/jobs_dedup"
measure "local, $rows docs" "$BIN/dj-run" --config "$WORK/cluster.yaml" --engine local
cp "$WORK/out/cluster.jsonl" "$WORK/out/cluster_local.jsonl"
measure "local, two dedups, $dedup_rows docs" "$BIN/dj-run" --config "$WORK/cluster_dedup.yaml" --engine local
cp "$WORK/out/cluster_dedup.jsonl" "$WORK/out/cluster_dedup_local.jsonl"

port=50150
pids=()
cleanup() { kill "${pids[@]}" 2> /dev/null || true; }
trap cleanup EXIT
"$BIN/dj-cluster" scheduler --bind 127.0.0.1:$port > "$WORK/scheduler.log" 2>&1 &
pids+=($!)
for i in 1 2; do
  mkdir -p "$WORK/executor$i"
  "$BIN/dj-cluster" executor --scheduler 127.0.0.1:$port \
    --port $((port + 10 * i)) --grpc-port $((port + 10 * i + 1)) --slots 1 --work-dir "$WORK/executor$i" \
    > "$WORK/executor$i.log" 2>&1 &
  pids+=($!)
done
sleep 3
rm -rf "$WORK/jobs"
measure "ballista 1+2, $rows docs" "$BIN/dj-run" --config "$WORK/cluster.yaml" --engine ballista --scheduler 127.0.0.1:$port
cmp "$WORK/out/cluster.jsonl" "$WORK/out/cluster_local.jsonl" && echo "cluster export identical to the local one"
rm -rf "$WORK/jobs_dedup"
measure "ballista 1+2, two dedups, $dedup_rows docs" "$BIN/dj-run" --config "$WORK/cluster_dedup.yaml" --engine ballista --scheduler 127.0.0.1:$port
cmp "$WORK/out/cluster_dedup.jsonl" "$WORK/out/cluster_dedup_local.jsonl" && echo "two-dedup cluster export identical to the local one"
names=(scheduler "executor 1" "executor 2")
for i in 0 1 2; do
  echo "${names[$i]} peak RSS: $(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/${pids[$i]}/status") MB"
done

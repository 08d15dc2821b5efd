#!/usr/bin/env bash
# Checkpoint overhead (every_op, every_n_ops with n=5, disabled on the same 10-op recipe and data)
# and the time of a resume after a kill at about 80% of the partitions, against a full run.
# Data: ROWS documents of gen_apt_corpus.py.
# Usage: benches/checkpoints.sh [ROWS]   (default 1000000)
source "$(dirname "$0")/common.sh"
build
rows=${1:-1000000}
input=$WORK/apt_${rows}.jsonl
[ -s "$input" ] || python3 "$ROOT/benches/gen_apt_corpus.py" "$input" "$rows" >&2
recipe() {
  cat > "$WORK/ckpt_$1.yaml" <<YAML
dataset_path: $input
export_path: $WORK/out/ckpt_$1.jsonl
work_dir: $WORK/jobs
np: 2
executor_type: ray_partitioned
partition:
  mode: manual
  num_of_partitions: 10
checkpoint:
  strategy: $1
  n_ops: 5
process:
  - whitespace_normalization_mapper:
  - punctuation_normalization_mapper:
  - clean_email_mapper:
  - clean_links_mapper:
  - remove_long_words_mapper:
  - text_length_filter:
      min_len: 50
  - words_num_filter:
      min_num: 10
  - alphanumeric_filter:
  - special_characters_filter:
  - character_repetition_filter:
YAML
}
for s in disabled every_n_ops every_op; do
  recipe $s
  rm -rf "$WORK/jobs"
  measure "full run, checkpoint $s" "$BIN/dj-run" --config "$WORK/ckpt_$s.yaml"
done

# Kill at ~80%: once 8 of 10 partitions completed, SIGKILL, then time the resume.
recipe every_op
rm -rf "$WORK/jobs"
"$BIN/dj-run" --config "$WORK/ckpt_every_op.yaml" --job_id bench_kill > /dev/null 2>&1 &
pid=$!
events() { cat "$WORK"/jobs/bench_kill/events_*.jsonl 2>/dev/null | grep -c '"partition_complete"' || true; }
while kill -0 $pid 2> /dev/null && [ "$(events)" -lt 8 ]; do sleep 0.05; done
kill -9 $pid 2> /dev/null || true
wait $pid 2> /dev/null || true
echo "killed after $(events) of 10 partitions completed"
measure "resume after kill at ~80%, every_op" "$BIN/dj-run" --config "$WORK/ckpt_every_op.yaml" --resume bench_kill
cmp "$WORK/out/ckpt_every_op.jsonl" "$WORK/out/ckpt_disabled.jsonl" && echo "resumed export identical to the uninterrupted one"

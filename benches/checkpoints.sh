#!/usr/bin/env bash
# Checkpoint strategies on a recipe with one expensive op (perplexity_filter: KenLM over
# SentencePiece pieces, the fixture models of data/models) among cheap mappers and filters:
# the full-run overhead of every_op, every_n_ops (n=3), auto and disabled, and for each
# checkpointing strategy the time of a resume after a kill -9 once 8 of 10 partitions completed.
# Data: ROWS documents of gen_apt_corpus.py.
# Usage: benches/checkpoints.sh [ROWS]   (default 300000)
source "$(dirname "$0")/common.sh"
build
rows=${1:-300000}
input=$WORK/apt_${rows}.jsonl
[ -s "$input" ] || python3 "$ROOT/benches/gen_apt_corpus.py" "$input" "$rows" >&2
recipe() {
  cat > "$WORK/ckpt_$1.yaml" <<YAML
dataset_path: $input
export_path: $WORK/out/ckpt_$1.jsonl
work_dir: $WORK/jobs_$1
model_dir: $ROOT/data/models
np: 2
executor_type: ray_partitioned
partition:
  mode: manual
  num_of_partitions: 10
checkpoint:
  strategy: $1
  n_ops: 3
  reuse: false
process:
  - whitespace_normalization_mapper:
  - punctuation_normalization_mapper:
  - clean_email_mapper:
  - clean_links_mapper:
  - perplexity_filter:
      lang: en
      max_ppl: 100000
  - text_length_filter:
      min_len: 50
  - words_num_filter:
      min_num: 10
  - special_characters_filter:
YAML
}
for s in disabled every_n_ops every_op auto; do
  recipe $s
  rm -rf "$WORK/jobs_$s"
  measure "full run, checkpoint $s" "$BIN/dj-run" --config "$WORK/ckpt_$s.yaml"
  echo "  checkpoint files: $(find "$WORK/jobs_$s" -name 'checkpoint_op_*' ! -name '*.blake3' | wc -l)"
done

# Kill at ~80%: once 8 of 10 partitions completed, SIGKILL, then time the resume.
for s in every_n_ops every_op auto; do
  rm -rf "$WORK/jobs_$s"
  "$BIN/dj-run" --config "$WORK/ckpt_$s.yaml" --job_id bench_kill > /dev/null 2>&1 &
  pid=$!
  events() { cat "$WORK"/jobs_$s/bench_kill/events_*.jsonl 2>/dev/null | grep -c '"partition_complete"' || true; }
  while kill -0 $pid 2> /dev/null && [ "$(events)" -lt 8 ]; do sleep 0.05; done
  kill -9 $pid 2> /dev/null || true
  wait $pid 2> /dev/null || true
  echo "$s: killed after $(events) of 10 partitions completed"
  measure "resume after kill at ~80%, $s" "$BIN/dj-run" --config "$WORK/ckpt_$s.yaml" --resume bench_kill
  cmp "$WORK/out/ckpt_$s.jsonl" "$WORK/out/ckpt_disabled.jsonl" && echo "  resumed export identical to the uninterrupted one"
done

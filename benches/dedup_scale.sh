#!/usr/bin/env bash
# Global operators as rows grow: exact then MinHash dedup over paragraph-sized documents
# (gen_apt_corpus.py, first paragraph), partitions of 100K rows, a job directory. For each ROWS:
# a local run with the default budget; a local run inside a 1 GiB cgroup-v1 group with a 256 MB
# budget (as root; skipped otherwise); and a run on a fresh cluster of one scheduler and two
# executors (one slot each) on this machine, where the executors decide both dedups in stages and
# the client holds no key. Prints wall time and peak RSS of every process; every export must be
# byte-identical to the local one.
# Usage: benches/dedup_scale.sh [ROWS...]   (default 1000000 4000000)
source "$(dirname "$0")/common.sh"
build
mkdir -p "$WORK/out"
port=50250
pids=()
stop_cluster() {
  [ ${#pids[@]} -gt 0 ] || return 0
  local names=(scheduler "executor 1" "executor 2")
  for i in 0 1 2; do
    echo "  ${names[$i]} peak RSS: $(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/${pids[$i]}/status") MB"
  done
  kill "${pids[@]}" 2> /dev/null || true
  wait "${pids[@]}" 2> /dev/null || true
  pids=()
}
trap stop_cluster EXIT
start_cluster() {
  "$BIN/dj-cluster" scheduler --bind 127.0.0.1:$port > "$WORK/scale_scheduler.log" 2>&1 &
  pids+=($!)
  for i in 1 2; do
    rm -rf "$WORK/scale_executor$i"
    mkdir -p "$WORK/scale_executor$i"
    "$BIN/dj-cluster" executor --scheduler 127.0.0.1:$port \
      --port $((port + 10 * i)) --grpc-port $((port + 10 * i + 1)) --slots 1 \
      --work-dir "$WORK/scale_executor$i" > "$WORK/scale_executor$i.log" 2>&1 &
    pids+=($!)
  done
  sleep 3
}
same() {
  if cmp -s "$1" "$2"; then echo "  export byte-identical ($(wc -l < "$1") rows kept)"; else echo "  EXPORTS DIFFER"; exit 1; fi
}
for rows in ${*:-1000000 4000000}; do
  input=$(paragraph_corpus "$rows")
  echo "input: $rows rows, $(( $(stat -c %s "$input") / 1024 / 1024 )) MB, $(( rows / 100000 )) partitions"
  for run in local capped cluster; do
    cat > "$WORK/scale_dedup_$run.yaml" <<YAML
dataset_path: $input
export_path: $WORK/out/scale_dedup_$run.jsonl
work_dir: $WORK/scale_jobs_$run
executor_type: ray_partitioned
np: 2
partition:
  mode: manual
  num_of_partitions: $(( rows / 100000 ))
checkpoint:
  strategy: disabled
process:
  - document_deduplicator:
  - document_minhash_deduplicator:
YAML
    rm -rf "$WORK/scale_jobs_$run"
  done
  measure "local ${rows}" "$BIN/dj-run" --config "$WORK/scale_dedup_local.yaml"
  if [ -w /sys/fs/cgroup/memory ]; then
    if in_cgroup 1024 measure "local ${rows}, 256 MB budget in 1 GiB" \
      "$BIN/dj-run" --config "$WORK/scale_dedup_capped.yaml" --memory_budget_mb 256; then
      same "$WORK/out/scale_dedup_capped.jsonl" "$WORK/out/scale_dedup_local.jsonl"
    else
      echo "  FAILED in the cgroup (see its OOM kills above)"
    fi
  fi
  start_cluster
  measure "cluster 1+2 ${rows}, client" env DJ_LOG=info "$BIN/dj-run" \
    --config "$WORK/scale_dedup_cluster.yaml" --engine ballista --scheduler 127.0.0.1:$port
  grep -ho "dedup op #[0-9] decided on the executors" "$WORK/cluster 1+2 ${rows}, client.stderr" \
    | sed 's/^/  /' || true
  du -sh "$WORK/scale_jobs_cluster" | awk '{print "  job directory: " $1}'
  stop_cluster
  same "$WORK/out/scale_dedup_cluster.jsonl" "$WORK/out/scale_dedup_local.jsonl"
  rm -rf "$WORK/scale_jobs_"* "$WORK/out/scale_dedup_"*.jsonl
done

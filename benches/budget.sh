#!/usr/bin/env bash
# Global operators under a memory cap: exact, MinHash and SimHash dedup, a top-k selector (the
# longest half, after text_length_filter's stat) and a frequency selector (the most frequent half
# of the packages) over ROWS paragraph-sized documents (default 5M,
# about 1.7 GB), once with the default budget (a quarter of the available memory)
# and once inside a 1 GiB cgroup-v1 memory group with --memory_budget_mb BUDGET (default 256),
# where the kernel kills what exceeds it; the two exports must be byte-identical. As root.
# Usage: benches/budget.sh [ROWS] [BUDGET_MB] [CGROUP_MB]   (DJ_BUDGET_OPS: a subset of the ops)
source "$(dirname "$0")/common.sh"
build
rows=${1:-5000000}
budget=${2:-256}
cap=${3:-1024}
input=$(paragraph_corpus "$rows")
echo "input: $rows rows, $(( $(stat -c %s "$input") / 1024 / 1024 )) MB" >&2
mkdir -p "$WORK/out"
all_ops="document_deduplicator document_minhash_deduplicator document_simhash_deduplicator"
all_ops+=" topk_specified_field_selector frequency_specified_field_selector"
for op in ${DJ_BUDGET_OPS:-$all_ops}; do
  process="  - $op:"
  [ "$op" = topk_specified_field_selector ] && process="  - text_length_filter:
  - $op: {field_key: __dj__stats__.text_len, top_ratio: 0.5, reverse: true}"
  [ "$op" = frequency_specified_field_selector ] && process="  - $op: {field_key: meta.package, top_ratio: 0.5}"
  for run in free capped; do
    cat > "$WORK/budget_${op}_${run}.yaml" <<YAML
dataset_path: $input
export_path: $WORK/out/budget_${op}_${run}.jsonl
np: 2
process:
$process
YAML
  done
  measure "${op} ${rows} default budget" "$BIN/dj-run" --config "$WORK/budget_${op}_free.yaml"
  name="${op} ${rows} ${budget} MB budget in ${cap} MB"
  in_cgroup "$cap" measure "$name" env DJ_LOG=info "$BIN/dj-run" \
    --config "$WORK/budget_${op}_capped.yaml" --memory_budget_mb "$budget"
  grep -h "memory budget" "$WORK/$name.stderr" | sed 's/^.*INFO /  /' | head -2 || true
  if cmp -s "$WORK/out/budget_${op}_free.jsonl" "$WORK/out/budget_${op}_capped.jsonl"; then
    echo "  exports byte-identical ($(wc -l < "$WORK/out/budget_${op}_free.jsonl") rows kept)"
  else
    echo "  EXPORTS DIFFER"; exit 1
  fi
  rm -f "$WORK/out/budget_${op}_"*.jsonl
done

#!/usr/bin/env bash
# The dashboard at 100 partitions x 20 ops: runs such a job (20,000 short rows, a checkpoint after
# every op), serves its work directory with `dj-job serve`, and reports the job API's payload and
# response time (median of 10), gzipped too, and what a poll and an update of the page cost in
# headless Chromium (driven by the ignored test dashboard_at_scale).
# Usage: benches/dashboard.sh
source "$(dirname "$0")/common.sh"
build
dir=$WORK/dashboard
rm -rf "$dir" && mkdir -p "$dir"
python3 - "$dir/in.jsonl" <<'PY'
import json, sys
words = "data juicer fusion river stone quiet morning signal paper window".split()
with open(sys.argv[1], "w") as f:
    for i in range(20000):
        text = " ".join(words[(i * 7 + k) % len(words)] for k in range(5 + i % 20))
        f.write(json.dumps({"text": f"{text} {i}"}) + "\n")
PY
ops=""
for i in $(seq 10); do
  ops+="  - whitespace_normalization_mapper:
  - text_length_filter: {min_len: $i}
"
done
cat > "$dir/recipe.yaml" <<YAML
dataset_path: $dir/in.jsonl
export_path: $dir/out.jsonl
work_dir: $dir/jobs
np: 2
executor_type: ray_partitioned
partition: {mode: manual, num_of_partitions: 100}
checkpoint: {enabled: true, strategy: every_op}
process:
$ops
YAML
DJ_PROGRESS=0 "$BIN/dj-run" --config "$dir/recipe.yaml" --job_id big > /dev/null
"$BIN/dj-job" --work_dir "$dir/jobs" serve --bind 127.0.0.1:0 > "$dir/serve.log" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do grep -q listening "$dir/serve.log" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$dir/serve.log")
bytes=$(curl -s "${url}api/jobs/big" | wc -c)
times=$(for _ in $(seq 10); do curl -s -o /dev/null -w '%{time_total}\n' "${url}api/jobs/big"; done | sort -n)
median=$(echo "$times" | sed -n 5p)
echo "job API at 100 partitions x 20 ops: $((bytes / 1024)) KB, median $(python3 -c "print(round($median * 1000))") ms a call"
events=$(curl -s "${url}api/jobs/big/events?since=0" | wc -c)
echo "first events page (500 events): $((events / 1024)) KB"
gz=$(curl -s -H 'Accept-Encoding: gzip' "${url}api/jobs/big" | wc -c)
echo "  gzipped as served to a browser: $((gz / 1024)) KB"
(cd "$ROOT" && DJ_DASHBOARD_WORK=$dir/jobs DJ_JOB_BIN=$BIN/dj-job cargo test --quiet --test integration dashboard_at_scale \
  -- --ignored --nocapture 2>/dev/null | grep "page at")

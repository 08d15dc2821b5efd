# Shared helpers for the benchmark scripts (sourced).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROFILE=${DJ_BENCH_PROFILE:-bench-fast}
BIN=$ROOT/target/$PROFILE
WORK=${DJ_BENCH_DIR:-$ROOT/target/bench-work}
mkdir -p "$WORK"

# The 10-op cleaning recipe's process list (mappers, filters, exact dedup): vs_data_juicer.sh's
# `cleaning`, and model_recipes.sh's memory yardstick.
CLEANING_PROCESS='  - whitespace_normalization_mapper:
  - punctuation_normalization_mapper:
  - clean_email_mapper:
  - clean_links_mapper:
  - text_length_filter:
      min_len: 100
  - alphanumeric_filter:
      min_ratio: 0.5
  - special_characters_filter:
      max_ratio: 0.3
  - character_repetition_filter:
      rep_len: 10
      max_ratio: 0.4
  - word_repetition_filter:
      rep_len: 10
      max_ratio: 0.4
  - document_deduplicator:'

# bench_corpus ROWS: the input of DJ_BENCH_CORPUS, made once: short (gen_apt_corpus.py), long
# (gen_long_corpus.py, ~16 KB on average) or longer (~48 KB on average, up to 2 MB)
bench_corpus() {
  local rows=$1 input gen args=""
  case ${DJ_BENCH_CORPUS:-short} in
    short) input=$WORK/apt_${rows}.jsonl; gen=gen_apt_corpus.py ;;
    long) input=$WORK/long_${rows}.jsonl; gen=gen_long_corpus.py ;;
    longer) input=$WORK/longer_${rows}.jsonl; gen=gen_long_corpus.py; args="24000 2000000" ;;
    *) echo "DJ_BENCH_CORPUS must be short, long or longer, not '$DJ_BENCH_CORPUS'" >&2; return 2 ;;
  esac
  # shellcheck disable=SC2086
  [ -s "$input" ] || python3 "$ROOT/benches/$gen" "$input" "$rows" $args >&2
  echo "$input"
}

build() {
  [ -n "${DJ_BENCH_NOBUILD:-}" ] && return 0
  (cd "$ROOT" && cargo build --profile "$PROFILE" --bins >&2)
}

# paragraph_corpus ROWS: $WORK/para_ROWS.jsonl, made once: gen_apt_corpus.py's ROWS documents
# cut to each description's first paragraph (paragraph-sized documents)
paragraph_corpus() {
  local apt=$WORK/apt_$1.jsonl input=$WORK/para_$1.jsonl
  if [ ! -s "$input" ]; then
    [ -s "$apt" ] || python3 "$ROOT/benches/gen_apt_corpus.py" "$apt" "$1" >&2
    python3 - "$apt" "$input" <<'PY'
import json, sys
with open(sys.argv[1]) as f, open(sys.argv[2], "w") as out:
    for line in f:
        r = json.loads(line)
        paras = [p for p in r["text"].split("\n\n") if p.strip()]
        r["text"] = paras[0] if paras else r["text"]
        out.write(json.dumps(r, ensure_ascii=False) + "\n")
PY
  fi
  echo "$input"
}

# data FILE SIZE_MB: generate once
data() {
  [ -s "$1" ] || python3 "$ROOT/benches/gen_data.py" "$1" "$2" >&2
}

# measure NAME CMD...: runs CMD under /usr/bin/time, prints
# "NAME SECONDS s PEAK_RSS MB MINOR_FAULTS minor faults"
measure() {
  local name=$1; shift
  local log; log=$(mktemp)
  /usr/bin/time -f "%e %M %R" -o "$log" "$@" > "$WORK/$name.stdout" 2> "$WORK/$name.stderr" || { cat "$WORK/$name.stderr" >&2; return 1; }
  read -r secs rss_kb faults < "$log"; rm -f "$log"
  printf '%-40s %8.2f s %8.0f MB %10d minor faults\n' "$name" "$secs" "$((rss_kb / 1024))" "$faults"
}

# measure_runs N NAME CMD...: `measure` N times (syncing before each), one line per run
measure_runs() {
  local n=$1; shift
  for _ in $(seq "$n"); do sync; measure "$@"; done
}

# median_of LINES: the `measure` line of the median wall time (the lower middle one for even N)
median_of() {
  python3 -c '
import re, sys
lines = [l for l in sys.stdin.read().splitlines() if l.strip()]
lines.sort(key=lambda l: float(re.search(r" ([0-9.]+) s +[0-9]+ MB", l).group(1)))
print(lines[(len(lines) - 1) // 2])' <<< "$1"
}

# seconds_of LINE: the wall time of a `measure` line
seconds_of() {
  sed -E 's/.* ([0-9.]+) s +[0-9]+ MB.*/\1/' <<< "$1"
}

# against_reference REF LABEL DJ_YAML PY_YAML DJ_EXPORT PY_EXPORT: the same recipe through
# dj-fusion (the median of DJ_BENCH_RUNS runs, default 3: they take seconds and vary by 10-20% on
# this VM) and through Data-Juicer (REF, one run: it takes minutes), dj-fusion first; prints the
# runs, the rows out, the speed-up and whether the two exports are byte-identical.
against_reference() {
  local ref=$1 label=$2 dj_yaml=$3 py_yaml=$4 dj_out=$5 py_out=$6 runs a b ta tb
  runs=$(measure_runs "${DJ_BENCH_RUNS:-3}" "dj-fusion $label" "$BIN/dj-run" --config "$dj_yaml")
  a=$(median_of "$runs")
  sync
  b=$(measure "data-juicer $label" "$ref" "$py_yaml")
  rm -rf "${HF_DATASETS_CACHE:?}"
  echo "$runs" | sed 's/^/  run: /'
  echo "$a (median)"; echo "$b"
  ta=$(seconds_of "$a"); tb=$(seconds_of "$b")
  echo "  rows out: $(wc -l < "$dj_out")  speed-up: $(python3 -c "print(f'{$tb/$ta:.1f}x')")"
  if cmp -s "$dj_out" "$py_out"; then
    echo "  exports identical"
  else
    echo "  EXPORTS DIFFER"
  fi
}

# in_cgroup LIMIT_MB CMD...: runs CMD (a command or a function such as `measure`) in a subshell
# moved into a fresh cgroup-v1 memory group limited to LIMIT_MB (as root), which the kernel
# OOM-kills past it; then prints the group's peak usage and OOM kills. Returns CMD's status.
in_cgroup() {
  local limit=$1; shift
  local cg=/sys/fs/cgroup/memory/dj-bench-$$
  mkdir -p "$cg"
  echo $((limit * 1024 * 1024)) > "$cg/memory.limit_in_bytes"
  # No swap escape: limit memory+swap too where the kernel accounts it.
  [ -w "$cg/memory.memsw.limit_in_bytes" ] && echo $((limit * 1024 * 1024)) > "$cg/memory.memsw.limit_in_bytes"
  local status=0
  ( echo "$BASHPID" > "$cg/tasks"; "$@" ) || status=$?
  local peak kills
  peak=$(( $(cat "$cg/memory.max_usage_in_bytes") / 1024 / 1024 ))
  kills=$(awk '/oom_kill /{print $2}' "$cg/memory.oom_control" 2>/dev/null || echo "?")
  echo "  cgroup ${limit} MB: peak usage ${peak} MB (page cache included), OOM kills ${kills:-0}"
  rmdir "$cg" 2>/dev/null || true
  return $status
}

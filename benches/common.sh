# Shared helpers for the benchmark scripts (sourced).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROFILE=${DJ_BENCH_PROFILE:-bench-fast}
BIN=$ROOT/target/$PROFILE
WORK=${DJ_BENCH_DIR:-$ROOT/target/bench-work}
mkdir -p "$WORK"

build() {
  [ -n "${DJ_BENCH_NOBUILD:-}" ] && return 0
  (cd "$ROOT" && cargo build --profile "$PROFILE" --bins >&2)
}

# data FILE SIZE_MB: generate once
data() {
  [ -s "$1" ] || python3 "$ROOT/benches/gen_data.py" "$1" "$2" >&2
}

# measure NAME CMD...: runs CMD under /usr/bin/time, prints "NAME seconds peak_rss_mb"
measure() {
  local name=$1; shift
  local log; log=$(mktemp)
  /usr/bin/time -f "%e %M" -o "$log" "$@" > "$WORK/$name.stdout" 2> "$WORK/$name.stderr" || { cat "$WORK/$name.stderr" >&2; return 1; }
  read -r secs rss_kb < "$log"; rm -f "$log"
  printf '%-40s %8.2f s %8.0f MB\n' "$name" "$secs" "$((rss_kb / 1024))"
}

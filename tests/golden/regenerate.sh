#!/usr/bin/env bash
# regenerate.sh — rebuild the differential-testing goldens from the real Python Data-Juicer.
#
#   cd /work/main && tests/golden/regenerate.sh [RECIPE_NAME ...]
#
# * Regenerates tests/golden/corpus.jsonl with make_corpus.py (deterministic).
# * Runs every tests/golden/recipes/*.yaml (or only the named ones) through
#   /work/shared/tools/dj-reference (py-data-juicer 1.6.1, override with DJ_REFERENCE_VERSION).
#   Each recipe exports to /tmp/dj-golden/<name>/<name>.jsonl; that scratch dir is wiped first
#   so no stale work_dir / job state can leak into a run.
# * Copies the export byte for byte to tests/golden/expected/<name>.jsonl and, if Data-Juicer
#   wrote one, the stats file to tests/golden/expected/<name>_stats.jsonl (a stale stats golden
#   is removed if the run no longer writes one).
# * Checks: dj-process exit code 0, export exists and is non-empty, no shard files were written,
#   every line is valid JSON. Prints "name: in -> out" row counts. Full logs: /tmp/dj-golden/<name>.log
# * Finally runs verify_goldens.py (independent model of the ops + output format) with the
#   dj-reference venv's python and reports whether every golden is re-derived byte for byte.
# Exits non-zero if any recipe fails or verification finds a mismatch.
set -euo pipefail
cd "$(dirname "$0")/../.."          # /work/main: recipes use paths relative to it
DJ_REF=${DJ_REF:-/work/shared/tools/dj-reference}
# The fixture models (data/models: fastText, SentencePiece, KenLM, a Hugging Face tokenizer) serve as
# Data-Juicer's model cache and as the hub cache; they must be in place (data/models/make_models.sh).
export DATA_JUICER_MODELS_CACHE=$PWD/data/models HF_HUB_CACHE=$PWD/data/models
SCRATCH=/tmp/dj-golden
GOLD=tests/golden
PY=${PYTHON:-python3}

"$PY" "$GOLD/make_corpus.py"
in_rows=$(wc -l < "$GOLD/corpus.jsonl")
mkdir -p "$GOLD/expected" "$SCRATCH"

if [ $# -gt 0 ]; then names=("$@"); else
  names=(); for f in "$GOLD"/recipes/*.yaml; do n=$(basename "$f" .yaml); names+=("$n"); done
fi

fail=0
for name in "${names[@]}"; do
  recipe="$GOLD/recipes/$name.yaml"
  out_dir="$SCRATCH/$name"
  rm -rf "$out_dir"; mkdir -p "$out_dir"
  if ! "$DJ_REF" "$recipe" > "$SCRATCH/$name.log" 2>&1; then
    echo "FAIL $name: dj-process exited non-zero (see $SCRATCH/$name.log)"; fail=1; continue
  fi
  export_file="$out_dir/$name.jsonl"
  stats_file="$out_dir/${name}_stats.jsonl"
  if [ ! -s "$export_file" ]; then
    echo "FAIL $name: export $export_file missing or empty"; fail=1; continue
  fi
  if ls "$out_dir"/"$name"-*-of-*.jsonl >/dev/null 2>&1; then
    echo "FAIL $name: unexpected shard files"; fail=1; continue
  fi
  if ! "$PY" -c 'import json,sys; [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]' "$export_file"; then
    echo "FAIL $name: export is not valid JSON lines"; fail=1; continue
  fi
  if grep -q " ERROR " "$SCRATCH/$name.log"; then
    echo "WARN $name: Data-Juicer logged errors (see $SCRATCH/$name.log)"
  fi
  cp "$export_file" "$GOLD/expected/$name.jsonl"
  if [ -f "$stats_file" ]; then
    cp "$stats_file" "$GOLD/expected/${name}_stats.jsonl"
    stats_note=" (+ stats file)"
  else
    rm -f "$GOLD/expected/${name}_stats.jsonl"; stats_note=""
  fi
  echo "$name: $in_rows -> $(wc -l < "$export_file")$stats_note"
done

VENV_PY=${DJ_REFERENCE_HOME:-$HOME/.cache/dj-reference}/venv-${DJ_REFERENCE_VERSION:-1.6.1}/bin/python
if [ -x "$VENV_PY" ]; then
  # verify_goldens.py models the first ten ops on corpus.jsonl only; later goldens are checked by
  # the Rust golden test.
  if (cd /tmp && "$VENV_PY" "$OLDPWD/$GOLD/verify_goldens.py" > "$SCRATCH/verify.log" 2>&1); then
    echo "verify_goldens.py: all goldens re-derived byte for byte"
  else
    echo "verify_goldens.py: MISMATCH (see $SCRATCH/verify.log)"; fail=1
  fi
fi
exit $fail

#!/usr/bin/env bash
# dj-fusion against the real Python Data-Juicer (../shared/tools/dj-reference) on the same recipe
# and data, in one run: wall time, peak RSS, the throughput ratio, and a byte comparison of the
# two exports. dj-fusion's figure is the median of DJ_BENCH_RUNS runs (default 3), Data-Juicer's
# one run. Data: ROWS documents of real text from Debian's package descriptions, short
# (gen_apt_corpus.py, ~0.5 KB each; needs `apt-get update` once) or, with DJ_BENCH_CORPUS=long, long
# (gen_long_corpus.py: 1-500 KB each, skewed, ~16 KB on average), or with DJ_BENCH_CORPUS=longer,
# longer still (1 KB-2 MB, ~48 KB on average, some over 1 MB). Recipes: cheap mappers,
# filter-heavy, MinHash dedup, exact dedup, and a 10-op cleaning recipe (mappers, filters, exact
# dedup). Both sides run with `np: 2` on this 2-core machine.
# Usage: [DJ_BENCH_CORPUS=short|long|longer] [DJ_BENCH_RUNS=N] benches/vs_data_juicer.sh [ROWS] [RECIPE...]
#        (default 100000 rows; all recipes)
source "$(dirname "$0")/common.sh"
build
rows=${1:-100000}; shift || true
recipes=${*:-mappers filters minhash dedup cleaning}
corpus=${DJ_BENCH_CORPUS:-short}
input=$(bench_corpus "$rows")
echo "corpus: $input ($(du -m "$input" | cut -f1) MB)"
ref=${DJ_REFERENCE:-$ROOT/../shared/tools/dj-reference}
# First use installs the reference venv; Data-Juicer 1.6.1 imports aiohttp without declaring it
# (the version its uv.lock pins), and the MinHash op needs scipy.
"$ref" >/dev/null 2>&1 || true
venv=${DJ_REFERENCE_HOME:-$HOME/.cache/dj-reference}/venv-${DJ_REFERENCE_VERSION:-1.6.1}
"$venv/bin/python" -c 'import aiohttp, scipy' 2>/dev/null || "$venv/bin/pip" install -q aiohttp==3.12.13 scipy >&2
mkdir -p "$WORK/out"
# Data-Juicer caches every intermediate dataset (gigabytes at 1M rows): keep it here, remove it
# after each recipe.
export HF_DATASETS_CACHE=$WORK/hf-datasets-cache
declare -A PROCESS
PROCESS[mappers]='  - whitespace_normalization_mapper:
  - punctuation_normalization_mapper:
  - clean_email_mapper:
  - clean_links_mapper:
  - clean_ip_mapper:
  - remove_long_words_mapper:'
PROCESS[filters]='  - text_length_filter:
      min_len: 50
  - words_num_filter:
      min_num: 10
  - alphanumeric_filter:
  - special_characters_filter:
  - character_repetition_filter:
  - word_repetition_filter:
  - average_line_length_filter:
  - maximum_line_length_filter:
      max_len: 1000'
PROCESS[minhash]='  - document_minhash_deduplicator:'
PROCESS[dedup]='  - whitespace_normalization_mapper:
  - document_deduplicator:
      lowercase: true
      ignore_non_character: true'
PROCESS[cleaning]=$CLEANING_PROCESS
for name in $recipes; do
  for side in dj py; do
    printf 'project_name: vs_%s\ndataset_path: %s\nexport_path: %s\nnp: 2\nopen_tracer: false\nprocess:\n%s\n' \
      "$name" "$input" "$WORK/out/vs_${name}_${corpus}${rows}_${side}.jsonl" "${PROCESS[$name]}" > "$WORK/vs_${name}_${side}.yaml"
  done
  # Both sides read the input from the page cache and start with no earlier run's writes in
  # flight (dj-fusion runs first).
  cat "$input" > /dev/null
  against_reference "$ref" "$name ${rows} docs" "$WORK/vs_${name}_dj.yaml" "$WORK/vs_${name}_py.yaml" \
    "$WORK/out/vs_${name}_${corpus}${rows}_dj.jsonl" "$WORK/out/vs_${name}_${corpus}${rows}_py.jsonl"
done

#!/usr/bin/env bash
# Data-Juicer's published C4 refinement recipe (configs/redpajama-c4-refine.yaml: 5 mappers, 9
# filters with fastText language ID, SentencePiece + KenLM perplexity and SentencePiece-tokenized
# word filters, SimHash dedup) on dj-fusion and on the real Python Data-Juicer, same data, same
# fixture models (data/models), both `np: 2`, in one run: wall time, peak RSS, the ratio, and a byte
# comparison of the exports.
# Data: ROWS documents of Debian package descriptions (gen_apt_corpus.py, ~0.7 KB each), or with
# DJ_BENCH_CORPUS=long|longer long documents (gen_long_corpus.py: ~16 KB / ~48 KB on average).
# The cleaning recipe's peak RSS is measured on the same data, for the memory comparison.
# Usage: [DJ_BENCH_CORPUS=short|long|longer] benches/model_recipes.sh [ROWS]   (default 50000)
source "$(dirname "$0")/common.sh"
build
rows=${1:-50000}
corpus=${DJ_BENCH_CORPUS:-short}
input=$(bench_corpus "$rows")
echo "corpus: $input ($(du -m "$input" | cut -f1) MB)"
ref=${DJ_REFERENCE:-$ROOT/../shared/tools/dj-reference}
"$ref" >/dev/null 2>&1 || true
venv=${DJ_REFERENCE_HOME:-$HOME/.cache/dj-reference}/venv-${DJ_REFERENCE_VERSION:-1.6.1}
# The model ops' Python modules, and what Data-Juicer 1.6.1 imports without declaring.
"$venv/bin/python" -c 'import aiohttp, scipy, fasttext, sentencepiece, kenlm' 2>/dev/null ||
  "$venv/bin/pip" install -q aiohttp==3.12.13 scipy fasttext-predict sentencepiece kenlm >&2
export DATA_JUICER_MODELS_CACHE=$ROOT/data/models HF_HUB_CACHE=$ROOT/data/models
export HF_DATASETS_CACHE=$WORK/hf-datasets-cache
mkdir -p "$WORK/out"
name=c4
for side in dj py; do
  sed -e "s#^dataset_path: .*#dataset_path: '$input'#" \
      -e "s#^export_path: .*#export_path: '$WORK/out/${name}_${rows}_${side}.jsonl'#" \
      -e "s#^np: .*#np: 2#" -e "s#^open_tracer: .*#open_tracer: false#" \
      "$ROOT/configs/redpajama-c4-refine.yaml" > "$WORK/${name}_${side}.yaml"
done
# The memory yardstick: the cleaning recipe (no models) on the same data, dj-fusion only.
printf 'project_name: clean\ndataset_path: %s\nexport_path: %s\nnp: 2\nprocess:\n%s\n' \
  "$input" "$WORK/out/clean_${corpus}${rows}_dj.jsonl" "$CLEANING_PROCESS" > "$WORK/clean_dj.yaml"
cat "$input" > /dev/null
runs=$(measure_runs "${DJ_BENCH_RUNS:-3}" "dj-fusion c4 recipe ${rows} docs" "$BIN/dj-run" --config "$WORK/${name}_dj.yaml")
a=$(median_of "$runs")
clean=$(median_of "$(measure_runs "${DJ_BENCH_RUNS:-3}" "dj-fusion cleaning ${rows} docs" "$BIN/dj-run" --config "$WORK/clean_dj.yaml")")
sync
b=$(measure "data-juicer c4 recipe ${rows} docs" "$ref" "$WORK/${name}_py.yaml")
rm -rf "$HF_DATASETS_CACHE"
echo "$runs" | sed 's/^/  run: /'
echo "$a"; echo "$b"; echo "$clean"
ta=$(seconds_of "$a"); tb=$(seconds_of "$b")
rss() { sed -E 's/.* s +([0-9]+) MB.*/\1/' <<< "$1"; }
echo "  rows out: $(wc -l < "$WORK/out/${name}_${rows}_dj.jsonl")  speed-up: $(python3 -c "print(f'{$tb/$ta:.1f}x')")  peak RSS against the cleaning recipe: $(python3 -c "print(f'{$(rss "$a")/$(rss "$clean"):.2f}x')")"
if cmp -s "$WORK/out/${name}_${rows}_dj.jsonl" "$WORK/out/${name}_${rows}_py.jsonl"; then
  echo "  exports identical"
else
  echo "  EXPORTS DIFFER"
fi

#!/usr/bin/env bash
# regenerate_published.sh — goldens of Data-Juicer's published refinement recipes (configs/:
# redpajama-c4-refine, pile-philpaper-refine, stack-code-refine, copied verbatim but for paths) on
# the shipped sample data (data/make_samples.py) with the fixture models (data/models) and the
# fixture flagged-words list (data/assets), from the real py-data-juicer 1.6.1:
#
#   cd /work/main && tests/golden/regenerate_published.sh
#
# np is lowered to 2 for the reference run (the recipes say 50); results do not depend on it.
set -euo pipefail
cd "$(dirname "$0")/../.."
DJ_REF=${DJ_REF:-/work/shared/tools/dj-reference}
export DATA_JUICER_MODELS_CACHE=$PWD/data/models HF_HUB_CACHE=$PWD/data/models
export DATA_JUICER_ASSETS_CACHE=$PWD/data/assets
for name in redpajama-c4-refine pile-philpaper-refine stack-code-refine; do
  out=/tmp/dj-published/$name
  rm -rf "$out"; mkdir -p "$out"
  "$DJ_REF" "configs/$name.yaml" --np 2 --export_path "$out/$name.jsonl" > "$out.log" 2>&1
  cp "$out/$name.jsonl" "tests/golden/published/$name.jsonl"
  cp "$out/${name}_stats.jsonl" "tests/golden/published/${name}_stats.jsonl"
  echo "$name: $(wc -l < "$out/$name.jsonl") rows kept"
done

"""Writes with_stats.jsonl: the first 40 rows of ../corpus.jsonl carrying stats already (a
deliberately wrong `text_len`, a stat no filter computes and a string stat), as an export with
`keep_stats_in_res_ds` or a checkpoint would. Data-Juicer's analyzer reads such stats instead of
recomputing them."""
import json
import os

here = os.path.dirname(os.path.abspath(__file__))
rows = [json.loads(l) for l in open(os.path.join(here, "..", "corpus.jsonl"), encoding="utf-8")]
with open(os.path.join(here, "with_stats.jsonl"), "w", encoding="utf-8") as out:
    for i, r in enumerate(rows[:40]):
        r["__dj__stats__"] = {"text_len": 1000 + i, "custom_score": i * 0.25, "lang": ["en", "fr", "en", "de"][i % 4]}
        out.write(json.dumps(r, ensure_ascii=False) + "\n")

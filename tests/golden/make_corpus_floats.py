"""Writes corpus_floats.jsonl: float fields where Data-Juicer's loader keeps them exact (a top-level
column, an object with the same keys in every row, a list of numbers) and where it keeps them as
generic JSON with ujson-rounded floats (an object whose keys vary, a list of such objects).

Deterministic: `python3 tests/golden/make_corpus_floats.py`.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
FLOATS = [0.7, 1 / 3, 0.1 + 0.2, 1e-7, 123456.789, 2.5, 0.3, 41 / 241]
TEXTS = [
    "Plain English text about data cleaning, long enough to keep.",
    "Short.",
    "Numbers 12345 and symbols !!! ### mixed in here.",
    "Another ordinary sentence for the float corpus.",
]

with open(os.path.join(HERE, "corpus_floats.jsonl"), "w", encoding="utf-8") as out:
    for i in range(16):
        f = FLOATS[i % len(FLOATS)]
        row = {
            "text": TEXTS[i % len(TEXTS)] + f" (row {i})",
            "score": None if i == 5 else f,
            "meta": {"x": FLOATS[(i + 1) % len(FLOATS)], "n": None if i % 3 == 0 else i, "v": [f, 0.7]},
            "extra": {"a": f} if i % 2 else {"a": 0.7, "b": FLOATS[(i + 3) % len(FLOATS)]},
            # (An explicit null inside a generic object would stay in Data-Juicer's export;
            # dj-fusion cannot tell it from an absent key, so the corpus has none.)
            "items": [{"p": f}] if i % 4 else [{"q": 0.1}, {"p": 0.7, "r": 2}],
        }
        out.write(json.dumps(row, ensure_ascii=False) + "\n")

"""Writes corpus_fields.jsonl (field filters) and corpus_images.jsonl + images/ (image filters).

Deterministic: no randomness. Run from anywhere: `python3 tests/golden/make_corpus_fields.py`
(the image part needs Pillow; the dj-reference venv has it).
"""
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

LANGS = ["en", "zh", "de", "fr", "en", "ja", None, "en"]
TEXTS = [
    "The quick brown fox jumps over the lazy dog.",
    "数据清洗是训练大模型的重要步骤。",
    "Die Datenqualität entscheidet über das Ergebnis.",
    "La qualité des données compte beaucoup.",
    "Short one.",
    "日本語のテキストです。",
    "No language tag on this row.",
    "Another English sample with a score.",
]


def fields_rows():
    rows = []
    for i in range(40):
        lang = LANGS[i % len(LANGS)]
        score = [0.0, 0.25, 1.5, 3.14159265358979, -2.0, 10.0, None, 0.999999999999][i % 8]
        score_str = ["3.5", " 7 ", "1e3", "abc", "", "1_000", "-0.5", "inf"][i % 8]
        tags = [["a"], ["a", "b"], [], ["c"], ["b", "a"], ["a", "z"], ["b"], ["a", "a"]][i % 8]
        meta = {
            "lang": lang,
            "id": i,
            "score": score,
            "score_str": score_str,
            "tags": tags,
            "info": {"level": i % 4, "ok": i % 3 == 0},
        }
        # Absent rather than explicitly null: an explicit null inside an object is exported by
        # Data-Juicer but not by dj-fusion (README, "Deviations").
        meta = {k: v for k, v in meta.items() if v is not None}
        rows.append({"text": f"{TEXTS[i % len(TEXTS)]} (row {i})", "meta": meta, "quality": i % 5})
    return rows


def png(path, w, h):
    """A w x h grey PNG written by hand (no Pillow needed for the corpus itself)."""
    raw = b"".join(b"\x00" + bytes([(x * 7 + y * 3) % 256 for x in range(w)]) for y in range(h))

    def chunk(tag, data):
        c = tag + data
        return struct.pack(">I", len(data)) + c + struct.pack(">I", zlib.crc32(c) & 0xFFFFFFFF)

    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0))
    data += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    with open(path, "wb") as f:
        f.write(data)


IMAGES = {
    "square_64.png": (64, 64),
    "wide_300x50.png": (300, 50),
    "tall_40x200.png": (40, 200),
    "small_8x8.png": (8, 8),
    "big_640x480.png": (640, 480),
    "ratio3_90x30.png": (90, 30),
}


def image_rows():
    groups = [
        ["square_64.png"],
        ["wide_300x50.png"],
        ["tall_40x200.png", "square_64.png"],
        ["small_8x8.png"],
        ["big_640x480.png", "wide_300x50.png"],
        [],
        ["ratio3_90x30.png"],
        ["square_64.png", "small_8x8.png", "big_640x480.png"],
        ["images/../images/tall_40x200.png"],
        None,
    ]
    rows = []
    for i, g in enumerate(groups * 2):
        paths = None if g is None else [p if p.startswith("images/") else "images/" + p for p in g]
        row = {"text": f"A sample with images, number {i}.", "meta": {"id": i}}
        if paths is not None:
            row["images"] = paths
        rows.append(row)
    return rows


def suffix_rows():
    """Rows as Data-Juicer's loaders tag them with their file suffix (`__dj__suffix__`)."""
    suffixes = [".jsonl", ".txt", ".md", ".json", ".jsonl.zst", ".TXT", ".txt"]
    return [
        {"text": f"Row {i} came from a {s} file.", "__dj__suffix__": s, "meta": {"id": i}}
        for i, s in enumerate(suffixes * 3)
    ]


def write(name, rows):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    write("corpus_fields.jsonl", fields_rows())
    os.makedirs(os.path.join(HERE, "images"), exist_ok=True)
    for name, (w, h) in IMAGES.items():
        png(os.path.join(HERE, "images", name), w, h)
    write("corpus_images.jsonl", image_rows())
    write("corpus_suffix.jsonl", suffix_rows())

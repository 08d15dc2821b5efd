#!/usr/bin/env python3
"""Generate tests/golden/corpus_filters2.jsonl deterministically (no randomness).

Usage (from /work/main):  python3 tests/golden/make_corpus_filters2.py
Extra inputs for the line-length and word-level filters (average_line_length_filter,
maximum_line_length_filter, word_repetition_filter): multi-line texts with every kind of
Python line boundary, lines at the 10-character boundaries, averages that are not exact
decimals, word n-gram repetition at several levels (case and punctuation variants that the
refinement folds together), plus empty / whitespace-only rows. Rows are
{"text": ..., "meta": {"source": ..., "id": N}}, `id` being the 0-based line number.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_filters2.jsonl")

rows = []  # (source, text)


def add(source, text):
    rows.append((source, text))


# ---------------------------------------------------------------- lines
add("lines", "")
add("lines", "\n")
add("lines", "\n\n\n")
add("lines", "   ")
add("lines", "\r\n\r\n")
add("lines", "single line without any break, about fifty chars.")
add("lines", "line one\nline two\nline three\n")
add("lines", "abcdefghi\nabcdefghi\n")                 # avg exactly 10.0, max 9
add("lines", "abcdefghij\nabcdefghij")                 # avg 10.5, max exactly 10
add("lines", "abcdefghi\nabcdefgh")                    # avg 9.0, max 9
add("lines", "abcdefghijklmnopqrstuvwxyz\nab\nc")      # avg 31/3
add("lines", "short\nrows\nonly\nhere\n")
add("lines", "Windows\r\nline\r\nendings\r\nhere")
add("lines", "old\rmac\rstyle\rbreaks")
add("lines", "mixed\r\r\nbreaks\n\rhere")
add("lines", "vertical\x0btab\x0cform feed\x1cfile\x1dgroup\x1erecord\x1funit sep")
add("lines", "next line\x85char and\u2028line sep and\u2029para sep")
add("lines", "trailing blank lines\n\n\n\n\n")
add("lines", "\n\n\nleading blank lines")
add("lines", "数据处理是一个测试。\n第二行更长一些，包含更多的汉字。\n短")
add("lines", "emoji 😀😀😀\n👍🏽 skin tone\n🇨🇳🇺🇸 flags")
add("lines", "e\u0301\u0301\u0301 combining\nmarks count as code points")
add("lines", "tab\tseparated\tcolumns\nand\tmore\tcolumns")
add("lines", "def f(x):\n    return x * 2\n\n\nclass A:\n    pass\n")
add("lines", "x" * 80 + "\n" + "y" * 10)
add("lines", "x" * 81 + "\n" + "y" * 10)
add("lines", "\n".join("z" * (i % 13) for i in range(200)))
add("lines", "a long line " * 400 + "\nthen short")
add("lines", "| col a | col b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |")
add("lines", "\u00a0\u3000\n\u200b\n")
add("lines", "ＦＵＬＬＷＩＤＴＨ　ｔｅｘｔ\nｌｉｎｅ")

# ---------------------------------------------------------------- word repetition
base = "the quick brown fox jumps over the lazy dog near the river bank"
add("rep", base)
add("rep", (base + " ") * 2)
add("rep", (base + " ") * 5)
add("rep", base + " " + base.upper() + " " + base.title())
add("rep", "Buy now! BUY NOW!! buy now... (Buy) [NOW] " * 6)
add("rep", "one two three four five six seven eight nine ten one two three four five six seven eight nine ten")
add("rep", "one two three four five six seven eight nine ten one two three four five six seven eight nine ten eleven")
add("rep", " ".join(["spam"] * 9))
add("rep", " ".join(["spam"] * 10))
add("rep", " ".join(["spam"] * 11))
add("rep", "a a b c")
add("rep", "a b a b a b a b a b a b a b a b a b a b a b c")
add("rep", "1 2 3 4 5 6 7 8 9 10 11 12 1 2 3 4 5 6 7 8 9 10 11 12")   # numbers strip to nothing
add("rep", "word\tword\nword word\u00a0word word")
add("rep", "Click here to subscribe. Click here to subscribe. Click here to subscribe. Read more.")
add("rep", "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris "
    "nisi ut aliquip ex ea commodo consequat. Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed "
    "do eiusmod tempor incididunt ut labore et dolore magna aliqua.")
add("rep", "ΣΑΣ σας Σας ΣΑΣ σας Σας ΣΑΣ σας Σας ΣΑΣ σας Σας")
add("rep", "İstanbul istanbul ISTANBUL İstanbul istanbul ISTANBUL İstanbul istanbul ISTANBUL istanbul istanbul")
add("rep", "中文 中文 中文 中文 中文 中文 中文 中文 中文 中文 中文 中文")
add("rep", "中文中文中文中文中文中文中文中文中文中文中文中文中文中文")
add("rep", "😀 😀 😀 😀 😀 😀 😀 😀 😀 😀 😀 😀")
add("rep", "home | about | contact | home | about | contact | home | about | contact | home | about | contact")
add("rep", "Copyright 2024 All rights reserved. Privacy Policy. Terms of Use. Copyright 2024 All rights reserved. "
    "Privacy Policy. Terms of Use. Copyright 2024 All rights reserved.")
x, words = 1, []
for _ in range(3000):
    x = (x * 1103515245 + 12345) % (1 << 31)
    words.append(f"w{(x >> 16) % 40}x")
add("rep", " ".join(words))
add("rep", " ".join(f"item{i % 25}z" for i in range(400)))

# ---------------------------------------------------------------- prose
add("prose", "The committee met on Monday to discuss the budget. After a long debate, the members agreed to "
    "postpone the decision until the next meeting, which will take place in two weeks.\nMinutes were "
    "taken by the secretary and circulated to all members on Wednesday.")
add("prose", "Photosynthesis converts light energy into chemical energy.\nIt takes place in the chloroplasts.\n"
    "Oxygen is released as a by-product.\nMost of the oxygen in the atmosphere comes from this process.")
add("prose", "In 1969, astronauts landed on the Moon for the first time. It was a historic moment, and millions "
    "of people watched the broadcast live on television around the world.")
add("prose", "I think that it is what it is, and that is all that there is to it, is it not?")

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    for i, (source, text) in enumerate(rows):
        f.write(json.dumps({"text": text, "meta": {"source": source, "id": i}}, ensure_ascii=False) + "\n")

print(f"wrote {len(rows)} rows to {OUT}")

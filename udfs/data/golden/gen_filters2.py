"""Expected values (Data-Juicer 1.6.1) for word_repetition_filter (src/filter/words.rs) and the
line-length filters (src/filter/lines.rs).

Run with the reference interpreter; it rewrites the `CASES` / `BIG` tables of those test modules in
place (then rustfmt them):
    ~/.cache/dj-reference/venv-1.6.1/bin/python udfs/data/golden/gen_filters2.py
    rustfmt --edition 2024 udfs/src/filter/words.rs udfs/src/filter/lines.rs
Inputs: cases.py (FILTER_TEXTS, BIGS) plus the extra texts below. harness.py stubs `aiohttp` and
blocks Data-Juicer's auto-installs.
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import harness  # noqa: E402,F401
from rs import rs  # noqa: E402
from cases import FILTER_TEXTS, BIGS  # noqa: E402
from data_juicer.ops.filter.word_repetition_filter import WordRepetitionFilter  # noqa: E402
from data_juicer.ops.filter.average_line_length_filter import AverageLineLengthFilter  # noqa: E402
from data_juicer.ops.filter.maximum_line_length_filter import MaximumLineLengthFilter  # noqa: E402

SRC = os.path.join(HERE, "..", "..", "src", "filter")

WORD_TEXTS = FILTER_TEXTS + [
    "The the THE tHe", "Hello, hello! HELLO. (hello)", "İstanbul istanbul İSTANBUL", "ΣΑΣ σας Σας",
    "a\u00a0b a\u00a0b a b", "... --- ... !!!", "x\ry x\ry x y", "one two three one two three one two three",
    "a b c d e f g h i j a b c d e f g h i j k", "a b c d e f g h i j k l m n o p q r s t u v w x y z",
    "中文 中文 中文", "😀word 😀word word😀 word", "ﬁne FINE ﬁne", "ß SS ss ẞ", "\u2028a\u2028 a",
    "a\u3000b a\u3000b", "1 2 3 1 2 3", "a1 a1 a1 b2", "the\tcat\nthe\tcat\nthe cat",
    " ".join(["spam"] * 30), " ".join(f"w{i % 7}" for i in range(100)),
]
LINE_TEXTS = FILTER_TEXTS + [
    "a\nbb\n", "\n", "\n\n", "\r\n", "\r\r\n", "a\r\nb", "abc\n\ndef\n\n\n", "x\x0by\x0cz", "p\x1cq\x1dr\x1es\x1ft",
    "one\x85two\u2028three\u2029four", "no line break at all here", "\u2028", "line\n" * 5, "短\n长长长长\n中中",
    "😀\n😀😀😀", "e\u0301\ne\u0301e\u0301", "trailing\n\n\n\n", "\t\n\t\n", "a" * 50 + "\n" + "b" * 7,
]


def stats(op, texts, key):
    s = op.compute_stats_batched({"text": list(texts), "__dj__stats__": [{} for _ in texts]})
    return [d[key] for d in s["__dj__stats__"]]


def patch(path, const, body):
    p = os.path.join(SRC, path)
    s = open(p, encoding="utf-8").read()
    pat = re.compile(r"(    const " + const + r": [^\n]*= &\[)(.*?)(\];)", re.S)
    s, n = pat.subn(lambda m: m.group(1) + "\n" + body.rstrip("\n") + "\n    " + m.group(3), s)
    assert n == 1, (path, const, n)
    open(p, "w", encoding="utf-8").write(s)


def patch_array(path, const, body):
    p = os.path.join(SRC, path)
    s = open(p, encoding="utf-8").read()
    pat = re.compile(r"(    const " + const + r": [^=]*= )(.*?)(;\n)", re.S)
    s, n = pat.subn(lambda m: m.group(1) + body + m.group(3), s)
    assert n == 1, (path, const, n)
    open(p, "w", encoding="utf-8").write(s)


# word_repetition_filter
REP_LENS = [10, 1, 2, 3]
reps = {n: stats(WordRepetitionFilter(rep_len=n), WORD_TEXTS, "word_rep_ratio") for n in REP_LENS}
patch("words.rs", "CASES", "".join(
    f"        ({rs(t)}, [{', '.join(repr(reps[n][i]) for n in REP_LENS)}]),\n" for i, t in enumerate(WORD_TEXTS)))
def _lcg_words(k):
    x, out = 1, []
    for _ in range(k):
        x = (x * 1103515245 + 12345) % (1 << 31)
        out.append(f"w{(x >> 16) % 300}x")
    return " ".join(out)


WBIG = _lcg_words(30000)  # words_big() in words.rs
BIG_W = BIGS + [WBIG, WBIG.upper().replace(" ", "\n")]
big = [[stats(WordRepetitionFilter(rep_len=n), BIG_W, "word_rep_ratio")[j] for n in REP_LENS] for j in range(len(BIG_W))]
patch_array("words.rs", "BIG", "[" + ", ".join("[" + ", ".join(repr(v) for v in row) + "]" for row in big) + "]")

# line-length filters
avg = stats(AverageLineLengthFilter(), LINE_TEXTS, "avg_line_length")
mx = stats(MaximumLineLengthFilter(), LINE_TEXTS, "max_line_length")
patch("lines.rs", "CASES", "".join(
    f"        ({rs(t)}, {a!r}, {m}),\n" for t, a, m in zip(LINE_TEXTS, avg, mx)))
LBIG = "\r\n".join("ab" * (i % 50) for i in range(3000)) + "\u2028" * 10  # lines_big() in lines.rs
ab = stats(AverageLineLengthFilter(), BIGS + [LBIG], "avg_line_length")
mb = stats(MaximumLineLengthFilter(), BIGS + [LBIG], "max_line_length")
patch_array("lines.rs", "BIG", "[" + ", ".join(f"({a!r}, {m})" for a, m in zip(ab, mb)) + "]")
print("ok")

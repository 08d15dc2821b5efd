"""Writes Rust test tables (expected values from Data-Juicer 1.6.1) to out/<name>.rs.

Run from this directory with the reference interpreter, then apply them with update.py:
    cd udfs/data/golden && ~/.cache/dj-reference/venv-1.6.1/bin/python gen_rust.py && python3 update.py
Inputs are in cases.py; harness.py stubs the optional `aiohttp` import and blocks Data-Juicer's
auto-installs. out/ is scratch output.
"""
import os, sys
import harness
from rs import rs, md5
from data_juicer.ops.filter.words_num_filter import WordsNumFilter
from data_juicer.ops.filter.alphanumeric_filter import AlphanumericFilter
from data_juicer.ops.filter.special_characters_filter import SpecialCharactersFilter
from data_juicer.ops.filter.character_repetition_filter import CharacterRepetitionFilter
from data_juicer.ops.deduplicator.document_deduplicator import DocumentDeduplicator
from data_juicer.ops.mapper.clean_email_mapper import CleanEmailMapper
from data_juicer.ops.mapper.clean_links_mapper import CleanLinksMapper
os.makedirs("out", exist_ok=True)

def w(name, text):
    open(f"out/{name}.rs", "w").write(text)

def stats(op, texts, key):
    s = op.compute_stats_batched({"text": list(texts), "__dj__stats__": [{} for _ in texts]})
    return [d[key] for d in s["__dj__stats__"]]

from cases import *  # noqa: F401,F403

# filters
nw = stats(WordsNumFilter(), FILTER_TEXTS, "num_words")
w("num_words", "".join(f"        ({rs(t)}, {v}),\n" for t, v in zip(FILTER_TEXTS, nw)))
w("num_words_big", repr(stats(WordsNumFilter(), BIGS, "num_words")))
al = stats(AlphanumericFilter(), FILTER_TEXTS, "alnum_ratio")
w("alnum", "".join(f"        ({rs(t)}, {v!r}),\n" for t, v in zip(FILTER_TEXTS, al)))
w("alnum_big", repr(stats(AlphanumericFilter(), BIGS, "alnum_ratio")))
sp = stats(SpecialCharactersFilter(), FILTER_TEXTS, "special_char_ratio")
w("special", "".join(f"        ({rs(t)}, {v!r}),\n" for t, v in zip(FILTER_TEXTS, sp)))
w("special_big", repr(stats(SpecialCharactersFilter(), BIGS, "special_char_ratio")))
reps = {n: stats(CharacterRepetitionFilter(rep_len=n), FILTER_TEXTS, "char_rep_ratio") for n in REP_LENS}
w("char_rep", "".join(f"        ({rs(t)}, [{', '.join(repr(reps[n][i]) for n in REP_LENS)}]),\n" for i, t in enumerate(FILTER_TEXTS)))
w("char_rep_big", "[" + ", ".join("[" + ", ".join(repr(v) for v in stats(CharacterRepetitionFilter(rep_len=n), BIGS, "char_rep_ratio")) + "]" for n in REP_LENS) + "]")

# dedup
modes = [(False, False), (True, False), (False, True), (True, True)]
hs = {m: [DocumentDeduplicator(lowercase=m[0], ignore_non_character=m[1]).compute_hash({"text": t})["__dj__hash"] for t in DEDUP_TEXTS] for m in modes}
w("dedup", "".join(f"        ({rs(t)}, [{', '.join(chr(34) + hs[m][i] + chr(34) for m in modes)}]),\n" for i, t in enumerate(DEDUP_TEXTS)))
hb = {m: [DocumentDeduplicator(lowercase=m[0], ignore_non_character=m[1]).compute_hash({"text": t})["__dj__hash"] for t in BIGS] for m in modes}
w("dedup_big", "[" + ", ".join("[" + ", ".join(chr(34) + h + chr(34) for h in hb[m]) + "]" for m in modes) + "]")

# clean
def run(cls, texts, **kw):
    return cls(**kw).process_batched({"text": list(texts)})["text"]
w("email", "".join(f"        ({rs(i)}, {rs(o)}),\n" for i, o in zip(EMAIL_TEXTS, run(CleanEmailMapper, EMAIL_TEXTS))))
w("email_repl", "".join(f"        ({rs(i)}, {rs(o)}),\n" for i, o in zip(EMAIL_TEXTS, run(CleanEmailMapper, EMAIL_TEXTS, repl="<EMAIL>"))))
o = run(CleanEmailMapper, [BIG_EMAIL])[0]
w("email_big", f"({len(o)}, \"{md5(o)}\")")
lines = []
for pat, repl, texts in CUSTOM:
    outs = run(CleanEmailMapper, texts, pattern=pat, repl=repl)
    outs2 = run(CleanLinksMapper, texts, pattern=pat, repl=repl)
    assert outs == outs2
    for i, o in zip(texts, outs):
        lines.append(f"        ({rs(pat)}, {rs(repl)}, {rs(i)}, {rs(o)}),\n")
w("custom", "".join(lines))
w("links", "".join(f"        ({rs(i)}, {rs(o)}),\n" for i, o in zip(LINK_TEXTS, run(CleanLinksMapper, LINK_TEXTS))))
w("links_groups", "".join(f"        ({rs(i)}, {rs(o)}),\n" for i, o in zip(LINK_TEXTS, run(CleanLinksMapper, LINK_TEXTS, repl=r"<\1|\2|\3>"))))
o = run(CleanLinksMapper, [BIG_LINKS])[0]
w("links_big", f"({len(o)}, \"{md5(o)}\")")
# repl errors: Python raises on a matching text
errs = []
for repl in BAD_REPLS:
    try:
        run(CleanEmailMapper, ["a@b.cc"], pattern=r"(\w)@", repl=repl)
        errs.append(f"        // {repl!r}: no error in Python\n")
    except Exception as e:
        errs.append(f"        ({rs(repl)}, {rs(str(e))}),\n")
w("bad_repls", "".join(errs))
bad = []
for pat in BAD_PATTERNS:
    try:
        run(CleanEmailMapper, ["x"], pattern=pat)
        bad.append(f"        // {pat!r}: no error in Python\n")
    except Exception as e:
        bad.append(f"        {rs(pat)}, // {type(e).__name__}: {e}\n")
w("bad_patterns", "".join(bad))
print("ok")

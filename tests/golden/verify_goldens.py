#!/usr/bin/env python3
"""Independent re-derivation of every golden in expected/ from the corpus and the recipes.

Re-implements the 10 ops' semantics (using Data-Juicer's own SPECIAL_CHARACTERS / word helpers and
regexes), the ujson float round trip of __dj__stats__ (ujson_float_model.py), the column order and
json.dumps(ensure_ascii=False) line format, and compares byte for byte with expected/*.jsonl and
expected/*_stats.jsonl. Needs the dj-reference venv (data_juicer, regex, numpy, yaml, pandas):

    ~/.cache/dj-reference/venv-1.6.1/bin/python tests/golden/verify_goldens.py
"""
import json, sys, hashlib, string, math
import regex as re
import numpy as np
import os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ujson_float_model import enc, dec
from data_juicer.ops.common import SPECIAL_CHARACTERS, get_words_from_document, words_refinement
from data_juicer.ops.common.special_characters import VARIOUS_WHITESPACES
import yaml
G = os.path.dirname(os.path.abspath(__file__)) + "/"
corpus = [json.loads(l) for l in open(G + "corpus.jsonl", encoding="utf-8")]
rt = lambda v: dec(enc(v)) if isinstance(v, float) else v

def stat(op, p, t):
    if op == "text_length_filter": return "text_len", len(t)
    if op == "words_num_filter":
        return "num_words", len(words_refinement(get_words_from_document(t), strip_chars=SPECIAL_CHARACTERS))
    if op == "alphanumeric_filter":
        return "alnum_ratio", (sum(c.isalnum() for c in t) / len(t)) if t else 0.0
    if op == "special_characters_filter":
        return "special_char_ratio", (sum(c in SPECIAL_CHARACTERS for c in t) / len(t)) if t else 0.0
    if op == "character_repetition_filter":
        n = p.get("rep_len", 10); f = {}
        for i in range(len(t) - n + 1): f[t[i:i+n]] = f.get(t[i:i+n], 0) + 1
        if not f: return "char_rep_ratio", 0.0
        v = sorted(f.values(), reverse=True); k = min(int(np.sqrt(len(v))), len(v) - v.count(1))
        return "char_rep_ratio", sum(v[:k]) / sum(v)
DEF = {"text_length_filter": (10, sys.maxsize, "min_len", "max_len"), "words_num_filter": (10, sys.maxsize, "min_num", "max_num"),
       "alphanumeric_filter": (0.25, sys.maxsize, "min_ratio", "max_ratio"), "special_characters_filter": (0.0, 0.25, "min_ratio", "max_ratio"),
       "character_repetition_filter": (0.0, 0.5, "min_ratio", "max_ratio")}
PUNC = None
def mapper(op, p, t):
    global PUNC
    if op == "whitespace_normalization_mapper":
        return "".join(" " if c in VARIOUS_WHITESPACES else c for c in t.strip())
    if op == "punctuation_normalization_mapper":
        from data_juicer.ops.mapper.punctuation_normalization_mapper import PunctuationNormalizationMapper
        PUNC = PUNC or PunctuationNormalizationMapper().punctuation_unicode
        return "".join(PUNC.get(c, c) for c in t)
    if op in ("clean_email_mapper", "clean_links_mapper"):
        from data_juicer.ops.mapper.clean_email_mapper import CleanEmailMapper
        from data_juicer.ops.mapper.clean_links_mapper import CleanLinksMapper
        m = (CleanEmailMapper if op == "clean_email_mapper" else CleanLinksMapper)(**p)
        return re.sub(m.pattern, m.repl, t, flags=re.DOTALL)
def run(recipe):
    cfg = yaml.safe_load(open(G + "recipes/" + recipe + ".yaml"))
    rows = [dict(r) for r in corpus]
    stats = False
    for opd in cfg["process"]:
        (op, p), = opd.items(); p = p or {}
        if op in DEF:
            stats = True
            lo0, hi0, kl, kh = DEF[op]; lo = p.get(kl, lo0); hi = p.get(kh, hi0)
            mc = p.get("min_closed_interval", True); xc = p.get("max_closed_interval", True); rev = p.get("reversed_range", False)
            if rev: mc, xc = not mc, not xc
            out = []
            for r in rows:
                k, v = stat(op, p, r["text"]); v = rt(v)
                r.setdefault("__dj__stats__", {})[k] = v
                ok = (v >= lo if mc else v > lo) and (v <= hi if xc else v < hi)
                if rev: ok = not ok
                if ok: out.append(r)
            rows = out
        elif op == "document_deduplicator":
            seen = set(); out = []
            rx = re.compile(r"\s+|\d+|[" + re.escape(string.punctuation) + "]") if p.get("ignore_non_character") else None
            for r in rows:
                t = r["text"]
                if p.get("lowercase"): t = t.lower()
                if rx: t = rx.sub("", t)
                h = hashlib.md5(t.strip().encode()).hexdigest()
                if cfg.get("keep_hashes_in_res_ds"): r["__dj__hash"] = h
                if h not in seen: seen.add(h); out.append(r)
            rows = out
        else:
            for r in rows: r["text"] = mapper(op, p, r["text"])
    cols = []
    for r in corpus:
        for k in r:
            if k not in cols: cols.append(k)
    lines = []
    for r in rows:
        o = {k: r.get(k) for k in cols}
        if stats: o["__dj__stats__"] = r.get("__dj__stats__")
        if "__dj__hash" in r: o["__dj__hash"] = r["__dj__hash"]
        lines.append(json.dumps(o, ensure_ascii=False) + "\n")
    got = open(G + "expected/" + recipe + ".jsonl", encoding="utf-8").read()
    ok = got == "".join(lines)
    sok = True
    if stats:
        sl = "".join(json.dumps({"__dj__stats__": r["__dj__stats__"]}, ensure_ascii=False) + "\n" for r in rows)
        sok = open(G + "expected/" + recipe + "_stats.jsonl", encoding="utf-8").read() == sl
    global bad
    bad += not (ok and sok)
    print(f"{recipe}: model {'MATCHES' if ok else 'DIFFERS'} export; stats {'ok' if sok else 'DIFF'}")
    if not ok:
        gl = got.splitlines(True)
        print("  golden", len(gl), "model", len(lines))
        for a, b in zip(gl, lines):
            if a != b: print("  G:", a[:300]); print("  M:", b[:300]); break
import glob
bad = 0
MODELLED = set(DEF) | {"whitespace_normalization_mapper", "punctuation_normalization_mapper",
                       "clean_email_mapper", "clean_links_mapper", "document_deduplicator"}


def modelled(recipe):
    """Recipes over corpus.jsonl whose ops are all modelled here (no tokenizer models)."""
    cfg = yaml.safe_load(open(G + "recipes/" + recipe + ".yaml"))
    if cfg.get("dataset_path") != "tests/golden/corpus.jsonl":
        return False
    ops = [next(iter(o.items())) for o in cfg["process"]]
    return all(op in MODELLED and not (p or {}).get("tokenization") for op, p in ops)


for f in sorted(glob.glob(G + "recipes/*.yaml")):
    name = os.path.basename(f)[:-5]
    if modelled(name):
        run(name)
sys.exit(1 if bad else 0)

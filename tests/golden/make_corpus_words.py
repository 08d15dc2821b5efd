#!/usr/bin/env python3
"""Generate tests/golden/corpus_words.jsonl deterministically (no randomness).

Usage (from /work/main):  python3 tests/golden/make_corpus_words.py
Inputs for stopwords_filter and flagged_words_filter with the test word lists in
tests/golden/assets/: English prose at exact stopword ratios (0.2, 0.3, 0.5), case and
punctuation variants the refinement folds together, German and French rows for `lang: all`,
space-segmented Chinese where only word augmentation (joined neighbours) finds a listed word,
planted flagged words around the 0.045 default maximum, plus empty / whitespace-only rows.
Rows are {"text": ..., "meta": {"source": ..., "id": N}}, `id` being the 0-based line number.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_words.jsonl")

rows = []  # (source, text)


def add(source, text):
    rows.append((source, text))


FILLER = ("data processing pipelines transform raw text into clean training corpora "
          "quickly while keeping useful samples").split()


def filler(n):
    return " ".join(FILLER[i % len(FILLER)] for i in range(n))


# ---------------------------------------------------------------- English stopwords
add("en", "The quick brown fox jumps over the lazy dog.")
add("en", "It is a truth universally acknowledged, that a single man in possession of a good "
          "fortune, must be in want of a wife.")
add("en", "Data processing pipelines transform raw text into clean training corpora.")
add("en", "THE AND OF TO IN IS")
add("en", "(The) [and] {of} \"to\" 'in' ...is!!! cat")
add("en", "")
add("en", "   ")
add("en", "!!! ... ??? --- 123 456")
add("en", "the")
add("en", "the cat and a dog ran far away quickly today")        # 3/10
add("en", "the red fox ran fast over green hills and far")       # 2/10
add("en", "we are here today")                                   # 2/4
add("en", "don't stop believing, don't")                         # apostrophe kept inside
add("en", "don\u2019t stop believing, don\u2019t")               # curly apostrophe: no match
add("en", "the\tcat\nsat on\r\nthe mat")
add("en", "the\u00a0cat and\u00a0the dog")
add("en", "\U0001F600the\U0001F600 cat \U0001F44D and")
add("en", "\u0130t Is \u0130S it")
add("en", "1 2 3 the 42")
add("en", "There was no possibility of taking a walk that day. We had been wandering, indeed, "
          "in the leafless shrubbery an hour in the morning; but since dinner the cold winter "
          "wind had brought with it clouds so sombre, and a rain so penetrating, that further "
          "out-door exercise was now out of the question.")
add("en", "Stopwords such as these appear in nearly every English sentence, and so their share "
          "of the words is a cheap signal of natural prose.")
add("en", "import numpy as np\nfor i in range(10):\n    print(i)")
add("en", "<p>The page is about the web</p>")
add("en", "THIS—that; these/those: it's")
add("en", "a a a a a a a a a a")

# ---------------------------------------------------------------- German / French (lang all)
add("de", "Der Hund und die Katze sind nicht hier.")
add("de", "Das ist doch Quatsch!")
add("de", "Eine kleine Nachtmusik mit dem Orchester zu Wien.")
add("fr", "Le chat est sur la table et le chien dort.")
add("fr", "La vie est belle")

# ---------------------------------------------------------------- Chinese (words augmentation)
add("zh", "我们 今天 去 公园 玩 了")
add("zh", "但 是 我们 没有 去")                  # 但是 only as a joined bigram
add("zh", "我们今天去公园玩了。")                # one word: nothing listed
add("zh", "因为 下雨 所以 我们 在 家")
add("zh", "这个 问题 很 难 ， 但是 我们 可以 解决 。")
add("zh", "这 是 垃圾 邮件")                     # 垃圾邮件 only as a joined bigram
add("zh", "真 糟糕 ！")
add("zh", "垃 圾 邮 件 很 多")                   # 垃圾邮件 would need a 4-gram
add("zh", "Data-Juicer 是 一个 数据 处理 系统")
add("zh", "的")
add("zh", "的 的")

# ---------------------------------------------------------------- flagged words
add("flag", "zorblax")
add("flag", "ZORBLAX!")
add("flag", "zorblaxes are not zorblax")
add("flag", "Gadzooks! What a snollygoster.")
add("flag", "This message mentions frobnicate once among many ordinary words.")
add("flag", filler(21) + " frobnicate")          # 1/22 > 0.045
add("flag", filler(22) + " frobnicate")          # 1/23 < 0.045
add("flag", " ".join(["zorblax"] * 9 + FILLER * 12 + FILLER[:11]))  # 9/200 == 0.045
add("flag", "what mumbo jumbo this is")          # mumbo-jumbo only when joined with "-"
add("flag", "pure mumbo-jumbo")
add("flag", "hocus pocus dominocus and more hocus pocus")
add("flag", "frobnicate\tfrobnicate\nzorblax gadzooks")
add("flag", "A perfectly ordinary sentence with nothing flagged at all.")

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    for i, (source, text) in enumerate(rows):
        f.write(json.dumps({"text": text, "meta": {"source": source, "id": i}},
                           ensure_ascii=False) + "\n")
print(f"wrote {len(rows)} rows to {OUT}")

#!/usr/bin/env python3
"""Generate tests/golden/corpus_simhash.jsonl deterministically (no randomness).

Usage (from /work/main):  python3 tests/golden/make_corpus_simhash.py
The corpus of the document_simhash_deduplicator goldens: English and Chinese paragraphs, each
followed by variants: exact copies, copies differing in case, punctuation, digits, whitespace
(double spaces, newlines, tabs), one to several replaced, inserted or deleted words or characters,
truncations and chains of successive edits (each step close to the previous one, the ends further
apart); unrelated rows (news, code, lists, numbers, mixed English/Chinese); short rows with fewer
tokens than the window (all SimHash 0, so Data-Juicer keeps only the first of them) and `""`.
Each row is {"text": ..., "meta": {"source": ..., "id": N}}; `id` is the 0-based line number.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_simhash.jsonl")

rows = []  # (source, text)


def add(source, text):
    rows.append((source, text))


def replace_words(text, pairs):
    """Replaces whole space-separated words: pairs of (index, new word or None to delete)."""
    words = text.split(" ")
    for i, new in sorted(pairs, key=lambda p: -p[0]):
        if new is None:
            del words[i]
        else:
            words[i] = new
    return " ".join(words)


def insert_words(text, at, new):
    words = text.split(" ")
    return " ".join(words[:at] + new.split(" ") + words[at:])


EN = [
    ("en/science",
     "The James Webb Space Telescope has observed a distant galaxy whose light left it only 350 million "
     "years after the Big Bang. Astronomers say the galaxy is surprisingly bright and massive for its age, "
     "which suggests that the first stars formed earlier and faster than most models predicted. Further "
     "observations with the telescope's infrared spectrograph are planned for next year."),
    ("en/cooking",
     "To make a simple tomato sauce, warm two tablespoons of olive oil in a heavy pan over medium heat. Add "
     "one chopped onion and cook it slowly until soft and golden, about ten minutes. Stir in three crushed "
     "garlic cloves, then pour in a can of whole tomatoes, breaking them up with a wooden spoon. Simmer for "
     "twenty minutes, season with salt and pepper, and finish with a handful of fresh basil leaves."),
    ("en/history",
     "The printing press, developed by Johannes Gutenberg around 1440, transformed the way information "
     "spread across Europe. Books that once took months to copy by hand could now be produced in days, and "
     "prices fell sharply. Literacy rates rose over the following centuries, and the rapid circulation of "
     "pamphlets played an important role in the Reformation and the scientific revolution."),
    ("en/tech",
     "Our new release improves query performance by caching intermediate results on local disk. When the "
     "same filter is applied twice, the second run reads the cached columns instead of scanning the source "
     "files again. In our benchmarks on a 40 GB dataset, repeated queries finished 3.5 times faster, while "
     "memory usage stayed below 2 GB per worker. The cache can be disabled with a single configuration flag."),
    ("en/travel",
     "Lisbon is a city best explored on foot, even though its steep hills can be tiring. Start the morning "
     "in the old Alfama district, where narrow streets wind past tiled houses and small cafes. Take the "
     "historic tram up to the castle for a wide view over the red roofs and the river. In the evening, walk "
     "down to the waterfront and listen to fado music in one of the many small restaurants."),
    ("en/health",
     "Regular physical activity is one of the most effective ways to protect your heart. Health experts "
     "recommend at least 150 minutes of moderate exercise each week, such as brisk walking, cycling or "
     "swimming. Even short sessions of ten minutes add up, and people who move more tend to sleep better, "
     "feel less stressed and keep a healthier weight as they grow older."),
    ("en/finance",
     "Interest rates remained unchanged at 4.25 percent after the central bank's meeting on Wednesday. "
     "Officials noted that inflation has slowed for six consecutive months but is still above the 2 percent "
     "target. Markets reacted calmly to the decision, and most analysts now expect the first rate cut to "
     "come in the spring, provided that wage growth continues to moderate."),
    ("en/nature",
     "Every autumn, millions of monarch butterflies travel up to four thousand kilometres from Canada and "
     "the northern United States to the mountain forests of central Mexico. No single butterfly completes "
     "the round trip; the journey north in spring is made by several generations. Scientists believe the "
     "insects navigate using the position of the sun and an internal magnetic compass."),
]

ZH = [
    ("zh/tech",
     "人工智能技术近年来发展迅速，大语言模型已经能够完成写作、翻译和编程等多种任务。然而，训练这些模型需要大量高质量的数据，"
     "数据清洗和去重因此成为非常重要的环节。重复的数据不仅浪费计算资源，还可能让模型过度记忆某些内容。"),
    ("zh/news",
     "今年夏天，全国多个城市遭遇了持续高温天气，部分地区最高气温超过四十摄氏度。气象部门提醒市民尽量避免在中午外出，"
     "注意防暑降温，多喝水，并关注老人和儿童的身体状况。电力部门也表示将全力保障居民用电。"),
    ("zh/culture",
     "春节是中国最重要的传统节日，人们在这一天贴春联、放鞭炮、吃饺子，全家人团聚在一起守岁。近年来，"
     "越来越多的年轻人选择在假期外出旅游，也有人通过视频通话向远方的亲人拜年，过年的方式正在悄悄改变。"),
    ("zh/science",
     "科学家在南极冰层下发现了一个巨大的湖泊，湖水与外界隔绝了数百万年。研究人员希望通过钻探获取湖水样本，"
     "寻找可能存在的微生物，这将帮助我们了解生命在极端环境中的生存方式，也为寻找地外生命提供线索。"),
]


# ---------------------------------------------------------------- English clusters
for source, p in EN:
    add(source, p)
add(EN[0][0], EN[0][1])                                          # exact copy
add(EN[0][0], EN[0][1].upper())                                  # case only
add(EN[0][0], EN[0][1].replace(",", "").replace(".", "!"))       # punctuation only
add(EN[0][0], EN[0][1].replace("350", "380"))                    # one number
add(EN[0][0], replace_words(EN[0][1], [(12, "Bang,"), (30, "quickly")]))

add(EN[1][0], replace_words(EN[1][1], [(5, "three")]))           # one word
add(EN[1][0], replace_words(EN[1][1], [(5, "three"), (40, "a"), (70, "sea")]))
add(EN[1][0], insert_words(EN[1][1], 20, "very"))                # one inserted word
add(EN[1][0], EN[1][1].replace(" ", "  ", 3))                    # double spaces (same tokens)
add(EN[1][0], EN[1][1].replace(". ", ".\n"))                     # newlines stay inside tokens

add(EN[2][0], EN[2][1].replace("1440", "1450").replace("centuries", "decades"))
add(EN[2][0], EN[2][1][: len(EN[2][1]) * 2 // 3])                # truncated
add(EN[2][0], "Breaking: " + EN[2][1])                           # prefix
add(EN[2][0], EN[2][1] + " Read more on our website.")           # suffix

# A chain: each step replaces two more words of the previous one.
chain = EN[3][1]
for step, pairs in enumerate([[(3, "greatly"), (9, "memory")], [(15, "filter")], [(25, "source")],
                              [(35, "benchmark"), (41, "queries")], [(50, "stayed")],
                              [(55, "The"), (60, "single")]]):
    chain = replace_words(chain, [(i, w.upper() + str(step)) for i, w in pairs])
    add(EN[3][0], chain)

add(EN[4][0], EN[4][1].replace("Lisbon", "Porto"))
add(EN[4][0], EN[4][1].replace("Lisbon", "Porto").replace("Alfama", "Ribeira").replace("castle", "cathedral"))
add(EN[4][0], EN[4][1].replace(" ", "\t"))                       # tabs: one token, SimHash 0

add(EN[5][0], EN[5][1].replace("150", "120").replace("ten", "five"))
add(EN[5][0], EN[5][1].lower())
add(EN[5][0], replace_words(EN[5][1], [(i, None) for i in (10, 20, 30, 40)]))

add(EN[6][0], EN[6][1].replace("4.25", "4.50").replace("six", "seven").replace("2", "3"))
add(EN[6][0], EN[6][1].replace("Wednesday", "Thursday"))

add(EN[7][0], EN[7][1].replace("four thousand", "4,000"))
add(EN[7][0], EN[7][1].replace(";", ".").replace(",", ""))

# ---------------------------------------------------------------- Chinese clusters
for source, p in ZH:
    add(source, p)
add(ZH[0][0], ZH[0][1])                                          # exact copy
add(ZH[0][0], ZH[0][1].replace("，", ","))                        # ASCII commas
add(ZH[0][0], ZH[0][1].replace("迅速", "很快"))                   # two characters
add(ZH[0][0], ZH[0][1].replace("迅速", "很快").replace("非常", "十分").replace("资源", "能力"))
add(ZH[1][0], ZH[1][1].replace("四十", "三十八"))
add(ZH[1][0], ZH[1][1].replace("今年夏天", "去年夏天").replace("全力", "尽力"))
add(ZH[1][0], ZH[1][1][: len(ZH[1][1]) // 2])
add(ZH[2][0], ZH[2][1].replace("，", " ").replace("。", " "))     # punctuation to spaces
add(ZH[2][0], ZH[2][1].replace("年轻人", "青年人"))
add(ZH[3][0], ZH[3][1].replace("数百万年", "一千多万年"))
add(ZH[3][0], "【新闻】" + ZH[3][1])

# ---------------------------------------------------------------- long articles
# Three paragraphs each: with more shingles, a few edited words move only a few SimHash bits, so
# these clusters sit around the default distance of 4.
for k, (a, b, c) in enumerate([(0, 2, 5), (1, 4, 7), (3, 6, 0), (5, 7, 2)]):
    src = "en/article"
    art = " ".join([EN[a][1], EN[b][1], EN[c][1]])
    add(src, art)
    add(src, replace_words(art, [(10 + k, "remarkably")]))
    add(src, replace_words(art, [(20, "often"), (90 + k, "several"), (150, "although")]))
    add(src, replace_words(art, [(i * 17 + k, "changed") for i in range(1, 9)]))
    add(src, art.replace("0", "1").replace("5", "6"))
    add(src, art.replace(".", "").replace(",", ";"))
    add(src, insert_words(art, 60, "as far as we know"))
for a, b in [(0, 1), (2, 3), (1, 3)]:
    art = ZH[a][1] + ZH[b][1]
    add("zh/article", art)
    add("zh/article", art.replace("的", "之", 1))
    add("zh/article", art.replace("的", "之", 4))
    add("zh/article", art.replace("，", "、"))
    add("zh/article", art[:-20])

# ---------------------------------------------------------------- unrelated rows
add("news", "The city council voted on Tuesday to extend the bike lane network by 25 kilometres over the "
            "next three years, despite objections from some local shop owners.")
add("news", "Heavy snow closed several mountain passes overnight, and drivers are advised to carry chains "
            "and check road conditions before setting out this weekend.")
add("news", "A rare first edition of a nineteenth century novel sold at auction for more than twice its "
            "estimated price, the auction house said in a statement.")
add("code", "def merge(a, b):\n    out = []\n    i = j = 0\n    while i < len(a) and j < len(b):\n"
            "        if a[i] <= b[j]:\n            out.append(a[i]); i += 1\n        else:\n"
            "            out.append(b[j]); j += 1\n    return out + a[i:] + b[j:]")
add("code", "def merge(a, b):\n    out = []\n    i = j = 0\n    while i < len(a) and j < len(b):\n"
            "        if a[i] < b[j]:\n            out.append(a[i]); i += 1\n        else:\n"
            "            out.append(b[j]); j += 1\n    return out + a[i:] + b[j:]")
add("code", "SELECT name, COUNT(*) AS n FROM orders WHERE created_at >= '2024-01-01' GROUP BY name "
            "ORDER BY n DESC LIMIT 10;")
add("list", "Shopping list: apples, bread, milk, eggs, coffee, rice, onions, butter, cheese and tea.")
add("list", "Shopping list: apples, bread, milk, eggs, coffee, rice, onions, butter, cheese and jam.")
add("numbers", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20")
add("numbers", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 21")
add("numbers", "3.14159 2.71828 1.41421 1.73205 2.23607 0.57722 1.61803 4.66920")
add("mixed", "我们在 GitHub 上发布了 version 2.0 的源代码，欢迎大家 star 和 fork，也欢迎提交 issue 和 pull request 来帮助我们改进。")
add("mixed", "我们在 GitHub 上发布了 version 2.1 的源代码，欢迎大家 star 和 fork，也欢迎提交 issue 和 pull request 来帮助我们改进。")
add("mixed", "Ünïcödé façade naïve café résumé coöperate Zürich São Paulo Kraków Malmö Ærø Øresund")
add("mixed", "Emoji row 😀 with 🎉 several 🚀 symbols 🌍 between ✨ the 🔥 words 💡 here 🙂 too")
add("repeat", "la la la la la la la la la la la la la la la la la la la la la la")
add("repeat", "la la la la la la la la la la la la la la la la la la la la la la la la la la")

# ---------------------------------------------------------------- short rows (< 6 words)
add("short", "Thanks!")
add("short", "See you tomorrow at noon.")
add("short", "")
add("short", "好的，谢谢。")
add("short", "one two three four five")
add("short", "   ")

# ---------------------------------------------------------------- late duplicates
# Copies and near copies after the unrelated rows, so clusters span the whole file (and the
# partitions of the partitioned test).
add(EN[6][0], EN[6][1])
add(EN[3][0], EN[3][1].replace("3.5", "3.6"))
add(ZH[2][0], ZH[2][1].replace("饺子", "汤圆"))
add(EN[7][0], EN[7][1].upper())
add("news", "The city council voted on Tuesday to extend the bike lane network by 30 kilometres over the "
            "next three years, despite objections from some local shop owners.")
add(ZH[0][0], ZH[0][1] + "我们将在下一篇文章中详细介绍去重算法。")
add(EN[1][0], EN[1][1].replace("tomato", "Tomato").replace("onion", "ONION"))

with open(OUT, "w", encoding="utf-8") as f:
    for i, (source, text) in enumerate(rows):
        f.write(json.dumps({"text": text, "meta": {"source": source, "id": i}}, ensure_ascii=False) + "\n")
print(f"{OUT}: {len(rows)} rows")

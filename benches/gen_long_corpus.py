#!/usr/bin/env python3
"""Writes a JSONL corpus of NDOCS long real-text documents built from Debian package descriptions.

    python3 benches/gen_long_corpus.py OUT.jsonl NDOCS [MEDIAN_BYTES [MAX_BYTES]]

Each document joins consecutive package descriptions (of gen_apt_corpus.py) until it reaches a
length drawn from a log-normal distribution (by default median 8 KB, mean about 16 KB) clipped to
1-500 KB, so lengths are very skewed, as in web and book corpora. The `longer` corpus of the bench
scripts takes median 24 KB and at most 2 MB: about 48 KB on average, with some documents over 1 MB. Packages are visited in a fresh random order
on every lap, so documents of different laps share little text. Half the documents keep the
descriptions' wrapped lines; the other half join each paragraph into one long line, as web text
has. About 3% of rows repeat an earlier row exactly and 2% repeat one with a small edit. Same
lists, same bytes.
"""
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_apt_corpus import packages  # noqa: E402

MIN_BYTES = 1_000
MEDIAN_BYTES = int(sys.argv[3]) if len(sys.argv) > 3 else 8_000
MAX_BYTES = int(sys.argv[4]) if len(sys.argv) > 4 else 500_000


def target_length(rng):
    return int(min(MAX_BYTES, max(MIN_BYTES, rng.lognormvariate(math.log(MEDIAN_BYTES), 1.2))))


def unwrap(text):
    return "\n\n".join(" ".join(line.strip() for line in para.split("\n") if line.strip())
                       for para in text.split("\n\n"))


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    texts = [p["text"] for p in packages()]
    rng = random.Random(11)
    order, pos, lap = [], 0, 0
    recent, total = [], 0
    with open(out, "w", encoding="utf-8") as f:
        for i in range(n):
            r = rng.random()
            if recent and r < 0.03:
                text = recent[rng.randrange(len(recent))]
            elif recent and r < 0.05:
                text = recent[rng.randrange(len(recent))]
                cut = rng.randrange(len(text))
                text = text[:cut] + rng.choice([" ", ".", "\n"]) + text[cut:]
            else:
                want, parts, size = target_length(rng), [], 0
                while size < want:
                    if pos == len(order):
                        order = list(range(len(texts)))
                        random.Random(lap).shuffle(order)
                        pos, lap = 0, lap + 1
                    parts.append(texts[order[pos]])
                    size += len(parts[-1]) + 2
                    pos += 1
                text = "\n\n".join(parts)
                if rng.random() < 0.5:
                    text = unwrap(text)
            recent.append(text)
            if len(recent) > 500:
                recent.pop(0)
            total += len(text)
            f.write(json.dumps({"text": text, "meta": {"doc": i}}, ensure_ascii=False) + "\n")
    print(f"{out}: {n} documents, {total / 1e6:.0f} MB of text, {lap} laps over {len(texts)} "
          "descriptions", file=sys.stderr)


if __name__ == "__main__":
    main()

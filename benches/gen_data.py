#!/usr/bin/env python3
"""Writes a deterministic JSONL corpus of about SIZE_MB megabytes for dj-fusion benchmarks.

    python3 benches/gen_data.py OUT.jsonl SIZE_MB

Rows look like web text: paragraphs of English-like words, some emails and links, some
repeated boilerplate, ~8% exact duplicates, and a `meta` object. Same arguments, same bytes.
"""
import json
import random
import sys

WORDS = (
    "data model training language large corpus clean filter token text web page quality the of and to in is "
    "that for it with as on was by this be are from at or an have not which but they their has been one all "
    "would there what so if out about who get can more when up some time other could into than then only "
    "new also two after first well way even because any these give day most us research system results"
).split()


def paragraph(rng):
    n = rng.randint(20, 220)
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.15:
        words.insert(rng.randint(0, n), f"user{rng.randint(1, 9999)}@example.com")
    if rng.random() < 0.2:
        words.insert(rng.randint(0, n), f"https://www.site{rng.randint(1, 500)}.org/page/{rng.randint(1, 99999)}")
    text = " ".join(words)
    if rng.random() < 0.1:
        text = ("Click here to subscribe! " * rng.randint(3, 12)) + text
    return text[0].upper() + text[1:] + "."


def main():
    out, size_mb = sys.argv[1], float(sys.argv[2])
    rng = random.Random(42)
    target = int(size_mb * 1024 * 1024)
    written, i, recent = 0, 0, []
    with open(out, "w", encoding="utf-8") as f:
        while written < target:
            if recent and rng.random() < 0.08:
                text = rng.choice(recent)
            else:
                text = "\n\n".join(paragraph(rng) for _ in range(rng.randint(1, 4)))
                recent.append(text)
                if len(recent) > 1000:
                    recent.pop(0)
            line = json.dumps({"text": text, "meta": {"id": i, "source": f"crawl-{i % 17}"}}, ensure_ascii=False) + "\n"
            f.write(line)
            written += len(line.encode("utf-8"))
            i += 1
    print(f"{out}: {i} rows, {written / 1e6:.1f} MB")


if __name__ == "__main__":
    main()

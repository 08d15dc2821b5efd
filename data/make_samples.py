"""Builds the shipped sample datasets for Data-Juicer's published refinement recipes in configs/:

  c4_sample.jsonl          web-like text for redpajama-c4-refine.yaml: English package descriptions
                           grouped into documents, documents in 12 other languages (gettext
                           catalogs), near-duplicates, e-mails and links, short and empty rows.
  philpapers_sample.jsonl  long English documents (1,000+ words) for pile-philpaper-refine.yaml,
                           plus short and repetitive ones it drops.
  stack_sample.jsonl       source files (`content`) for stack-code-refine.yaml: Python, C headers
                           and shell scripts of this machine, with duplicates.

Deterministic for a given machine (sorted inputs, a fixed seed). Run from anywhere:
    python3 data/make_samples.py
"""

import glob
import gettext
import json
import os
import random
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
rng = random.Random(20261203)


def descriptions():
    """(package, synopsis + long description) from the apt lists, in name order."""
    text = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True).stdout
    out, pkg, desc = [], None, None
    for line in text.splitlines():
        if line.startswith("Package: "):
            pkg = line[9:]
        elif line.startswith("Description: "):
            desc = [line[13:]]
        elif desc is not None and line.startswith(" "):
            desc.append("" if line.strip() == "." else line.strip())
        elif desc is not None:
            out.append((pkg, "\n".join(desc)))
            desc = None
    seen, uniq = set(), []
    for p, d in sorted(out):
        if p not in seen:
            seen.add(p)
            uniq.append((p, d))
    return uniq


def catalog(locale):
    out = []
    for path in sorted(glob.glob(f"/usr/share/locale/{locale}/LC_MESSAGES/*.mo")):
        if os.path.basename(path).startswith("iso_"):
            continue
        try:
            with open(path, "rb") as f:
                cat = gettext.GNUTranslations(f)._catalog
        except Exception:
            continue
        for k, v in sorted(cat.items(), key=lambda kv: str(kv[0])):
            msgid = k[0] if isinstance(k, tuple) else k
            if msgid and isinstance(v, str) and v != msgid and len(v) > 15 and "%" not in v:
                out.append(v)
    return out


def write(name, rows):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    size = os.path.getsize(os.path.join(HERE, name))
    print(f"{name}: {len(rows)} rows, {size / 1e6:.2f} MB")


def c4(descs):
    rows = []
    pool = descs[:]
    rng.shuffle(pool)
    i = 0
    for n in range(260):
        k = rng.choice([1, 2, 3, 5, 8, 13])
        parts = [d for _, d in pool[i : i + k]]
        i += k
        text = "\n\n".join(parts)
        if n % 17 == 0:
            text += f"\nContact maintainer{n}@lists.example.org or see https://example.org/pkg/{n} for details."
        rows.append({"text": text, "meta": {"source": "apt", "id": n}})
    for lang in ["de", "fr", "es", "ru", "zh_CN", "ja", "ar", "it", "pl", "ko", "tr", "sv"]:
        strings = catalog(lang)
        for j in range(8):
            k = rng.choice([3, 10, 30])
            start = rng.randrange(max(1, len(strings) - k))
            rows.append({"text": "\n".join(strings[start : start + k]), "meta": {"source": lang, "id": len(rows)}})
    # Near duplicates (simhash) and exact ones.
    for src in rng.sample(rows[:200], 20):
        t = src["text"]
        rows.append({"text": t.replace(".", "!", 1) if rng.random() < 0.5 else t, "meta": {"source": "dup", "id": len(rows)}})
    for t in ["", " ", "ok", "Buy now!!! $$$ http://spam.example.com", "1234567890 " * 30, "the the the " * 50]:
        rows.append({"text": t, "meta": {"source": "edge", "id": len(rows)}})
    rng.shuffle(rows)
    return rows


def philpapers(descs):
    rows = []
    pool = descs[:]
    rng.shuffle(pool)
    i = 0
    for n in range(40):
        k = rng.choice([20, 60, 120, 250])
        text = "\n\n".join(d for _, d in pool[i : i + k])
        i += k
        rows.append({"text": text, "meta": {"source": "apt-long", "id": n}})
    for n in range(10):
        rows.append({"text": "\n\n".join(d for _, d in pool[i : i + 3]), "meta": {"source": "short", "id": 40 + n}})
        i += 3
    rows.append({"text": ("the same sentence repeats here again. " * 600).strip(), "meta": {"source": "rep", "id": 50}})
    rng.shuffle(rows)
    return rows


def stack():
    files = sorted(glob.glob("/usr/lib/python3.11/*.py")) + sorted(glob.glob("/usr/include/*.h"))
    files += sorted(f for f in glob.glob("/usr/bin/*") if os.path.isfile(f) and os.path.getsize(f) < 20000)
    picked = []
    for f in files:
        try:
            with open(f, encoding="utf-8") as fh:
                content = fh.read()
        except (UnicodeDecodeError, OSError):
            continue
        if 0 < len(content) < 40000:
            picked.append((f, content))
    rng.shuffle(picked)
    picked = picked[:300]
    rows = [{"content": c, "meta": {"path": p}} for p, c in picked]
    rows += [{"content": c, "meta": {"path": p + ".copy"}} for p, c in picked[:15]]
    rng.shuffle(rows)
    return rows


def main():
    descs = descriptions()
    write("c4_sample.jsonl", c4(descs))
    write("philpapers_sample.jsonl", philpapers(descs))
    write("stack_sample.jsonl", stack())


if __name__ == "__main__":
    main()

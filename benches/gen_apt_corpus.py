#!/usr/bin/env python3
"""Writes a JSONL corpus of exactly NDOCS real-text rows from Debian package descriptions.

    python3 benches/gen_apt_corpus.py OUT.jsonl NDOCS

Records come from `apt-cache dumpavail` (package, section, homepage, Description-md5); the long
descriptions from the Translation-en lists (apt's Acquire::Languages may be "none": then this runs
`apt-get update -o Acquire::Languages=en` once, as root). Text = synopsis + body, continuation
lines joined with "\n", " ." lines as blank lines. Packages are cycled in name order; past the
first pass each row is varied (Homepage line prepended, or a neighbour's text appended); ~5% of
rows repeat an earlier row exactly and ~3% repeat one with a small edit. Same lists, same bytes.
"""
import glob
import json
import random
import subprocess
import sys


def stanzas(text):
    for block in text.split("\n\n"):
        fields, key = {}, None
        for line in block.split("\n"):
            if line.startswith(" ") and key:
                fields[key] += "\n" + line
            elif ":" in line:
                key, _, v = line.partition(":")
                fields[key] = v.strip()
        if fields:
            yield fields


def body(desc):
    lines = desc.split("\n")
    out = [lines[0].strip()]
    for line in lines[1:]:
        s = line[1:]
        out.append("" if s.strip() == "." else s)
    return "\n".join(out)


def translations():
    files = glob.glob("/var/lib/apt/lists/*Translation-en*")
    if not files:
        subprocess.run(["apt-get", "update", "-qq", "-o", "Acquire::Languages=en"], check=True)
        files = glob.glob("/var/lib/apt/lists/*Translation-en*")
    long = {}
    for f in sorted(files):
        text = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", f], check=True,
                              capture_output=True, text=True).stdout
        for s in stanzas(text):
            if "Description-md5" in s and "Description-en" in s:
                long[s["Description-md5"]] = s["Description-en"]
    return long


def packages():
    text = subprocess.run(["apt-cache", "dumpavail"], check=True, capture_output=True, text=True).stdout
    long = translations()
    seen = {}
    for s in stanzas(text):
        name = s.get("Package")
        if not name or name in seen:
            continue
        desc = long.get(s.get("Description-md5", ""), s.get("Description", ""))
        seen[name] = {"package": name, "section": s.get("Section", ""),
                      "homepage": s.get("Homepage", ""), "text": body(desc)}
    return [seen[k] for k in sorted(seen)]


def main():
    out, n = sys.argv[1], int(sys.argv[2])
    pkgs = packages()
    rng = random.Random(7)
    rows = []
    with open(out, "w", encoding="utf-8") as f:
        for i in range(n):
            r = rng.random()
            if rows and r < 0.05:
                text, meta = rows[rng.randrange(len(rows))]
            elif rows and r < 0.08:
                text, meta = rows[rng.randrange(len(rows))]
                text = text.replace(" ", "  ", 1) + rng.choice([".", "!", " "])
            else:
                p = pkgs[i % len(pkgs)]
                text, meta = p["text"], {"package": p["package"], "section": p["section"]}
                lap = i // len(pkgs)
                if lap % 2 == 1 and p["homepage"]:
                    text = f"Homepage: {p['homepage']}\n{text}"
                elif lap > 0:
                    text = text + "\n\n" + pkgs[(i + lap) % len(pkgs)]["text"]
            rows.append((text, meta))
            if len(rows) > 5000:
                rows.pop(0)
            f.write(json.dumps({"text": text, "meta": meta}, ensure_ascii=False) + "\n")
    print(f"{out}: {n} rows from {len(pkgs)} packages", file=sys.stderr)


if __name__ == "__main__":
    main()

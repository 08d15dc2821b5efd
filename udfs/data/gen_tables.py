"""Regenerates the tables in this directory from the Data-Juicer 1.6.1 reference environment.

Run with the reference venv's interpreter:
    ~/.cache/dj-reference/venv-1.6.1/bin/python udfs/data/gen_tables.py

Outputs (one entry per line, hex code points):
  special_characters.txt  every single-code-point member of Data-Juicer's SPECIAL_CHARACTERS
                          (string.punctuation + digits + whitespace + the literal extra set + the
                          single-code-point keys of emoji.EMOJI_DATA); multi-code-point emoji can
                          never equal one character and are left out.
  py_isalnum.txt          ranges `start end` of code points where Python's str.isalnum() is true.
  py_isalpha.txt          ranges `start end` of code points where Python's str.isalpha() is true.
  regex_word.txt          ranges where the `regex` module's \\w matches (str pattern, V0).
  regex_digit.txt         ranges where the `regex` module's \\d matches.
  py_lower.txt            `cp: cp cp ...` for every code point whose Python str.lower() differs.
It also prints the versions the tables come from.
"""

import os
import runpy
import sys
import unicodedata

import emoji
import regex

HERE = os.path.dirname(os.path.abspath(__file__))
DJ = os.path.join(
    os.path.dirname(os.path.dirname(emoji.__file__)), "data_juicer", "ops", "common", "special_characters.py"
)


def ranges(pred):
    out, start = [], None
    for c in range(0x110000):
        ok = pred(chr(c))
        if ok and start is None:
            start = c
        elif not ok and start is not None:
            out.append((start, c - 1))
            start = None
    if start is not None:
        out.append((start, 0x10FFFF))
    return out


def write_ranges(name, rs):
    with open(os.path.join(HERE, name), "w") as f:
        for a, b in rs:
            f.write(f"{a:X} {b:X}\n")


def main():
    sc = runpy.run_path(DJ)["SPECIAL_CHARACTERS"]
    singles = sorted(ord(c) for c in sc if len(c) == 1)
    with open(os.path.join(HERE, "special_characters.txt"), "w") as f:
        for c in singles:
            f.write(f"{c:X}\n")
    write_ranges("py_isalnum.txt", ranges(str.isalnum))
    write_ranges("py_isalpha.txt", ranges(str.isalpha))
    w = regex.compile(r"\w")
    d = regex.compile(r"\d")
    write_ranges("regex_word.txt", ranges(lambda ch: w.match(ch) is not None))
    write_ranges("regex_digit.txt", ranges(lambda ch: d.match(ch) is not None))
    with open(os.path.join(HERE, "py_lower.txt"), "w") as f:
        for c in range(0x110000):
            ch = chr(c)
            lo = ch.lower()
            if lo != ch:
                f.write(f"{c:X}: {' '.join(f'{ord(x):X}' for x in lo)}\n")
    print(
        f"python {sys.version.split()[0]} unicode {unicodedata.unidata_version}; emoji {emoji.__version__}; "
        f"regex {regex.__version__}; {len(sc)} SPECIAL_CHARACTERS entries, {len(singles)} single code points"
    )


if __name__ == "__main__":
    main()

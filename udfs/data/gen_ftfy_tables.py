"""Generate the ftfy tables used by udfs/src/mapper/fix_unicode/ (fix_unicode_mapper).

Run with the reference interpreter (ftfy 6.3.1, CPython 3.11):
    ~/.cache/dj-reference/venv-1.6.1/bin/python udfs/data/gen_ftfy_tables.py

Writes, next to this script:
  ftfy_regexes.txt   NAME<TAB>pattern: ftfy's regexes re-emitted from Python's own parse tree in
                     Rust `regex` syntax (every literal escaped, `\\s`/`\\w`/`\\d` expanded to the
                     code points CPython matches, lookbehinds split off as NAME_LOOKBEHIND)
  ftfy_charmaps.txt  ENCODING<TAB>256 hex code points ('-' = undefined byte)
  ftfy_html.txt      E<TAB>&name;<TAB>hex code points      (ftfy's HTML_ENTITIES)
                     R<TAB>hex number<TAB>hex code points  (html._invalid_charrefs)
                     X<TAB>hex number                       (html._invalid_codepoints)
  ftfy_translate.txt W|L<TAB>hex code point<TAB>hex code points (WIDTH_MAP, LIGATURES)
  ftfy_unassigned.txt first<TAB>last hex code points: the ranges unassigned (category Cn) in
                     CPython's unicodedata, whose Unicode version ftfy's normalization step uses
"""

import html
import os
import re
import re._constants as C
import re._parser as P
import sys
import unicodedata

import ftfy
from ftfy import badness, chardata, fixes

assert ftfy.__version__ == "6.3.1", ftfy.__version__
assert unicodedata.unidata_version == "14.0.0", unicodedata.unidata_version
OUT = os.path.dirname(os.path.abspath(__file__))


def ranges(pred):
    out, start = [], None
    for cp in range(0x110000 + 1):
        ok = cp < 0x110000 and pred(chr(cp))
        if ok and start is None:
            start = cp
        elif not ok and start is not None:
            out.append((start, cp - 1))
            start = None
    return out


def esc(cp, is_bytes):
    return f"\\x{cp:02X}" if is_bytes else f"\\x{{{cp:X}}}"


CATEGORIES = {
    C.CATEGORY_SPACE: lambda c: c.isspace(),
    C.CATEGORY_WORD: lambda c: c.isalnum() or c == "_",
    C.CATEGORY_DIGIT: lambda c: c.isdecimal(),
}
CAT_CACHE = {}


def category_class(cat, is_bytes):
    if is_bytes:
        raise ValueError("byte categories unused")
    if cat not in CAT_CACHE:
        parts = []
        for a, b in ranges(CATEGORIES[cat]):
            parts.append(esc(a, False) if a == b else esc(a, False) + "-" + esc(b, False))
        CAT_CACHE[cat] = "".join(parts)
    return CAT_CACHE[cat]


def emit_class(items, is_bytes):
    neg, parts = "", []
    for op, av in items:
        if op is C.NEGATE:
            neg = "^"
        elif op is C.LITERAL:
            parts.append(esc(av, is_bytes))
        elif op is C.RANGE:
            parts.append(esc(av[0], is_bytes) + "-" + esc(av[1], is_bytes))
        elif op is C.CATEGORY:
            parts.append(category_class(av, is_bytes))
        else:
            raise ValueError(f"class item {op}")
    return "[" + neg + "".join(parts) + "]"


def emit(seq, is_bytes):
    out = []
    for op, av in seq:
        if op is C.LITERAL:
            out.append(esc(av, is_bytes))
        elif op is C.NOT_LITERAL:
            out.append("[^" + esc(av, is_bytes) + "]")
        elif op is C.IN:
            out.append(emit_class(av, is_bytes))
        elif op is C.ANY:
            out.append(".")  # no DOTALL: anything but \n, as in Rust's default
        elif op is C.BRANCH:
            out.append("(?:" + "|".join(emit(b, is_bytes) for b in av[1]) + ")")
        elif op is C.SUBPATTERN:
            _, add, rem, p = av
            assert not add and not rem
            out.append("(?:" + emit(p, is_bytes) + ")")
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
            lo, hi, p = av
            body = "(?:" + emit(p, is_bytes) + ")"
            if hi is C.MAXREPEAT:
                rep = "*" if lo == 0 else "+" if lo == 1 else f"{{{lo},}}"
            elif lo == hi:
                rep = f"{{{lo}}}"
            elif (lo, hi) == (0, 1):
                rep = "?"
            else:
                rep = f"{{{lo},{hi}}}"
            out.append(body + rep + ("?" if op is C.MIN_REPEAT else ""))
        elif op is C.AT and av is C.AT_BEGINNING:
            out.append("^")  # no MULTILINE: start of the string only
        else:
            raise ValueError(f"unsupported node {op} {av}")
    return "".join(out)


def convert(pattern):
    is_bytes = isinstance(pattern.pattern, bytes)
    tree = P.parse(pattern.pattern, pattern.flags)
    lookbehind = None
    items = list(tree)
    if items and items[0][0] is C.ASSERT_NOT and items[0][1][0] == -1:
        (op, av), = items[0][1][1]
        assert op is C.IN
        lookbehind = emit_class(av, is_bytes)
        items = items[1:]
    body = emit(items, is_bytes)
    return ("(?-u)" if is_bytes else "") + body, lookbehind


def write(name, lines):
    with open(os.path.join(OUT, name), "w", encoding="utf-8", newline="\n") as f:
        f.write("".join(line + "\n" for line in lines))


def cps(s):
    return " ".join(f"{ord(c):X}" for c in s)


# ---- regexes ----
regexes = {
    "BADNESS": badness.BADNESS_RE,
    "UTF8_DETECTOR": chardata.UTF8_DETECTOR_RE,
    "HTML_ENTITY": chardata.HTML_ENTITY_RE,
    "ANSI": fixes.ANSI_RE,
    "ALTERED_UTF8": chardata.ALTERED_UTF8_RE,
    "LOSSY_UTF8": chardata.LOSSY_UTF8_RE,
}
# Single-class regexes matched as char ranges in Rust; check they still are what the code assumes.
assert chardata.C1_CONTROL_RE.pattern == r"[\x80-\x9f]"
assert chardata.SINGLE_QUOTE_RE.pattern == "[\u02bc\u2018-\u201b]"
assert chardata.DOUBLE_QUOTE_RE.pattern == "[\u201c-\u201f]"
lines = []
for name, rx in regexes.items():
    body, lb = convert(rx)
    lines.append(f"{name}\t{body}")
    if lb is not None:
        lines.append(f"{name}_LOOKBEHIND\t{lb}")
# A_GRAVE_WORD_RE has a lookahead; it is matched by hand. Check its source is what we expect.
assert fixes.A_GRAVE_WORD_RE.pattern == b"\xc3 (?! |quele|quela|quilo|s )"
write("ftfy_regexes.txt", lines)

# ---- charmaps ----
lines = []
for enc in chardata.CHARMAP_ENCODINGS + ["windows-1252"]:
    table = []
    for b in range(256):
        try:
            ch = bytes([b]).decode(enc)
        except UnicodeDecodeError:
            table.append("-")
            continue
        table.append(f"{ord(ch):X}")
        if enc != "windows-1252":
            # encode must invert decode for every char that possible_encoding accepts
            assert ch.encode(enc) == bytes([b]), (enc, b)
    if enc in chardata.CHARMAP_ENCODINGS:
        # possible_encoding's class: ASCII minus 0x1A, plus decode(0x80..0xFF, 0x1A)
        allowed = set(chr(c) for c in range(0x80) if c != 0x1A)
        allowed |= set(bytes(list(range(0x80, 0x100)) + [0x1A]).decode(enc))
        for c in allowed:
            assert chardata.possible_encoding(c, enc), (enc, c)
        for cp in list(range(0x300)) + [0xFFFD, 0x2500, 0x20AC]:
            if chr(cp) not in allowed:
                assert not chardata.possible_encoding(chr(cp), enc), (enc, cp)
        for c in range(0x80):
            if c != 0x1A:
                assert table[c] == f"{c:X}", (enc, c)
    lines.append(enc + "\t" + " ".join(table))
write("ftfy_charmaps.txt", lines)

# ---- html ----
lines = []
for name, ch in sorted(chardata.HTML_ENTITIES.items()):
    assert "\t" not in name
    lines.append(f"E\t{name}\t{cps(ch)}")
for num, ch in sorted(html._invalid_charrefs.items()):
    lines.append(f"R\t{num:X}\t{cps(ch)}")
for num in sorted(html._invalid_codepoints):
    lines.append(f"X\t{num:X}")
write("ftfy_html.txt", lines)

# ---- translate tables ----
lines = [f"W\t{k:X}\t{cps(v)}" for k, v in sorted(chardata.WIDTH_MAP.items())]
lines += [f"L\t{k:X}\t{cps(v)}" for k, v in sorted(chardata.LIGATURES.items())]
assert sorted(chardata.CONTROL_CHARS) == sorted(
    list(range(0, 9)) + [0xB] + list(range(0xE, 0x20)) + [0x7F]
    + list(range(0x206A, 0x2070)) + [0xFEFF] + list(range(0xFFF9, 0xFFFD))
)
write("ftfy_translate.txt", lines)

# ---- code points unassigned in unicodedata ----
unassigned = ranges(lambda c: unicodedata.category(c) == "Cn")
write("ftfy_unassigned.txt", [f"{a:X}\t{b:X}" for a, b in unassigned])
print("ok", file=sys.stderr)

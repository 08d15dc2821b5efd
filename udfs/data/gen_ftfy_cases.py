"""Generate test cases with ftfy's answers, for the ignored differential test of fix_unicode_mapper.

Run with the reference interpreter (ftfy 6.3.1, CPython 3.11), then the test:
    ~/.cache/dj-reference/venv-1.6.1/bin/python udfs/data/gen_ftfy_cases.py 1 100000 /tmp/ftfy_cases.jsonl
    FTFY_CASES=/tmp/ftfy_cases.jsonl cargo test -p dj-udfs fix_unicode -- --ignored

Arguments: seed, number of cases, output file. Each line is {"text": ..., "NFC": fix_text(text)},
every fourth also with "NFKC", "NFD" and "NFKD". The texts mix: random strings over an alphabet of
mojibake-prone characters, entities, escapes and controls; real text turned into mojibake through
one or two of ftfy's code pages (sloppily, or with lost bytes, or with non-breaking spaces turned
into spaces) next to clean text; random bytes read in one of those code pages; random entity-like
strings; random code points from every plane. Some get a second line, possibly after a '<'.
"""
import json
import random
import sys

import ftfy

assert ftfy.__version__ == "6.3.1", ftfy.__version__
rng = random.Random(int(sys.argv[1]))
count = int(sys.argv[2])
ENCODINGS = ["latin-1", "windows-1252", "windows-1251", "windows-1250", "windows-1253",
             "windows-1254", "windows-1257", "iso-8859-2", "mac-roman", "cp437"]
TEXTS = [
    "café crème brûlée", "naïve “quotes” ‘single’ — dash…", "Grüße aus München ß", "Привет мир Всё",
    "Καλημέρα κόσμε", "日本語のテキスト", "数据清洗", "안녕하세요", "😀👍🏽👨‍👩‍👧❤️", "Zażółć gęślą jaźń",
    "Pijamalı şoföre", "€100 £5 ¥9 ₹3", "à la carte", "voilà", "Ðorđe Ýmir Ávila Íñigo", "ąčęėįšųūž",
    "Tiếng Việt", "שלום مرحبا", "नमस्ते", "สวัสดี", "™©®°±×÷", "ﬁﬂ ＡＢＣ", "e\u0301 n\u0303", "\u2028\u2029",
    "¯\\_(ツ)_/¯", "✔✘★", "½¼²³", "Ω≈ç√", "ŉ Ĳ", "\u00a0nbsp\u00a0", "¡¿", "ÀÁÂÃÄÅ", "àáâãäå",
]
ALPHABET = (
    list("abcXYZ 019&#;<>x[m\n\r\t?")
    + ["\x1b", "\x1a", "\x00", "\x7f", "\x0b", "\x0c", "\ufeff", "\u2028", "\x85"]
    + [chr(c) for c in range(0x80, 0x100)]
    + list("€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ") + list("РСЃЂЎЈЌЏђѓєѕіїјљњћќўџ") + list("ΞΟΆΈΉΊΌΎΏ")
    + list("ĂĹĽŁŚŤŹŻăĺľłśťźżĄąĘę") + list("├┤┬┴┼═║╔╗╚╝░▒▓█⌐¬√∩≡") + list("√∫≈≠∞∑∂ƒ")
    + ["\u0301", "\u0308", "\u0323", "ﬁ", "ﬂ", "Ａ", "１", "\u3000", "ｶ", "ﾞ", "日", "本", "😀", "é", "ı", "ş", "ğ", "İ"]
    + ["&amp;", "&lt;", "&eacute;", "&#233;", "&#x41;", "&#0;", "&#128;", "&#x9d;", "&EACUTE;", "&nbsp;",
       "&#59;", "&Atilde;", "&copy;", "\x1b[31m", "\x1b[0m", "\r\n"]
)
ENTITY_PARTS = ["&", "#", "x", "X", ";", "a", "m", "p", "1", "2", "9", "0", "f", "F", "e", "acute", "lt",
                "<", " ", "\n", "AMP", "nbsp", "D8", "00", "10FFFF", "110000", "é"]


def sloppy(data, encoding):
    """Decode, keeping each undefined byte as its latin-1 character."""
    out = []
    for b in data:
        try:
            out.append(bytes([b]).decode(encoding))
        except UnicodeDecodeError:
            out.append(chr(b))
    return "".join(out)


def random_alphabet():
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 30)))


def random_mojibake():
    data = " ".join(rng.choice(TEXTS) for _ in range(rng.randint(1, 3))).encode("utf-8")
    for _ in range(rng.randint(1, 2)):
        encoding = rng.choice(ENCODINGS)
        s = sloppy(data, encoding) if rng.random() < 0.7 else data.decode(encoding, errors="replace")
        r = rng.random()
        if r < 0.15:
            s = s.replace("\xa0", " ")
        elif r < 0.25:
            s = "".join(c if rng.random() > 0.1 else "?" for c in s)
        elif r < 0.3:
            s = "".join(c for c in s if rng.random() > 0.1)
        data = s.encode("utf-8")
    parts = [s]
    if rng.random() < 0.5:
        parts.insert(rng.randint(0, 1), rng.choice(TEXTS))
    if rng.random() < 0.3:
        parts.append(random_alphabet())
    return rng.choice(["", " ", "\n", "\r\n"]).join(parts)


def random_bytes():
    def byte():
        return rng.choice([rng.randint(0x80, 0xFF), rng.randint(0xC2, 0xF4), rng.randint(0x80, 0xBF),
                           0x20, 0x41, 0xED, 0xC0, 0x3F, 0x1A, 0xA0])
    data = bytes(byte() for _ in range(rng.randint(1, 16)))
    return sloppy(data, rng.choice(ENCODINGS))


def random_entity():
    return "".join(rng.choice(ENTITY_PARTS) for _ in range(rng.randint(1, 25)))


def random_code_points():
    out = []
    for _ in range(rng.randint(1, 12)):
        r = rng.random()
        c = rng.randint(0, 0x3000 if r < 0.5 else 0x20000 if r < 0.8 else 0x10FFFF)
        out.append(chr(0x41 if 0xD800 <= c <= 0xDFFF else c))
    return "".join(out)


with open(sys.argv[3], "w", encoding="utf-8") as f:
    for i in range(count):
        r = rng.random()
        make = (random_alphabet if r < 0.25 else random_mojibake if r < 0.55 else random_bytes if r < 0.7
                else random_entity if r < 0.85 else random_code_points)
        text = make()
        if rng.random() < 0.1:
            text += rng.choice(["\n", "\r\n", "<", "\n<"]) + random_mojibake()
        case = {"text": text, "NFC": ftfy.fix_text(text)}
        if i % 4 == 0:
            for form in ["NFKC", "NFD", "NFKD"]:
                case[form] = ftfy.fix_text(text, normalization=form)
        f.write(json.dumps(case, ensure_ascii=False) + "\n")

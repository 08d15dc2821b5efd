#!/usr/bin/env python3
"""Generate tests/golden/corpus_text2.jsonl deterministically (no randomness).

Usage (from /work/main):  python3 tests/golden/make_corpus_text2.py
A second golden corpus for the text mappers that corpus.jsonl barely exercises: HTML pages, LaTeX
sources (macros, headings, comments, bibliographies), source files with copyright headers, logs
with IPv4/IPv6 addresses, plain-text tables, Chinese text, repeated sentences, long words and
bullet characters. Each row is {"text": ..., "meta": {"source": ..., "id": N}}; `id` is the 0-based
line number. corpus.jsonl is left alone (other goldens depend on it).

Note: clean_html_mapper needs selectolax, which the reference venv does not ship; to regenerate its
goldens, install it into a separate directory (`pip install --target DIR selectolax`) and run
dj-reference with PYTHONPATH=DIR, so Data-Juicer's LazyLoader finds it and installs nothing.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_text2.jsonl")

rows = []  # (source, text)


def add(source, text):
    rows.append((source, text))


# ---------------------------------------------------------------- HTML
add("html", "<html><head><title>Shop &amp; Co</title><style>body{color:red}</style></head>\n<body>\n"
    "<h1>Welcome</h1>\n<p>Our <b>best</b> products:</p>\n<ul>\n<li>Apples &ndash; 3&euro;</li>\n<li>Pears</li>\n</ul>\n"
    "<script>var x = 1 < 2;</script>\n</body></html>")
add("html", "<!DOCTYPE html><p>Numbered:</p><ol><li>first</li><li>second</li></ol><p>Done &copy; 2024</p>")
add("html", "<div class=\"note\">Line one<br>Line two<br/>Line &lt;three&gt;</div><!-- hidden comment -->")
add("html", "<table><tr><th>Name</th><th>Age</th></tr><tr><td>Bob</td><td>30</td></tr></table>after table")
add("html", "<p>Unclosed <i>italic <b>bold</p> tail text &nbsp; with nbsp")
add("html", "<html><body><p>数据处理 <a href=\"https://example.com\">链接</a>。</p></body></html>")
add("html", "<noscript><p>Enable &amp; reload</p></noscript><textarea>\n<b>raw</b></textarea>")
add("html", "Plain text with a < sign and a > sign, no tags at all.")
add("html", "<LI>Upper-case list tags are not rewritten</LI><li>but lower-case ones are</li>")

# ---------------------------------------------------------------- LaTeX
add("latex", "\\documentclass{article}\n\\newcommand{\\R}{\\mathbb{R}}\n\\newcommand*{\\eps}{\\varepsilon}\n"
    "\\def\\N{\\mathbb{N}}\n% This is a preamble comment\n\\begin{document}\n\\title{On Things}\n"
    "\\section{Introduction}\nLet $x \\in \\R$ and $\\eps > 0$, with $n \\in \\N$. % inline note\n"
    "We use 50\\% of the data.\n\\subsection*{Details}\nMore text here.\n%\\section{Commented out}\n"
    "\\bibliography{refs}\n\\end{document}")
add("latex", "Some abstract text before any heading.\n\\chapter[Short]{A Long Chapter Title}\nChapter body.\n"
    "\\appendix\n\\section{Proofs}\nProof text.")
add("latex", "No headings in this LaTeX-ish text, just $a^2 + b^2 = c^2$ and a % trailing comment")
add("latex", "\\paragraph{Para} text \\subparagraph{Sub} more\n\\begin{thebibliography}{9}\n\\bibitem{a} A.\n"
    "\\end{thebibliography}")
add("latex", "\\def\\foo{bar}\n\\foo, \\foo! and \\foobar and \\foo\n% full-line comment\n%% another\ntext %comment\n"
    "\\begin{references}\nref")
add("latex", "intro\n\\section[opt]{Title}\nbody \\newcommand{\\x}{y}\n\\x.")
add("latex", "\\sections{not a heading} \\section_{neither} \\section*{Starred} end")
add("latex", "pre \\begin{REFERENCES} post")

# ---------------------------------------------------------------- code with copyright headers
add("code", "/*\n * Copyright (c) 2019 Example Corp.\n * Licensed under the Apache License.\n */\n"
    "#include <stdio.h>\nint main(void) { return 0; }")
add("code", "/* A plain block comment without the word */\nint x = 1; /* copyright later */")
add("code", "// Copyright 2020 The Authors\n// SPDX-License-Identifier: MIT\n\npackage main\n\nfunc main() {}")
add("code", "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n# COPYRIGHT 2021\nimport os\nprint(os.getcwd())")
add("code", "-- SQL migration\n-- Copyright ACME\nCREATE TABLE t (id INT);")
add("code", "def f():\n    return 1  # no header here")

# ---------------------------------------------------------------- logs with IPs
add("log", "2024-01-01 12:00:00 GET /index.html from 192.168.1.10 status 200\n"
    "2024-01-01 12:00:01 POST /api from 10.0.0.255 status 500")
add("log", "IPv6 client 2001:0db8:85a3:0000:0000:8a2e:0370:7334 connected; short form 2001:db8::1 not matched")
add("log", "Invalid addresses: 256.300.1.1 and 999.1.1.1 and 1.2.3 and 01.02.03.04")
add("log", "Server 172.16.254.1:8080, gateway 8.8.8.8, version 1.2.3.4.5")
add("log", "服务器 192.168.0.1 已连接，端口 22。")

# ---------------------------------------------------------------- plain-text tables
add("table", "Results:\nName Age City\nBob 30 Paris\nAmy 25 Rome\nThe end.")
add("table", "Header line\na|b|c\nd|e|f\n\ng|h|i\nFooter")
add("table", "Prices\napple\t1.00\npear\t2.50\nplum\t0.75\n")
add("table", "Mixed\nx y\nx y z\nx y z\nx y\nend")
add("table", "Not a table\nthis line has  double spaces\nand so  does this\n")
add("table", "Wide\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n"
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\nafter")

# ---------------------------------------------------------------- Chinese and mixed
add("zh", "数据处理是一个重要的步骤。我们使用Data-Juicer进行清洗！版本2.0（测试）：完成？")
add("zh", "中文，English，日本語，한국어，Русский，العربية。")
add("zh", "“引号”·点 & ＆ 符号 100% 《书名》 —— 破折号 / 斜杠 + 加号 * 星号 • 圆点 、顿号")
add("zh", "重复的句子。重复的句子。不同的句子！重复的句子。")
add("zh", "繁體中文與簡體中文混合，還有emoji😀和全角ＡＢＣ１２３。")

# ---------------------------------------------------------------- repeated sentences
add("repeat", "This is a sentence. This is a sentence. This is another one. This is a sentence.")
add("repeat", "Hello world! hello world! HELLO WORLD! Hello, world!")
add("repeat", "Line one.\nLine one.\n\nLine two? Line two?\nA. A. A.")
add("repeat", "He said “Stop.” Then he said “Stop.” again... and again......")
add("repeat", "Wait…… wait…… ok. Ok. OK.")

# ---------------------------------------------------------------- words: long words, URLs, bullets
add("words", "Short words and a supercalifragilisticexpialidocious one plus pneumonoultramicroscopicsilicovolcanoconiosis.")
add("words", "Visit http://example.com/page or www.example.org, see href=\"x\" and //comment and foo.com/bar today.")
add("words", "(((((((((((((((((parenthesized))))))))))))))))) and !!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!! marks")
add("words", "tab\tseparated\twords   with   many    spaces\n\n\nand blank lines\n")
add("words", "◆ Bullet one ● Bullet two ■ Bullet three ►▼▲▴∆▻▷❖♡□ and a|pipe and a-dash")
add("words", "x" * 60 + " " + "y" * 5 + " " + "é" * 12 + "!!!")

# ---------------------------------------------------------------- edge cases
add("edge", "")
add("edge", "   ")
add("edge", "\n\n")
add("edge", "Plain English text with nothing special in it.")
add("edge", "Emoji 😀👍🏽 and combining e\u0301 and ZWJ 👨\u200d👩\u200d👧 and NBSP\u00a0here.")
add("edge", "Windows\r\nline\r\nendings\r\n")

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    for i, (source, text) in enumerate(rows):
        f.write(json.dumps({"text": text, "meta": {"source": source, "id": i}}, ensure_ascii=False) + "\n")

print(f"wrote {len(rows)} rows to {OUT}")

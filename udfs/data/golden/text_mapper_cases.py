"""Inputs for gen_text_mappers.py: CASES[table] = (op name, op params, texts); FILES[table] = the
Rust file (under udfs/src/mapper/) holding `const <table>`. Tables ending in _BIG hold
(output length in chars, output MD5) rows for long inputs."""

HTML = [
    "", "plain", "plain text, no tags & no entities", "<p>a</p><p>b</p>",
    "<html><head><title>T</title><style>x{}</style><script>var a=1;</script></head><body>B</body></html>",
    "<noscript><p>a&amp;b</p></noscript>", "<head><noscript><p>a&amp;b</p></noscript></head>",
    "a\r\nb\rc", "x\x00y", "<script>x\x00y</script>", "<!-- c -->d<!DOCTYPE html>",
    "&amp;&lt;&copy;&notit;&#x41;&#0;&#128;&#xD800;&#x110000;&ampx &AMP; &lt",
    "<meta charset='latin1'>é", "<table>t<tr>u<td>v</td></tr></table>", "<template>tt</template>z",
    "<textarea>\nab</textarea>", "<pre>\nab</pre>", "<b>1<p>2</b>3</p>", "  lead", "trail  ", "</html>after",
    "<svg><title>s</title></svg>", "<ul><li>one</li><li>two</li></ul>", "<ol><li>x</ol>", "<LI>upper</LI>",
    "<li class='x'>attr</li>", "<plaintext>a<b>c", "\ufeffbom", "<head> </head> <body> x </body> ", "a\u2028b",
    "<select><option>o1<option>o2</select>",
    "<div>Hello <b>world</b>!</div>\n<p>Second &nbsp; para</p>", "<a href='x'>link</a> text", "<img alt='alt'>after",
    "<br>line<br/>two", "<math><mi>x</mi><annotation-xml encoding='text/html'><p>h</p></annotation-xml></math>",
    "<svg><foreignObject><p>f</p></foreignObject></svg>", "<table><tr><td>1</td><td>2</td></tr>foster</table>",
    "<p>a<table>b</table>c", "<!DOCTYPE html><p>a<table>b</table>c", "<i><b>x</i>y</b>z", "<title>a<b>c</b></title>",
    "<xmp><b>x</b></xmp>", "<iframe><b>x</b></iframe>", "<noembed><b>x</b></noembed>", "<noframes><b>x</b></noframes>",
    "<frameset><frame>t</frameset>", "x<frameset>t</frameset>", "<body>a</body>b</html>c",
    "<html>\n<head>\n</head>\n<body>\nx\n</body>\n</html>\n", "<h1>Title</h1>\n<ul>\n  <li>A</li>\n  <li>B</li>\n</ul>",
    "<ol><li>1</li><li>2</li></ol>", "< notatag", "a < b > c", "<>", "</>", "<?php x ?>y", "<!x>y", "<![CDATA[x]]>y",
    "<svg><![CDATA[x<y]]></svg>", "数据 <b>处理</b>", "😀<span>😀</span>", "<p>e\u0301</p>", "&#x1F600;&#9731;",
    "&NotNestedGreaterGreater;&nGt;", "<textarea>a<b>c</textarea>", "<script><!--<script>x</script>--></script>y",
    "<p><p>x", "<li>in<li>out", "<table><caption>c</caption><colgroup><col></colgroup><tbody><tr><th>h</th></tr></tbody></table>",
    "<table> a </table>", "<table>\n<tr><td>x</td></tr>\n</table>", "<ruby>a<rt>b</rt><rp>c</rp></ruby>", "\t\n\x0c x",
    "\x01\x7f\x80", "<pre>\r\nx</pre>", "<a><p>x</a>y", "<template><p>x</p></template><p>y</p>",
    # a DOCTYPE after the start: flushes pending table text / closes a colgroup in lexbor
    "<table>\n<!DOCTYPE html>x</table>", "<table><colgroup><!DOCTYPE html>\nab</table>",
    # text after </html> in a frameset document: lexbor drops a run with any non-space
    "<frameset></frameset></html>\nab", "<frameset></frameset></html>\n<!--x-->ab", "<frameset></frameset></html> \n",
    "<frameset></frameset></html>\n<noframes>a b</noframes>\nc", "<frameset>x\ny</frameset>",
    "<!DOCTYPE html>\n<html lang='en'>\n<head><meta charset='utf-8'><title>Shop &amp; Co</title></head>\n<body>\n"
    "<nav><a href='/'>Home</a> | <a href='/about'>About</a></nav>\n<h2>Products</h2>\n<ol>\n<li>Apples &ndash; 3&euro;</li>\n"
    "<li>Pears</li>\n</ol>\n<p>Contact: <em>shop@example.com</em></p>\n<!-- footer -->\n</body>\n</html>",
]
HTML_BIG = [
    "<p>para &amp; <i>it</i></p>\n<ul><li>item</li></ul>" * 3000,
    "<div>" * 5000 + "x" + "</div>" * 5000,
    "x" * 100000,
]

CASES = {
    "HTML_CASES": ("clean_html_mapper", {}, HTML),
    "HTML_BIG": ("clean_html_mapper", {}, HTML_BIG),
}
FILES = {
    "HTML_CASES": "html.rs",
    "HTML_BIG": "html.rs",
}

IP = [
    "", "no ip here", "server at 192.168.1.1 is down", "255.255.255.255", "0.0.0.0", "256.1.1.1", "1.2.3.256",
    "1.2.3.4.5.6", "01.02.03.04", "10.0.0.1/24", "version 1.2.3", "a1.1.1.1b", "999.999.999.999",
    "2001:0db8:85a3:0000:0000:8a2e:0370:7334", "2001:db8::1", "FE80:0:0:0:0:0:0:1 ok", "fe80:0:0:0:0:0:0:1:2:3",
    "12345:1:1:1:1:1:1:1", "g001:1:1:1:1:1:1:1", "١.٢.٣.٤", "١٢:٣٤:1:1:1:1:1:1", "０.１.２.３", "1.1.1.1\n2.2.2.2\n",
    "ip=172.16.254.1;port=80", "数据192.168.0.1处理", "249.250.251.252", "199.200.201.202", "1.1.1", "1..1.1.1",
]
COPYRIGHT = [
    "", "int x;", "/* Copyright 2024 Foo */\nint x;", "/* copyright */", "/* COPYRIGHT */ a /* copyright */",
    "/* plain comment */\n// Copyright line\nint x;", "// Copyright 2020\n// All rights reserved\n\nint main() {}",
    "# Copyright\n# License MIT\nimport os\n# not removed", "-- sql comment\nSELECT 1;", "\n\n\ncode", "//\n#\n--\n",
    "a\n// b", " // indented\ncode", "/* multi\n * line\n * Copyright (c) 2019\n */\ncode /* second copyright */",
    "/** doc ** copyright **/x", "/* a */ /* copyright */", "/*/ copyright */", "/* unterminated copyright",
    "x /* CoPyRiGhT */ y", "/* copyr\u0130ght */z", "/* copyr\u0131ght */z", "/* copy right */z", "#!/bin/sh\necho",
    "-\n--x\n", "\r\n# a\r\nb", "// 版权所有\n代码",
]
REPLACE = ["", "abc 123 foo FOO bar@baz x@y", "no match", "foo42foo", "a\nc abc", "数字123和foo"]
REPLACE_SHARED = ["", "xyzzy", "nothing", "x\ny"]

CASES.update({
    "IP_CASES": ("clean_ip_mapper", {}, IP),
    "IP_REPL_CASES": ("clean_ip_mapper", {"repl": "<IP>"}, IP),
    "IP_PATTERN_CASES": ("clean_ip_mapper", {"pattern": r"r'\d+\.\d+'", "repl": "#"}, IP),
    "COPYRIGHT_CASES": ("clean_copyright_mapper", {}, COPYRIGHT),
    "REPLACE_LIST_CASES": ("replace_content_mapper",
                           {"pattern": [r"\d+", "(?i)foo", r"r'(\w+)@(\w+)'"], "repl": ["<N>", "bar", r"\2 at \1"]}, REPLACE),
    "REPLACE_ONE_CASES": ("replace_content_mapper", {"pattern": "a.c", "repl": "X"}, REPLACE),
    "REPLACE_SHARED_CASES": ("replace_content_mapper", {"pattern": ["x", "y"], "repl": "-"}, REPLACE_SHARED),
})
for t in ["IP_CASES", "IP_REPL_CASES", "IP_PATTERN_CASES", "COPYRIGHT_CASES", "REPLACE_LIST_CASES",
          "REPLACE_ONE_CASES", "REPLACE_SHARED_CASES"]:
    FILES[t] = "clean_more.rs"

HEADER = [
    "", "no heading here", "intro\n\\section{Intro}\ntext", "\\section{A}", "pre \\section*{Star} post",
    "pre \\section[short]{Long title} body", "pre \\section[a]b]{x} body", "pre \\section[a] {x}", "pre \\section[a]",
    "pre \\section{unclosed", "pre \\sections{x}", "pre \\sectionx{x} \\part{P}", "pre \\subsection{S}", "a \\subsubsection{SS} b",
    "a \\paragraph{P} b", "a \\subparagraph{SP} b", "a \\chapter{C} b \\section{S}", "a \\part*[x]{y}", "a \\section\n{x}",
    "a \\section_{x}", "a \\section é{x}", "a \\sectioné{x}", "a \\section\u0301{x}", "x \\\\section{y}", "\\section",
    "a \\section{\n}", "a \\section[\n]{\n}", "a \\section[x]{", "a \\section[x]]{y}", "a \\section*[x]{y}", "a \\section**{y}",
    "a \\section{x} \\section{y}", "數學 \\section{標題} 內容", "a \\Section{x}", "a \\section}{x}", "a \\section[}]{x",
]
BIB = [
    "", "no bib", "text\n\\bibliography{refs}\nmore", "text \\bibliography{", "text \\bibliography{refs", "a \\bibliography{} b",
    "a \\appendix b", "a \\begin{references} b", "a \\begin{REFERENCES} b", "a \\begin{References} b", "a \\begin{thebibliography}{9} b",
    "a } \\bibliography{x", "x\\appendixy", "a \\begin{thebibliography} \\appendix", "a \\bibliographystyle{plain} b",
    "\\appendix", "数 \\appendix 学", "a \\\\appendix",
]
COMMENTS = [
    "", "no comment", "a % comment", "a %", "a %\nb", "a\\% not a comment", "50\\% and 10% real", "% full line\nnext",
    "%a\n%b\nc", "x\n% line\ny", "x%y\n%z\nw", "%%x", "a%%b", "\n%x", "a\n%\nb", "line % c1\nline2 % c2\n", "é%x", "数%注释",
    "a\\\\% c", "%", "%\n", "text\r\n% c\r\nmore", "a %b\n\n%c", "  % indented", "x%\ny%z",
]
MACRO = [
    "", "no macros", "\\newcommand{\\R}{\\mathbb{R}}\nLet $x \\in \\R$.", "\\newcommand*{\\eps}{\\varepsilon}\n$\\eps>0$ \\eps",
    "\\def\\foo{bar}\n\\foo baz \\foo.", "\\def \\foo {bar}\n\\foo!", "\\def\n\\foo\n{bar}\n\\foo!", "\\newcommand{\\a}{1}\n\\a\\a\\a.",
    "\\newcommand{\\a}{1}\n\\ab \\a1 \\a_ \\a", "\\newcommand{\\x}{X}\n\\newcommand{\\x}{Y}\n\\x.", "\\def\\x{D}\n\\newcommand{\\x}{N}\n\\x.",
    "\\newcommand{\\x}{a}{b}\n\\x.", "\\newcommand{\\x}{a} trailing\n\\x.", "\\newcommand{\\x}{}\n[\\x]", "\\newcommand{\\x_y}{v}\n\\x_y.",
    "\\newcommand{\\v}{é数😀\\\\ \\1 \\g<0>}\n\\v.", "\\newcommand{\\v}{a\tb}\n\\v.", "\\newcommand{\\x}[1]{#1}\n\\x{a}.",
    "\\renewcommand{\\x}{y}\n\\x.", "\\newcommand{\\A}{\\B}\n\\newcommand{\\B}{b}\n\\A.", "\\newcommand{\\B}{b}\n\\newcommand{\\A}{\\B}\n\\A.",
    "\\newcommand{\\x}{v}\r\n\\x.", "\\newcommand{\\x}{v}\n\\x\n", "\\def\\x{v}", "\\defx\\y{v}\n\\y.", "\\def\\x1{v}\n\\x1.",
    "\\newcommand {\\x}{v}\n\\x.", "\\newcommand{\\x}{v}\\newcommand{\\y}{w}\n\\x.\\y.", "\\newcommand{\\x}{v}\n\\newcommand{\\y}{\\x}\n\\y.",
]
LONG_LATEX = ("\\newcommand{\\R}{\\mathbb{R}}\n\\def\\eps{\\varepsilon}\n% preamble\n" + "intro " * 20000
              + "\n\\section{Main} x \\R, \\eps. 50% done % note\n" + "body \\R " * 20000 + "\n\\bibliography{refs}\n" + "ref " * 10000)

CASES.update({
    "HEADER_CASES": ("remove_header_mapper", {}, HEADER),
    "HEADER_KEEP_CASES": ("remove_header_mapper", {"drop_no_head": False}, HEADER),
    "BIBLIOGRAPHY_CASES": ("remove_bibliography_mapper", {}, BIB),
    "COMMENTS_CASES": ("remove_comments_mapper", {}, COMMENTS),
    "COMMENTS_NO_INLINE_CASES": ("remove_comments_mapper", {"inline": False}, COMMENTS),
    "COMMENTS_NO_MULTILINE_CASES": ("remove_comments_mapper", {"multiline": False, "doc_type": ["tex", "md"]}, COMMENTS),
    "MACRO_CASES": ("expand_macro_mapper", {}, MACRO),
})
LATEX_BIG_OPS = ["remove_header_mapper", "remove_bibliography_mapper", "remove_comments_mapper", "expand_macro_mapper"]
for t in ["HEADER_CASES", "HEADER_KEEP_CASES", "BIBLIOGRAPHY_CASES", "COMMENTS_CASES", "COMMENTS_NO_INLINE_CASES",
          "COMMENTS_NO_MULTILINE_CASES", "MACRO_CASES", "LATEX_BIG"]:
    FILES[t] = "latex.rs"
CASES["LATEX_BIG"] = (LATEX_BIG_OPS, {}, [LONG_LATEX])

WORDS = [
    "", "   ", "\n\n", "a", "short words only", "a  b   c", "tab\tseparated\twords", "line one\n\nline three\n",
    "supercalifragilisticexpialidocious is long", "(((((parenthesized)))))", "!!!!!!!!!!!", "ab!!!!!!!!", "数据处理是一个很长的中文词组",
    "e\u0301e\u0301e\u0301 combining", "😀😀😀😀😀😀😀 emoji", "http://example.com/very/long/path ok", "visit www.site.org today",
    "mail@x.com //comment href= test", "HTTP upper", ".com alone", "x\u00a0y nbsp\u3000ideo", " \t \n \t ", "end \n",
    "ab cab abc a-b", "数 数据 据", "a\r\nb c\r\n", "ＡＢＣＤＥＦＧ full", "--http--", "http", "a  \t  b",
]
REPEAT = [
    "", "One. Two. One.", "Hello world! Hello world! Bye.", "a. a. a.", "重复。重复。不同。", "他说：“你好。”你好。",
    "Wait...... Wait...... ok", "嗯……嗯……好", "Line one.\nLine one.\n\nLine two.", "Same, same. same! SAME?",
    "x\ny\nx", "  Spaces. Spaces.  ", "6” quote 6”x", "{”x}”y", "2’ 2’", "Q? Q? A.", "Ünïcödé. Ünïcödé.", "İstanbul. istanbul.",
    "ab. ab. ab", "no punctuation here", "1.2.3.4", "End.", "😀. 😀. ok", "Tab\tand. Tab\tand.", "中文句子。中文句子！English. English.",
]
SPECIFIC = [
    "", "no special", "◆ bullet ● points ■", "►▼▲▴∆▻▷❖♡□ all", "a|b|c", "x-y]z\\w^v", "abc", "◆\n●", "数据◆处理",
]
TABLES = [
    "", "no table", "intro\na b\nc d\nend", "a b\nc d\ne f\n", "x\na b\nc d\n", "x\na b\nc d\n\ne f\n", "x\na|b\nc|d\n",
    "x\na b c\nd e f\ng h\n", "x\na b c\nd e f\n", "x\none row only\n", "x\na  b\nc d\n", "x\na\tb\nc\td\n", "x\na | b\nc | d\n",
    "x\na|b c\nd e\n", "x\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21\n",
    "x\na b\nc d", "x\na b\r\nc d\r\n", "x\n数 据\n处 理\n", "x\na b\nc d e\nf g h\nk l\n", "\na b\nc d\n", "x\n\na b\nc d\n",
    "x\na||b\nc||d\n", "x\na|||b\nc|||d\n", "x\n|a b\nc d|\n", "x\na\u3000b\nc d\n", "x\na b\nc d\n\n\ny\n", "x\na b \nc d\n",
    "Name Age\nBob 30\nAmy 25\nText after.", "x\na,b c\nd e\nmore text here\n",
]
NON_CHINESE = [
    "", "中文", "中文abc123", "中文，标点。测试！", "English only.", "数据 处理 2024年", "Ｆｕｌｌ　ｗｉｄｔｈ", "日本語のテキスト", "한국어 텍스트",
    "emoji 😀 中", "mixed: a-b_c/d*e+f(g)h&i", "“引号”·点", "tab\tnewline\n中", "繁體中文", "\u9fa5\u9fa6\u4e00\u4dff", "١٢٣ ٣",
]
REMOVE_LONG = ("Hello world. " * 5000 + "\n" + "a|b c\n" * 3000 + "see http://x.com now " * 3000 + "数据处理。" * 5000
               + "\n" + "x" * 50000 + " end")
CASES.update({
    "LONG_WORDS_CASES": ("remove_long_words_mapper", {}, WORDS),
    "LONG_WORDS_PARAMS_CASES": ("remove_long_words_mapper", {"min_len": 3, "max_len": 6}, WORDS),
    "SUBSTRINGS_CASES": ("remove_words_with_incorrect_substrings_mapper", {}, WORDS),
    "SUBSTRINGS_PARAMS_CASES": ("remove_words_with_incorrect_substrings_mapper", {"substrings": ["ab", "数"]}, WORDS),
    "REPEAT_CASES": ("remove_repeat_sentences_mapper", {}, REPEAT),
    "REPEAT_PARAMS_CASES": ("remove_repeat_sentences_mapper",
                            {"lowercase": True, "ignore_special_character": False, "min_repeat_sentence_length": 5}, REPEAT),
    "SPECIFIC_CHARS_CASES": ("remove_specific_chars_mapper", {}, SPECIFIC),
    "SPECIFIC_CHARS_LIST_CASES": ("remove_specific_chars_mapper", {"chars_to_remove": ["|a", "-", "]", "\\", "^"]}, SPECIFIC),
    "TABLE_CASES": ("remove_table_text_mapper", {}, TABLES),
    "TABLE_THREE_CASES": ("remove_table_text_mapper", {"min_col": 3, "max_col": 3}, TABLES),
    "NON_CHINESE_CASES": ("remove_non_chinese_character_mapper", {}, NON_CHINESE),
    "NON_CHINESE_NONE_CASES": ("remove_non_chinese_character_mapper",
                               {"keep_alphabet": False, "keep_number": False, "keep_punc": False}, NON_CHINESE),
})
REMOVE_BIG_OPS = [("remove_long_words_mapper", {"max_len": 10}), ("remove_words_with_incorrect_substrings_mapper", {}),
                  ("remove_repeat_sentences_mapper", {}), ("remove_table_text_mapper", {}), ("remove_non_chinese_character_mapper", {})]
CASES["REMOVE_BIG"] = (REMOVE_BIG_OPS, {}, [REMOVE_LONG])
for t in ["LONG_WORDS_CASES", "LONG_WORDS_PARAMS_CASES", "SUBSTRINGS_CASES", "SUBSTRINGS_PARAMS_CASES", "REPEAT_CASES",
          "REPEAT_PARAMS_CASES", "SPECIFIC_CHARS_CASES", "SPECIFIC_CHARS_LIST_CASES", "TABLE_CASES", "TABLE_THREE_CASES",
          "NON_CHINESE_CASES", "NON_CHINESE_NONE_CASES", "REMOVE_BIG"]:
    FILES[t] = "remove.rs"

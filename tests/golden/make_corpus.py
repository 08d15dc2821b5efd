#!/usr/bin/env python3
"""Generate tests/golden/corpus.jsonl deterministically.

Usage (from /work/main):  python3 tests/golden/make_corpus.py
No randomness is used (the only pseudo-random piece uses random.Random(20241202)),
so the output is byte-identical on every run. Each row is
{"text": ..., "meta": {"source": ..., "id": N}} plus, in a few rows, extra pass-through
fields ("images": [], "lang": ...). One row carries an extra meta key ("url") so that the
meta struct gets a field that is null in every other row.
"""
import json
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus.jsonl")

rows = []  # list of (source, text, extra_fields_dict, extra_meta_dict)


def add(source, text, extra=None, meta_extra=None):
    rows.append((source, text, extra or {}, meta_extra or {}))


# ---------------------------------------------------------------- plain English
add("web/en", "The quick brown fox jumps over the lazy dog. This sentence contains every letter of the "
    "English alphabet and is often used to test typewriters and computer keyboards.")
add("web/en", "Large language models are trained on vast amounts of text collected from the internet, books, "
    "and code repositories. Careful data cleaning, such as removing duplicates and low-quality pages, "
    "has a measurable effect on downstream performance.")
add("wiki/en", "Photosynthesis is the process by which green plants and some other organisms use sunlight to "
    "synthesize foods from carbon dioxide and water. Photosynthesis in plants generally involves the green "
    "pigment chlorophyll and generates oxygen as a byproduct.")
add("wiki/en", "The Treaty of Westphalia, signed in 1648, ended the Thirty Years' War in the Holy Roman Empire "
    "and the Eighty Years' War between Spain and the Dutch Republic.\n\nHistorians often cite it as the "
    "origin of the modern system of sovereign states.")
add("forum/en", "Has anyone else had trouble getting the new driver to install? I tried rebooting twice and "
    "it still says the device is not recognized. Any help would be appreciated!")
add("news/en", "Officials said on Tuesday that the bridge would remain closed for at least three more weeks "
    "while engineers assess the damage caused by last month's flooding.")
add("books/en", "It was a bright cold day in April, and the clocks were striking thirteen. Winston Smith, his "
    "chin nuzzled into his breast in an effort to escape the vile wind, slipped quickly through the glass "
    "doors of Victory Mansions.")
add("qa/en", "Q: What is the boiling point of water at sea level?\nA: 100 degrees Celsius, or 212 degrees "
    "Fahrenheit.")
add("web/en", "Step 1: Preheat the oven to 180C.\nStep 2: Mix the flour, sugar and butter.\nStep 3: Bake for "
    "25 minutes or until golden brown.\nStep 4: Let it cool before serving.")
add("web/en", "one two three four five six seven eight nine ten")           # exactly 10 words
add("web/en", "one two three four five six seven eight nine")               # 9 words
add("web/en", "alpha beta gamma delta epsilon")                             # exactly 5 words
add("web/en", "alpha beta gamma delta")                                     # 4 words
add("web/en", " ".join(f"word{i}" for i in range(50)))                      # exactly 50 words
add("web/en", " ".join(f"token{i}" for i in range(51)))                     # 51 words
add("web/en", "Hello, world! -- ... ??? !!! hello again; (yes) [no] {maybe}")  # words made of punctuation
add("web/en", "It's a well-known fact: state-of-the-art models aren't always the best choice. "
    "Sometimes a simple baseline wins.", {"lang": "en"})
add("web/en", "Mixed\tseparators\there: tabs\tand\nnewlines\nand  double  spaces   triple.")

# ---------------------------------------------------------------- short rows
add("short", "")
add("short", "a")
add("short", "ok")
add("short", "Hi!")
add("short", "12345")
add("short", "?!")
add("short", "abcdefghi")        # 9 chars
add("short", "abcdefghij")       # exactly 10 chars (default min_len)
add("short", "abcdefghijklmnopqrs")   # 19 chars
add("short", "abcdefghijklmnopqrst")  # exactly 20 chars
add("short", "é")
add("short", "👍")
add("short", "中文")

# ---------------------------------------------------------------- whitespace-only
add("ws", " ")
add("ws", "   \t  ")
add("ws", "\n\n\n")
add("ws", "\r\n")
add("ws", "\u00a0\u3000\u200b")
add("ws", "\x1c\x1d\x1e\x1f")

# ---------------------------------------------------------------- emails
add("email", "Contact us at support@example.com for more information.")
add("email", "Send your CV to John.Doe+jobs@mail.company.co.uk or hr_team@startup.io today.")
add("email", "My address is ADMIN@EXAMPLE.COM and my other one is Admin@Example.com.")
add("email", "Invalid ones: user@localhost, @example.com, user@.com, user@example., plain@text and a@b.c")
add("email", "Mixed: first.last@sub.domain.org,second@test.net;third@x.y.zz (fourth@foo.bar)")
add("email", "emails in text:bob@mail.ru,alice@web.de and 张三@example.cn and user@例子.com")
add("email", "The thread <mailto:dev-list@lists.apache.org> has 42 replies; reply-to: noreply@github.com.")

# ---------------------------------------------------------------- links
add("links", "Visit http://example.com for details.")
add("links", "Secure site: https://www.example.org/path/to/page?query=1&lang=en#section-2 is great.")
add("links", "Go to www.google.com or www2.example.net/index.html now.")
add("links", "Bare domain: example.com/path/file.txt and github.io/ also docs.python.org/3/library/re.html")
add("links", "See the docs (https://en.wikipedia.org/wiki/Python_(programming_language)) for history.")
add("links", "Trailing punctuation: https://example.com/a. And https://example.com/b, and https://example.com/c!"
    " Also (http://example.com/d) and \"https://example.com/e\".")
add("links", "FTP: ftp://files.example.com/pub/file.tar.gz and mailto:someone@example.com and "
    "file:///home/user/notes.txt")
add("links", "Custom schemes: git+ssh://git@github.com/user/repo.git, s3://bucket/key, and news:comp.lang.python")
add("links", "HTTPS://EXAMPLE.COM/UPPER and Http://Mixed.Case.Org/Path")
add("links", "Links in a list:\n- https://a.example/one\n- https://b.example/two\n- www.c.example/three")
add("links", "No links here, just a sentence with a period.Next sentence starts without a space.")
add("links", "Look at https://例え.jp/パス and http://[::1]:8080/api/v1 and http://127.0.0.1:5000/.",
    meta_extra={"url": "https://example.com/page"})

# ---------------------------------------------------------------- HTML
add("html", "<p>This is a <b>bold</b> statement with a <a href=\"https://example.com\">link</a>.</p>")
add("html", "<html><head><title>Test</title></head><body><h1>Header</h1><ul><li>One</li><li>Two</li>"
    "</ul><script>var x = 1 < 2 && 3 > 2;</script></body></html>")
add("html", "&lt;div&gt; entities &amp; such &quot;quoted&quot; &#39;single&#39; &nbsp; &copy; 2024")
add("html", "<div class=\"content\">\n  <p>Paragraph one.</p>\n  <p>Paragraph two.</p>\n</div>")

# ---------------------------------------------------------------- Unicode oddities
add("unicode", "Non\u00a0breaking\u00a0spaces\u00a0between\u00a0every\u00a0word\u00a0here.")
add("unicode", "Zero\u200bwidth\u200bspaces\u200band\u200cjoiners\u200dhidden\u2060inside\ufeffthe text.")
add("unicode", "Ideographic\u3000space\u3000and\u2003em\u2002en\u2009thin\u202fnarrow\u205fmath spaces.")
add("unicode", "全角标点：你好，世界！这是测试吗？（是的）。“引号”和‘单引号’、顿号；分号～波浪号【括号】《书名》「引用」")
add("unicode", "Curly “double” and ‘single’ quotes, an em—dash, an en–dash, and an ellipsis…")
add("unicode", "Combining accents: e\u0301 a\u0300 o\u0308 vs precomposed é à ö; n\u0303 vs ñ.")
add("unicode", "Emoji: 😀🎉👍🏽 family 👨\u200d👩\u200d👧\u200d👦 flags 🇺🇸🇯🇵 and symbols ★☆♥✓ ❤️")
add("unicode", "Control\x1cchars\x1dbetween\x1ewords\x1fhere and a bell\x07 and a form feed\x0c too.")
add("unicode", "\tLeading tab and trailing tab\t")
add("unicode", "Windows line endings\r\nsecond line\r\nthird line\r\n")
add("unicode", "  \u3000  Padded with mixed whitespace on both sides \u00a0 \n")
add("unicode", "Fullwidth ＡＢＣ ａｂｃ １２３ digits and ％ percent and ．dot and ━━ box and ► arrow 〈angle〉")
add("unicode", "Guillemets «bonjour» and „German“ quotes and ´acute and ∶ratio")
add("unicode", "Line\u2028separator and paragraph\u2029separator and next\x85line.")
add("unicode", "Soft\u00adhyphen and replacement \ufffd char and object \ufffc replacement.")
add("unicode", "Math: ∑ x² + y³ ≤ ∞, π ≈ 3.14159, ±5 × 3 ÷ 2 − 1 = ?")

# ---------------------------------------------------------------- other languages
add("zh", "数据清洗是大语言模型训练中非常重要的一步。通过去除重复、低质量的内容，可以显著提升模型的表现。",
    {"lang": "zh"})
add("zh", "北京是中华人民共和国的首都，也是全国的政治、文化中心。它有着三千多年的建城史。", {"lang": "zh"})
add("zh", "你好")
add("ja", "吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所で"
    "ニャーニャー泣いていた事だけは記憶している。", {"lang": "ja"})
add("ja", "カタカナとひらがなと漢字を混ぜた文章です。ラーメンが好きです！")
add("ar", "مرحبا بالعالم. هذه جملة باللغة العربية لاختبار معالجة النصوص من اليمين إلى اليسار، مع علامات ترقيم.",
    {"lang": "ar"})
add("ru", "Съешь же ещё этих мягких французских булок, да выпей чаю. Это предложение содержит все буквы "
    "русского алфавита.", {"lang": "ru"})
add("de", "Falsches Üben von Xylophonmusik quält jeden größeren Zwerg. Die Straße heißt „Hauptstraße“ und "
    "liegt in München.", {"lang": "de"})
add("mixed", "English, 中文, 日本語, العربية, русский, Deutsch, हिन्दी, 한국어, ελληνικά — all in one line.")
add("hi", "नमस्ते दुनिया। यह हिंदी में एक परीक्षण वाक्य है।")
add("ko", "안녕하세요. 이것은 한국어 테스트 문장입니다.")

# ---------------------------------------------------------------- code-like
add("code", "def f(x):\n    return {'a': [1, 2, 3], \"b\": (x ** 2) // 3 % 7}\n\nprint(f(10))  # => {...}")
add("code", "#include <stdio.h>\nint main(void) { printf(\"%d\\n\", 42); return 0; }")
add("code", "SELECT u.id, COUNT(*) AS n FROM users u JOIN orders o ON o.user_id = u.id WHERE o.total > 100.00 "
    "GROUP BY u.id HAVING n >= 2;")
add("code", "$ curl -sSL https://get.example.sh | bash -s -- --prefix=/usr/local && echo \"done\" || exit 1")
add("code", "{\"key\": \"value\", \"list\": [1, 2, 3], \"nested\": {\"a\": null, \"b\": true}}")
add("code", "regex: ^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$ matches emails; \\d{3}-\\d{4} matches phones.")
add("code", "@@@ ### $$$ %%% ^^^ &&& *** ((( ))) ___ +++ === ||| ~~~ ``` <<< >>> ??? /// \\\\\\")
add("code", "a!b@c#d$e%f^g&h*i(j)k_l+m")
add("code", "ab!!")                          # alnum ratio exactly 0.5
add("code", "abc!")                          # special ratio exactly 0.25
add("code", "abcdefghijklmnopqrs!")          # special ratio exactly 0.05
add("code", "abcdefg!!!")                    # special ratio exactly 0.3, alnum 0.7
add("code", "abcdefghi!")                    # alnum ratio exactly 0.9
add("code", "x" + "-" * 29 + "yyy")          # low alnum ratio

# ---------------------------------------------------------------- repetitive
add("rep", "abcdefghij" * 30)
add("rep", "0123456789" * 5)
add("rep", "ha" * 100)
add("rep", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")
add("rep", "Buy now! " * 20)
add("rep", "This line is repeated.\n" * 8)
add("rep", "Header\nBody text that is unique.\nFooter\nHeader\nAnother unique body.\nFooter\nHeader\nFooter")
add("rep", "the cat sat on the mat " * 6 + "and then the dog came along and sat on the cat.")
add("rep", "abcde" * 4)                       # 20 chars, rep_len 5 grams
add("rep", "abcdefghijk")                     # 11 chars -> 2 ten-grams, both unique

# ---------------------------------------------------------------- numbers-only
add("num", "1234567890")
add("num", "3.14159 2.71828 1.41421 1.73205 0.57721 1.61803 2.50290 4.66920 0.91596 1.20205")
add("num", "2024-01-15 12:30:45")
add("num", "+1 (555) 123-4567")
add("num", "١٢٣٤٥٦٧٨٩٠ and ０１２３ and ⅫⅣ")

# ---------------------------------------------------------------- very long line
rng = random.Random(20241202)
vocab = ("data juicer filter mapper pipeline token corpus quality model training language text sample "
         "dataset clean normalize dedup hash stats ratio length window shard export recipe").split()
long_words = []
total = 0
while total < 20000:
    w = rng.choice(vocab)
    long_words.append(w)
    total += len(w) + 1
add("long", " ".join(long_words)[:20000])
add("long", ("Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 40).strip())

# ---------------------------------------------------------------- exact duplicates
DUP_A = "This exact paragraph appears several times in the corpus to test exact deduplication."
DUP_B = "Subscribe to our newsletter for the latest updates!"
add("dup", DUP_A)
add("dup", DUP_B)
add("dup", DUP_A)
add("dup", DUP_A, {"images": []})
add("dup", DUP_B)
add("dup", "")                              # second empty string

# ---------------------------------------------------------------- near duplicates
DUP_C = "The Quick Brown Fox Jumps Over The Lazy Dog"
add("neardup", DUP_C)
add("neardup", DUP_C.lower())                                  # case only
add("neardup", DUP_C.upper())                                  # case only
add("neardup", "The  Quick Brown   Fox Jumps Over The Lazy Dog")  # whitespace only
add("neardup", "  " + DUP_C + "  ")                             # leading/trailing spaces (strip)
add("neardup", DUP_C + "\n")                                   # trailing newline
add("neardup", "The Quick Brown Fox, Jumps Over The Lazy Dog!")   # ASCII punctuation
add("neardup", "The Quick Brown Fox Jumps Over The Lazy Dog 2024")  # digits
add("neardup", "The Quick Brown Fox Jumps Over The 3 Lazy Dogs")    # different word -> distinct
add("neardup", "The Quick Brown Fox Jumps Over The Lazy Dog。")      # fullwidth punct (not ASCII)
add("neardup", "The\u00a0Quick Brown Fox Jumps Over The Lazy Dog")   # NBSP (\s in regex module)
add("neardup", "The Quick Brown Fox Jumps Over The Lazy Dog ٣")     # Arabic-Indic digit (\d unicode)
add("neardup", "Version 1.2.3 released on 2023-05-01.")
add("neardup", "Version 4.5.6 released on 2024-12-31.")            # differs only by digits
add("neardup", "VERSION 7.8 RELEASED ON 2025/01/02!!!")             # case+digits+punct
add("neardup", "Hello World")
add("neardup", "hello world")
add("neardup", "HELLO, WORLD.")
add("neardup", "Straße")
add("neardup", "STRASSE")
add("neardup", "strasse")
add("neardup", "12345 67890")                                       # -> empty after ignore_non_character
add("neardup", "!!! ???")                                           # -> empty after ignore_non_character

# ---------------------------------------------------------------- misc realistic / boundary
add("web/en", "Cookie policy: We use cookies to improve your experience. By continuing to browse, you agree "
    "to our use of cookies. Learn more at https://example.com/cookies or email privacy@example.com.")
add("web/en", "Terms & Conditions | Privacy Policy | Contact Us | © 2024 Example Inc. All rights reserved.")
add("web/en", "Click here >>> FREE $$$ !!! Limited offer *** ACT NOW *** <<< 100% guaranteed!!!")
add("web/en", "Table:\nName | Age | City\nAlice | 30 | Paris\nBob | 25 | Berlin\nCarol | 41 | Tokyo")
add("web/en", "Markdown **bold** _italic_ `code` [link](https://example.com/md) ![img](/static/a.png) > quote")
add("web/en", "Path-like text: C:\\Users\\name\\Documents\\file.txt and /usr/local/bin/python3 and ~/.bashrc")
add("web/en", "Quotes inside: she said \"don't\" and he replied 'won't' — then left.", {"lang": "en"})
add("web/en", "A sentence with trailing spaces and newline.   \n")
add("forum/en", "lol\n\n\n\nok\n\n\nbye", {"images": []})
add("forum/en", "Thanks!!! 🙏🙏🙏 This worked perfectly for me 👌", {"images": []})
add("books/en", "“Is it true?” she asked. “Of course,” he replied… “Why wouldn’t it be?”")
add("wiki/en", "Albert Einstein (14 March 1879 – 18 April 1955) was a German-born theoretical physicist who is "
    "best known for developing the theory of relativity.")
add("legal", "Section 4.2(b)(iii): The Licensee shall not, without prior written consent, sublicense, "
    "assign, or otherwise transfer any rights granted hereunder.")
add("chat", "User: can u help me w/ my homework??\nAssistant: Of course! What subject is it?")
add("chat", "User: translate 'good morning' to French\nAssistant: « Bonjour » is the usual greeting.")
add("boundary", "x" * 200)                 # exactly 200 chars (params max_len)
add("boundary", "y" * 201)                 # 201 chars
add("boundary", "aaaaa!!!!!")              # alnum 0.5, special 0.5
add("boundary", "abcdefghijklmnopqrstuvwxyz0123456789")
add("boundary", "END OF CORPUS.")

assert len(rows) >= 140, len(rows)

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    for i, (source, text, extra, meta_extra) in enumerate(rows):
        meta = {"source": source, "id": i}
        meta.update(meta_extra)
        obj = {"text": text, "meta": meta}
        obj.update(extra)
        f.write(json.dumps(obj, ensure_ascii=False) + "\n")

print(f"wrote {len(rows)} rows to {OUT}")

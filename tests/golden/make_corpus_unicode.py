#!/usr/bin/env python3
"""Generate tests/golden/corpus_unicode.jsonl deterministically (no randomness, standard library only).

Usage (from /work/main):  python3 tests/golden/make_corpus_unicode.py
The corpus of the fix_unicode_mapper goldens (ftfy.fix_text): mojibake made the way real software makes
it (UTF-8 bytes decoded as latin-1, windows-1252 and its "sloppy" variant that keeps undefined bytes,
windows-1250/1251/1253/1254/1257, iso-8859-2, mac-roman, cp437; twice over; with non-breaking spaces
turned into spaces and bytes lost as '?' or U+FFFD; CESU-8 and Java's modified UTF-8), mojibake inside
correct text, HTML entities (named, numeric, hex, malformed, with and without a '<' in the text), C1
controls, line breaks (CRLF, CR, U+2028/2029, U+0085), terminal escapes, control characters, curly
quotes, ligatures, fullwidth and compatibility characters (NFKC/NFKD), combining marks (NFC/NFD), and
text ftfy must leave alone: correct multilingual prose and strings that merely look like mojibake.
Each row is {"text": ..., "meta": {"source": ..., "id": N}}; `id` is the 0-based line number.
"""
import json
import os

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus_unicode.jsonl")

rows = []  # (source, text)


def add(source, text):
    rows.append((source, text))


def sloppy(data, encoding):
    """bytes.decode(encoding), keeping each undefined byte as the latin-1 character: what ftfy calls
    "sloppy-" decoding, and what browsers and many tools do with windows-125x text."""
    out = []
    for b in data:
        try:
            out.append(bytes([b]).decode(encoding))
        except UnicodeDecodeError:
            out.append(chr(b))
    return "".join(out)


def moji(text, encoding="windows-1252"):
    """`text` encoded as UTF-8 and misread as `encoding`."""
    return sloppy(text.encode("utf-8"), encoding)


def lossy(text, encoding="windows-1252", repl="?"):
    """Like moji(), but bytes undefined in `encoding` are lost: replaced by `repl`."""
    return text.encode("utf-8").decode(encoding, errors="replace").replace("\ufffd", repl)


# ---------------------------------------------------------------- UTF-8 read as windows-1252
add("moji/1252", moji("The café on the corner serves crème brûlée and piña coladas."))
add("moji/1252", moji("“Smart quotes” and ‘single quotes’ — with an em dash… and a bullet • here."))
add("moji/1252", moji("She said: “I don’t know what you’re talking about.”"))
add("moji/1252", moji("Ünïcödé: Grüße aus München, schön dass du da bist!"))
add("moji/1252", moji("Price: 25 € (about £21); temperature 21 °C ± 0.5; 5 × 3 ÷ 2"))
add("moji/1252", moji("Málaga, Ávila, Íñigo, Ólafur, Úrsula, Ýmir, Ðorđe: accents on capitals."))
add("moji/1252", moji("Français: où est la bibliothèque ? L’été dernier, à Noël…"))
add("moji/1252", moji("São Paulo, Niterói, Florianópolis e Brasília são cidades do Brasil."))
add("moji/1252", moji("Emoji: 😀 😂 👍 ❤️ 🎉 🚀 and a flag 🇫🇷."))
add("moji/1252", moji("Family emoji 👨‍👩‍👧‍👦 and skin tones 👋🏽 survive the round trip?"))
add("moji/1252", moji("Japanese: 日本語のテキスト、東京は晴れです。"))
add("moji/1252", moji("Chinese: 数据清洗很重要。中文文本"))
add("moji/1252", moji("Korean: 안녕하세요, 세계!"))
add("moji/1252", moji("Русский текст: Привет, как дела?"))
add("moji/1252", moji("Ελληνικά: Καλημέρα κόσμε"))
add("moji/1252", moji("Math: ∑ xᵢ² ≤ ∞, √2 ≈ 1.414, α → β"))
add("moji/1252", moji("Trademark™ and copyright © 2024 ® — all rights reserved."))
add("moji/1252", moji("¯\\_(ツ)_/¯"))
add("moji/1252", moji("✔ No problems ✘ one problem ★ star"))
add("moji/1252", moji("Hebrew שלום and Arabic مرحبا in one line."))
add("moji/1252", moji("Hindi: नमस्ते दुनिया"))
add("moji/1252", moji("Thai: สวัสดีครับ"))
add("moji/1252", moji("naïve façade coöperate résumé"))
add("moji/1252", "Short: " + moji("é"))
add("moji/1252", moji("Ångström and Ørsted in Æbeltoft; Łódź, Kraków."))
add("moji/1252", moji("Vietnamese: Tiếng Việt có dấu, Hà Nội, Đà Nẵng."))
add("moji/1252", moji("Turkish: İstanbul, Ağrı, Şişli, ÇÖĞÜ"))
# UTF-8 read as latin-1: the C1 controls of windows-1252 quotes stay in the text.
add("moji/latin1", moji("“Hello,” she said. “It’s—well—complicated…”", "latin-1"))
add("moji/latin1", moji("schön, Straße, naïve, déjà vu", "latin-1"))
add("moji/latin1", moji("€100 and ¥500 and ₹300", "latin-1"))
add("moji/latin1", moji("Emoji 🙂 read as latin-1", "latin-1"))
add("moji/latin1", moji("東京タワー", "latin-1"))
# Other single-byte code pages.
add("moji/1251", moji("Привет, мир! Как дела? Всё хорошо.", "windows-1251"))
add("moji/1251", moji("Съешь же ещё этих мягких французских булок, да выпей чаю.", "windows-1251"))
add("moji/1251", moji("Українська: Їжак, ґанок, європейський.", "windows-1251"))
add("moji/1250", moji("Zażółć gęślą jaźń; Příliš žluťoučký kůň úpěl ďábelské ódy.", "windows-1250"))
add("moji/1250", moji("Magyar: árvíztűrő tükörfúrógép", "windows-1250"))
add("moji/1253", moji("Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.", "windows-1253"))
add("moji/1254", moji("Pijamalı hasta yağız şoföre çabucak güvendi.", "windows-1254"))
add("moji/1257", moji("Lietuvių kalba: ąčęėįšųūž. Latviešu: ģērbšanās.", "windows-1257"))
add("moji/iso-8859-2", moji("Čeština a slovenčina: ďakujem, ľúbim ťa.", "iso-8859-2"))
add("moji/macroman", moji("Mac Roman: café, naïve, “quotes”, – dash", "mac-roman"))
add("moji/macroman", moji("Größe: 10 cm × 20 cm", "mac-roman"))
add("moji/cp437", moji("DOS box: café ñandú über", "cp437"))
add("moji/cp437", moji("cp437 smart “quotes” and a € sign", "cp437"))

# ---------------------------------------------------------------- double and partial mojibake
add("moji/double", moji(moji("café crème")))
add("moji/double", moji(moji("“double-encoded quotes”")))
add("moji/double", moji(moji("Привет"), "windows-1252"))
add("moji/double", moji(moji("Zürich – 😀"), "latin-1"))
add("moji/triple", moji(moji(moji("é"))))
add("moji/mixed", "Correct: été, garçon. Broken: " + moji("été, garçon") + ". End.")
add("moji/mixed", "日本語 is fine, but " + moji("日本語") + " is not.")
add("moji/mixed", "Already right: “quotes”; wrong: " + moji("“quotes”") + ".")
add("moji/mixed", "Emoji ok 👍 and broken " + moji("👍") + " together.")
add("moji/mixed", "Straße (ok) vs " + moji("Straße") + " (broken) vs " + moji(moji("Straße")) + " (twice)")
add("moji/multiline", "line one is fine\n" + moji("line two: naïve café") + "\nline three: ok\n" + moji("“four”"))
# Non-breaking spaces turned into plain spaces inside mojibake (ftfy's restore_byte_a0).
add("moji/a0", moji("voilà le travail").replace("\xa0", " "))
add("moji/a0", moji("à la carte, à bientôt").replace("\xa0", " "))
add("moji/a0", moji("Prix : 30\xa0€, déjà payé").replace("\xa0", " "))
add("moji/a0", moji("The word “à” alone").replace("\xa0", " "))
add("moji/a0", moji("Português: à quele? às vezes à s").replace("\xa0", " "))
add("moji/a0", moji("Thai ภาษาไทย with spaces").replace("\xa0", " "))
add("moji/a0", moji("Hidden 😠 angry face").replace("\xa0", " "))
# Bytes lost in transit: undefined windows-1252 bytes became '?' or U+FFFD.
add("moji/lossy", lossy("Don’t “quote” me — Ágnes, Íris, Ýr"))
add("moji/lossy", lossy("Ð and Ý and Á", repl="\ufffd"))
add("moji/lossy", lossy("He said “hello” to me", repl="\ufffd"))
add("moji/lossy", moji("Ágnes").replace("\x81", "?"))
add("moji/lossy", moji("doesn’t").replace("\x99", "\ufffd"))
add("moji/lossy", moji("Привет", "windows-1251").replace("\x98", "\x1a"))
add("moji/lossy", "Plain question marks: Ã? is not a word, but neither is â€?")
# CESU-8 (surrogate pairs encoded one by one) and Java's modified UTF-8 NUL.
add("moji/cesu8", sloppy(b"CESU-8 emoji: \xed\xa0\xbd\xed\xb8\x80 smile", "latin-1"))
add("moji/cesu8", sloppy(b"CESU-8 emoji: \xed\xa0\xbd\xed\xb8\x80 smile \xc3\xa9", "windows-1252"))
add("moji/cesu8", sloppy(b"Java NUL: a\xc0\x80b \xc3\xa9t\xc3\xa9", "windows-1252"))
add("moji/cesu8", sloppy(b"Lone surrogate: \xed\xa0\xbd and caf\xc3\xa9", "windows-1252"))

# ---------------------------------------------------------------- HTML entities
add("html/named", "Fish &amp; chips &lt;3 &gt; &quot;quoted&quot; &apos;apos&apos;")
add("html/named", "&eacute;t&eacute; &agrave; l&rsquo;&eacute;cole &ndash; &mdash; &hellip; &copy; &reg; &trade;")
add("html/named", "Upper case: &AMP; &LT; &EACUTE; &Eacute; &COPY; &NBSP;x")
add("html/named", "Non-breaking&nbsp;space and&ensp;en space&thinsp;thin")
add("html/named", "Unknown entities stay: &nosuch; &foo123; &amp-not; &Amp; &eacute")
add("html/named", "Greek letters: &alpha;&beta;&gamma; &Omega; &pi; &infin; &ne; &le; &rarr; &hearts;")
add("html/numeric", "Decimal: &#233;t&#233; &#8220;hi&#8221; &#128512; &#39;x&#39; &#38;amp;")
add("html/numeric", "Hex: &#xe9;t&#xE9; &#X41; &#x1F600; &#x2019; &#x00A0;|")
add("html/numeric", "Windows-1252 numbers: &#128; &#150; &#147;quote&#148; &#x80; &#x9f;")
add("html/numeric", "Invalid: &#0; &#xD800; &#1114112; &#x110000; &#99999999999999; &#13; &#x1; &#65535;")
add("html/numeric", "Semicolons: &#59; &#x3b; and partial &#12abc; &#x; &#xZZ; &#x41g;")
add("html/numeric", "No semicolon: &#233 &#xe9 &eacute and &amp")
add("html/mixed", "The &lt;b&gt; tag is written &amp;lt;b&amp;gt; when escaped twice.")
add("html/mixed", "&amp;eacute; decodes only once per pass? &amp;amp;")
add("html/less-than", "a &lt; b but 1 < 2, so &amp; stays &amp; and &eacute; stays")
add("html/less-than", "<p>Caf&eacute; &amp; cr&egrave;me</p>")
add("html/less-than", "first line &amp; &eacute;\nsecond line has <b>bold</b> &amp;\nthird line &amp; too")
add("html/less-than", "&lt;script&gt; is escaped, no raw less-than here &amp; ok")
add("html/entity-moji", "Entity then mojibake: &amp; " + moji("café") + " &#x2014; " + moji("naïve"))
add("html/entity-moji", "Entity that makes mojibake: caf&Atilde;&copy; and &#195;&#169;t&#195;&#169;")
add("html/long", "&averyveryveryverylongentityname; &abcdefghijklmnopqrstuvwxy; &abcdefghijklmnopqrstuvwx;")

# ---------------------------------------------------------------- C1 controls, line breaks, escapes, controls
add("c1", "\x93Curly\x94 quotes and \x91single\x92 from windows-1252 \x96 en dash \x97 em dash")
add("c1", "Euro \x80100, ellipsis\x85 bullet\x95 trademark\x99 dagger\x86")
add("c1", "Undefined in windows-1252: \x81 \x8d \x8f \x90 \x9d and latin-1 é")
add("c1", "C1 next to CJK: 中文\x93引号\x94")
add("c1", "Only \x85 next line")
add("linebreak", "Windows\r\nline\r\nendings\r\n")
add("linebreak", "Old Mac\rline\rendings")
add("linebreak", "Mixed\r\n\r\rbreaks\n\r\n")
add("linebreak", "Unicode line\u2028separator and paragraph\u2029separator")
add("linebreak", "NEL\u0085next line and vertical tab\x0bform feed\x0c")
add("linebreak", "Trailing CR only\r")
add("escape", "\x1b[1;31mError:\x1b[0m something failed \x1b[32mOK\x1b[0m")
add("escape", "Cursor \x1b[2J\x1b[H cleared \x1b[K and \x1b[38;5;208morange\x1b[m")
add("escape", "Not a CSI: \x1b]0;window title\x07 and \x1b(B charset and lone \x1b")
add("escape", "Digits in CSI: \x1b[١٢mArabic-Indic digits\x1b[0m")
add("control", "NUL\x00 and BEL\x07 and BS\x08 and DEL\x7f in text")
add("control", "\ufeffBOM at start and \ufeff in the middle")
add("control", "Tabs\tare\tkept, form feeds\x0c too; \x1c\x1d\x1e\x1f separators go")
add("control", "Interlinear \ufff9annotation\ufffa here\ufffb and object \ufffc replacement")
add("control", "Deprecated format \u206a\u206b\u206c\u206d\u206e\u206f chars")
add("control", "Zero width: a\u200bb\u200cc\u200dd\u2060e \u00adsoft hyphen stay")

# ---------------------------------------------------------------- quotes, ligatures, width
add("quotes", "“Double” ‘single’ ‚low‘ „low double“ ‛reversed‟ ʼapostrophe")
add("quotes", "« Guillemets » ‹ single › and primes ′ ″ and 「」 stay")
add("quotes", "It’s the dog’s toy, isn’t it? ‘Yes,’ he said.")
add("ligature", "ﬁnancial ﬂow, eﬀort, oﬃce, baﬄe, ﬅ and ﬆ")
add("ligature", "Dutch Ĳsselmeer and ĳs; Ǆ Ǳ ǲ ǳ Ǉ ǈ ǉ Ǌ ǋ ǌ ǅ ǆ; ŉ")
add("ligature", "Not ftfy ligatures: æ œ Œ ß ꜳ ﬓ")
add("width", "ＦＵＬＬＷＩＤＴＨ　ｔｅｘｔ　１２３！？")
add("width", "Halfwidth katakana: ｶﾀｶﾅ ﾊﾟﾋﾟﾌﾟ ｶﾞ and ￠￡￥￦")
add("width", "Mixed: 全角ＡＢＣ and 半角ABC, 「カタカナ」 ｢ﾊﾝｶｸ｣")

# ---------------------------------------------------------------- normalization
add("nfkc", "Superscripts x² y³ and fractions ½ ¼ ¾ ⅞; subscripts H₂O")
add("nfkc", "Symbols: ™ ℃ ℉ № ℡ ㎏ ㎞ ㍻ ① ⑳ Ⅻ ⅻ ℌ ℍ ℝ ⅈ")
add("nfkc", "Compatibility: ſ µ ﬀ ﹏ ﹖ ︰ ㈱ ㊤ 𝐀𝐁𝐂 𝟘𝟙 ｟ ￤")
add("nfkc", "Arabic presentation forms: ﻻ ﷲ ﷺ ﺍﻟﻌﺮﺑﻴﺔ")
add("nfkc", "Non-breaking\u00a0space, narrow\u202fspace, figure\u2007space, ideographic\u3000space")
add("nfc", "Combining: e\u0301 a\u0300 o\u0308 n\u0303 c\u0327 A\u030a")
add("nfc", "Already composed: é à ö ñ ç Å")
add("nfc", "Hangul jamo: \u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af and syllables 한글")
add("nfc", "Reordering: a\u0323\u0302 vs a\u0302\u0323, q\u0307\u0323 and \u1ec7")
add("nfc", "Singletons: \u212b Angstrom, \u2126 Ohm, \u212a Kelvin, \u0340 \u0341 \u0343 \u0344 \u0374 \u037e \u0387")
add("nfc", "Vietnamese decomposed: Vie\u0323\u0302t Nam, tie\u0302\u0301ng")
add("nfc", "Devanagari nukta: \u0915\u093c \u0958 and Hebrew \u05e9\u05c1 \ufb2a")
add("nfc", "Combining marks without a base: \u0301start, e\u0301\u0301 double")

# ---------------------------------------------------------------- text ftfy must leave alone
add("ok/multilingual", "The quick brown fox jumps over the lazy dog.")
add("ok/multilingual", "Le cœur déçu mais l’âme plutôt naïve, Louÿs rêva de crapaüter en canoë.")
add("ok/multilingual", "Falsches Üben von Xylophonmusik quält jeden größeren Zwerg.")
add("ok/multilingual", "El pingüino Wenceslao hizo kilómetros bajo exhaustiva lluvia y frío, añoraba a su querido cachorro.")
add("ok/multilingual", "Съешь же ещё этих мягких французских булок, да выпей чаю.")
add("ok/multilingual", "Τάχιστη αλώπηξ βαφής ψημένη γη, δρασκελίζει υπέρ νωθρού κυνός.")
add("ok/multilingual", "いろはにほへと ちりぬるを わかよたれそ つねならむ。東京都渋谷区。")
add("ok/multilingual", "我能吞下玻璃而不伤身体。數據清洗與去重。")
add("ok/multilingual", "다람쥐 헌 쳇바퀴에 타고파.")
add("ok/multilingual", "עטלף אבק נס דרך מזגן שהתפוצץ כי חם. صِف خَلقَ خَودِ كَمِثلِ الشَمسِ إِذ بَزَغَت")
add("ok/multilingual", "ऋषियों को सताने वाले दुष्ट राक्षसों के राजा रावण का सर्वनाश करने वाले विष्णुवतार भगवान श्रीराम")
add("ok/multilingual", "Emoji: 👍🏽 👨‍👩‍👧 🏳️‍🌈 ❤️ 🇯🇵 ✔️ #️⃣")
add("ok/latin1", "Ã la carte is not a phrase, but SÃO PAULO and NÃO are Portuguese capitals.")
add("ok/latin1", "ÃO ÃES ÂNGULO: CAPITALS with tildes and circumflexes")
add("ok/latin1", "Icelandic: Ðað er gott; Þórður; Ýmir")
add("ok/latin1", "Spanish: ¿Qué tal? ¡Muy bien! Ñandú, año, señor")
add("ok/latin1", "Symbols: £100 ±5 °C ¼ ½ ¾ × ÷ § ¶ © ® µ ¬ ¦ ¤ ¨ ¯ ¸")
add("ok/latin1", "Danish: Æblegrød, Ørsted, Ålborg; Swedish: Åsa, Örebro")
add("ok/latin1", "The currency sign ¤ and broken bar ¦ appear in old ISO charts.")
add("ok/looks-bad", "Mojibake-like but valid: Ã© is what é looks like in windows-1252")
add("ok/looks-bad", "The string 'â€™' is a famous mojibake of the right single quotation mark.")
add("ok/looks-bad", "Portuguese: MAÇÃ, PÃO, LIMÃO, AVIÃO e CORAÇÃO")
add("ok/looks-bad", "Ä Ö Ü ä ö ü ß in a German keyboard test")
add("ok/looks-bad", "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÐÑÒÓÔÕÖ×ØÙÚÛÜÝÞß")
add("ok/looks-bad", "àáâãäåæçèéêëìíîïðñòóôõö÷øùúûüýþÿ")
add("ok/looks-bad", "Polish names: Łukasz Żółkiewski, Ślęza, Ćma")
add("ok/looks-bad", "Box drawing ┌─┐ │ │ └─┘ ╔═╗ and blocks ░▒▓█")
add("ok/looks-bad", "Kaomoji: (╯°□°）╯︵ ┻━┻  ¯\\_(ツ)_/¯  ಠ_ಠ")
add("ok/looks-bad", "Cyrillic that resembles 1251 mojibake: РЎ Рѕ СЃ — yet written on purpose?")
add("ok/looks-bad", "A lone Ã at the end: Ã")
add("ok/looks-bad", "Ω≈ç√∫˜µ≤≥÷ åß∂ƒ©˙∆˚¬…æ œ∑´®†¥¨ˆøπ“‘")
add("ok/looks-bad", "Currency: ₹ ₽ ₺ ₴ ₿ ¢ ƒ")
add("ok/ascii", "Plain ASCII with punctuation: a-b_c (d) [e] {f} <g> 'h' \"i\" `j` ~k ^l | m \\ n / o")
add("ok/ascii", "x < y && y > z || a & b; R&D; AT&T; Q&A; &c.")
add("ok/ascii", "URL: https://example.com/search?q=caf%C3%A9&lang=fr#top")
add("ok/ascii", "")
add("ok/ascii", "   ")
add("ok/ascii", "multi\nline\n\nwith blank lines\n")

# ---------------------------------------------------------------- combinations
add("combo", moji("“Fancy”") + " &amp; \x93C1\x94 \x1b[1mbold\x1b[0m\r\nﬁne ＡＢＣ e\u0301")
add("combo", "\ufeff" + moji("Ärger mit “Umlauten”") + "\r\n" + "&lt;tag&gt; &#8217; " + moji("Grüße") + "\u2028end")
add("combo", moji("Line one: café") + "\r\n" + "<br> " + moji("Line two: naïve") + " &amp;\r\n" + "&amp; line three")
add("combo", moji("ﬁnal ligature inside mojibake and ＦＵＬＬ width"))
add("combo", moji("\x1b[31mred\x1b[0m “escaped” é"))
add("combo", moji("Zeile mit ß") + "\n" * 3 + moji("und “Anführungszeichen”") + "\r\n")
add("long", (moji("Ceci est une phrase française avec des accents : é, è, à, ç, ô. ") * 30).strip())
add("long", ("Mostly clean English text with one broken word: " + moji("naïve") + ". ") * 25
    + "\n" + "And a second line with “curly quotes” and ﬁ ligatures. " * 20)

with open(OUT, "w", encoding="utf-8", newline="\n") as f:
    for i, (source, text) in enumerate(rows):
        f.write(json.dumps({"text": text, "meta": {"source": source, "id": i}}, ensure_ascii=False) + "\n")
print(f"{OUT}: {len(rows)} rows")

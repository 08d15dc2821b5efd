"""Rewrites the expected-value tables in the udfs test modules from out/*.rs (see gen_rust.py)."""
import os
import re

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'src')
M = {
 os.path.join(ROOT, 'mapper/clean.rs'): {'EMAIL_CASES':'email','EMAIL_REPL_CASES':'email_repl','LINKS_CASES':'links','LINKS_GROUP_CASES':'links_groups','CUSTOM_CASES':'custom','BAD_REPLS':'bad_repls'},
 os.path.join(ROOT, 'filter/ratio.rs'): {'ALNUM_CASES':'alnum','SPECIAL_CASES':'special'},
 os.path.join(ROOT, 'filter/repetition.rs'): {'CASES':'char_rep'},
 os.path.join(ROOT, 'filter/length.rs'): {'NUM_WORDS_CASES':'num_words'},
 os.path.join(ROOT, 'dedup/document.rs'): {'CASES':'dedup'},
}
for p, consts in M.items():
    s = open(p).read()
    for const, f in consts.items():
        body = open(f"out/{f}.rs").read()
        pat = re.compile(r"(    const " + const + r": [^\n]*= &\[\n)(.*?)(\n    \];)", re.S)
        s, n = pat.subn(lambda m: m.group(1) + body.rstrip("\n") + m.group(3), s)
        assert n == 1, (p, const, n)
    open(p, 'w').write(s)
print("updated")

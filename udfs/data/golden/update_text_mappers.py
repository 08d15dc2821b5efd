"""Pastes out/<TABLE>.rs (from gen_text_mappers.py) into `const <TABLE>: ... = &[ ... ];` tables."""
import os
import re
from text_mapper_cases import CASES, FILES

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "src", "mapper")
for table in CASES:
    path = os.path.join(ROOT, FILES[table])
    s = open(path).read()
    body = open(f"out/{table}.rs").read()
    pat = re.compile(r"(    const " + table + r": [^\n]*= &\[\n)(.*?)(    \];)", re.S)
    s, n = pat.subn(lambda m: m.group(1) + body + m.group(3), s)
    assert n == 1, (path, table, n)
    open(path, "w").write(s)
print("updated", len(CASES))

"""Expected values (Data-Juicer 1.6.1) for the text mappers in udfs/src/mapper/{html,latex,remove,clean}.rs.

Run from this directory with the reference interpreter:
    cd udfs/data/golden && PYTHONPATH=/path/to/selectolax ~/.cache/dj-reference/venv-1.6.1/bin/python gen_text_mappers.py
selectolax (1.0.2, for clean_html_mapper) is not in the reference venv: install it into a separate
directory (`pip install --target DIR selectolax`) and put DIR on PYTHONPATH. harness.py stubs the
optional imports and blocks Data-Juicer's auto-installs. Writes out/<table>.rs (Rust tuple rows),
which update_text_mappers.py pastes into the test modules.
"""
import os
import harness  # noqa: F401
from rs import rs, md5
from data_juicer.ops.base_op import OPERATORS
import data_juicer.ops.mapper  # noqa: F401  (registers the mappers)
from text_mapper_cases import CASES

os.makedirs("out", exist_ok=True)


def run(op, texts, **kw):
    return OPERATORS.modules[op](**kw).process_batched({"text": list(texts)})["text"]


for table, (op, params, texts) in CASES.items():
    if table.endswith("_BIG"):
        # a list of ops: each op on the single text
        # a list of ops (names or (name, params)): each op on the single text
        if isinstance(op, list):
            outs = [run(o, texts, **params)[0] if isinstance(o, str) else run(o[0], texts, **o[1])[0] for o in op]
        else:
            outs = run(op, texts, **params)
        body = "".join(f"        ({len(o)}, \"{md5(o)}\"),\n" for o in outs)
    else:
        outs = run(op, texts, **params)
        body = "".join(f"        ({rs(i)}, {rs(o)}),\n" for i, o in zip(texts, outs))
    open(f"out/{table}.rs", "w").write(body)
print("ok", len(CASES))

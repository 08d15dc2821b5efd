"""Regenerates udfs/data/opencc/ from the OpenCC package that Data-Juicer 1.6.1 installs (opencc==1.1.9).

Run with the reference venv's interpreter (after `pip install opencc==1.1.9` there):
    ~/.cache/dj-reference/venv-1.6.1/bin/python udfs/data/gen_opencc_tables.py

The package ships its dictionaries only as binary marisa-trie `.ocd2` files, so each one is decoded with
the `opencc_dict` tool bundled in the same wheel (`-f ocd2 -t text`). Outputs:
  <Dict>.txt   one entry per line, `key<TAB>value[ value...]` (OpenCC's own text dictionary format; the
               first value is the one conversion uses), sorted by key in UTF-8 byte order so that the
               Rust side can binary-search the embedded text without building anything but an index.
  <mode>.json  the per-mode configs, copied verbatim (segmentation dict + conversion chain).
It checks that keys are unique and non-empty and that no value is empty, and prints the version.
"""

import os
import shutil
import subprocess
import sys
import tempfile

import opencc

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "opencc")
CLIB = os.path.join(os.path.dirname(opencc.__file__), "clib")
SHARE = os.path.join(CLIB, "share", "opencc")
TOOL = os.path.join(CLIB, "bin", "opencc_dict")

# The modes chinese_convert_mapper accepts (data_juicer/ops/mapper/chinese_convert_mapper.py).
MODES = ["s2t", "t2s", "s2tw", "tw2s", "s2hk", "hk2s", "s2twp", "tw2sp", "t2tw", "tw2t", "hk2t", "t2hk", "t2jp", "jp2t"]


def decode(ocd2, tmp):
    txt = os.path.join(tmp, os.path.basename(ocd2) + ".txt")
    subprocess.run([TOOL, "-i", ocd2, "-o", txt, "-f", "ocd2", "-t", "text"], check=True)
    entries = {}
    with open(txt, encoding="utf-8") as f:
        for line in f:
            key, tab, values = line.rstrip("\n").partition("\t")
            assert key and tab and values and "" not in values.split(" "), (ocd2, line)
            assert key not in entries, (ocd2, key)
            entries[key] = values
    return entries


def main():
    os.makedirs(OUT, exist_ok=True)
    for name in os.listdir(OUT):
        os.remove(os.path.join(OUT, name))
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(SHARE)):
            if not name.endswith(".ocd2"):
                continue
            entries = decode(os.path.join(SHARE, name), tmp)
            # Python str order is code-point order, which is UTF-8 byte order.
            with open(os.path.join(OUT, name[: -len(".ocd2")] + ".txt"), "w", encoding="utf-8", newline="\n") as f:
                for key in sorted(entries):
                    f.write(f"{key}\t{entries[key]}\n")
            print(f"{name}: {len(entries)} entries")
    for mode in MODES:
        shutil.copyfile(os.path.join(SHARE, mode + ".json"), os.path.join(OUT, mode + ".json"))
    print(f"opencc {opencc.__version__} ({sys.executable})")


if __name__ == "__main__":
    main()

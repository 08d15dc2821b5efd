"""Assembles the fixture model cache in this directory (Data-Juicer's file names), which the tests,
the golden files and the shipped recipes in configs/ use in place of Data-Juicer's downloads:

  lid.176.bin      fastText language ID (22 languages, hierarchical softmax, dim 16), copied from
                   models/fasttext/tests/fixtures (made by models/fasttext/fixtures/make_fixtures.py)
  en.sp.model      SentencePiece unigram model of English, and zh.sp.model, copied from
                   models/sentencepiece/tests/fixtures (models/sentencepiece/fixtures/make_fixtures.py)
  en.arpa.bin      KenLM 4-gram over the en.sp.model pieces of English apt package descriptions (as
                   Data-Juicer's models are trained on pieces), pruned, in KenLM's probing binary format
  models--EleutherAI--pythia-6.9b-deduped/
                   a small byte-level BPE tokenizer in the Hugging Face hub cache layout
                   (make_hf_tokenizer.py), standing in for Data-Juicer's default tokenizer

Needs KenLM's `lmplz` and `build_binary` (built from the KenLM sources; pass their paths in LMPLZ
and BUILD_BINARY) and a Python with `sentencepiece` and `tokenizers` (the dj-reference venv has
both):
    LMPLZ=... BUILD_BINARY=... ~/.cache/dj-reference/venv-1.6.1/bin/python data/models/make_models.py
"""

import os
import shutil
import subprocess
import sys
import tempfile

import sentencepiece

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def copy(src, name):
    shutil.copyfile(os.path.join(ROOT, src), os.path.join(HERE, name))


def english_lines():
    text = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True).stdout
    return sorted({l[len("Description: "):] for l in text.splitlines() if l.startswith("Description: ")})


def build_arpa_bin():
    lmplz, build_binary = os.environ["LMPLZ"], os.environ["BUILD_BINARY"]
    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(HERE, "en.sp.model"))
    with tempfile.TemporaryDirectory() as tmp:
        corpus = os.path.join(tmp, "pieces.txt")
        with open(corpus, "w", encoding="utf-8") as f:
            for line in english_lines():
                f.write(" ".join(sp.encode_as_pieces(line)) + "\n")
        arpa = os.path.join(tmp, "en.arpa")
        with open(corpus, "rb") as fin, open(arpa, "wb") as fout:
            subprocess.run([lmplz, "-o", "4", "--prune", "0", "2", "3", "3", "-S", "10%", "-T", tmp],
                           stdin=fin, stdout=fout, check=True, stderr=subprocess.DEVNULL)
        subprocess.run([build_binary, "probing", arpa, os.path.join(HERE, "en.arpa.bin")], check=True,
                       stdout=subprocess.DEVNULL)


def main():
    copy("models/fasttext/tests/fixtures/lid.176.bin", "lid.176.bin")
    copy("models/sentencepiece/tests/fixtures/en.sp.model", "en.sp.model")
    copy("models/sentencepiece/tests/fixtures/zh.sp.model", "zh.sp.model")
    build_arpa_bin()
    subprocess.run([sys.executable, os.path.join(HERE, "make_hf_tokenizer.py")], check=True)
    for name in sorted(os.listdir(HERE)):
        p = os.path.join(HERE, name)
        if os.path.isfile(p) and not name.endswith(".py"):
            print(f"{name}: {os.path.getsize(p)} bytes")


if __name__ == "__main__":
    main()

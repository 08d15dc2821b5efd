"""Builds the fixture Hugging Face tokenizer shipped here in the Hugging Face hub cache layout (models--org--name/), standing in for
Data-Juicer's default `EleutherAI/pythia-6.9b-deduped` (a GPT-NeoX byte-level BPE) in tests.

It is a small byte-level BPE of the same kind, trained with the `tokenizers` library on text of
this machine: apt package descriptions (English) and gettext catalogs (many languages).

    ~/.cache/dj-reference/venv-1.6.1/bin/python data/models/make_hf_tokenizer.py
"""

import glob
import gettext
import json
import os
import random
import subprocess

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = "EleutherAI/pythia-6.9b-deduped"
REVISION = "0000000000000000000000000000000000f1x7e5"  # a fixed fake commit for the cache layout


def corpus():
    text = subprocess.run(["apt-cache", "dumpavail"], capture_output=True, text=True).stdout
    lines = [l[len("Description: "):] for l in text.splitlines() if l.startswith("Description: ")]
    random.Random(7).shuffle(lines)
    out = lines[:40000]
    for mo in sorted(glob.glob("/usr/share/locale/*/LC_MESSAGES/*.mo"))[:400]:
        try:
            with open(mo, "rb") as f:
                cat = gettext.GNUTranslations(f)._catalog
        except Exception:
            continue
        out.extend(v for v in cat.values() if isinstance(v, str) and v)
    return out


def main():
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tok.decoder = decoders.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tok.post_processor = processors.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=3000,
        special_tokens=["<|endoftext|>", "<|padding|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tok.train_from_iterator(corpus(), trainer)
    repo = os.path.join(HERE, "models--" + REPO.replace("/", "--"))
    snap = os.path.join(repo, "snapshots", REVISION)
    os.makedirs(snap, exist_ok=True)
    os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
    tok.save(os.path.join(snap, "tokenizer.json"))
    with open(os.path.join(snap, "tokenizer_config.json"), "w") as f:
        json.dump(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "bos_token": "<|endoftext|>",
                "eos_token": "<|endoftext|>",
                "unk_token": "<|endoftext|>",
                "model_max_length": 1000000000000000019884624838656,
            },
            f,
            indent=2,
        )
    # transformers' AutoProcessor reads the model config first (to find a processor class).
    with open(os.path.join(snap, "config.json"), "w") as f:
        json.dump({"model_type": "gpt_neox", "architectures": ["GPTNeoXForCausalLM"]}, f, indent=2)
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(REVISION)
    print("wrote", snap)


if __name__ == "__main__":
    main()

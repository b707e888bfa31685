#!/usr/bin/env python3
"""Prints llama.cpp's logits for a prompt, as JSON, using llama-cpp-python (llama.cpp built from source).

Used by wisp's tests as an external oracle, e.g. to check that a GGUF written by wisp's writer is
read by llama.cpp exactly like the file it was copied from.
  python3 scripts/llamacpp_logits.py MODEL.gguf --prompt "text" [--n-ctx 256]
Output: {"n_vocab", "tokens": [...], "last_logits_fnv1a", "last_logits_head": [first 8 values]}
"""
import argparse
import json

import numpy as np
from llama_cpp import Llama


def fnv1a(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("--prompt", default="The capital of France is")
    ap.add_argument("--n-ctx", type=int, default=256)
    args = ap.parse_args()
    llm = Llama(model_path=args.model, n_ctx=args.n_ctx, n_threads=2, logits_all=True, verbose=False)
    toks = llm.tokenize(args.prompt.encode("utf-8"), add_bos=True, special=True)
    llm.eval(toks)
    logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float32)
    if not np.any(logits) or not np.all(np.isfinite(logits)):
        raise SystemExit("llama.cpp returned no usable logits (all zero or non-finite)")
    print(json.dumps({"n_vocab": int(llm.n_vocab()), "tokens": [int(t) for t in toks],
                      "last_logits_fnv1a": fnv1a(logits.tobytes()),
                      "last_logits_head": [float(x) for x in logits[:8]]}))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""llama.cpp's perplexity (and KL/top-1 against a base model) via llama-cpp-python logits over the
same windows `wisp ppl` uses: the whole text tokenized with BOS (when the model adds one), cut into
non-overlapping windows of CTX tokens, each window's first token replaced by BOS, each evaluated from
an empty cache, positions CTX/2 .. CTX-2 scored on the next token (llama.cpp's perplexity method).

  python3 scripts/llamacpp_ppl.py MODEL.gguf TEXT [--ctx 512] [--chunks N] [--base BASE.gguf]
Prints one JSON object: ppl, n_tokens, n_chunks, n_scored (and base_ppl, mean_kl, top1).
"""
import argparse
import json
import math

import numpy as np
from llama_cpp import Llama


def log_softmax(x):
    x = x.astype(np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))


def window_logprobs(llm, window):
    llm.reset()
    llm.eval(window)
    return log_softmax(np.asarray(llm.scores[: len(window)], dtype=np.float32))


def ggml_isa() -> str:
    """The x86 build of libggml-cpu computing the figure (its float sums and exp differ between the
    AVX-512 and AVX2 builds in the last bits; wisp's exact numerics are told which to follow)."""
    import llama_cpp

    return "avx512" if "AVX512 = 1" in llama_cpp.llama_print_system_info().decode() else "avx2"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("text")
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--chunks", type=int, default=0)
    ap.add_argument("--base")
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args()
    kw = dict(n_ctx=a.ctx, n_batch=a.ctx, n_ubatch=a.ctx, n_threads=a.threads, logits_all=True, verbose=False)
    llm = Llama(model_path=a.model, **kw)
    base = Llama(model_path=a.base, **kw) if a.base else None
    text = open(a.text, "rb").read()
    add_bos = llm._model.add_bos_token() if hasattr(llm._model, "add_bos_token") else True
    toks = llm.tokenize(text, add_bos=add_bos, special=False)
    n_chunks = len(toks) // a.ctx
    if a.chunks:
        n_chunks = min(n_chunks, a.chunks)
    first = a.ctx // 2
    nll = base_nll = kl = 0.0
    same = scored = 0
    for c in range(n_chunks):
        w = list(toks[c * a.ctx:(c + 1) * a.ctx])
        if add_bos:
            w[0] = llm.token_bos()
        lp = window_logprobs(llm, w)
        nxt = np.array(toks[c * a.ctx + first + 1:(c + 1) * a.ctx])
        rows = np.arange(first, a.ctx - 1)
        nll -= lp[rows, nxt].sum()
        if base:
            lb = window_logprobs(base, w)
            base_nll -= lb[rows, nxt].sum()
            pb = np.exp(lb[rows])
            kl += np.maximum((pb * (lb[rows] - lp[rows])).sum(axis=-1), 0).sum()
            same += int((lb[rows].argmax(-1) == lp[rows].argmax(-1)).sum())
        scored += len(rows)
    out = {"ppl": math.exp(nll / scored), "n_tokens": len(toks), "n_chunks": n_chunks, "n_scored": scored,
           "ggml_isa": ggml_isa()}
    if base:
        out.update(base_ppl=math.exp(base_nll / scored), mean_kl=kl / scored, top1=same / scored)
    print(json.dumps(out))


if __name__ == "__main__":
    main()

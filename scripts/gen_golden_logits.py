#!/usr/bin/env python3
"""Golden logits from llama.cpp (llama-cpp-python) for tests/unit/model/.

For each model it records, with llama.cpp as the oracle on the same GGUF file:
  - a ~256-token text: its token ids (llama.cpp's tokenizer, BOS as the model asks), and for every
    position the argmax and the top-10 (id, logit) of the logits after that token (logits_all);
  - the full logits of a few positions (float16, raw little-endian, <name>.full.f16);
  - greedy continuations (64 tokens, stopping early at an end-of-generation token) of 5 prompts,
    with the top-1/top-2 margin of every step so a divergence can be judged against the near-tie.

Models:
  smollm2-135m   models/SmolLM2-135M-Instruct.Q4_1.gguf   (llama; Q4_1, Q8_0 tied embeddings)
  gemma3-270m    models/gemma-3-270m-q4_k_m.gguf          (gemma3; Q5_0, Q4_K, Q6_K, Q8_0)
  smollm2-135m-f16  models/sweep/SmolLM2-135M-Instruct.F16.gguf  (llama; every matrix F16: the float
                                                           dots, one-token and tinyBLAS orders)
  qwen2-tiny     tests/golden/logits/qwen2-tiny.gguf      (written here: random weights, QKV biases,
                                                           tied embeddings, quantized by llama.cpp
                                                           to Q4_K_M)
  llama-tiny     tests/golden/logits/llama-tiny.gguf      (written here: random weights, separate
                                                           output matrix, GQA 4:1, quantized by
                                                           llama.cpp to Q4_0)
  gemma3-tiny    tests/golden/logits/gemma3-tiny.gguf     (written here: random weights, 6 layers
                                                           with a 32-token sliding window on 5 of
                                                           them, so the 256-token text exercises
                                                           it; final logit soft-capping; Q8_0)
  qwen2-tiny-iq4_xs, -iq4_nl, -tq1_0, -tq2_0
                 tests/golden/logits/qwen2-tiny-<type>.gguf (written here: qwen2-tiny's shape,
                                                           other seeds, quantized by llama.cpp to
                                                           the type; it picks the embedding's)
The tiny models have a synthetic vocabulary, so their inputs are seeded random token ids.

Usage:  python3 scripts/gen_golden_logits.py [--models-dir models] [--only NAME ...]
Needs:  llama-cpp-python, gguf, numpy. Deterministic: rerunning rewrites identical files (given
        the same llama.cpp build; logits differ in the last bits between AVX-512 and AVX2 builds,
        so each file records its build's "ggml_isa" and the tests run wisp's exact numerics in it).
"""
from __future__ import annotations

import argparse
import ctypes
import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "golden" / "logits"

N_TEXT_TOKENS = 256
TOP_K = 10
N_GEN = 64
N_CTX = 512

PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea,",
    "def fibonacci(n):\n",
    "The three primary colors are",
    "Water boils at a temperature of",
]


def load(path: Path):
    from llama_cpp import Llama

    return Llama(model_path=str(path), n_ctx=N_CTX, logits_all=True, n_threads=2, verbose=False, seed=0)


def ggml_isa() -> str:
    """The x86 build of libggml-cpu that computes the goldens: its float sums and exp differ
    between AVX-512 and AVX2 builds in the last bits, so wisp's exact numerics are told which one
    to reproduce (EngineOptions::exact_isa)."""
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    return "avx512" if "AVX512 = 1" in info else "avx2"


def is_eog(llm, tok: int) -> bool:
    import llama_cpp

    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    return bool(llama_cpp.llama_vocab_is_eog(vocab, tok))


def top_entries(row: np.ndarray) -> list:
    idx = np.argsort(-row, kind="stable")[:TOP_K]
    return [[int(i), float(row[i])] for i in idx]


def text_logits(llm, tokens: list[int]) -> np.ndarray:
    llm.reset()
    llm.eval(tokens)
    return np.array(llm.scores[: len(tokens)], dtype=np.float32)


def greedy(llm, prompt_tokens: list[int], n_gen: int) -> tuple[list[int], list[float]]:
    llm.reset()
    llm.eval(prompt_tokens)
    out, margins = [], []
    for _ in range(n_gen):
        row = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float32)
        tok = int(np.argmax(row))  # first index on ties, as std::max_element
        second = np.partition(row, -2)[-2]
        out.append(tok)
        margins.append(float(row[tok] - second))
        if is_eog(llm, tok):
            break
        llm.eval([tok])
    return out, margins


def record(name: str, model_path: Path, model_ref: str, text_tokens: list[int], prompts: list[tuple[str, list[int]]],
           full_positions: list[int], n_gen: int) -> None:
    llm = load(model_path)
    logits = text_logits(llm, text_tokens)
    n_vocab = logits.shape[1]
    golden = {
        "generator": "scripts/gen_golden_logits.py",
        "ggml_isa": ggml_isa(),
        "model": model_ref,
        "n_vocab": int(n_vocab),
        "tokens": [int(t) for t in text_tokens],
        "argmax": [int(np.argmax(r)) for r in logits],
        "top": [top_entries(r) for r in logits],
        "full_positions": full_positions,
        "full_file": f"{name}.full.f16",
        "continuations": [],
    }
    full = np.stack([logits[p] for p in full_positions]).astype("<f2")
    (OUT / golden["full_file"]).write_bytes(full.tobytes())
    for text, ptoks in prompts:
        gen, margins = greedy(llm, ptoks, n_gen)
        golden["continuations"].append({"prompt": text, "prompt_tokens": [int(t) for t in ptoks], "tokens": gen,
                                        "margins": [round(m, 6) for m in margins]})
        print(f"  {name}: prompt {text!r}: {len(gen)} tokens, smallest margin {min(margins):.5f}")
    (OUT / f"{name}.json").write_text(json.dumps(golden, separators=(",", ":")) + "\n")
    print(f"{name}: {len(text_tokens)} text tokens, vocab {n_vocab}")


def real_model(name: str, path: Path, full_positions: list[int], model_ref: str | None = None) -> None:
    llm = load(path)
    text = (OUT / "passage.txt").read_text(encoding="utf-8")
    toks = llm.tokenize(text.encode("utf-8"), add_bos=True, special=False)[:N_TEXT_TOKENS]
    prompts = [(p, llm.tokenize(p.encode("utf-8"), add_bos=True, special=False)) for p in PROMPTS]
    del llm
    record(name, path, model_ref or f"models/{path.name}", toks, prompts, full_positions, N_GEN)


# ---------------------------------------------------------------------------------------------
# tiny random-weight models
# ---------------------------------------------------------------------------------------------

def spm_vocab(n_vocab: int):
    """A SentencePiece-style vocabulary: <unk>, <s>, </s>, 256 byte tokens, then filler pieces."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [2, 3, 3] + [6] * 256
    i = 0
    while len(tokens) < n_vocab:
        tokens.append(f"\u2581w{i}")
        types.append(1)
        i += 1
    scores = [0.0] * 3 + [0.0] * 256 + [-float(k) for k in range(n_vocab - 259)]
    return tokens, scores, types


def write_tiny(path: Path, arch: str, *, n_embd: int, n_head: int, n_head_kv: int, n_ff: int, n_layer: int,
               n_vocab: int, rope_base: float, qkv_bias: bool, tied: bool, seed: int, head_dim: int = 0,
               sliding_window: int = 0, softcap: float = 0.0, extra: dict[str, np.ndarray] | None = None) -> None:
    """`extra`: more tensors, written after the model's own (e.g. per-tensor .scale factors)."""
    import gguf

    rng = np.random.default_rng(seed)
    head_dim = head_dim or n_embd // n_head
    gemma = arch == "gemma3"
    w = gguf.GGUFWriter(str(path), arch)
    w.add_name(f"{arch}-tiny-random")
    w.add_context_length(N_CTX)
    w.add_embedding_length(n_embd)
    w.add_block_count(n_layer)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(n_head)
    w.add_head_count_kv(n_head_kv)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_freq_base(rope_base)
    w.add_file_type(0)  # all F32 before quantization
    if gemma:
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
        if sliding_window:
            w.add_sliding_window(sliding_window)
        if softcap:
            w.add_final_logit_softcapping(softcap)
    tokens, scores, types = spm_vocab(n_vocab)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_unk_token_id(0)

    def mat(rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
        # numpy shape (rows, cols) is GGUF ne [cols, rows]: rows outputs of cols inputs.
        return (rng.standard_normal((rows, cols)) * gain / np.sqrt(cols)).astype(np.float32)

    def norm(n: int) -> np.ndarray:
        return (1.0 + 0.2 * rng.standard_normal(n)).astype(np.float32)

    w.add_tensor("token_embd.weight", rng.standard_normal((n_vocab, n_embd)).astype(np.float32))
    w.add_tensor("output_norm.weight", norm(n_embd))
    if not tied:
        w.add_tensor("output.weight", mat(n_vocab, n_embd, 4.0))
    for il in range(n_layer):
        p = f"blk.{il}."
        w.add_tensor(p + "attn_norm.weight", norm(n_embd))
        w.add_tensor(p + "attn_q.weight", mat(n_head * head_dim, n_embd, 2.0))
        w.add_tensor(p + "attn_k.weight", mat(n_head_kv * head_dim, n_embd, 2.0))
        w.add_tensor(p + "attn_v.weight", mat(n_head_kv * head_dim, n_embd))
        if qkv_bias:
            w.add_tensor(p + "attn_q.bias", (0.5 * rng.standard_normal(n_head * head_dim)).astype(np.float32))
            w.add_tensor(p + "attn_k.bias", (0.5 * rng.standard_normal(n_head_kv * head_dim)).astype(np.float32))
            w.add_tensor(p + "attn_v.bias", (0.1 * rng.standard_normal(n_head_kv * head_dim)).astype(np.float32))
        w.add_tensor(p + "attn_output.weight", mat(n_embd, n_head * head_dim))
        w.add_tensor(p + "ffn_norm.weight", norm(n_embd))
        w.add_tensor(p + "ffn_gate.weight", mat(n_ff, n_embd, 2.0))
        w.add_tensor(p + "ffn_up.weight", mat(n_ff, n_embd))
        w.add_tensor(p + "ffn_down.weight", mat(n_embd, n_ff))
        if gemma:  # norm weights as the converter stores them: (1 + w) already applied
            w.add_tensor(p + "attn_q_norm.weight", norm(head_dim))
            w.add_tensor(p + "attn_k_norm.weight", norm(head_dim))
            w.add_tensor(p + "post_attention_norm.weight", norm(n_embd))
            w.add_tensor(p + "post_ffw_norm.weight", norm(n_embd))
    for name, value in (extra or {}).items():
        w.add_tensor(name, value)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def quantize(src: Path, dst: Path, ftype: int) -> None:
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    if rc != 0:
        raise RuntimeError(f"llama_model_quantize failed ({rc}) for {dst}")


def tiny_model(name: str, arch: str, ftype: int, seed: int, **dims) -> None:
    import llama_cpp  # noqa: F401  (fail early if missing)

    dst = OUT / f"{name}.gguf"
    with tempfile.TemporaryDirectory() as tmp:
        f32 = Path(tmp) / f"{name}.f32.gguf"
        write_tiny(f32, arch, seed=seed, **dims)
        quantize(f32, dst, ftype)
    rng = np.random.default_rng(seed + 1)
    n_vocab = dims["n_vocab"]
    text = [1] + [int(t) for t in rng.integers(3, n_vocab, N_TEXT_TOKENS - 1)]
    prompts = [(f"random-{i}", [1] + [int(t) for t in rng.integers(3, n_vocab, 7 + 3 * i)]) for i in range(3)]
    record(name, dst, f"tests/golden/logits/{dst.name}", text, prompts, [0, 100, N_TEXT_TOKENS - 1], 32)
    print(f"  {dst.name}: {dst.stat().st_size} bytes")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models-dir", default=str(ROOT / "models"))
    ap.add_argument("--only", nargs="*", help="golden names to regenerate (default: all)")
    args = ap.parse_args()
    import llama_cpp

    OUT.mkdir(parents=True, exist_ok=True)
    models = Path(args.models_dir)
    jobs = {
        "smollm2-135m": lambda: real_model("smollm2-135m", models / "SmolLM2-135M-Instruct.Q4_1.gguf",
                                           [0, 127, N_TEXT_TOKENS - 1]),
        "gemma3-270m": lambda: real_model("gemma3-270m", models / "gemma-3-270m-q4_k_m.gguf", [N_TEXT_TOKENS - 1]),
        "smollm2-135m-f16": lambda: real_model("smollm2-135m-f16", models / "sweep" / "SmolLM2-135M-Instruct.F16.gguf",
                                               [0, N_TEXT_TOKENS - 1], "models/sweep/SmolLM2-135M-Instruct.F16.gguf"),
        "qwen2-tiny": lambda: tiny_model("qwen2-tiny", "qwen2", llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_K_M, 20240601,
                                         n_embd=256, n_head=4, n_head_kv=2, n_ff=512, n_layer=2, n_vocab=512,
                                         rope_base=1000000.0, qkv_bias=True, tied=True),
        "llama-tiny": lambda: tiny_model("llama-tiny", "llama", llama_cpp.LLAMA_FTYPE_MOSTLY_Q4_0, 20240602,
                                         n_embd=128, n_head=4, n_head_kv=1, n_ff=384, n_layer=3, n_vocab=384,
                                         rope_base=10000.0, qkv_bias=False, tied=False),
        "gemma3-tiny": lambda: tiny_model("gemma3-tiny", "gemma3", llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0, 20240603,
                                          n_embd=128, n_head=2, n_head_kv=1, head_dim=64, n_ff=128, n_layer=6,
                                          n_vocab=384, rope_base=1000000.0, qkv_bias=False, tied=True,
                                          sliding_window=32, softcap=30.0),
        # The codebook and ternary block types (issue 13): qwen2-tiny's shape (rows of 256 values,
        # tied embeddings, QKV biases), quantized by llama.cpp to each type (IQ4_NL: rows a
        # multiple of 8, so llama.cpp runs its repacked GEMV/GEMM; IQ4_XS: its tiled GEMM for
        # batches of 8+ tokens); llama.cpp picks the embedding's type itself.
        **{f"qwen2-tiny-{t.lower()}": (lambda t=t, seed=20261300 + i: tiny_model(
            f"qwen2-tiny-{t.lower()}", "qwen2", getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{t}"), seed,
            n_embd=256, n_head=4, n_head_kv=2, n_ff=512, n_layer=2, n_vocab=512, rope_base=1000000.0,
            qkv_bias=True, tied=True)) for i, t in enumerate(["IQ4_XS", "IQ4_NL", "TQ1_0", "TQ2_0"])},
    }
    for name, job in jobs.items():
        if args.only and name not in args.only:
            continue
        job()
    return 0


if __name__ == "__main__":
    sys.exit(main())

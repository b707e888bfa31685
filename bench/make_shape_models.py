#!/usr/bin/env python3
"""Makes laptop-size synthetic GGUFs: real Llama 3.2 SHAPES, random weights, for speed runs.

Speed does not depend on the weight values, so these files have the layer shapes of real models
and random weights: an F16 file written with the `gguf` package (weights ~ N(0, 0.02), norms 1.0;
streamed to disk in chunks, so memory stays low even for the ~6 GiB 3B file), then llama.cpp's own
quantizer (llama-cpp-python's llama_model_quantize, as bench/make_sweep_models.py does) makes each
quantized copy from it. The text they generate is garbage by construction; use them for tok/s,
GB/s and memory, never for quality.

Shapes (llama architecture, rope theta 500000, rms eps 1e-5, context 4096, tied embeddings):
  1b  Llama-3.2-1B: n_embd 2048, 16 layers, 32 heads, 8 kv heads, head_dim 64,  n_ff 8192
  3b  Llama-3.2-3B: n_embd 3072, 28 layers, 24 heads, 8 kv heads, head_dim 128, n_ff 8192
and one mixture of experts (qwen3moe architecture, rope theta 1e6, rms eps 1e-6, untied output):
  a3b Qwen3-30B-A3B's layer, whole: n_embd 2048, 32 heads, 4 kv heads, head_dim 128 (q/k norms),
      128 experts of n_ff 768, 8 chosen per token; but 10 layers of its 48, so the file fits a
      24 GiB machine: ~6.4B parameters (~3.4 GiB at Q4_0) of which a token reads ~0.67B (the
      real model: 30.5B, 3.3B active). The router is F32 (llama.cpp's quantizer keeps it).
      Its values are one block of 8M random N(0, 0.02) values written over and over ("tiled"):
      speed does not depend on them, and drawing 6.4B fresh normals took ~30 min on 2 busy cores.

NOT Llama 3's vocabulary: the tokenizer and chat template are copied from
models/SmolLM2-135M-Instruct.Q4_1.gguf (vocab 49152, not Llama 3's 128256), so the embedding and
the (tied) output matrix are 49152 x n_embd -- ~0.2B parameters fewer than the real models
(1b: ~1.07B parameters instead of 1.24B; 3b: ~2.97B instead of 3.21B), and the output matmul at
each decode step is ~2.6x cheaper. The file names say so: llama-1b-shape-v49k.F16.gguf.
Llama 3.2's rope scaling (the rope_freqs tensor) is left out: plain rope, same cost.

Outputs go to models/shapes/ (git-ignored); files that already exist are skipped. The F16 file is
kept (it is the quantizer's source); delete it by hand to save disk.

  python3 bench/make_shape_models.py                     # 1b: F16, Q4_0, Q4_K_M, Q8_0
  python3 bench/make_shape_models.py --shapes 3b --types Q4_0
  python3 bench/make_shape_models.py --check             # also load + generate each 1b/3b file
  python3 bench/make_shape_models.py --types IQ4_XS      # 1b at IQ4_XS (no importance matrix needed)
  python3 bench/make_shape_models.py --shapes a3b --types Q4_0   # the MoE: F16 ~12 GiB, then Q4_0
"""
import argparse
import ctypes
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOKENIZER_SRC = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
OUT = os.path.join(ROOT, "models", "shapes")
VOCAB_TAG = "v49k"  # in every file name: the vocabulary is SmolLM2's, not Llama 3's

SHAPES = {
    "1b": dict(arch="llama", n_embd=2048, n_layer=16, n_head=32, n_head_kv=8, head_dim=64, n_ff=8192),
    "3b": dict(arch="llama", n_embd=3072, n_layer=28, n_head=24, n_head_kv=8, head_dim=128, n_ff=8192),
    "a3b": dict(arch="qwen3moe", n_embd=2048, n_layer=10, n_head=32, n_head_kv=4, head_dim=128, n_ff=6144,
                n_expert=128, n_expert_used=8, n_ff_exp=768, tiled=True),
}
# The real model each shape follows, for the file's description.
MODEL_OF = {"1b": "Llama-3.2-1B", "3b": "Llama-3.2-3B", "a3b": "Qwen3-30B-A3B (10 of 48 layers)"}
ROPE_THETA_OF = {"llama": 500000.0, "qwen3moe": 1000000.0}
RMS_EPS_OF = {"llama": 1e-5, "qwen3moe": 1e-6}
CONTEXT = 4096
STD = 0.02
CHUNK_ELEMS = 8 << 20  # random values generated and written 8M elements (16 MiB of F16) at a time

# llama.cpp's LLAMA_FTYPE_MOSTLY_* ids (as in bench/make_sweep_models.py).
# IQ4_XS needs no importance matrix in llama.cpp's quantizer (the IQ2/IQ1 types do).
FTYPES = {"Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8, "Q5_1": 9, "Q2_K": 10, "Q3_K_M": 12, "Q4_K_M": 15,
          "Q5_K_M": 17, "Q6_K": 18, "IQ4_XS": 30}


def file_name(shape, ftype):
    stem = "qwen3moe-30b-a3b-shape-l10" if shape == "a3b" else f"llama-{shape}-shape"
    return os.path.join(OUT, f"{stem}-{VOCAB_TAG}.{ftype}.gguf")


def tensor_list(s, n_vocab):
    """(name, numpy-order shape, kind) in the order llama.cpp's converter writes them; kind is
    "norm" (F32 ones), "f32" (F32 random: the router) or "w" (F16 random)."""
    e, q, kv, ff = s["n_embd"], s["n_head"] * s["head_dim"], s["n_head_kv"] * s["head_dim"], s["n_ff"]
    moe = s["arch"] == "qwen3moe"
    out = [("token_embd.weight", (n_vocab, e), "w")]
    for i in range(s["n_layer"]):
        b = f"blk.{i}."
        out += [(b + "attn_norm.weight", (e,), "norm"),
                (b + "attn_q.weight", (q, e), "w"),
                (b + "attn_k.weight", (kv, e), "w"),
                (b + "attn_v.weight", (kv, e), "w"),
                (b + "attn_output.weight", (e, q), "w")]
        if moe:
            out += [(b + "attn_q_norm.weight", (s["head_dim"],), "norm"),
                    (b + "attn_k_norm.weight", (s["head_dim"],), "norm")]
        out.append((b + "ffn_norm.weight", (e,), "norm"))
        if moe:  # merged experts, numpy (n_expert, rows, cols) = GGUF [cols, rows, n_expert]
            n, fe = s["n_expert"], s["n_ff_exp"]
            out += [(b + "ffn_gate_inp.weight", (n, e), "f32"),
                    (b + "ffn_gate_exps.weight", (n, fe, e), "w"),
                    (b + "ffn_up_exps.weight", (n, fe, e), "w"),
                    (b + "ffn_down_exps.weight", (n, e, fe), "w")]
        else:
            out += [(b + "ffn_gate.weight", (ff, e), "w"),
                    (b + "ffn_up.weight", (ff, e), "w"),
                    (b + "ffn_down.weight", (e, ff), "w")]
    out.append(("output_norm.weight", (e,), "norm"))
    if moe:
        out.append(("output.weight", (n_vocab, e), "w"))  # Qwen3-30B-A3B does not tie its output
    # (llama shapes: no output.weight, tied to token_embd)
    return out


def write_f16(shape, dst, seed):
    import gguf
    from gguf import GGUFReader, GGUFValueType, GGUFWriter

    s = SHAPES[shape]
    r = GGUFReader(TOKENIZER_SRC)
    n_vocab = len(r.fields["tokenizer.ggml.tokens"].data)
    w = GGUFWriter(dst + ".part", s["arch"])
    stem = os.path.basename(dst).split(".")[0]
    w.add_name(f"{stem} (random weights, {MODEL_OF[shape]} shapes, SmolLM2 tokenizer)")
    w.add_description("Synthetic: random N(0, 0.02) weights with real model shapes, for speed runs only "
                      "(bench/make_shape_models.py). Vocabulary 49152 (SmolLM2), not the real model's.")
    w.add_file_type(1)  # MOSTLY_F16
    w.add_vocab_size(n_vocab)
    w.add_context_length(CONTEXT)
    w.add_embedding_length(s["n_embd"])
    w.add_block_count(s["n_layer"])
    w.add_feed_forward_length(s["n_ff"])
    w.add_head_count(s["n_head"])
    w.add_head_count_kv(s["n_head_kv"])
    w.add_key_length(s["head_dim"])
    w.add_value_length(s["head_dim"])
    w.add_rope_dimension_count(s["head_dim"])
    w.add_rope_freq_base(ROPE_THETA_OF[s["arch"]])
    w.add_layer_norm_rms_eps(RMS_EPS_OF[s["arch"]])
    if "n_expert" in s:
        w.add_expert_count(s["n_expert"])
        w.add_expert_used_count(s["n_expert_used"])
        w.add_expert_feed_forward_length(s["n_ff_exp"])
    # Tokenizer and chat template from SmolLM2 (every tokenizer.* key, chat template included).
    for name, f in r.fields.items():
        if not name.startswith("tokenizer."):
            continue
        vtype = f.types[0]
        if vtype == GGUFValueType.ARRAY:
            w.add_key_value(name, f.contents(), vtype, sub_type=f.types[-1])
        else:
            w.add_key_value(name, f.contents(), vtype)
    del r

    tensors = tensor_list(s, n_vocab)
    for name, shp, kind in tensors:
        dt = np.float16 if kind == "w" else np.float32
        w.add_tensor_info(name, shp, np.dtype(dt), int(np.prod(shp)) * np.dtype(dt).itemsize)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()

    # Tensor data, streamed: each tensor starts at the writer's alignment and is padded after
    # (what GGUFWriter.write_tensor_data does for a whole array), generated CHUNK_ELEMS at a time.
    fout = w.fout[0]
    align = w.data_alignment
    rng = np.random.default_rng(seed)
    tiled = None
    if s.get("tiled"):  # one block of random values, repeated (see the a3b shape above)
        tiled = rng.standard_normal(CHUNK_ELEMS, dtype=np.float32)
        tiled *= STD
        tiled = {"f32": tiled, "w": tiled.astype(np.float16)}
    total = sum(int(np.prod(shp)) for _, shp, _ in tensors)
    done = 0
    tty = sys.stderr.isatty()
    t0 = time.time()
    for name, shp, kind in tensors:
        fout.write(b"\0" * (-fout.tell() % align))
        n = int(np.prod(shp))
        if kind == "norm":
            np.ones(n, dtype=np.float32).tofile(fout)
        else:
            for off in range(0, n, CHUNK_ELEMS):
                m = min(CHUNK_ELEMS, n - off)
                if tiled is not None:
                    tiled[kind][:m].tofile(fout)
                    continue
                x = rng.standard_normal(m, dtype=np.float32)
                x *= STD
                (x if kind == "f32" else x.astype(np.float16)).tofile(fout)
        done += n
        if tty:
            print(f"\r  {done / total * 100:5.1f}%  {name:<28}", end="", file=sys.stderr, flush=True)
    fout.write(b"\0" * (-fout.tell() % align))
    w.close()
    print(("\r" if tty else "") + f"  {total / 1e9:.2f}B parameters written in {time.time() - t0:.0f} s"
          + (" " * 20 if tty else ""), file=sys.stderr)
    os.replace(dst + ".part", dst)


def quantize(src, dst, ftype, threads):
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = FTYPES[ftype]
    params.nthread = threads
    rc = llama_cpp.llama_model_quantize(src.encode(), (dst + ".part").encode(), ctypes.byref(params))
    if rc != 0:
        raise RuntimeError(f"llama_model_quantize({dst}) returned {rc}")
    os.replace(dst + ".part", dst)


def check(path, wisp, threads):
    """Loads the file in llama.cpp (llama-cpp-python) and generates 4 tokens; then wisp if built."""
    from llama_cpp import Llama

    t0 = time.time()
    llm = Llama(model_path=path, n_ctx=256, n_threads=threads, n_threads_batch=threads, verbose=False)
    out = llm.create_completion("hi", max_tokens=4, temperature=0.0)
    print(f"  llama.cpp: {os.path.basename(path)}: {out['choices'][0]['text']!r} "
          f"({time.time() - t0:.1f} s)", file=sys.stderr)
    del llm
    if wisp and os.path.exists(wisp):
        subprocess.run([wisp, "info", path], check=True)
        subprocess.run([wisp, "run", "-m", path, "-p", "hi", "-n", "4", "-t", str(threads)], check=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shapes", nargs="+", default=["1b"], choices=sorted(SHAPES))
    ap.add_argument("--types", nargs="+", default=["Q4_0", "Q4_K_M", "Q8_0"], choices=["F16"] + sorted(FTYPES),
                    help="quantized copies made from the F16 file (default: Q4_0 Q4_K_M Q8_0); F16: the "
                         "source file alone (the F16 speed rows)")
    ap.add_argument("--threads", type=int, default=2, help="quantizer / check threads (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--check", action="store_true",
                    help="load each file in llama-cpp-python and generate 4 tokens; also `wisp info` and "
                         "`wisp run` when --wisp exists")
    ap.add_argument("--wisp", default=os.path.join(ROOT, "build", "wisp"), help="wisp binary for --check")
    a = ap.parse_args()
    if not os.path.exists(TOKENIZER_SRC):
        sys.exit(f"error: {TOKENIZER_SRC} is missing (run scripts/setup; its tokenizer is copied)")
    os.makedirs(OUT, exist_ok=True)
    for shape in a.shapes:
        f16 = file_name(shape, "F16")
        if os.path.exists(f16):
            print(f"{f16}: exists, skipped", file=sys.stderr)
        elif any(not os.path.exists(file_name(shape, t)) for t in a.types):  # else not needed
            print(f"writing {f16}", file=sys.stderr)
            write_f16(shape, f16, a.seed)
        for t in a.types:
            if t == "F16":  # the source itself, written above
                continue
            dst = file_name(shape, t)
            if os.path.exists(dst):
                print(f"{dst}: exists, skipped", file=sys.stderr)
                continue
            print(f"quantizing {t} -> {dst}", file=sys.stderr)
            t0 = time.time()
            quantize(f16, dst, t, a.threads)
            print(f"  {os.path.getsize(dst) / 2**30:.2f} GiB in {time.time() - t0:.0f} s", file=sys.stderr)
        if a.check:
            for t in ["F16"] + [t for t in a.types if t != "F16"]:
                if os.path.exists(file_name(shape, t)):
                    check(file_name(shape, t), a.wisp, a.threads)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Golden logits from llama.cpp for a tiny model whose matrices are NVFP4, for
tests/unit/model/test_block_type_parity.cpp.

llama.cpp has no NVFP4 file type, but its quantizer writes NVFP4 tensors on request: this script
runs build-llamacpp/bin/llama-quantize (bench/build_llamacpp_tools) on qwen2-tiny's shape (written
by gen_golden_logits.write_tiny, F32) with file type Q8_0 and every attention and FFN matrix
overridden to NVFP4 (--tensor-type); the embeddings (tied output) stay Q8_0. No per-tensor
`.scale` tensors are written, so llama.cpp's matmul is the plain NVFP4 dot. The goldens (text
logits, greedy continuations) are recorded by gen_golden_logits.record through llama-cpp-python.

A second model carries the per-tensor factors of converted NVFP4 checkpoints: llama's shape with
an untied output, every attention and FFN matrix and the output NVFP4, and beside each a
`<name>.scale` (F32, one value, random in [0.25, 4]) that llama.cpp multiplies into the product;
two `.input_scale` tensors, which llama.cpp loads and does not use. The llama architecture because
its llama.cpp graph applies the factors to every one of these matrices (qwen2's and gemma3's apply
them to attention and the output only).

Writes tests/golden/logits/qwen2-tiny-nvfp4.{gguf,json,full.f16} and llama-tiny-nvfp4-scaled.*.
Usage:  python3 scripts/gen_golden_nvfp4_logits.py
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_golden_iq_logits as iq  # noqa: E402
import gen_golden_logits as g  # noqa: E402

SEED = 20261350
MATRICES = ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]


def nvfp4_model(quantizer: Path, name: str, arch: str, seed: int, dims: dict, n_nvfp4: int,
                extra_args: list[str], scales: bool) -> bool:
    dst = g.OUT / f"{name}.gguf"
    extra = {}
    if scales:
        rng = np.random.default_rng(seed + 2)
        names = [f"blk.{il}.{m}" for il in range(dims["n_layer"]) for m in MATRICES] + ["output"]
        extra = {f"{n}.scale": np.exp(rng.uniform(np.log(0.25), np.log(4.0), 1)).astype(np.float32) for n in names}
        for n in ("blk.0.attn_q", "blk.1.ffn_down"):
            extra[f"{n}.input_scale"] = np.array([1000.0], dtype=np.float32)  # unused by llama.cpp
    with tempfile.TemporaryDirectory() as tmp:
        f32 = Path(tmp) / f"{name}.f32.gguf"
        g.write_tiny(f32, arch, seed=seed, extra=extra, **dims)
        cmd = [str(quantizer)]
        for m in MATRICES:
            cmd += ["--tensor-type", f"{m}=nvfp4"]
        cmd += extra_args + [str(f32), str(dst), "Q8_0", "2"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    types = iq.tensor_types(dst)
    print(f"  {dst.name}: tensor types {types}")
    if types.get("NVFP4", 0) != n_nvfp4:
        print(f"{name}: llama-quantize did not write the {n_nvfp4} matrices as NVFP4", file=sys.stderr)
        return False
    rng = np.random.default_rng(seed + 1)
    n_vocab = dims["n_vocab"]
    text = [1] + [int(t) for t in rng.integers(3, n_vocab, g.N_TEXT_TOKENS - 1)]
    prompts = [(f"random-{i}", [1] + [int(t) for t in rng.integers(3, n_vocab, 7 + 3 * i)]) for i in range(3)]
    g.record(name, dst, f"tests/golden/logits/{dst.name}", text, prompts, [0, 100, g.N_TEXT_TOKENS - 1], 32)
    return True


def main() -> int:
    quantizer = g.ROOT / "build-llamacpp" / "bin" / "llama-quantize"
    if not quantizer.exists():
        print(f"missing {quantizer}: build it with bench/build_llamacpp_tools", file=sys.stderr)
        return 1
    g.OUT.mkdir(parents=True, exist_ok=True)
    n_layer = iq.DIMS["n_layer"]
    ok = nvfp4_model(quantizer, "qwen2-tiny-nvfp4", "qwen2", SEED, iq.DIMS, len(MATRICES) * n_layer, [], False)
    llama_dims = dict(iq.DIMS, qkv_bias=False, tied=False)
    ok = ok and nvfp4_model(quantizer, "llama-tiny-nvfp4-scaled", "llama", SEED + 10, llama_dims,
                            len(MATRICES) * n_layer + 1, ["--output-tensor-type", "nvfp4"], True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

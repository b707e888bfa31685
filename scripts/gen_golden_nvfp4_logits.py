#!/usr/bin/env python3
"""Golden logits from llama.cpp for a tiny model whose matrices are NVFP4, for
tests/unit/model/test_block_type_parity.cpp.

llama.cpp has no NVFP4 file type, but its quantizer writes NVFP4 tensors on request: this script
runs build-llamacpp/bin/llama-quantize (bench/build_llamacpp_tools) on qwen2-tiny's shape (written
by gen_golden_logits.write_tiny, F32) with file type Q8_0 and every attention and FFN matrix
overridden to NVFP4 (--tensor-type); the embeddings (tied output) stay Q8_0. No per-tensor
`.scale` tensors are written, so llama.cpp's matmul is the plain NVFP4 dot. The goldens (text
logits, greedy continuations) are recorded by gen_golden_logits.record through llama-cpp-python.

Writes tests/golden/logits/qwen2-tiny-nvfp4.{gguf,json,full.f16}.
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


def main() -> int:
    quantizer = g.ROOT / "build-llamacpp" / "bin" / "llama-quantize"
    if not quantizer.exists():
        print(f"missing {quantizer}: build it with bench/build_llamacpp_tools", file=sys.stderr)
        return 1
    g.OUT.mkdir(parents=True, exist_ok=True)
    name = "qwen2-tiny-nvfp4"
    dst = g.OUT / f"{name}.gguf"
    with tempfile.TemporaryDirectory() as tmp:
        f32 = Path(tmp) / f"{name}.f32.gguf"
        g.write_tiny(f32, "qwen2", seed=SEED, **iq.DIMS)
        cmd = [str(quantizer)]
        for m in MATRICES:
            cmd += ["--tensor-type", f"{m}=nvfp4"]
        cmd += [str(f32), str(dst), "Q8_0", "2"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    types = iq.tensor_types(dst)
    print(f"  {dst.name}: tensor types {types}")
    if types.get("NVFP4", 0) != len(MATRICES) * iq.DIMS["n_layer"]:
        print("llama-quantize did not write every matrix as NVFP4", file=sys.stderr)
        return 1
    rng = np.random.default_rng(SEED + 1)
    n_vocab = iq.DIMS["n_vocab"]
    text = [1] + [int(t) for t in rng.integers(3, n_vocab, g.N_TEXT_TOKENS - 1)]
    prompts = [(f"random-{i}", [1] + [int(t) for t in rng.integers(3, n_vocab, 7 + 3 * i)]) for i in range(3)]
    g.record(name, dst, f"tests/golden/logits/{dst.name}", text, prompts, [0, 100, g.N_TEXT_TOKENS - 1], 32)
    return 0


if __name__ == "__main__":
    sys.exit(main())

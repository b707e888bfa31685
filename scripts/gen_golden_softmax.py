#!/usr/bin/env python3
"""Golden softmax and SwiGLU rows from llama.cpp's own CPU backend, for wisp's exact numerics.

ggml's softmax (ggml_vec_soft_max_f32) and SwiGLU (ggml_vec_swiglu_f32) run its vector exp over
whole vectors and libm's over the tail, and sum the softmax per vector; vector width and exp
differ between the AVX-512 and the AVX2 builds of libggml-cpu. This records, from the
libggml-cpu that llama-cpp-python built on this machine, ggml_soft_max and ggml_swiglu_split of
random rows (lengths that leave tails of every size for both widths; softmax inputs with -inf
entries as masked positions, and spreads wide enough that some exponentials are subnormal or
underflow), in one file per build: tests/golden/ggml_ops/<isa>.bin. The test
(tests/unit/kernels/test_ggml_softmax.cpp) runs kernels::softmax and silu_mul in the file's
build and wants the same bits.

File layout (little-endian): magic "WGOP", u32 version 1, u32 isa (0 avx512, 1 avx2), u32 count;
then per case: u32 op (0 softmax, 1 swiglu), u32 n; softmax: n input floats, n output floats;
swiglu: n gate floats, n up floats, n output floats.

Usage:  python3 scripts/gen_golden_softmax.py [--out DIR]
Needs:  llama-cpp-python, numpy. Deterministic for a given libggml-cpu build.
"""
from __future__ import annotations

import argparse
import ctypes
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_golden_dots as dots  # noqa: E402  (load_ggml, InitParams)

LENGTHS = [1, 3, 7, 8, 9, 15, 16, 17, 23, 31, 32, 40, 64, 100, 256]


def isa() -> str:
    import llama_cpp

    info = llama_cpp.llama_print_system_info().decode()
    return "avx512" if "AVX512 = 1" in info else "avx2"


def compute(base, cpu, build, inputs):
    """build(ctx, tensors) -> output tensor; inputs: float32 rows of one length."""
    p = ctypes.c_void_p
    base.ggml_soft_max.restype = p
    base.ggml_soft_max.argtypes = [p, p]
    base.ggml_swiglu_split.restype = p
    base.ggml_swiglu_split.argtypes = [p, p, p]
    ctx = base.ggml_init(dots.InitParams(16 << 20, None, False))
    ts = []
    for x in inputs:
        t = base.ggml_new_tensor_2d(ctx, 0, x.size, 1)
        ctypes.memmove(base.ggml_get_data(t), x.tobytes(), x.nbytes)
        ts.append(t)
    out = build(base, ctx, ts)
    gf = base.ggml_new_graph(ctx)
    base.ggml_build_forward_expand(gf, out)
    assert cpu.ggml_graph_compute_with_ctx(ctx, gf, 1) == 0
    y = np.frombuffer(ctypes.string_at(base.ggml_get_data(out), 4 * inputs[0].size), dtype=np.float32).copy()
    base.ggml_free(ctx)
    return y


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "ggml_ops"))
    args = ap.parse_args()
    base, cpu = dots.load_ggml()
    rng = np.random.default_rng(20261201)
    cases = []
    for n in LENGTHS:
        for spread in (1.0, 8.0, 40.0):
            x = (rng.standard_normal(n) * spread).astype(np.float32)
            if n > 4:
                x[rng.integers(0, n, size=n // 4)] = -np.inf  # masked positions
            y = compute(base, cpu, lambda b, c, t: b.ggml_soft_max(c, t[0]), [x])
            cases.append(struct.pack("<2I", 0, n) + x.tobytes() + y.tobytes())
        for spread in (1.0, 6.0, 30.0):
            g = (rng.standard_normal(n) * spread).astype(np.float32)
            u = rng.standard_normal(n).astype(np.float32)
            y = compute(base, cpu, lambda b, c, t: b.ggml_swiglu_split(c, t[0], t[1]), [g, u])
            cases.append(struct.pack("<2I", 1, n) + g.tobytes() + u.tobytes() + y.tobytes())
    name = isa()
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"{name}.bin")
    with open(path, "wb") as f:
        f.write(b"WGOP" + struct.pack("<3I", 1, 0 if name == "avx512" else 1, len(cases)))
        for c in cases:
            f.write(c)
    print(f"wrote {path}: {len(cases)} cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Golden matmul results from llama.cpp's own CPU backend, for wisp's dot-kernel references.

The oracle is libggml-cpu as llama-cpp-python builds it (native flags: on the reference machine,
AVX-512 with VNNI and BF16): a ggml graph with one mul_mat of a random weight matrix (M rows of K
values, in the type under test) by N activation columns (float32), computed on the plain CPU
buffer (no repacking). ggml quantizes the activations itself (Q8_0/Q8_1/Q8_K, or F16/BF16) and
picks its one-token (N = 1: vec_dot) or batched (N >= 2: tinyBLAS or the tiled GEMM) path, exactly
as a model run would. wisp's test (tests/unit/kernels/test_golden_dots.cpp) converts the same
activations with its own quantizer, runs its scalar reference kernels and must get the same bits.

Writes tests/golden/dots/<TYPE>_K<k>_N<n>.bin, one per case:
  u32 type, u32 K, u32 M, u32 N, then M*row_bytes weight bytes, N*K float32 activations,
  N*M float32 results (token-major: result[t][row]).
Random weights: random code bytes with the half scale fields set to moderate values (as
tests/unit/kernels/random_blocks.h does); one row of all-0xff codes and one of all-zero codes.
Deterministic (fixed seed). Usage: python3 scripts/gen_golden_dots.py [--out tests/golden/dots] [--types A,B]

The float types' one-token and tinyBLAS orders differ between AVX2 and AVX-512 builds of
libggml-cpu, so their goldens must come from the AVX-512 reference machine. The IQ4_NL, IQ4_XS,
TQ1_0, TQ2_0, MXFP4 and grid-type (IQ1_*, IQ2_*, IQ3_*) cases were made on an AVX2 machine (--types ...),
the NVFP4 ones on an AVX-512 machine (its ggml_vec_dot_nvfp4_q8_0 has one x86 path, `__AVX2__`):
ggml's kernels for them have one x86 path for AVX2 and AVX-512 alike (the `__AVX2__` branch of
ggml_vec_dot_*, tinyBLAS's Q0 kernel, the tiled GEMM's epilogue), and the K-quant files this
machine regenerates are byte-identical to the reference machine's.
"""
import argparse
import ctypes
import os
import struct

import llama_cpp
import numpy as np

# ggml type ids and, for the quantized types, (block values, block bytes, offsets of half fields).
TYPES = {
    "F32": (0, 1, 4, []),
    "F16": (1, 1, 2, []),
    "BF16": (30, 1, 2, []),
    "Q2_K": (10, 256, 84, [80, 82]),
    "Q3_K": (11, 256, 110, [108]),
    "Q4_K": (12, 256, 144, [0, 2]),
    "Q5_K": (13, 256, 176, [0, 2]),
    "Q6_K": (14, 256, 210, [208]),
    "IQ4_NL": (20, 32, 18, [0]),
    "IQ4_XS": (23, 256, 136, [0]),
    "TQ1_0": (34, 256, 54, [52]),
    "TQ2_0": (35, 256, 66, [64]),
    "MXFP4": (39, 32, 17, []),  # byte 0 is an E8M0 exponent, set below
    "IQ2_XXS": (16, 256, 66, [0]),
    "IQ3_XXS": (18, 256, 98, [0]),
    "IQ2_XS": (17, 256, 74, [0]),
    "IQ2_S": (22, 256, 82, [0]),
    "IQ3_S": (21, 256, 110, [0]),
    "IQ1_S": (19, 256, 50, [0]),
    "IQ1_M": (29, 256, 56, []),  # the half d is in the top nibbles of the scales, set below
    "NVFP4": (40, 64, 36, []),  # bytes 0..3 are unsigned E4M3 scales, set below
}

# (type, K values per row, N tokens): one token and batches for every type; K not a multiple of
# 64 (or 16) for the float types, whose kernels take a different path for the tail.
CASES = [
    ("Q2_K", 2048, 1), ("Q3_K", 2048, 1), ("Q5_K", 2048, 1), ("Q4_K", 2048, 1), ("Q6_K", 2048, 1),
    ("Q2_K", 1024, 8), ("Q3_K", 1024, 8), ("Q5_K", 1024, 8),
    ("F32", 1024, 1), ("F32", 1000, 1), ("F32", 1024, 3), ("F32", 1000, 3),
    ("F16", 1024, 1), ("F16", 1000, 1), ("F16", 1024, 3), ("F16", 1000, 3),
    ("BF16", 1024, 1), ("BF16", 1000, 1), ("BF16", 1024, 3), ("BF16", 1000, 3),
    # Tails that reach ggml_vec_dot_f32's fused last elements (tail % 8 != 0), and a batch whose K
    # is a multiple of 16 but not of 32 (BF16's tinyBLAS declines it: the one-token order).
    ("F32", 1021, 1), ("F32", 1011, 1), ("F16", 1021, 1), ("BF16", 1021, 1), ("BF16", 1008, 3),
    # The codebook and ternary types (after the above, so their random data is unchanged): one token
    # with an even and an odd block count (ggml's paired loop and its scalar tail), tinyBLAS
    # batches (IQ4_NL), the tiled GEMM (IQ4_XS at 8 tokens) and one-token dots for small batches.
    ("IQ4_NL", 1024, 1), ("IQ4_NL", 1056, 1), ("IQ4_NL", 1024, 3), ("IQ4_NL", 1056, 8),
    ("IQ4_XS", 2048, 1), ("IQ4_XS", 1024, 3), ("IQ4_XS", 1024, 8),
    ("TQ1_0", 2048, 1), ("TQ1_0", 1024, 8), ("TQ2_0", 2048, 1), ("TQ2_0", 1024, 8),
    ("MXFP4", 1024, 1), ("MXFP4", 1056, 1), ("MXFP4", 1024, 8),
    ("IQ2_XXS", 2048, 1), ("IQ2_XXS", 1024, 8), ("IQ3_XXS", 2048, 1), ("IQ3_XXS", 1024, 8),
    # The other grid types: one token and the tiled GEMM (8 tokens).
    ("IQ2_XS", 2048, 1), ("IQ2_XS", 1024, 8), ("IQ2_S", 2048, 1), ("IQ2_S", 1024, 8),
    ("IQ3_S", 2048, 1), ("IQ3_S", 1024, 8), ("IQ1_S", 2048, 1), ("IQ1_S", 1024, 8),
    ("IQ1_M", 2048, 1), ("IQ1_M", 1024, 8),
    # NVFP4 (64-value blocks over two Q8_0 activation blocks): one token with an even and an odd
    # block count, and a batch (ggml has no batched kernel for it: one vec_dot per output).
    ("NVFP4", 1024, 1), ("NVFP4", 1088, 1), ("NVFP4", 1024, 8),
]
M = 8


class InitParams(ctypes.Structure):
    _fields_ = [("mem_size", ctypes.c_size_t), ("mem_buffer", ctypes.c_void_p), ("no_alloc", ctypes.c_bool)]


def load_ggml():
    libdir = os.path.join(os.path.dirname(llama_cpp.__file__), "lib")
    base = ctypes.CDLL(os.path.join(libdir, "libggml-base.so"), mode=ctypes.RTLD_GLOBAL)
    cpu = ctypes.CDLL(os.path.join(libdir, "libggml-cpu.so"), mode=ctypes.RTLD_GLOBAL)
    p = ctypes.c_void_p
    base.ggml_init.restype = p
    base.ggml_init.argtypes = [InitParams]
    base.ggml_new_tensor_2d.restype = p
    base.ggml_new_tensor_2d.argtypes = [p, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    base.ggml_mul_mat.restype = p
    base.ggml_mul_mat.argtypes = [p, p, p]
    base.ggml_new_graph.restype = p
    base.ggml_new_graph.argtypes = [p]
    base.ggml_build_forward_expand.argtypes = [p, p]
    base.ggml_get_data.restype = p
    base.ggml_get_data.argtypes = [p]
    base.ggml_nbytes.restype = ctypes.c_size_t
    base.ggml_nbytes.argtypes = [p]
    base.ggml_free.argtypes = [p]
    cpu.ggml_cpu_init.argtypes = []
    cpu.ggml_graph_compute_with_ctx.restype = ctypes.c_int
    cpu.ggml_graph_compute_with_ctx.argtypes = [p, p, ctypes.c_int]
    cpu.ggml_cpu_init()
    return base, cpu


def f32_to_bf16(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def random_weights(rng, name, k):
    tid, be, bb, halves = TYPES[name]
    if name == "F32":
        return rng.standard_normal(M * k).astype(np.float32).tobytes()
    if name == "F16":
        return rng.standard_normal(M * k).astype(np.float16).tobytes()
    if name == "BF16":
        return f32_to_bf16(rng.standard_normal(M * k)).tobytes()
    nb = M * k // be
    w = rng.integers(0, 256, size=(nb, bb), dtype=np.uint8)
    per_row = k // be
    w[0:per_row, :] = 0xFF  # row 0: extreme codes
    w[per_row:2 * per_row, :] = 0  # row 1: zero codes
    for off in halves:
        s = rng.uniform(0.001, 0.05, size=nb).astype(np.float16).view(np.uint16)
        w[:, off] = (s & 0xFF).astype(np.uint8)
        w[:, off + 1] = (s >> 8).astype(np.uint8)
    if name == "MXFP4":  # shared exponents 2^-10 .. 2^-3: moderate scales, as the halves above
        w[:, 0] = rng.integers(118, 126, size=nb, dtype=np.uint8)
    if name == "NVFP4":  # E4M3 scales 2^-7 .. 2^-1 (exponents 4..10), never the zero pattern 0x7F
        w[2 * per_row:, 0:4] = rng.integers(0x20, 0x58, size=(nb - 2 * per_row, 4), dtype=np.uint8)
    if name == "IQ1_M":  # nibble k of the half d is the top nibble of the k-th uint16 of scales (bytes 48..55)
        s = rng.uniform(0.001, 0.05, size=nb).astype(np.float16).view(np.uint16)
        for k in range(4):
            hi = 48 + 2 * k + 1
            w[:, hi] = (w[:, hi] & 0x0F) | ((((s >> (4 * k)) & 0xF) << 4).astype(np.uint8))
    return w.tobytes()


def run_case(base, cpu, rng, name, k, n):
    tid = TYPES[name][0]
    weights = random_weights(rng, name, k)
    acts = rng.standard_normal((n, k)).astype(np.float32)
    acts[:, k // 3] *= 40.0  # one outlier column: stresses the activation scales
    ctx = base.ggml_init(InitParams(64 << 20, None, False))
    a = base.ggml_new_tensor_2d(ctx, tid, k, M)
    b = base.ggml_new_tensor_2d(ctx, 0, k, n)
    assert base.ggml_nbytes(a) == len(weights)
    ctypes.memmove(base.ggml_get_data(a), weights, len(weights))
    ctypes.memmove(base.ggml_get_data(b), acts.tobytes(), acts.nbytes)
    c = base.ggml_mul_mat(ctx, a, b)
    gf = base.ggml_new_graph(ctx)
    base.ggml_build_forward_expand(gf, c)
    assert cpu.ggml_graph_compute_with_ctx(ctx, gf, 1) == 0
    out = ctypes.string_at(base.ggml_get_data(c), 4 * M * n)
    base.ggml_free(ctx)
    return struct.pack("<4I", tid, k, M, n) + weights + acts.tobytes() + out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "golden", "dots"))
    ap.add_argument("--types", help="comma-separated types: write only their cases (the random stream is the same)")
    args = ap.parse_args()
    only = set(args.types.split(",")) if args.types else None
    os.makedirs(args.out, exist_ok=True)
    base, cpu = load_ggml()
    rng = np.random.default_rng(20240607)
    written = 0
    for name, k, n in CASES:
        data = run_case(base, cpu, rng, name, k, n)
        if only is not None and name not in only:
            continue
        written += 1
        with open(os.path.join(args.out, f"{name}_K{k}_N{n}.bin"), "wb") as f:
            f.write(data)
    print(f"wrote {written} cases to {args.out} (llama-cpp-python {llama_cpp.__version__})")


if __name__ == "__main__":
    main()

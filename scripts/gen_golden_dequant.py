#!/usr/bin/env python3
"""Golden data for wisp's block-type reference kernels (formats/blocks/), from the `gguf` package.

The oracle is gguf.quants (gguf 0.19.0, numpy): its dequantize for every registered type (the
legacy and K-quant types, IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4, the IQ1/IQ2/IQ3 grid types and NVFP4) and its quantize for F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0. wisp must match it bit for bit.

Writes, under tests/golden/dequant/ (or --out):
  <model stem>.json   one per real model in --models: for every tensor its name, type, ne, the
                      hash of its dequantized float32 values and, for diagnostics, the first 8
                      values of row 0 and of the last row.
  synthetic.gguf      small tensors of every registry type (seeded random data plus adversarial
                      blocks), written with gguf.GGUFWriter. For the quantizable types the float32
                      source is stored too, as "<name>.src", and "<name>" holds gguf's quantization
                      of it, so the C++ quantizer can be checked byte for byte.
  synthetic.json      per synthetic tensor: type, ne, dequant hash, and for quantized ones the
                      source and quantized-byte hashes.

Hashes (16 hex digits, FNV-1a 64-bit as in tests/unit/formats/fnv1a.h):
  "fnv1a_rows": the tensor as float32 little-endian, one row (ne[0] values) at a time: each row's
                FNV-1a-64, then FNV-1a-64 over those row digests as u64 little-endian. The
                two-level form lets numpy hash all rows at once (a byte-serial FNV over 1.6 GB in
                Python would take many minutes) and lets C++ stream a tensor row by row.
  "fnv1a":      plain FNV-1a-64 over bytes (used for small byte strings: sources, quantized bytes).

Deterministic: fixed seed, no timestamps; rerunning gives identical files.
Usage: python3 scripts/gen_golden_dequant.py [--models models] [--out tests/golden/dequant]
Takes about a minute (mostly dequantizing the 167M-value gemma embedding in numpy).
"""
import argparse
import hashlib
import importlib.metadata
import json
import os
import sys

import gguf
import numpy as np
from gguf import GGMLQuantizationType as T
from gguf.constants import GGML_QUANT_SIZES

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
SEED = 20260130
GGUF_VERSION = importlib.metadata.version("gguf")  # the oracle; goldens were made with 0.19.0
MODELS = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]
QUANTIZABLE = [T.F32, T.F16, T.BF16, T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0]
LEGACY = [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0]
DEQUANT_ONLY = [T.Q2_K, T.Q3_K, T.Q4_K, T.Q5_K, T.Q6_K]
# Added later (issue 13); their cases come after all of the above so the earlier data is unchanged.
NONLINEAR = [T.IQ4_NL, T.IQ4_XS, T.TQ1_0, T.TQ2_0, T.MXFP4]
# The grid types, after those (IQ1_M has no half field: its d is spread over the scales' nibbles).
GRID = [T.IQ2_XXS, T.IQ2_XS, T.IQ2_S, T.IQ3_XXS, T.IQ3_S, T.IQ1_S, T.IQ1_M]
# NVFP4 after those (its four scales are unsigned E4M3 bytes: every byte value is finite).
MICROSCALED = [T.NVFP4]
# Byte offsets of the IEEE half fields inside one block (d, and dmin/m where present).
HALF_FIELDS = {
    T.Q4_0: [0], T.Q4_1: [0, 2], T.Q5_0: [0], T.Q5_1: [0, 2], T.Q8_0: [0],
    T.Q2_K: [80, 82], T.Q3_K: [108], T.Q4_K: [0, 2], T.Q5_K: [0, 2], T.Q6_K: [208],
    T.IQ4_NL: [0], T.IQ4_XS: [0], T.TQ1_0: [52], T.TQ2_0: [64], T.MXFP4: [],  # MXFP4: an E8M0 byte
    T.IQ2_XXS: [0], T.IQ2_XS: [0], T.IQ2_S: [0], T.IQ3_XXS: [0], T.IQ3_S: [0], T.IQ1_S: [0], T.IQ1_M: [],
    T.NVFP4: [],
}


def fnv1a(data: bytes) -> str:
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def row_digests(rows_f32: np.ndarray) -> np.ndarray:
    """FNV-1a-64 of each row's float32 LE bytes, all rows at once (numpy uint64 wraps mod 2^64)."""
    b = np.ascontiguousarray(rows_f32, dtype="<f4").view(np.uint8).reshape(rows_f32.shape[0], -1)
    cols = np.ascontiguousarray(b.T)  # column j (byte j of every row) contiguous
    h = np.full(b.shape[0], FNV_OFFSET, dtype=np.uint64)
    prime = np.uint64(FNV_PRIME)
    for j in range(cols.shape[0]):
        h ^= cols[j]
        h *= prime
    return h


def digest_rows_hash(digests: np.ndarray) -> str:
    return fnv1a(digests.astype("<u8").tobytes())


def fmt(values) -> list:
    # 9 significant digits round-trip any float32 exactly; shorter than repr of the double.
    return [float(f"{float(v):.9g}") if np.isfinite(v) else str(v) for v in values]


def dequant_rows(raw_rows: np.ndarray, qtype: T) -> np.ndarray:
    out = gguf.quants.dequantize(raw_rows, qtype)
    assert out.dtype == np.float32
    return out.reshape(raw_rows.shape[0], -1)


def tensor_rows(t) -> np.ndarray:
    """The tensor's stored data as a 2-D array: one row per ne[0]-value row."""
    n_rows = int(np.prod([int(x) for x in t.shape[1:]])) if len(t.shape) > 1 else 1
    return t.data.reshape(n_rows, -1)


def golden_for_model(path: str) -> dict:
    reader = gguf.GGUFReader(path)
    sha = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 22), b""):
            sha.update(chunk)
    tensors = []
    for t in reader.tensors:
        qtype = T(t.tensor_type)
        raw = tensor_rows(t)
        digests, first, last = [], None, None
        step = max(1, (1 << 24) // max(1, raw.shape[1]))  # ~16 MB of stored bytes per chunk
        for r0 in range(0, raw.shape[0], step):
            vals = dequant_rows(raw[r0:r0 + step], qtype)
            digests.append(row_digests(vals))
            if first is None:
                first = vals[0, :8]
            last = vals[-1, :8]
        tensors.append({
            "name": t.name, "type": qtype.name, "ne": [int(x) for x in t.shape],
            "fnv1a_rows": digest_rows_hash(np.concatenate(digests)),
            "row0": fmt(first), "row_last": fmt(last),
        })
    return {"file": os.path.basename(path), "sha256": sha.hexdigest(), "gguf_version": GGUF_VERSION,
            "hash": "fnv1a_rows of the dequantized float32 values (see scripts/gen_golden_dequant.py)",
            "tensors": tensors}


# ---- synthetic data -----------------------------------------------------------------------------

def f32_bits(bits) -> np.ndarray:
    return np.array(bits, dtype=np.uint32).view(np.float32)


def adversarial_blocks(rng) -> list:
    """32-value blocks that stress the legacy quantizers' edge cases (finite, no -0/+0 mixes)."""
    blocks = [
        np.full(32, 0.0), np.full(32, -0.0),            # all zero: d = 0, id must be 0 not inf
        np.full(32, 1.5), np.full(32, -3.25),           # constant: max == min
        np.full(32, 6.0e4), np.full(32, -6.5e4),        # near the half-float max
        rng.uniform(-6.0e4, 6.0e4, 32),                 # large magnitudes
        rng.uniform(-1e-4, 1e-4, 32),                   # d is a subnormal half
        rng.uniform(-1e-8, 1e-8, 32),                   # d underflows to half zero
        rng.uniform(-1e-30, 1e-30, 32),                 # tiny floats, 1/d still finite
        np.concatenate([np.full(16, 2.0), np.full(16, -2.0)]),  # |max| tie: first one wins
        np.concatenate([np.full(16, -2.0), np.full(16, 2.0)]),
        np.where(np.arange(32) % 2 == 0, 1.0, -1.0) * rng.uniform(0.5, 1.0, 32),
        np.linspace(-1.0, 1.0, 32), np.linspace(0.0, 31.0, 32), np.linspace(-8.0, 7.0, 32),
    ]
    # Values whose scaled code lands exactly on a .5 rounding boundary for each type's natural scale:
    # Q4_0/Q5_0 use max/-8 or /-16, Q4_1/Q5_1 (max-min)/15 or /31, Q8_0 max/127.
    k = np.arange(32)
    blocks += [
        np.concatenate([[-8.0], (k[1:] % 16) - 8 + 0.5]),
        np.concatenate([[-16.0], (k[1:] % 32) - 16 + 0.5]),
        np.concatenate([[0.0, 15.0], (k[2:] % 15) + 0.5]),
        np.concatenate([[0.0, 31.0], (k[2:] % 31) + 0.5]),
        np.concatenate([[127.0], (k[1:] * 8 - 127) + 0.5]),
        np.concatenate([[-127.0], -(k[1:] * 4) - 0.5]),
    ]
    return [np.asarray(b, dtype=np.float32) for b in blocks]


def special_f32_values() -> np.ndarray:
    """Values that exercise float -> half/bfloat16 rounding: ties, overflow, subnormals, NaN, inf."""
    bits = [
        0x00000000, 0x80000000, 0x3F800000, 0xBF800000,
        0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFC00001, 0x7FA00000,
        0x477FE000, 0x477FEFFF, 0x477FF000, 0x47800000, 0x7F7FFFFF, 0xFF7FFFFF,  # around half max
        0x33000000, 0x33000001, 0xB3000000, 0x33800000, 0x33C00000, 0x34000000,  # around 2^-25, 2^-24
        0x387FC000, 0x387FE000, 0x387FF000, 0x38800000, 0x38801000, 0x38803000,  # subnormal/normal edge
        0x3F801000, 0x3F803000, 0x3F800FFF, 0x3F801001,                          # half ties at 1.0
        0x3F808000, 0x3F818000, 0x3F807FFF, 0x3F808001, 0x7F7F8000, 0x7F7F7FFF,  # bfloat16 ties
        0x00000001, 0x80000001, 0x007FFFFF, 0x00800000,                          # float subnormals
    ]
    return f32_bits(bits)


# (levels, offset added after scaling) of the legacy quantizers: code = trunc(x * id + offset).
SYMMETRIC = {T.Q4_0: (8, 8.5), T.Q5_0: (16, 16.5)}
ASYMMETRIC = {T.Q4_1: 15, T.Q5_1: 31}


def boundary_blocks(rng, qtype: T, n_blocks: int = 16) -> list:
    """Blocks whose values sit within a few ulps of a code boundary after float32 scaling.

    With a random, inexact 1/d the rounded product x * id may land on the boundary while the exact
    one does not: that is where an implementation that fuses the multiply-add (FMA) or computes
    in double picks a different code than gguf's numpy float32 arithmetic."""
    out = []
    f32 = np.float32
    for _ in range(n_blocks):
        x = np.zeros(32, dtype=np.float32)
        if qtype in SYMMETRIC:
            levels, offset = SYMMETRIC[qtype]
            x[0] = f32(rng.uniform(0.5, 100.0) * rng.choice([-1.0, 1.0]))
            id_ = f32(1) / (x[0] / f32(-levels))
            n = rng.integers(1, 2 * levels, 31)
            target = (n - offset) / np.float64(id_)
        elif qtype in ASYMMETRIC:
            steps = ASYMMETRIC[qtype]
            x[0] = f32(-rng.uniform(0.5, 50.0))
            x[1] = f32(rng.uniform(0.5, 50.0))
            id_ = f32(1) / ((x[1] - x[0]) / f32(steps))
            n = rng.integers(1, steps, 30)
            target = (n - 0.5) / np.float64(id_) + np.float64(x[0])
        else:  # Q8_0: round half away from zero at x * id = n + 0.5
            x[0] = f32(rng.uniform(0.5, 100.0))
            id_ = f32(1) / (x[0] / f32(127))
            n = rng.integers(-127, 127, 31)
            target = (n + 0.5) / np.float64(id_)
        near = target.astype(np.float32).view(np.int32) + rng.integers(-2, 3, target.size).astype(np.int32)
        x[32 - target.size:] = near.view(np.float32)
        out.append(x)
    return out


def quantizable_source(rng, qtype: T) -> np.ndarray:
    """A (rows, 256) float32 source: random rows at several scales, then adversarial blocks."""
    scales = [1.0, 1e-3, 1e3, 0.02]
    rows = [rng.standard_normal(256) * s for s in scales]
    rows.append(np.concatenate([rng.standard_normal(128), rng.standard_normal(128) * 50.0]))
    adv = np.concatenate(adversarial_blocks(rng) + (boundary_blocks(rng, qtype) if qtype in LEGACY else []))
    flat = np.concatenate(rows + [adv]).astype(np.float32)
    if qtype in (T.F16, T.BF16, T.F32):
        flat = np.concatenate([flat, special_f32_values(),
                               rng.standard_normal(512).astype(np.float32) * np.float32(7e4)])
        # Random bit patterns too (finite and not, every exponent).
        flat = np.concatenate([flat, rng.integers(0, 2**32, 256, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    n = (flat.size + 255) // 256 * 256
    flat = np.concatenate([flat, rng.standard_normal(n - flat.size).astype(np.float32)])
    return flat.reshape(-1, 256)


def random_blocks(rng, qtype: T, n_blocks: int) -> np.ndarray:
    """Random packed bytes whose half fields are finite (random sign, exponent 0..30, mantissa)."""
    block_elems, block_bytes = GGML_QUANT_SIZES[qtype]
    raw = rng.integers(0, 256, (n_blocks, block_bytes), dtype=np.uint8)
    for off in HALF_FIELDS[qtype]:
        h = raw[:, off:off + 2].copy().view("<u2").reshape(-1)
        exp = (h >> 10) & 0x1F
        h = np.where(exp == 0x1F, h & ~np.uint16(0x4000), h).astype("<u2")  # exponent 31 -> 15
        raw[:, off:off + 2] = h.view(np.uint8).reshape(n_blocks, 2)
    # Crafted blocks: extreme scales with all-ones and all-zero payloads.
    crafted = []
    for d_bits, fill in [(0x7BFF, 0xFF), (0xFBFF, 0x00), (0x0001, 0xFF), (0x8000, 0xA5), (0x3C00, 0x5A)]:
        b = np.full(block_bytes, fill, dtype=np.uint8)
        for off in HALF_FIELDS[qtype]:
            b[off:off + 2] = np.array([d_bits], dtype="<u2").view(np.uint8)
        crafted.append(b)
    return np.concatenate([raw, np.stack(crafted)])


def synthetic(out_dir: str) -> None:
    rng = np.random.default_rng(SEED)
    writer = gguf.GGUFWriter(os.path.join(out_dir, "synthetic.gguf"), arch="wisp-golden")
    writer.add_string("general.description", "wisp block-type golden data: scripts/gen_golden_dequant.py")
    entries = []

    def add(name: str, qtype: T, raw_rows: np.ndarray, ne: list, extra: dict) -> None:
        vals = dequant_rows(raw_rows, qtype)
        entries.append({"name": name, "type": qtype.name, "ne": ne,
                        "fnv1a_rows": digest_rows_hash(row_digests(vals)), **extra})

    for qtype in QUANTIZABLE:
        base = qtype.name.lower()
        src = quantizable_source(rng, qtype)
        with np.errstate(over="ignore"):  # F16 overflow to inf is one of the cases under test
            q = gguf.quants.quantize(src, qtype)
        q_bytes = np.ascontiguousarray(q).view(np.uint8).reshape(src.shape[0], -1)
        writer.add_tensor(f"{base}.src", src)
        writer.add_tensor(base, q_bytes, raw_dtype=qtype)
        add(base, qtype, q_bytes, [src.shape[1], src.shape[0]],
            {"src": f"{base}.src", "src_fnv1a": fnv1a(src.tobytes()), "quant_fnv1a": fnv1a(q_bytes.tobytes())})

    # Raw random blocks: every bit pattern the dequantizer may meet, not only what a quantizer makes.
    for qtype in [T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0] + DEQUANT_ONLY:
        block_elems, _ = GGML_QUANT_SIZES[qtype]
        n_blocks = 64 if block_elems == 32 else 32
        raw = random_blocks(rng, qtype, n_blocks - 5)
        per_row = 256 // block_elems if block_elems < 256 else 2  # rows of 256 or 512 values
        rows = raw.reshape(-1, per_row * raw.shape[1])
        name = f"{qtype.name.lower()}.raw"
        writer.add_tensor(name, rows, raw_dtype=qtype)
        add(name, qtype, rows, [per_row * block_elems, rows.shape[0]], {})

    # Every half and a sample of bfloat16 bit patterns (NaN payloads included); a 3-D shape too.
    all_halves = np.arange(65536, dtype=np.uint32).astype("<u2").reshape(256, 256)
    writer.add_tensor("f16.all", all_halves.view(np.float16))
    add("f16.all", T.F16, all_halves.view(np.uint8).reshape(256, -1), [256, 256], {})
    bf = rng.integers(0, 65536, (3, 4, 64), dtype=np.uint64).astype("<u2")
    writer.add_tensor("bf16.raw", bf.view(np.uint8).reshape(3, 4, 128), raw_dtype=T.BF16)
    add("bf16.raw", T.BF16, bf.view(np.uint8).reshape(12, 128), [64, 4, 3], {})

    # The non-linear, ternary and microscaling types: raw random blocks as above (every byte value,
    # so every codebook index, sign and exponent), after the older cases.
    for qtype in NONLINEAR + GRID + MICROSCALED:
        block_elems, _ = GGML_QUANT_SIZES[qtype]
        n_blocks = 64 if block_elems == 32 else 32
        raw = random_blocks(rng, qtype, n_blocks - 5)
        if qtype == T.IQ1_M:  # d's exponent MSB is bit 14 of scales[3] (byte 55): keep d finite
            raw[:, 55] &= np.uint8(0xBF)
        if qtype == T.NVFP4:  # the scale bytes that are special: E4M3's NaN pattern 0x7F (zero), the
            raw[0, 0:4] = [0x7F, 0x01, 0x80, 0xFF]  # smallest subnormal, the ignored top bit, the largest
        per_row = 256 // block_elems if block_elems < 256 else 2
        rows = raw.reshape(-1, per_row * raw.shape[1])
        name = f"{qtype.name.lower()}.raw"
        writer.add_tensor(name, rows, raw_dtype=qtype)
        add(name, qtype, rows, [per_row * block_elems, rows.shape[0]], {})

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    with open(os.path.join(out_dir, "synthetic.json"), "w") as f:
        f.write('{"gguf_version": "%s", "seed": %d,\n' % (GGUF_VERSION, SEED))
        f.write(' "hash": "fnv1a_rows of dequantized float32; src/quant: fnv1a of the tensor bytes",\n')
        f.write(' "tensors": [\n')
        f.write(",\n".join("  " + json.dumps(e, separators=(",", ":")) for e in entries))
        f.write("\n]}\n")


def main() -> int:
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=os.path.join(root, "models"))
    ap.add_argument("--out", default=os.path.join(root, "tests", "golden", "dequant"))
    ap.add_argument("--skip-models", action="store_true", help="only write the synthetic data")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    synthetic(args.out)
    if not args.skip_models:
        for m in MODELS:
            path = os.path.join(args.models, m)
            if not os.path.exists(path):
                print(f"missing {path}; fetch it with scripts/fetch_models", file=sys.stderr)
                return 1
            golden = golden_for_model(path)
            out = os.path.join(args.out, os.path.splitext(m)[0] + ".json")
            with open(out, "w") as f:
                f.write('{"file": %s, "sha256": %s, "gguf_version": %s, "hash": %s,\n "tensors": [\n' % tuple(
                    json.dumps(golden[k]) for k in ("file", "sha256", "gguf_version", "hash")))
                f.write(",\n".join("  " + json.dumps(t, separators=(",", ":")) for t in golden["tensors"]))
                f.write("\n]}\n")
            print(f"{out}: {len(golden['tensors'])} tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Writes the GGUF fuzz seed corpus (tests/fuzz/corpus/gguf/) from the real models' headers.

Each seed keeps a real model's metadata keys and value types (arrays cut to their first 8
elements) and its tensor names and block types (each tensor shrunk to one or two blocks), so the
fuzzer starts from the structures real files have, in a few KB. Written with the `gguf` package.
Run: python3 scripts/gen_fuzz_seeds.py  (needs models/ from scripts/fetch_models)
"""
import os
import sys

import gguf
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus", "gguf")
MODELS = ["SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"]


def seed_from(model_path, out_path, max_tensors):
    r = gguf.GGUFReader(model_path)
    arch = r.fields["general.architecture"].contents()
    w = gguf.GGUFWriter(out_path, arch)
    for key, field in r.fields.items():
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        vt = field.types[0]
        val = field.contents()
        if vt == gguf.GGUFValueType.ARRAY:
            w.add_key_value(key, val[:8], vt, sub_type=field.types[1])
        else:
            w.add_key_value(key, val, vt)
    rng = np.random.default_rng(0)
    for t in r.tensors[:max_tensors]:
        qt = t.tensor_type
        block, nbytes = gguf.GGML_QUANT_SIZES[qt]
        rows = 2 if len(t.shape) > 1 else 1
        if qt == gguf.GGMLQuantizationType.F32:
            raw = rng.standard_normal(rows * 8, dtype=np.float32).view(np.uint8)
            row_bytes = 32
        else:
            raw = rng.integers(0, 256, size=rows * nbytes, dtype=np.uint8)
            row_bytes = nbytes
        # raw_shape is in bytes for the packed row, outermost dimension first.
        shape = (row_bytes,) if rows == 1 else (rows, row_bytes)
        w.add_tensor(t.name, raw.reshape(shape), raw_shape=shape, raw_dtype=qt)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main():
    os.makedirs(OUT, exist_ok=True)
    for m in MODELS:
        path = os.path.join(ROOT, "models", m)
        if not os.path.exists(path):
            sys.exit(f"{path} missing: run scripts/fetch_models")
        stem = m.rsplit(".", 1)[0]
        seed_from(path, os.path.join(OUT, f"{stem}.header.gguf"), max_tensors=12)
    print(f"seeds written to {OUT}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Makes the per-bit-width sweep models for `wisp bench` / bench/compare_llamacpp.

SmolLM2-135M (Q4_1, the real model) is dequantized to an F16 GGUF with the `gguf` package (its
reference dequantizers; metadata and tokenizer copied), then llama.cpp's own quantizer
(llama-cpp-python's llama_model_quantize) makes each standard type from that F16 file.
wisp's own group-wise types (--wisp-types, e.g. wq4_g64) are made from the same F16 file by
`wisp quantize` (llama.cpp refuses those files by design: compare_llamacpp lists them wisp-only).
Outputs go to models/sweep/ (git-ignored). The F16 file stands for "the original weights": the
Q4_1 rounding is already in it, so the sweep measures speed per type, not quality.

  python3 bench/make_sweep_models.py [--types Q4_0 Q5_0 ...]
"""
import argparse
import ctypes
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "models", "SmolLM2-135M-Instruct.Q4_1.gguf")
OUT = os.path.join(ROOT, "models", "sweep")

# llama.cpp's LLAMA_FTYPE_MOSTLY_* ids.
FTYPES = {"Q4_0": 2, "Q4_1": 3, "Q8_0": 7, "Q5_0": 8, "Q5_1": 9, "Q2_K": 10, "Q3_K_M": 12, "Q4_K_M": 15,
          "Q5_K_M": 17, "Q6_K": 18}


def dequantize_to_f16(src, dst):
    import gguf
    from gguf import GGUFReader, GGUFWriter, GGUFValueType
    from gguf.quants import dequantize

    r = GGUFReader(src)
    arch = r.fields["general.architecture"].contents()
    w = GGUFWriter(dst, arch)
    for name, f in r.fields.items():
        if name.startswith("GGUF.") or name == "general.architecture":
            continue
        if name == "general.file_type":
            w.add_uint32(name, 1)  # MOSTLY_F16
            continue
        vtype = f.types[0]
        if vtype == GGUFValueType.ARRAY:
            w.add_key_value(name, f.contents(), vtype, sub_type=f.types[-1])
        else:
            w.add_key_value(name, f.contents(), vtype)
    for t in r.tensors:
        data = dequantize(t.data, t.tensor_type)  # float32, shape in numpy order
        # Norms and other 1-D tensors stay F32 (as llama.cpp's converter writes them).
        arr = data.astype(np.float32 if len(t.shape) == 1 or data.ndim == 1 else np.float16)
        w.add_tensor(t.name, arr)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def quantize(src, dst, ftype):
    import llama_cpp

    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(params))
    if rc != 0:
        raise RuntimeError(f"llama_model_quantize({dst}) returned {rc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--types", nargs="+", default=["Q4_0", "Q5_0", "Q5_1", "Q8_0", "Q4_K_M", "Q6_K"])
    ap.add_argument("--wisp-types", nargs="*", default=["wq4_g64", "wq3_g64"],
                    help="wisp quantize types (made with --wisp)")
    ap.add_argument("--wisp", default=os.path.join(ROOT, "build", "wisp"), help="wisp binary for --wisp-types")
    a = ap.parse_args()
    os.makedirs(OUT, exist_ok=True)
    f16 = os.path.join(OUT, "SmolLM2-135M-Instruct.F16.gguf")
    if not os.path.exists(f16):
        print(f"dequantizing {SRC} -> {f16}", file=sys.stderr)
        dequantize_to_f16(SRC, f16)
    for t in a.types:
        dst = os.path.join(OUT, f"SmolLM2-135M-Instruct.{t}.gguf")
        if os.path.exists(dst):
            continue
        print(f"quantizing {t} -> {dst}", file=sys.stderr)
        quantize(f16, dst, FTYPES[t])
    for t in a.wisp_types:
        dst = os.path.join(OUT, f"SmolLM2-135M-Instruct.{t.upper()}.gguf")
        if os.path.exists(dst):
            continue
        print(f"wisp quantize {t} -> {dst}", file=sys.stderr)
        subprocess.run([a.wisp, "quantize", f16, dst, "--type", t], check=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Golden logits from llama.cpp for tiny models in the grid block types (IQ1_S, IQ1_M, IQ2_XXS,
IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S), for tests/unit/model/test_block_type_parity.cpp.

llama.cpp's quantizer refuses these types without an importance matrix, so this script makes a
small one: for every matrix of the tiny model, per input column the mean square of 64 seeded
standard-normal activations (what llama-imatrix accumulates, on random inputs), handed to
llama_model_quantize through its C struct. The model is qwen2-tiny's shape (rows of 256 and 512
values, 2 layers, tied embeddings, QKV biases; written by gen_golden_logits.write_tiny), one seed
per file type; llama.cpp picks each tensor's type from the file type as it does for real models
(IQ2_M gives IQ2_S matrices, IQ3_S gives IQ3_S). The goldens (text logits, greedy continuations)
are recorded by gen_golden_logits.record, as for the other tiny models.

Writes tests/golden/logits/qwen2-tiny-<ftype>.{gguf,json,full.f16}.
Usage:  python3 scripts/gen_golden_iq_logits.py [--only iq2_xs ...]
"""
from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_golden_logits as g  # noqa: E402

FTYPES = ["IQ1_S", "IQ1_M", "IQ2_XXS", "IQ2_XS", "IQ2_M", "IQ3_XXS", "IQ3_S"]
DIMS = dict(n_embd=256, n_head=4, n_head_kv=2, n_ff=512, n_layer=2, n_vocab=512, rope_base=1000000.0, qkv_bias=True,
            tied=True)


def importance_matrix(f32: Path, seed: int) -> dict[str, np.ndarray]:
    """Per matrix (2-D tensor) of the F32 file: the mean square of random activations per column."""
    import gguf

    rng = np.random.default_rng(seed)
    out = {}
    for t in gguf.GGUFReader(str(f32)).tensors:
        if len(t.shape) != 2:
            continue
        cols = int(t.shape[0])  # GGUF ne[0]: values per row
        out[t.name] = np.mean(rng.standard_normal((64, cols)) ** 2, axis=0).astype(np.float32)
    return out


def quantize_with_imatrix(src: Path, dst: Path, ftype: int, imatrix: dict[str, np.ndarray]) -> None:
    import llama_cpp

    entries = (llama_cpp.llama_model_imatrix_data * (len(imatrix) + 1))()
    keep = []  # the buffers must outlive the call
    for i, (name, values) in enumerate(sorted(imatrix.items())):
        buf = np.ascontiguousarray(values, dtype=np.float32)
        keep.append(buf)
        entries[i].name = name.encode()
        entries[i].data = buf.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        entries[i].size = buf.size
    entries[len(imatrix)].name = None  # the terminator
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.nthread = 2
    params.imatrix = ctypes.cast(entries, type(params.imatrix))
    rc = llama_cpp.llama_model_quantize(str(src).encode(), str(dst).encode(), ctypes.byref(params))
    if rc != 0:
        raise RuntimeError(f"llama_model_quantize failed ({rc}) for {dst}")


def tensor_types(path: Path) -> dict[str, int]:
    import gguf

    counts: dict[str, int] = {}
    for t in gguf.GGUFReader(str(path)).tensors:
        counts[t.tensor_type.name] = counts.get(t.tensor_type.name, 0) + 1
    return counts


def grid_model(ftype_name: str, seed: int) -> None:
    import llama_cpp

    name = f"qwen2-tiny-{ftype_name.lower()}"
    dst = g.OUT / f"{name}.gguf"
    with tempfile.TemporaryDirectory() as tmp:
        f32 = Path(tmp) / f"{name}.f32.gguf"
        g.write_tiny(f32, "qwen2", seed=seed, **DIMS)
        quantize_with_imatrix(f32, dst, getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{ftype_name}"),
                              importance_matrix(f32, seed + 2))
    print(f"  {dst.name}: tensor types {tensor_types(dst)}")
    rng = np.random.default_rng(seed + 1)
    n_vocab = DIMS["n_vocab"]
    text = [1] + [int(t) for t in rng.integers(3, n_vocab, g.N_TEXT_TOKENS - 1)]
    prompts = [(f"random-{i}", [1] + [int(t) for t in rng.integers(3, n_vocab, 7 + 3 * i)]) for i in range(3)]
    g.record(name, dst, f"tests/golden/logits/{dst.name}", text, prompts, [0, 100, g.N_TEXT_TOKENS - 1], 32)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="file types to regenerate, e.g. iq2_xs (default: all)")
    args = ap.parse_args()
    g.OUT.mkdir(parents=True, exist_ok=True)
    for i, ftype_name in enumerate(FTYPES):
        if args.only and ftype_name.lower() not in [o.lower() for o in args.only]:
            continue
        grid_model(ftype_name, 20261330 + i)
    return 0


if __name__ == "__main__":
    sys.exit(main())

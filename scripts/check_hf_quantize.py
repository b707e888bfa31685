#!/usr/bin/env python3
"""Checks a GGUF made by `wisp quantize HF_FOLDER OUT --type f16` against the GGUF the folder was
exported from (scripts/export_hf_f16.py), with the `gguf` package as the oracle:

  * every tensor of OUT equals the source's tensor dequantized by `gguf` and cast to float16,
    bit for bit (compared as float32, so an F32 norm in OUT is judged the same way); gemma's norms,
    exported as w - 1 in float32, must come back as (w - 1) + 1 computed in float32;
  * OUT has the same tensor names, and no others;
  * every metadata key of the source except general.* provenance, file type and quantization
    version has the same value in OUT (hyper-parameters, tokens, token types, merges, special ids,
    add_bos, chat template), and general.architecture matches.

Usage: python3 scripts/check_hf_quantize.py SOURCE.gguf OUT.gguf   (exit 1 and a list on mismatch)
"""

import sys

import numpy as np
import gguf

SKIP = {"general.file_type", "general.quantization_version", "general.alignment"}


def main():
    src, out = gguf.GGUFReader(sys.argv[1]), gguf.GGUFReader(sys.argv[2])
    problems = []
    gemma = src.fields["general.architecture"].contents() == "gemma3"
    got = {t.name: t for t in out.tensors}
    want = {t.name: t for t in src.tensors}
    if set(got) != set(want):
        problems.append(f"tensor names differ: missing {sorted(set(want) - set(got))[:5]}, "
                        f"extra {sorted(set(got) - set(want))[:5]}")
    for name, t in want.items():
        if name not in got:
            continue
        e = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        if gemma and name.endswith("norm.weight"):
            e = (e - np.float32(1)) + np.float32(1)  # exported as w - 1 in float32, converted back as 1 + w
        else:
            e = e.astype(np.float16).astype(np.float32)
        o = gguf.quants.dequantize(got[name].data, got[name].tensor_type).astype(np.float32)
        if e.shape != o.shape:
            problems.append(f"{name}: shape {o.shape}, expected {e.shape}")
        elif not np.array_equal(e.view(np.uint32), o.view(np.uint32)):
            problems.append(f"{name}: {int((e != o).sum())} of {e.size} values differ")
    for key, f in src.fields.items():
        if key.startswith("GGUF.") or key in SKIP or (key.startswith("general.") and key != "general.architecture"):
            continue
        if key not in out.fields:
            problems.append(f"metadata {key}: missing")
            continue
        a, b = f.contents(), out.fields[key].contents()
        if isinstance(a, float) or isinstance(b, float):
            same = np.float32(a) == np.float32(b)
        else:
            same = a == b
        if not same:
            problems.append(f"metadata {key}: {str(b)[:80]!r}, expected {str(a)[:80]!r}")
    for p in problems:
        print(p)
    print(f"{len(want)} tensors, {len(src.fields)} keys checked: {'OK' if not problems else 'MISMATCH'}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()

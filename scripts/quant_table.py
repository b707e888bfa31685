#!/usr/bin/env python3
"""Regenerates the comparison table of docs/quantization.md: from one F16 source, each wisp type
(wisp quantize) and llama.cpp's Q8_0/Q5_1/Q4_1/Q4_0/Q4_K_M/Q3_K_M/Q2_K (llama_cpp.llama_model_quantize),
each scored by `wisp ppl --kl-base SOURCE` on the same windows: size, bits/weight, PPL, delta PPL,
mean KL, top-1 agreement.

  python3 scripts/quant_table.py --wisp build-quant/wisp --source models/SmolLM2-135M-Instruct.Q4_1.gguf \
      --text /work/shared/data/wikitext-2-test.txt --ctx 128 --chunks 8 --out /tmp/qt
The source GGUF is first written as F16 with `wisp quantize --type f16` (the F16 source).
Prints the Markdown table rows as they finish.
"""
import argparse
import ctypes
import json
import os
import subprocess

import llama_cpp

WISP_TYPES = ["wq8_g64", "wq6_g64", "wq5_g64", "wq4_g64", "wq4_g128", "wq3_g64", "wq2_g64"]
LLAMA_TYPES = {"Q8_0": 7, "Q5_1": 9, "Q4_1": 3, "Q4_0": 2, "Q4_K_M": 15, "Q3_K_M": 12, "Q2_K": 10}


def n_params(path):
    import gguf
    r = gguf.GGUFReader(path)
    return sum(int(t.n_elements) for t in r.tensors)


def llama_quantize(src, dst, ftype, threads):
    p = llama_cpp.llama_model_quantize_default_params()
    p.ftype = ftype
    p.nthread = threads
    rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(p))
    if rc != 0:
        raise SystemExit(f"llama_model_quantize {dst} failed ({rc})")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wisp", default="build-quant/wisp")
    ap.add_argument("--source", required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="/tmp/wisp_quant_table")
    ap.add_argument("--range-search", action="store_true", help="wisp types with --range-search")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    f16 = os.path.join(a.out, "source-f16.gguf")
    if not os.path.exists(f16):
        subprocess.run([a.wisp, "quantize", a.source, f16, "--type", "f16"], check=True, stderr=subprocess.DEVNULL)
    params = n_params(f16)
    rows = []
    for name in WISP_TYPES + list(LLAMA_TYPES):
        out = os.path.join(a.out, name + ".gguf")
        if not os.path.exists(out):
            if name in LLAMA_TYPES:
                llama_quantize(f16, out, LLAMA_TYPES[name], a.threads)
            else:
                cmd = [a.wisp, "quantize", f16, out, "--type", name, "--threads", str(a.threads)]
                subprocess.run(cmd + (["--range-search"] if a.range_search else []), check=True, stderr=subprocess.DEVNULL)
        r = json.loads(subprocess.run([a.wisp, "ppl", "-m", out, "-f", a.text, "-c", str(a.ctx), "--chunks", str(a.chunks),
                                       "--kl-base", f16, "-t", str(a.threads), "--json"],
                                      check=True, capture_output=True, text=True).stdout)
        size = os.path.getsize(out)
        row = (f"| {'wisp ' if name not in LLAMA_TYPES else 'llama.cpp '}{name} | {size / 2**20:.1f} | "
               f"{8 * size / params:.2f} | {r['ppl']:.3f} | {r['delta_ppl']:+.3f} | {r['mean_kl']:.4f} | {100 * r['top1']:.1f}% |")
        print(row, flush=True)
        rows.append(row)
    print(f"\nF16 source PPL {r['base_ppl']:.3f}; {r['n_chunks']} windows of {a.ctx} tokens, {r['n_scored']} scored.")


if __name__ == "__main__":
    main()

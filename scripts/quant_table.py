#!/usr/bin/env python3
"""Regenerates the comparison table of docs/quantization.md.

For each model: its F16 source (`wisp quantize MODEL --type f16`), then wisp's types (wisp quantize,
uniform WQ types and --target-bpw rows) and llama.cpp's Q8_0/Q5_1/Q4_1/Q4_0/Q4_K_M/Q3_K_M/Q2_K
(llama_cpp.llama_model_quantize) made from that same F16 source, each scored by `wisp ppl` on the
same windows against the source: size, bits/weight, PPL, delta PPL, mean KL, top-1 agreement.

  python3 scripts/quant_table.py --wisp build-hf/wisp \\
      --model SmolLM2=models/SmolLM2-135M-Instruct.Q4_1.gguf --model Gemma3=models/gemma-3-270m-q4_k_m.gguf \\
      --text /work/shared/data/wikitext-2-test.txt --ctx 256 --chunks 2 --out /tmp/qt \\
      --wisp-opts "--range-search"

Why the base runs once: `wisp ppl --save-logits` writes the source's log-probabilities at the
scored positions and every row reads them back (--kl-base-logits), so a row costs one model's
evaluation, not two. Each finished row is cached as JSON in OUT/MODEL/ (with the command that made
it: a changed command recomputes the row), so an interrupted run resumes; rows print as they finish.

bits/weight = 8 x tensor data bytes (sparse outlier tables included) / the source's parameter
count; MiB is the whole file (metadata included), 1024^2 bytes.
"""
import argparse
import ctypes
import json
import os
import shlex
import subprocess
import sys
import time

LLAMA_TYPES = {"Q8_0": 7, "Q5_1": 9, "Q4_1": 3, "Q4_0": 2, "Q4_K_M": 15, "Q3_K_M": 12, "Q2_K": 10}
WISP_TYPES = ["wq8_g64", "wq6_g64", "wq5_g64", "wq4_g64", "wq4_g128", "wq3_g64", "wq2_g64"]
TARGETS = [4.5, 3.5]
# llama.cpp rows whose size a wisp --target-bpw row matches exactly (the fair comparison: the
# issue's targets compare KL at equal size).
MATCH = ["Q4_K_M", "Q3_K_M"]


def info(wisp, path):
    return json.loads(subprocess.run([wisp, "info", path, "--json"], check=True, capture_output=True, text=True).stdout)


def llama_quantize(src, dst, ftype, threads):
    import llama_cpp
    p = llama_cpp.llama_model_quantize_default_params()
    p.ftype = ftype
    p.nthread = threads
    rc = llama_cpp.llama_model_quantize(src.encode(), dst.encode(), ctypes.byref(p))
    if rc != 0:
        raise SystemExit(f"llama_model_quantize {dst} failed ({rc})")


def run(cmd, log):
    with open(log, "a") as f:
        f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        f.flush()
        subprocess.run(cmd, check=True, stdout=f, stderr=subprocess.STDOUT)


def ppl(a, model, base_logits, log):
    cmd = [a.wisp, "ppl", "-m", model, "-f", a.text, "-c", str(a.ctx), "--chunks", str(a.chunks), "-t", str(a.threads),
           "--json"]
    cmd += ["--kl-base-logits", base_logits] if base_logits else ["--save-logits", os.path.join(os.path.dirname(model), "base.bin")]
    with open(log, "a") as f:
        f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        f.flush()
        r = subprocess.run(cmd, check=True, stdout=subprocess.PIPE, stderr=f, text=True)
    return json.loads(r.stdout)


def row_line(label, r):
    if "mean_kl" not in r:
        return f"| {label} | {r['mib']:.1f} | {r['bpw']:.2f} | {r['ppl']:.3f} | — | — | — |"
    return (f"| {label} | {r['mib']:.1f} | {r['bpw']:.2f} | {r['ppl']:.3f} | {r['delta_ppl']:+.3f} | "
            f"{r['mean_kl']:.4f} | {100 * r['top1']:.1f}% |")


def summary(out):
    """Every cached row of every model under OUT, sorted by bits/weight: the tables of docs/quantization.md."""
    import glob
    for d in sorted(glob.glob(os.path.join(out, "*", ""))):
        rows = []
        for f in glob.glob(d + "*.json"):
            r = json.load(open(f))
            row = os.path.basename(f)[:-5]
            if row == "F16":
                label = "F16 source"
            elif r["cmd"].startswith("llama_model_quantize"):
                label = "llama.cpp " + row
            else:
                base = row.split("_calib")[0].rstrip("_")
                if base.startswith("t="):
                    label = f"wisp --target-bpw {r['cmd'].split('--target-bpw ')[1].split()[0]} (= {base[2:]} size)"
                elif base.startswith("t"):
                    label = f"wisp --target-bpw {base[1:]}"
                else:
                    label = "wisp " + base.upper()
                label += " + calib/AWQ/outliers" if "--calib" in r["cmd"] else ""
                label += ", --no-protect" if "--no-protect" in r["cmd"] else ""
            rows.append((r["bpw"], label, r))
        rows.sort(key=lambda x: -x[0])
        print(f"\n**{os.path.basename(d.rstrip('/'))}**\n\n| type | MiB | bits/weight | PPL | ΔPPL | mean KL | top-1 |\n"
              "|---|---|---|---|---|---|---|")
        for _, label, r in rows:
            print(row_line(label, r).replace("| — | — | — |", "| | | |"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wisp", default="build-hf/wisp")
    ap.add_argument("--model", action="append", default=[], help="NAME=PATH (repeatable)")
    ap.add_argument("--text", required=True)
    ap.add_argument("--ctx", type=int, default=256)
    ap.add_argument("--chunks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="/tmp/wisp_quant_table")
    ap.add_argument("--wisp-opts", default="--range-search",
                    help="options for every wisp row (e.g. '--range-search --calib tests/data/calibration.txt --awq')")
    ap.add_argument("--rows", default="", help="comma-separated row names to run, in that order (default: all), "
                    "e.g. Q4_K_M,t4.5,t=Q4_K_M,wq4_g64")
    ap.add_argument("--tag", default="", help="a second set of wisp rows with other --wisp-opts: suffix for their names")
    ap.add_argument("--summary", action="store_true", help="only print the cached rows as sorted tables")
    a = ap.parse_args()
    if a.summary:
        return summary(a.out)
    wanted = list(filter(None, a.rows.split(",")))
    extra = shlex.split(a.wisp_opts)
    for spec in a.model:
        name, path = spec.split("=", 1)
        d = os.path.join(a.out, name)
        os.makedirs(d, exist_ok=True)
        log = os.path.join(d, "log.txt")
        f16 = os.path.join(d, "source-f16.gguf")
        if not os.path.exists(f16):
            run([a.wisp, "quantize", path, f16, "--type", "f16"], log)
        src = info(a.wisp, f16)
        params = src["parameters"]
        base_bin = os.path.join(d, "base.bin")
        base_json = os.path.join(d, "F16.json")
        if not (os.path.exists(base_bin) and os.path.exists(base_json)):
            r = ppl(a, f16, None, log)
            r.update(mib=src["file_bytes"] / 2**20, bpw=8 * src["tensor_bytes"] / params)
            json.dump(r, open(base_json, "w"))
        print(f"\n{name}: F16 source from {path}; {a.chunks} windows of {a.ctx} tokens of {a.text}; wisp options: {a.wisp_opts}")
        print("\n| type | MiB | bits/weight | PPL | ΔPPL | mean KL | top-1 |\n|---|---|---|---|---|---|---|")
        print(row_line("F16 source", json.load(open(base_json))), flush=True)

        rows = [(t, "llama", t) for t in LLAMA_TYPES] + [(t, "wisp", ["--type", t]) for t in WISP_TYPES]
        rows += [(f"t{x}", "wisp", ["--target-bpw", str(x)]) for x in TARGETS]
        rows += [(f"t={m}", "match", m) for m in MATCH]
        if wanted:
            rows = [r for w in wanted for r in rows if r[0] == w]
        if a.tag:
            rows = [r for r in rows if r[1] != "llama"]
        for row, kind, arg in rows:
            fname = row + "".join(c if c.isalnum() or c in "=._-" else "_" for c in a.tag)  # tags may hold '/'
            cache = os.path.join(d, fname + ".json")
            gguf = os.path.join(d, fname + ".gguf")
            if kind == "llama":
                cmd = ["llama_model_quantize", f16, str(LLAMA_TYPES[arg])]
                label = f"llama.cpp {row}"
            else:
                if kind == "match":
                    ref = os.path.join(d, arg + ".json")
                    if not os.path.exists(ref):
                        continue
                    target = json.load(open(ref))["bpw"]
                    arg = ["--target-bpw", f"{target:.3f}"]
                cmd = [a.wisp, "quantize", f16, gguf] + arg + ["--threads", str(a.threads)] + extra
                label = "wisp " + " ".join(arg).replace("--type ", "").replace("--target-bpw ", "target-bpw ") + a.tag
            key = " ".join(cmd)
            if os.path.exists(cache) and json.load(open(cache)).get("cmd") == key:
                print(row_line(label, json.load(open(cache))), flush=True)
                continue
            t0 = time.time()
            if kind == "llama":
                llama_quantize(f16, gguf, LLAMA_TYPES[arg], a.threads)
            else:
                try:
                    run(cmd, log)
                except subprocess.CalledProcessError:
                    # e.g. a --target-bpw the protected embedding alone exceeds: say so, go on.
                    err = [l for l in open(log).read().splitlines() if "error:" in l]
                    print(f"| {label} | — | — | — | — | — | — | {err[-1] if err else 'failed'}", flush=True)
                    continue
            t1 = time.time()
            r = ppl(a, gguf, base_bin, log)
            inf = info(a.wisp, gguf)
            r.update(cmd=key, mib=inf["file_bytes"] / 2**20, bpw=8 * inf["tensor_bytes"] / params,
                     quantize_s=t1 - t0, eval_s=time.time() - t1, types=inf["types"])
            json.dump(r, open(cache, "w"))
            print(row_line(label, r), flush=True)
            os.remove(gguf)  # the table needs the numbers, not hundreds of MiB per row


if __name__ == "__main__":
    sys.exit(main())

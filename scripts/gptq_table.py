#!/usr/bin/env python3
"""Regenerates docs/quantization.md's GPTQ table: wisp's GPTQ rows beside llama.cpp's types made
with and without llama.cpp's own importance matrix, all scored on the same windows.

  python3 scripts/gptq_table.py --wisp build-gptq/wisp --model models/SmolLM2-135M-Instruct.Q4_1.gguf \\
      --text /work/shared/data/wikitext-2-test.txt --out /tmp/fq --chunks 8
  python3 scripts/gptq_table.py --out /tmp/fq --summary      # the markdown table from the cached rows

Steps (each skipped when its output exists, so an interrupted run resumes):
- The text is cut at the first line start CALIB_BYTES (default 200,000) before its end: eval.txt is
  the part before the cut, calib.txt the part after it, so calibration never sees evaluation text.
- source-f16.gguf: `wisp quantize MODEL --type f16` (or --source F16 given as it is).
- base.logits: the source's log-probabilities at the scored positions (`wisp ppl --save-logits`),
  -c CTX (512), the first CHUNKS windows of eval.txt; every row is scored against them.
- imatrix.gguf (when the first imatrix row needs it): llama.cpp's `llama-imatrix` on calib.txt, -c 512, as many windows as wisp's
  --calib-tokens (1024: 2 windows, BOS first, the same tokens wisp's calibration runs).
- llama.cpp rows: `llama-quantize [--imatrix imatrix.gguf] source-f16.gguf OUT TYPE`; wisp rows:
  `wisp quantize source-f16.gguf OUT ... --calib calib.txt --calib-tokens 1024`; "--target-bpw
  =ROW" rows take the tensor bits/weight of llama.cpp's file ROW (the equal-size comparison).
- Each row: `wisp ppl -m ROW -f eval.txt -c CTX --chunks CHUNKS --kl-base-logits base.logits
  --json` into OUT/rows/NAME.json, with the commands that made it in OUT/rows/NAME.cmd (a changed
  command recomputes the row). Long steps run under `nice -n 19` (the machine is shared; --nice N
  sets N), and table.log gets each step's wall time, CPU-seconds and the load average around it.
  With --keep-logits each row's log-probabilities go to OUT/rows/NAME.logits too, and --paired A,B
  prints mean KL(A) - mean KL(B) with the 95% interval of the per-token differences (the same
  tokens, so much tighter than the two rows' own intervals side by side).
- A row argument "--calib-tokens=N" gives that row N calibration tokens instead of --calib-tokens.

The llama-imatrix/llama-quantize binaries come from bench/build_llamacpp_tools (build-llamacpp/bin).
"""
import argparse
import json
import os
import resource
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def llama_row(llama_type, imatrix):
    """llama-quantize TYPE, with or without the imatrix: labelled "llama.cpp TYPE (imatrix)" / "(no imatrix)"."""
    return (f"llama.cpp {llama_type} ({'imatrix' if imatrix else 'no imatrix'})", ("llama", llama_type, imatrix))


def _wisp_label(what, flags, calib_tokens):
    return f"wisp {what}`{' '.join(flags)}`" + (f", {calib_tokens} calibration tokens" if calib_tokens else "")


def _calib_arg(calib_tokens):
    return [f"--calib-tokens={calib_tokens}"] if calib_tokens else []


def wq_row(wq_type, *flags, calib_tokens=None):
    """wisp quantize --type WQ_TYPE FLAGS: labelled "wisp WQ_TYPE `FLAGS`" from the same flags, with ", N calibration
    tokens" for a row of its own calib_tokens (run as --calib-tokens=N)."""
    return (_wisp_label(wq_type.upper() + " ", flags, calib_tokens),
            ("wisp", ["--type", wq_type, *flags, *_calib_arg(calib_tokens)]))


def tbpw_row(size_of, size, *flags, calib_tokens=None):
    """wisp quantize --target-bpw at the tensor bits/weight of row SIZE_OF's file, FLAGS: labelled
    "wisp `--target-bpw` (= SIZE size) `FLAGS`", calibration tokens as wq_row."""
    return (_wisp_label(f"`--target-bpw` (= {size} size) ", flags, calib_tokens),
            ("wisp", [f"--target-bpw={size_of}", *flags, *_calib_arg(calib_tokens)]))


# name -> (label, how). how: ("llama", TYPE, imatrix?) or ("wisp", [args]) where an argument
# "--target-bpw=ROW" becomes "--target-bpw X" with X the tensor bits/weight of row ROW's file.
ROWS = {
    "llama-q4_k_m-imat": llama_row("Q4_K_M", True),
    "llama-q3_k_m-imat": llama_row("Q3_K_M", True),
    "llama-q4_0-imat": llama_row("Q4_0", True),
    "llama-q4_0": llama_row("Q4_0", False),
    "llama-q3_k_s-imat": llama_row("Q3_K_S", True),
    "llama-q3_k_s": llama_row("Q3_K_S", False),
    "llama-q2_k-imat": llama_row("Q2_K", True),
    "llama-q2_k": llama_row("Q2_K", False),
    "wq4-gptq-rs": wq_row("wq4_g64", "--gptq", "--range-search"),
    "wq4-gptq-rs-seq": wq_row("wq4_g64", "--gptq", "--gptq-sequential", "--range-search"),
    "wq4-gptq-rs-act": wq_row("wq4_g64", "--gptq", "--act-order", "--range-search"),
    "wq4-gptq-rs-seq-act": wq_row("wq4_g64", "--gptq", "--gptq-sequential", "--act-order", "--range-search"),
    "wq4-gptq-rs-4k": wq_row("wq4_g64", "--gptq", "--range-search", calib_tokens=4096),
    "wq4-gptq-rs-act-4k": wq_row("wq4_g64", "--gptq", "--act-order", "--range-search", calib_tokens=4096),
    "wq4-gptq-rs-seq-4k": wq_row("wq4_g64", "--gptq", "--gptq-sequential", "--range-search", calib_tokens=4096),
    "wq2-gptq-rs": wq_row("wq2_g64", "--gptq", "--range-search"),
    "wq2-gptq-rs-seq": wq_row("wq2_g64", "--gptq", "--gptq-sequential", "--range-search"),
    "wq2-gptq-rs-seq-act": wq_row("wq2_g64", "--gptq", "--gptq-sequential", "--act-order", "--range-search"),
    "wq2-gptq-rs-act-4k": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", calib_tokens=4096),
    "wq4-gptq": wq_row("wq4_g64", "--gptq"),
    "wq4-rs": wq_row("wq4_g64", "--range-search"),
    "wq3-gptq-rs": wq_row("wq3_g64", "--gptq", "--range-search"),
    "wq3-gptq": wq_row("wq3_g64", "--gptq"),
    "wq3-rs": wq_row("wq3_g64", "--range-search"),
    "tbpw-q4km-rs": tbpw_row("llama-q4_k_m-imat", "Q4_K_M imatrix", "--range-search"),
    "tbpw-q3km-rs": tbpw_row("llama-q3_k_m-imat", "Q3_K_M imatrix", "--range-search"),
    "tbpw-q3km-gptq-rs": tbpw_row("llama-q3_k_m-imat", "Q3_K_M imatrix", "--gptq", "--range-search"),
    # 4096 calibration tokens, act order: the best WQ4 setting, at the K-quant mixes' sizes.
    "tbpw-q4km-gptq-act-4k": tbpw_row("llama-q4_k_m-imat", "Q4_K_M imatrix", "--gptq", "--act-order", "--range-search",
                                      calib_tokens=4096),
    "tbpw-q3km-gptq-act-4k": tbpw_row("llama-q3_k_m-imat", "Q3_K_M imatrix", "--gptq", "--act-order", "--range-search",
                                      calib_tokens=4096),
    "tbpw-q3ks-gptq-act-4k": tbpw_row("llama-q3_k_s-imat", "Q3_K_S imatrix", "--gptq", "--act-order", "--range-search",
                                      calib_tokens=4096),
    "wq3-gptq-rs-act-4k": wq_row("wq3_g64", "--gptq", "--act-order", "--range-search", calib_tokens=4096),
    "wq3g32-gptq-rs-act-4k": wq_row("wq3_g32", "--gptq", "--act-order", "--range-search", calib_tokens=4096),
    "wq3-gptq-rs-act-4k-d0.1": wq_row("wq3_g64", "--gptq", "--act-order", "--range-search", "--gptq-damp", "0.1",
                                      calib_tokens=4096),
    "wq2-gptq-rs-act-8k": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", calib_tokens=8192),
    "wq2g32-gptq-rs-act-4k": wq_row("wq2_g32", "--gptq", "--act-order", "--range-search", calib_tokens=4096),
    "wq2-gptq-rs-act-4k-d0.1": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--gptq-damp", "0.1",
                                      calib_tokens=4096),
    "wq2-gptq-rs-seq-act-4k": wq_row("wq2_g64", "--gptq", "--gptq-sequential", "--act-order", "--range-search",
                                     calib_tokens=4096),
    "tbpw-wq2-gptq-act-4k": tbpw_row("wq2-gptq-rs-act-4k", "WQ2_G64", "--gptq", "--act-order", "--range-search",
                                     calib_tokens=4096),
    # Gemma WQ2_G64: what moves it toward "usable", and where llama.cpp's own 2-bit types land.
    "wq2-gptq-rs-act-4k-out": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--outliers", "0.01",
                                     calib_tokens=4096),
    "wq2-gptq-rs-act-4k-awq": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--awq", calib_tokens=4096),
    "wq2-gptq-rs-act-4k-awq-out": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--awq", "--outliers",
                                         "0.01", calib_tokens=4096),
    # Gemma WQ2_G64, 2026-12-04: more outliers (each costs 32 bits), 8192 calibration tokens, and combinations.
    "wq2-gptq-rs-act-4k-out0.02": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--outliers", "0.02",
                                         calib_tokens=4096),
    "wq2-gptq-rs-act-4k-out0.03": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--outliers", "0.03",
                                         calib_tokens=4096),
    "wq2-gptq-rs-act-8k-out": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--outliers", "0.01",
                                     calib_tokens=8192),
    "wq2-gptq-rs-seq-act-4k-out": wq_row("wq2_g64", "--gptq", "--gptq-sequential", "--act-order", "--range-search",
                                         "--outliers", "0.01", calib_tokens=4096),
    # Gemma WQ2_G64, 2026-12-04: each row's scales re-fitted to its GPTQ codes (--gptq-refit).
    "wq2-gptq-rs-act-4k-refit": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--gptq-refit",
                                       calib_tokens=4096),
    "wq2-gptq-rs-act-4k-out-refit": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--gptq-refit",
                                           "--outliers", "0.01", calib_tokens=4096),
    "wq2-gptq-rs-act-8k-out-refit": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--gptq-refit",
                                           "--outliers", "0.01", calib_tokens=8192),
    "wq2-gptq-rs-act-8k-out0.02-refit": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--gptq-refit",
                                               "--outliers", "0.02", calib_tokens=8192),
    "wq2-gptq-rs-act-8k-out0.03-refit": wq_row("wq2_g64", "--gptq", "--act-order", "--range-search", "--gptq-refit",
                                               "--outliers", "0.03", calib_tokens=8192),
    "wq2-gptq-rs-seq-act-4k-refit": wq_row("wq2_g64", "--gptq", "--gptq-sequential", "--act-order", "--range-search",
                                           "--gptq-refit", calib_tokens=4096),
    # Gemma WQ2_G64, 2026-12-05: sequential Hessians with 8192 calibration tokens, outliers and the re-fit (the
    # non-sequential twins are the -act-8k-out*-refit rows above), and a mix at IQ2_XXS's size.
    "wq2-gptq-rs-seq-act-8k-out-refit": wq_row("wq2_g64", "--gptq", "--gptq-sequential", "--act-order", "--range-search",
                                               "--gptq-refit", "--outliers", "0.01", calib_tokens=8192),
    "wq2-gptq-rs-seq-act-8k-out0.02-refit": wq_row("wq2_g64", "--gptq", "--gptq-sequential", "--act-order",
                                                   "--range-search", "--gptq-refit", "--outliers", "0.02",
                                                   calib_tokens=8192),
    "wq2-gptq-rs-seq-act-8k-out0.03-refit": wq_row("wq2_g64", "--gptq", "--gptq-sequential", "--act-order",
                                                   "--range-search", "--gptq-refit", "--outliers", "0.03",
                                                   calib_tokens=8192),
    "tbpw-iq2xxs-gptq-act-8k-refit": tbpw_row("llama-iq2_xxs-imat", "IQ2_XXS imatrix", "--gptq", "--act-order",
                                              "--range-search", "--gptq-refit", calib_tokens=8192),
    # The embedding's share: every block weight F16, only token_embd (= output, tied) at Q8_0.
    "f16-embd-q8": ("wisp F16 with token_embd Q8_0 (`--type f16 --type-override token_embd=q8_0`)",
                    ("wisp", ["--type", "f16", "--type-override", "token_embd=q8_0"])),
    "llama-iq2_xxs-imat": llama_row("IQ2_XXS", True),
    "llama-q2_k_s-imat": llama_row("Q2_K_S", True),
}


NICE = ["nice", "-n", "19"]  # --nice N replaces it


def cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, log, **kw):
    """Runs cmd, appending its wall time and the load average before and after it to log (the machine is shared:
    a time means little without the load it was taken under)."""
    with open(log, "a") as f:
        f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
        f.flush()
        load0, t0, c0 = os.getloadavg()[0], time.time(), cpu_seconds()
        subprocess.run(cmd, check=True, **({"stdout": f, "stderr": subprocess.STDOUT} | kw))
        f.write(f"# {time.time() - t0:.0f} s wall, {cpu_seconds() - c0:.0f} CPU-s, load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after, "
                f"{time.strftime('%H:%M UTC', time.gmtime())}\n")


def sh(cmd, log, nice=True):
    timed((NICE if nice else []) + cmd, log)


def info(wisp, path):
    return json.loads(subprocess.run([wisp, "info", path, "--json"], check=True, capture_output=True, text=True).stdout)


def split_text(text, calib_bytes, out):
    data = open(text, "rb").read()
    if len(data) <= 2 * calib_bytes:
        raise SystemExit(f"{text}: {len(data)} bytes, too short to keep {calib_bytes} bytes of calibration apart")
    cut = data.rfind(b"\n", 0, len(data) - calib_bytes) + 1
    for name, part in (("eval.txt", data[:cut]), ("calib.txt", data[cut:])):
        path = os.path.join(out, name)
        if os.path.exists(path) and open(path, "rb").read() != part:
            raise SystemExit(f"{path} exists with other text: use another --out")
        open(path, "wb").write(part)


def make_row(a, name, how, log):
    """The row's model file and the command list that made it."""
    path = name + ".gguf"
    src = "source-f16.gguf"
    if how[0] == "llama":
        if how[2] and not os.path.exists("imatrix.gguf"):  # made once, when the first imatrix row needs it
            windows = -(-a.calib_tokens // 512)
            sh([os.path.join(a.llama_bin, "llama-imatrix"), "-m", src, "-f", "calib.txt", "-c", "512",
                "--chunks", str(windows), "-t", str(a.threads), "-o", "imatrix.gguf", "--no-ppl"], log)
        cmd = [os.path.join(a.llama_bin, "llama-quantize")]
        cmd += ["--imatrix", "imatrix.gguf"] if how[2] else []
        cmd += [src, path, how[1], str(a.threads)]
    else:
        args = []
        calib_tokens = a.calib_tokens
        for x in how[1]:
            if x.startswith("--calib-tokens="):  # this row's calibration length instead of --calib-tokens
                calib_tokens = int(x.split("=", 1)[1])
            elif x.startswith("--target-bpw="):
                ref = x.split("=", 1)[1] + ".gguf"
                d = info(a.wisp, ref)
                bpw = 8 * d["tensor_bytes"] / d["parameters"]
                args += ["--target-bpw", f"{bpw - 0.0005:.3f}"]  # rounded down: never above the file's size
            else:
                args.append(x)
        cmd = [a.wisp, "quantize", src, path] + args
        if "--gptq" in args or "--awq" in args:  # the rows that use calibration (the others as plain rounding)
            cmd += ["--calib", "calib.txt", "--calib-tokens", str(calib_tokens)]
        cmd += ["--threads", str(a.threads)]
    if not os.path.exists(path):
        sh(cmd, log)
    return path, cmd


def score_cmd(a, model):
    return [a.wisp, "ppl", "-m", model, "-f", "eval.txt", "-c", str(a.ctx), "--chunks",
            str(a.chunks), "-t", str(a.threads), "--json"]


def read_logp(path):
    """A wisp saved-logits file (src/eval/perplexity.cpp's layout) as [positions, n_vocab] float32."""
    import numpy as np
    h = np.fromfile(path, dtype=np.uint8, count=48)
    if bytes(h[:8]) != b"WISPLOGP":
        raise SystemExit(f"{path}: not a wisp saved-logits file")
    n_ctx, n_chunks, n_vocab, first = np.frombuffer(h[16:48].tobytes(), dtype="<i8")
    off = 48 + 4 * n_chunks * n_ctx
    m = np.memmap(path, dtype="<f4", mode="r", offset=off)
    return m.reshape(-1, n_vocab)


def per_token_kl(base, row):
    """KL(base || row) at every scored position, from the two files' log-probabilities."""
    import numpy as np
    b, r = read_logp(base), read_logp(row)
    n = min(len(b), len(r))
    out = np.empty(n)
    for i in range(0, n, 256):
        lb, lr = b[i:i + 256].astype(np.float64), r[i:i + 256].astype(np.float64)
        out[i:i + 256] = (np.exp(lb) * (lb - lr)).sum(axis=1)
    return out


def paired(a):
    """Mean KL difference of two rows per scored token, with its 95% interval (paired: the same tokens)."""
    import numpy as np
    x, y = a.paired.split(",")
    kx = per_token_kl("base.logits", os.path.join("rows", x + ".logits"))
    ky = per_token_kl("base.logits", os.path.join("rows", y + ".logits"))
    d = kx - ky
    ci = 1.96 * d.std(ddof=1) / np.sqrt(len(d))
    print(f"{x} - {y}: mean KL {kx.mean():.4f} - {ky.mean():.4f} = {d.mean():+.4f} ± {ci:.4f} (95%, paired over "
          f"{len(d)} tokens)")


def run(a):
    os.makedirs("rows", exist_ok=True)
    log = "table.log"
    split_text(a.text, a.calib_bytes, ".")
    src = "source-f16.gguf"
    if not os.path.exists(src):
        if a.source:
            os.symlink(os.path.abspath(a.source), src)
        else:
            sh([a.wisp, "quantize", a.model, src, "--type", "f16", "--threads", str(a.threads)], log)
    base = "base.logits"
    if not os.path.exists(base):
        with open("base.json", "w") as f:
            subprocess.run(NICE + score_cmd(a, src) + ["--save-logits", base], check=True, stdout=f)
    for name in (a.rows.split(",") if a.rows else ROWS):
        label, how = ROWS[name]
        model, made_by = make_row(a, name, how, log)
        cmd = score_cmd(a, model) + ["--kl-base-logits", base]
        if a.keep_logits:  # for --paired
            cmd += ["--save-logits", os.path.join("rows", name + ".logits")]
        stamp = json.dumps({"made_by": made_by, "scored_by": cmd})
        res, cmdf = os.path.join("rows", name + ".json"), os.path.join("rows", name + ".cmd")
        if os.path.exists(res) and os.path.exists(cmdf) and open(cmdf).read() == stamp:
            continue
        with open(res, "w") as f:
            timed(NICE + cmd, log, stdout=f, stderr=subprocess.DEVNULL)
        open(cmdf, "w").write(stamp)
        print(name, open(res).read().strip(), flush=True)


def summary(a):
    base = json.load(open("base.json"))
    src = info(a.wisp, "source-f16.gguf")
    rows = []
    for name, (label, _) in ROWS.items():
        res = os.path.join("rows", name + ".json")
        if not os.path.exists(os.path.join("rows", name + ".cmd")):  # not scored yet, or being scored now
            continue
        r = json.load(open(res))
        d = info(a.wisp, name + ".gguf")
        rows.append((d["tensor_bytes"], label, d["file_bytes"], r))
    print(f"{base['n_scored']} scored tokens per row ({base['n_chunks']} windows of {a.ctx}); F16 source PPL "
          f"{base['ppl']:.3f}\n")
    print("| type | MiB | bits/weight | PPL | mean KL ± 95% | top-1 |")
    print("|---|---|---|---|---|---|")
    print(f"| F16 source | {src['file_bytes'] / 2**20:.1f} | 16.00 | {base['ppl']:.3f} | | |")
    for tb, label, fb, r in sorted(rows, key=lambda x: -x[0]):
        if r["n_scored"] != base["n_scored"]:
            raise SystemExit(f"{label}: {r['n_scored']} scored tokens, the base {base['n_scored']}")
        print(f"| {label} | {fb / 2**20:.1f} | {8 * tb / src['parameters']:.3f} | {r['ppl']:.3f} | "
              f"{r['mean_kl']:.4f} ± {r['mean_kl_ci95']:.4f} | {100 * r['top1']:.1f}% |")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--wisp", default=os.path.join(ROOT, "build", "wisp"))
    p.add_argument("--llama-bin", default=os.path.join(ROOT, "build-llamacpp", "bin"))
    p.add_argument("--model", help="the model to make the F16 source from (wisp quantize --type f16)")
    p.add_argument("--source", help="an F16 source to use as it is, instead of --model")
    p.add_argument("--text", default="/work/shared/data/wikitext-2-test.txt")
    p.add_argument("--calib-bytes", type=int, default=200000)
    p.add_argument("--calib-tokens", type=int, default=1024)
    p.add_argument("--ctx", type=int, default=512)
    p.add_argument("--chunks", type=int, default=8)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--nice", type=int, default=19, help="niceness of the conversions and scoring runs")
    p.add_argument("--rows", help="comma-separated row names (default: all): " + ",".join(ROWS))
    p.add_argument("--out", required=True)
    p.add_argument("--summary", action="store_true")
    p.add_argument("--keep-logits", action="store_true", help="save each row's log-probabilities (for --paired)")
    p.add_argument("--paired", metavar="ROW1,ROW2", help="the two rows' paired KL difference (rows scored with "
                   "--keep-logits)")
    a = p.parse_args()
    NICE[2] = str(a.nice)
    if a.summary or a.paired:
        a.wisp = os.path.abspath(a.wisp)
        os.chdir(a.out)
        summary(a) if a.summary else paired(a)
        return
    if not (a.model or a.source):
        p.error("give --model or --source")
    # Paths absolute, then everything relative to OUT: the commands recorded name the files as they lie there.
    for k in ("wisp", "llama_bin", "model", "source", "text"):
        if getattr(a, k):
            setattr(a, k, os.path.abspath(getattr(a, k)))
    os.makedirs(a.out, exist_ok=True)
    os.chdir(a.out)
    run(a)


if __name__ == "__main__":
    sys.exit(main())

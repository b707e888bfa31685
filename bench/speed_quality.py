#!/usr/bin/env python3
"""Speed at equal quality: decode tok/s against mean KL (vs the F16 source) for llama.cpp's types and
wisp's, as a chart (bench/speed_quality.svg) and a markdown table.

  python3 bench/speed_quality.py --wisp build/wisp --model models/SmolLM2-135M-Instruct.Q4_1.gguf \\
      --out /tmp/sq --chunks 4 --svg bench/speed_quality.svg

Steps (each skipped when its output exists, so an interrupted run resumes; the files and their
scores are made as scripts/gptq_table.py makes its rows, whose helpers this script calls):
- eval.txt / calib.txt: the text cut CALIB_BYTES (200,000) before its end; source-f16.gguf: `wisp
  quantize MODEL --type f16`; base.logits: the source's log-probabilities on the first CHUNKS
  windows of -c CTX (512) of eval.txt.
- The files (ROWS): llama.cpp's types by `llama-quantize [--imatrix imatrix.gguf] source-f16.gguf`
  (the imatrix by `llama-imatrix` on calib.txt, as many 512-token windows as --calib-tokens);
  wisp's by `wisp quantize source-f16.gguf` (GPTQ rows with --calib calib.txt --calib-tokens N;
  "--target-bpw=ROW" rows at the tensor bits/weight of llama.cpp's file ROW).
- Quality: `wisp ppl -m FILE -f eval.txt -c CTX --chunks CHUNKS --kl-base-logits base.logits --json`
  into rows/NAME.json (mean KL(source || file), its 95% interval, top-1, PPL).
- Speed: ROUNDS rounds; in each, file after file, `llama-bench -m FILE -p 0 -n N -r R -t T -o json`
  (llama.cpp's files) then `wisp bench -m FILE -p 0 -n N -r R -t T --device cpu --json` (every
  file), the load average read before each run (speed/NAME.jsonl). A file's decode tok/s is the
  best round's mean: on a shared machine the least disturbed round. One thread by default: with two
  threads llama.cpp's decode collapses when a third process takes a core. With --chrt each run is
  started under `chrt -f 10` (real-time FIFO for its few seconds, so the other processes on a shared
  machine do not take its cores; the kernel's RT throttling leaves them 5%), which makes two
  threads usable for both runtimes.
- The chart: tok/s (linear) against mean KL (log); the table: every file with both runtimes' tok/s;
  and for every llama.cpp point (its file run by llama-bench) whether a wisp file (WQ or
  --target-bpw) is both faster (run by wisp) and lower in KL, and whether any file run by wisp is.

Long steps run under `nice -n NICE` (default 5, as the builds on this shared machine).
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import gptq_table as gt  # noqa: E402  (the row-making and scoring helpers)
from svg_chart import scatter_chart  # noqa: E402

# name -> (label, how), as in scripts/gptq_table.py. llama.cpp's files use its importance matrix
# (from the same calibration tokens as wisp's GPTQ rows) except Q8_0, which does not read one.
ROWS = {
    "llama-q8_0": ("llama.cpp Q8_0", ("llama", "Q8_0", False)),
    "llama-q6_k": ("llama.cpp Q6_K (imatrix)", ("llama", "Q6_K", True)),
    "llama-q5_k_m": ("llama.cpp Q5_K_M (imatrix)", ("llama", "Q5_K_M", True)),
    "llama-q5_1": ("llama.cpp Q5_1 (imatrix)", ("llama", "Q5_1", True)),
    "llama-q5_0": ("llama.cpp Q5_0 (imatrix)", ("llama", "Q5_0", True)),
    "llama-q4_k_m": ("llama.cpp Q4_K_M (imatrix)", ("llama", "Q4_K_M", True)),
    "llama-q4_1": ("llama.cpp Q4_1 (imatrix)", ("llama", "Q4_1", True)),
    "llama-q4_0": ("llama.cpp Q4_0 (imatrix)", ("llama", "Q4_0", True)),
    "llama-iq4_nl": ("llama.cpp IQ4_NL (imatrix)", ("llama", "IQ4_NL", True)),
    "llama-q3_k_m": ("llama.cpp Q3_K_M (imatrix)", ("llama", "Q3_K_M", True)),
    "llama-q3_k_s": ("llama.cpp Q3_K_S (imatrix)", ("llama", "Q3_K_S", True)),
    "wq8": ("wisp WQ8_G64 `--range-search`", ("wisp", ["--type", "wq8_g64", "--range-search"])),
    "wq6": ("wisp WQ6_G64 `--range-search`", ("wisp", ["--type", "wq6_g64", "--range-search"])),
    "tbpw-q6k": ("wisp `--target-bpw` (= Q6_K size) `--range-search`",
                 ("wisp", ["--target-bpw=llama-q6_k", "--range-search"])),
    "tbpw-q4km": ("wisp `--target-bpw` (= Q4_K_M size) `--range-search`",
                  ("wisp", ["--target-bpw=llama-q4_k_m", "--range-search"])),
    "tbpw-q3km": ("wisp `--target-bpw` (= Q3_K_M size) `--range-search`",
                  ("wisp", ["--target-bpw=llama-q3_k_m", "--range-search"])),
    "wq4-gptq": ("wisp WQ4_G64 `--gptq --act-order --range-search`",
                 ("wisp", ["--type", "wq4_g64", "--gptq", "--act-order", "--range-search"])),
}


def load_avg():
    return float(open("/proc/loadavg").read().split()[0])


def nice_sh(level):
    def sh(cmd, log, nice=True):
        cmd = (["nice", "-n", str(level)] if nice else []) + cmd
        with open(log, "a") as f:
            f.write("$ " + " ".join(shlex.quote(c) for c in cmd) + "\n")
            f.flush()
            subprocess.run(cmd, check=True, stdout=f, stderr=subprocess.STDOUT)
    return sh


def make(a, names):
    os.makedirs("rows", exist_ok=True)
    gt.split_text(a.text, a.calib_bytes, ".")
    if not os.path.exists("source-f16.gguf"):
        gt.sh([a.wisp, "quantize", a.model, "source-f16.gguf", "--type", "f16", "--threads", str(a.threads)],
              "table.log")
    for name in names:
        gt.make_row(a, name, ROWS[name][1], "table.log")
        print("made", name, flush=True)


def score(a, names):
    nice = ["nice", "-n", str(a.nice)]
    if not os.path.exists("base.logits"):
        with open("base.json", "w") as f:
            subprocess.run(nice + gt.score_cmd(a, "source-f16.gguf") + ["--save-logits", "base.logits"], check=True,
                           stdout=f)
    for name in names:
        _, made_by = gt.make_row(a, name, ROWS[name][1], "table.log")
        cmd = gt.score_cmd(a, name + ".gguf") + ["--kl-base-logits", "base.logits"]
        stamp = json.dumps({"made_by": made_by, "scored_by": cmd})
        res, cmdf = os.path.join("rows", name + ".json"), os.path.join("rows", name + ".cmd")
        if os.path.exists(res) and os.path.exists(cmdf) and open(cmdf).read() == stamp:
            continue
        with open(res, "w") as f:
            subprocess.run(nice + cmd, check=True, stdout=f, stderr=subprocess.DEVNULL)
        open(cmdf, "w").write(stamp)
        print("scored", name, open(res).read().strip(), flush=True)


def bench_once(a, name):
    """One round of one file: llama-bench (llama.cpp's files) and wisp bench, appended to speed/NAME.jsonl."""
    os.makedirs("speed", exist_ok=True)
    path = name + ".gguf"
    runs = []
    if ROWS[name][1][0] == "llama":
        runs.append(("llama.cpp", [os.path.join(a.llama_bin, "llama-bench"), "-m", path, "-p", "0", "-n",
                                   str(a.n_gen), "-r", str(a.reps), "-t", str(a.bench_threads), "-o", "json"]))
    runs.append(("wisp", [a.wisp, "bench", "-m", path, "-p", "0", "-n", str(a.n_gen), "-r", str(a.reps), "-t",
                          str(a.bench_threads), "--device", "cpu", "--json"]))
    for runtime, cmd in runs:
        if a.chrt:
            cmd = ["chrt", "-f", "10"] + cmd
        before = load_avg()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        if a.chrt:
            time.sleep(1)  # between the runs the other processes have the cores back
        j = json.loads(out)
        tok_s = j[0]["avg_ts"] if runtime == "llama.cpp" else j["results"][0]["tok_s"]
        rec = {"runtime": runtime, "tok_s": tok_s, "load_before": before, "load_after": load_avg(), "cmd": cmd}
        with open(os.path.join("speed", name + ".jsonl"), "a") as f:
            f.write(json.dumps(rec) + "\n")
        print(f"{name} {runtime} {tok_s:.2f} tok/s (load {before:.1f})", flush=True)


def speeds(name):
    """{runtime: (best tok/s, its load before, number of rounds)} from speed/NAME.jsonl."""
    path = os.path.join("speed", name + ".jsonl")
    out = {}
    if not os.path.exists(path):
        return out
    recs = [json.loads(line) for line in open(path)]
    for rt in ("llama.cpp", "wisp"):
        rs = [r for r in recs if r["runtime"] == rt]
        if rs:
            best = max(rs, key=lambda r: r["tok_s"])
            out[rt] = (best["tok_s"], best["load_before"], len(rs))
    return out


def collect(a, names):
    src = gt.info(a.wisp, "source-f16.gguf")
    rows = []
    for name in names:
        res = os.path.join("rows", name + ".json")
        if not os.path.exists(res):
            continue
        r = json.load(open(res))
        d = gt.info(a.wisp, name + ".gguf")
        rows.append({"name": name, "label": ROWS[name][0], "llama": ROWS[name][1][0] == "llama",
                     "bpw": 8 * d["tensor_bytes"] / src["parameters"], "mib": d["file_bytes"] / 2**20,
                     "kl": r["mean_kl"], "kl_ci": r["mean_kl_ci95"], "top1": r["top1"], "ppl": r["ppl"],
                     "speed": speeds(name)})
    return rows


def dominance(rows):
    """For each llama.cpp point (llama-bench): the wisp rows faster (run by wisp) and lower in KL."""
    out = []
    for r in rows:
        if not r["llama"] or "llama.cpp" not in r["speed"]:
            continue
        ts = r["speed"]["llama.cpp"][0]
        own = [w for w in rows if not w["llama"] and "wisp" in w["speed"] and w["speed"]["wisp"][0] > ts
               and w["kl"] < r["kl"]]
        anyf = [w for w in rows if "wisp" in w["speed"] and w["speed"]["wisp"][0] > ts and w["kl"] < r["kl"]]
        out.append((r, own, anyf))
    return out


def report(a, names):
    rows = sorted(collect(a, names), key=lambda r: r["kl"])
    base = json.load(open("base.json"))
    print(f"{base['n_scored']} scored tokens per row ({base['n_chunks']} windows of {a.ctx}); F16 source PPL "
          f"{base['ppl']:.3f}; decode: -p 0 -n {a.n_gen} -r {a.reps} -t {a.bench_threads}, best of the rounds\n")
    print("| file | bits/weight | mean KL ± 95% | top-1 | PPL | llama-bench tok/s (load) | wisp tok/s (load) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        s = r["speed"]
        ll = f"{s['llama.cpp'][0]:.1f} ({s['llama.cpp'][1]:.1f})" if "llama.cpp" in s else ("" if r["llama"] else
                                                                                             "cannot load")
        wi = f"{s['wisp'][0]:.1f} ({s['wisp'][1]:.1f})" if "wisp" in s else ""
        print(f"| {r['label']} | {r['bpw']:.3f} | {r['kl']:.4f} ± {r['kl_ci']:.4f} | {100 * r['top1']:.1f}% | "
              f"{r['ppl']:.3f} | {ll} | {wi} |")
    print()
    for r, own, anyf in dominance(rows):
        ts = r["speed"]["llama.cpp"][0]
        best = max(own, key=lambda w: w["speed"]["wisp"][0]) if own else None
        line = f"- {r['label']} (KL {r['kl']:.4f}, {ts:.1f} tok/s): "
        line += (f"{len(own)} wisp file(s) faster and lower in KL, e.g. {best['label']} (KL {best['kl']:.4f}, "
                 f"{best['speed']['wisp'][0]:.1f} tok/s)" if own else "no wisp file both faster and lower in KL")
        if not own and anyf:
            line += "; run by wisp: " + ", ".join(w["label"] for w in anyf)
        print(line)
    if a.svg:
        series = {
            "llama.cpp files, llama-bench": [(r["kl"], r["speed"]["llama.cpp"][0], r["name"][6:].upper())
                                             for r in rows if "llama.cpp" in r["speed"]],
            "llama.cpp files, wisp": [(r["kl"], r["speed"]["wisp"][0], "") for r in rows
                                      if r["llama"] and "wisp" in r["speed"]],
            "wisp files (WQ, --target-bpw), wisp": [(r["kl"], r["speed"]["wisp"][0], short(r["name"]))
                                                    for r in rows if not r["llama"] and "wisp" in r["speed"]],
        }
        scatter_chart(a.svg, series, a.title, "mean KL vs the F16 source (log scale; lower is better)",
                      f"decode tok/s ({a.bench_threads} thread{'s' if a.bench_threads > 1 else ''})")


def short(name):
    return {"wq8": "WQ8", "wq6": "WQ6", "tbpw-q6k": "bpw=Q6_K", "tbpw-q4km": "bpw=Q4_K_M", "tbpw-q3km": "bpw=Q3_K_M",
            "wq4-gptq": "WQ4 gptq"}.get(name, name)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--wisp", default=os.path.join(ROOT, "build", "wisp"))
    p.add_argument("--llama-bin", default=os.path.join(ROOT, "build-llamacpp", "bin"))
    p.add_argument("--model", help="the model to make the F16 source from (wisp quantize --type f16)")
    p.add_argument("--text", default="/work/shared/data/wikitext-2-test.txt")
    p.add_argument("--calib-bytes", type=int, default=200000)
    p.add_argument("--calib-tokens", type=int, default=4096)
    p.add_argument("--ctx", type=int, default=512)
    p.add_argument("--chunks", type=int, default=4)
    p.add_argument("--threads", type=int, default=2, help="threads for quantizing and scoring")
    p.add_argument("--bench-threads", type=int, default=1)
    p.add_argument("--n-gen", type=int, default=64)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--nice", type=int, default=5)
    p.add_argument("--chrt", action="store_true", help="run each speed measurement under `chrt -f 10` (SCHED_FIFO: "
                   "no other process takes the cores during its seconds; needs CAP_SYS_NICE)")
    p.add_argument("--rows", help="comma-separated row names (default: all): " + ",".join(ROWS))
    p.add_argument("--steps", default="make,speed,score,report", help="comma-separated: make, speed, score, report")
    p.add_argument("--svg", help="write the chart here")
    p.add_argument("--title", default="SmolLM2-135M: decode speed against quality")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    for k in ("wisp", "llama_bin", "model", "text", "svg"):
        if getattr(a, k):
            setattr(a, k, os.path.abspath(getattr(a, k)))
    a.source, a.keep_logits = None, False  # what scripts/gptq_table.py's helpers read
    gt.sh = nice_sh(a.nice)
    names = a.rows.split(",") if a.rows else list(ROWS)
    os.makedirs(a.out, exist_ok=True)
    os.chdir(a.out)
    steps = a.steps.split(",")
    if "make" in steps:
        if not a.model and not os.path.exists("source-f16.gguf"):
            p.error("give --model")
        make(a, names)
    if "speed" in steps:
        for _ in range(a.rounds):
            for name in names:
                bench_once(a, name)
    if "score" in steps:
        score(a, names)
    if "report" in steps:
        report(a, names)


if __name__ == "__main__":
    sys.exit(main())

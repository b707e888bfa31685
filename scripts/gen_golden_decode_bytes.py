#!/usr/bin/env python3
"""Golden decode-step byte counts for the tiny GGUFs, counted by hand with the `gguf` package.

What one decode step (one token) reads of a model's weights, from the tensor table as the gguf
package reads it (tensor.n_bytes, tensor.shape), counted tensor by tensor:
  merged experts  blk.N.ffn_{gate,up,down,gate_up}_exps.{weight,bias}, experts outermost: the
                  rows of <arch>.expert_used_count of <arch>.expert_count experts, so
                  n_bytes / expert_count * expert_used_count (the division must be exact)
  token_embd      one row (n_bytes / rows) when output.weight exists; whole when tied (it is
                  the output matrix too)
  everything else whole: attention, norms, the router (ffn_gate_inp), shared experts, output
A batch of B tokens reads the union of their experts; the expected share under uniform routing,
1 - (1 - k/n)^B, is recorded for B = 4 (the test allows 1 byte of rounding there).
tests/unit/plan/test_decode_reads.cpp compares `wisp plan`'s and `wisp bench`'s counts with
these. Output: tests/golden/plan/decode_bytes.json.

Usage:  python3 scripts/gen_golden_decode_bytes.py
Needs:  gguf.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import gguf

ROOT = Path(__file__).resolve().parent.parent
MODELS = ["mixtral-tiny", "qwen3moe-tiny", "gpt-oss-tiny", "qwen3-tiny", "phi3-tiny"]
EXPERT = re.compile(r"^blk\.\d+\.ffn_(gate|up|down|gate_up)_exps\.(weight|bias)$")
BATCH = 4


def field(reader: gguf.GGUFReader, key: str):
    f = reader.fields.get(key)
    return None if f is None else f.contents()


def count(path: Path) -> dict:
    r = gguf.GGUFReader(str(path))
    arch = field(r, "general.architecture")
    n_expert = field(r, f"{arch}.expert_count") or 0
    used = field(r, f"{arch}.expert_used_count") or 0
    untied = any(t.name == "output.weight" for t in r.tensors)
    file_bytes = params = 0
    dense_bytes = dense_params = 0
    expert_bytes = expert_params = 0
    groups: dict[str, int] = {}
    for t in r.tensors:
        nb, ne = int(t.n_bytes), int(t.n_elements)
        file_bytes += nb
        params += ne
        if EXPERT.match(t.name):
            assert int(t.shape[-1]) == n_expert, t.name
            assert nb % n_expert == 0, t.name
            expert_bytes += nb
            expert_params += ne
            group = "experts"
        elif t.name == "token_embd.weight" and untied:
            rows = int(t.shape[1])
            assert nb % rows == 0
            dense_bytes += nb // rows
            dense_params += int(t.shape[0])
            group = "embedding (one row)"
        else:
            dense_bytes += nb
            dense_params += ne
            group = ("router" if "ffn_gate_inp" in t.name else "attention" if ".attn_" in t.name else
                     "output" if t.name.startswith("output") or t.name == "token_embd.weight" else "other")
        groups[group] = groups.get(group, 0) + nb
    out = {"model": path.name, "architecture": arch, "file_bytes": file_bytes, "params": params,
           "expert_count": n_expert, "expert_used_count": used, "untied_output": untied,
           "file_bytes_by_group": groups}
    if n_expert:
        one = dense_bytes + expert_bytes // n_expert * used
        share = 1.0 - (1.0 - used / n_expert) ** BATCH
        out["decode_bytes_batch4"] = dense_bytes + round(expert_bytes * share)
        out["decode_params"] = dense_params + expert_params // n_expert * used
    else:
        one = dense_bytes
        out["decode_bytes_batch4"] = dense_bytes
        out["decode_params"] = dense_params
    out["decode_bytes"] = one
    return out


def main() -> None:
    rows = [count(ROOT / "tests/golden/logits" / f"{m}.gguf") for m in MODELS]
    dest = ROOT / "tests/golden/plan/decode_bytes.json"
    dest.write_text(json.dumps({"generator": "scripts/gen_golden_decode_bytes.py", "batch": BATCH, "models": rows},
                               indent=1) + "\n")
    for row in rows:
        print(f"{row['model']}: file {row['file_bytes']} bytes, a decode step reads {row['decode_bytes']}")


if __name__ == "__main__":
    main()

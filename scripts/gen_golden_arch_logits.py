#!/usr/bin/env python3
"""Golden logits from llama.cpp (llama-cpp-python) for one tiny random-weight GGUF per architecture.

Each model is written here with the `gguf` package under llama.cpp's real tensor names and
metadata keys (a few layers, small dimensions, a synthetic SentencePiece-style vocabulary), then
quantized by llama.cpp's own quantizer to Q8_0, and its logits recorded exactly as
scripts/gen_golden_logits.py records the others (its record(): a 256-token random text with the
argmax and top-10 of every position, the full logits of 3 positions, 3 greedy continuations of 32
tokens). tests/unit/model/test_arch_parity.cpp compares wisp against them.

  qwen3-tiny      q/k RMSNorm per head, a head size (64) that is not n_embd / n_head (32)
  qwen3-yarn-tiny qwen3 with YaRN rope scaling (factor 4 over an original context of 64)
  llama3-tiny     llama with Llama 3's rope_freqs factors (computed as the HF converter does)
  gemma2-tiny     sliding window (16) on the even layers, attention soft-cap 5, final soft-cap 30
  phi3-tiny       fused attn_qkv and gate/up, partial rotary (half the head), LongRoPE short/long
                  factors and attn_factor (the short ones apply: the context is the original one)
  phi3-long-tiny  phi3-tiny's layout with an original context of 256, below llama.cpp's 512: the
                  long factors apply
  smollm3-tiny    llama with no rope on every 4th layer
  olmo2-tiny      no pre-norms, post-attention/FFN norms, q/k RMSNorm over the whole width
  granite-tiny    embedding, residual, attention and logit multipliers
  granitemoe-tiny granite's multipliers with 4 merged experts, 2 chosen per token (renormalized)
  granitemoe-shared-tiny  granitemoe-tiny plus a shared expert (GraniteMoeShared) of another width
  qwen3moe-tiny   qwen3 attention, 8 merged experts, 3 chosen per token (weights renormalized)
  mixtral-tiny    llama with 4 merged experts, 2 chosen per token (Mixtral's layout)
  gpt-oss-tiny    gpt-oss: attention sinks, sliding window (16) on the even layers, q/k/v/o biases,
                  YaRN on every layer, 4 experts (top-2, softmax over the chosen logits) with
                  biases and the clamped SwiGLU; quantized by llama.cpp to MXFP4_MOE (experts
                  MXFP4, other matrices Q8_0, the router F32)

Usage:  python3 scripts/gen_golden_arch_logits.py [--only NAME ...]
Needs:  llama-cpp-python, gguf, numpy. Deterministic for a given llama.cpp build.
"""
from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_golden_logits as base  # noqa: E402  (record, quantize, spm_vocab)

OUT = base.OUT
N_VOCAB = 384


class Tiny:
    """Writes one random model: the common llama-style skeleton plus each architecture's extras."""

    def __init__(self, path: Path, arch: str, seed: int, *, n_embd=128, n_head=4, n_head_kv=2, n_ff=256,
                 n_layer=3, head_dim=0, ctx=512):
        import gguf

        self.rng = np.random.default_rng(seed)
        self.arch = arch
        self.n_embd, self.n_head, self.n_head_kv, self.n_ff, self.n_layer = n_embd, n_head, n_head_kv, n_ff, n_layer
        self.head_dim = head_dim or n_embd // n_head
        w = self.w = gguf.GGUFWriter(str(path), arch)
        w.add_name("tiny random model")  # not the arch: llama.cpp keys vocabulary quirks on "phi3" in names
        w.add_context_length(ctx)
        w.add_embedding_length(n_embd)
        w.add_block_count(n_layer)
        w.add_feed_forward_length(n_ff)
        w.add_head_count(n_head)
        w.add_head_count_kv(n_head_kv)
        w.add_layer_norm_rms_eps(1e-6)
        w.add_file_type(0)
        if head_dim:
            w.add_key_length(head_dim)
            w.add_value_length(head_dim)
        tokens, scores, types = base.spm_vocab(N_VOCAB)
        w.add_tokenizer_model("llama")
        w.add_token_list(tokens)
        w.add_token_scores(scores)
        w.add_token_types(types)
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_unk_token_id(0)

    def mat(self, rows: int, cols: int, gain: float = 1.0) -> np.ndarray:
        # numpy shape (rows, cols) is GGUF ne [cols, rows]: rows outputs of cols inputs.
        return (self.rng.standard_normal((rows, cols)) * gain / np.sqrt(cols)).astype(np.float32)

    def norm(self, n: int) -> np.ndarray:
        return (1.0 + 0.2 * self.rng.standard_normal(n)).astype(np.float32)

    def add(self, name: str, value: np.ndarray) -> None:
        self.w.add_tensor(name, value)

    def skeleton(self, *, tied=True, pre_norms=True, fused_qkv=False, fused_gate_up=False, layer_extra=None,
                 experts=0):
        d, q, kv, ff = self.n_embd, self.n_head * self.head_dim, self.n_head_kv * self.head_dim, self.n_ff
        self.add("token_embd.weight", self.rng.standard_normal((N_VOCAB, d)).astype(np.float32))
        self.add("output_norm.weight", self.norm(d))
        if not tied:
            self.add("output.weight", self.mat(N_VOCAB, d, 4.0))
        for il in range(self.n_layer):
            p = f"blk.{il}."
            if pre_norms:
                self.add(p + "attn_norm.weight", self.norm(d))
            if fused_qkv:
                self.add(p + "attn_qkv.weight", np.concatenate([self.mat(q, d, 2.0), self.mat(kv, d, 2.0), self.mat(kv, d)]))
            else:
                self.add(p + "attn_q.weight", self.mat(q, d, 2.0))
                self.add(p + "attn_k.weight", self.mat(kv, d, 2.0))
                self.add(p + "attn_v.weight", self.mat(kv, d))
            self.add(p + "attn_output.weight", self.mat(d, q))
            if pre_norms:
                self.add(p + "ffn_norm.weight", self.norm(d))
            if experts:
                # The router with a large gain, so the choice is decisive (no near-ties for float
                # noise to flip); merged experts as numpy (n_expert, rows, cols) = GGUF [cols, rows, n_expert].
                self.add(p + "ffn_gate_inp.weight", self.mat(experts, d, 6.0))
                self.add(p + "ffn_gate_exps.weight", np.stack([self.mat(ff, d, 2.0) for _ in range(experts)]))
                self.add(p + "ffn_up_exps.weight", np.stack([self.mat(ff, d) for _ in range(experts)]))
                self.add(p + "ffn_down_exps.weight", np.stack([self.mat(d, ff) for _ in range(experts)]))
            elif fused_gate_up:
                self.add(p + "ffn_up.weight", np.concatenate([self.mat(ff, d, 2.0), self.mat(ff, d)]))
            else:
                self.add(p + "ffn_gate.weight", self.mat(ff, d, 2.0))
                self.add(p + "ffn_up.weight", self.mat(ff, d))
            if not experts:
                self.add(p + "ffn_down.weight", self.mat(d, ff))
            if layer_extra:
                layer_extra(p)

    def close(self) -> None:
        self.w.write_header_to_file()
        self.w.write_kv_data_to_file()
        self.w.write_tensors_to_file()
        self.w.close()


def qk_norms(t: Tiny, whole: bool):
    def extra(p: str) -> None:
        t.add(p + "attn_q_norm.weight", t.norm(t.n_head * t.head_dim if whole else t.head_dim))
        t.add(p + "attn_k_norm.weight", t.norm(t.n_head_kv * t.head_dim if whole else t.head_dim))
    return extra


def post_norms(t: Tiny, then=None):
    def extra(p: str) -> None:
        if then:
            then(p)
        t.add(p + "post_attention_norm.weight", t.norm(t.n_embd))
        t.add(p + "post_ffw_norm.weight", t.norm(t.n_embd))
    return extra


def write_qwen3(path: Path, seed: int, yarn: bool = False) -> None:
    import gguf

    t = Tiny(path, "qwen3", seed, head_dim=64)
    t.w.add_rope_freq_base(1000000.0)
    if yarn:
        t.w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
        t.w.add_rope_scaling_factor(4.0)
        t.w.add_rope_scaling_orig_ctx_len(64)
    t.skeleton(layer_extra=qk_norms(t, whole=False))
    t.close()


def llama3_rope_freqs(n_rot: int, base_freq: float) -> np.ndarray:
    # The Llama 3.1 recipe (factor 8, low/high frequency factors 1 and 4, original context 8192),
    # as convert_hf_to_gguf.py turns it into per-pair divisors of the angle.
    factor, low_ff, high_ff, old_ctx = 8.0, 1.0, 4.0, 8192
    freqs = 1.0 / (base_freq ** (np.arange(0, n_rot, 2, dtype=np.float32) / n_rot))
    low_wl, high_wl = old_ctx / low_ff, old_ctx / high_ff
    out = []
    for f in freqs:
        wl = 2 * math.pi / f
        if wl < high_wl:
            out.append(1.0)
        elif wl > low_wl:
            out.append(factor)
        else:
            smooth = (old_ctx / wl - low_ff) / (high_ff - low_ff)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, dtype=np.float32)


def write_llama3(path: Path, seed: int) -> None:
    t = Tiny(path, "llama", seed, n_embd=128, n_head=2, n_head_kv=1)  # head 64: pairs span the ramp
    t.w.add_rope_freq_base(500000.0)
    t.add("rope_freqs.weight", llama3_rope_freqs(t.head_dim, 500000.0))
    t.skeleton(tied=False)
    t.close()


def write_gemma2(path: Path, seed: int) -> None:
    t = Tiny(path, "gemma2", seed, n_head=2, n_head_kv=1, head_dim=64, n_ff=128, n_layer=4)
    t.w.add_rope_freq_base(10000.0)
    t.w.add_sliding_window(16)
    t.w.add_attn_logit_softcapping(5.0)
    t.w.add_final_logit_softcapping(30.0)
    t.skeleton(layer_extra=post_norms(t))
    t.close()


def write_phi3(path: Path, seed: int, orig_ctx: int = 1024) -> None:
    t = Tiny(path, "phi3", seed, n_head=4, n_head_kv=4, ctx=4096)
    t.w.add_rope_freq_base(10000.0)
    t.w.add_rope_dimension_count(t.head_dim // 2)
    # llama.cpp's context (512) within the original one: the short factors; beyond it: the long ones.
    t.w.add_rope_scaling_orig_ctx_len(orig_ctx)
    # What the converter writes: sqrt(1 + ln(scale) / ln(original context)), scale = 4096 / original.
    t.w.add_rope_scaling_attn_factors(1.1902380714238083 if orig_ctx == 1024 else
                                      math.sqrt(1 + math.log(4096 / orig_ctx) / math.log(orig_ctx)))
    half = t.head_dim // 4
    t.add("rope_factors_short.weight", (1.0 + t.rng.random(half) * 2.0).astype(np.float32))
    t.add("rope_factors_long.weight", (4.0 + t.rng.random(half) * 20.0).astype(np.float32))
    t.skeleton(tied=False, fused_qkv=True, fused_gate_up=True)
    t.close()


def write_smollm3(path: Path, seed: int) -> None:
    t = Tiny(path, "smollm3", seed, n_layer=4)
    t.w.add_rope_freq_base(5000000.0)
    t.skeleton()
    t.close()


def write_olmo2(path: Path, seed: int) -> None:
    t = Tiny(path, "olmo2", seed)
    t.w.add_rope_freq_base(500000.0)
    t.skeleton(tied=False, pre_norms=False, layer_extra=post_norms(t, qk_norms(t, whole=True)))
    t.close()


def write_granite(path: Path, seed: int) -> None:
    t = Tiny(path, "granite", seed)
    t.w.add_rope_freq_base(10000.0)
    t.w.add_logit_scale(4.0)
    t.w.add_residual_scale(0.22)
    t.w.add_embedding_scale(3.0)
    t.w.add_attention_scale(0.25)
    t.skeleton()
    t.close()


def write_granitemoe(path: Path, seed: int, shared: bool = False) -> None:
    t = Tiny(path, "granitemoe", seed, n_ff=128)
    t.w.add_rope_freq_base(10000.0)
    t.w.add_logit_scale(4.0)
    t.w.add_residual_scale(0.22)
    t.w.add_embedding_scale(3.0)
    t.w.add_attention_scale(0.25)
    t.w.add_expert_count(4)
    t.w.add_expert_used_count(2)
    extra = None
    if shared:
        n_sh = 96
        t.w.add_expert_shared_feed_forward_length(n_sh)

        def extra(p: str) -> None:
            t.add(p + "ffn_gate_shexp.weight", t.mat(n_sh, t.n_embd, 2.0))
            t.add(p + "ffn_up_shexp.weight", t.mat(n_sh, t.n_embd))
            t.add(p + "ffn_down_shexp.weight", t.mat(t.n_embd, n_sh))
    t.skeleton(tied=False, experts=4, layer_extra=extra)
    t.close()


def write_qwen3moe(path: Path, seed: int) -> None:
    t = Tiny(path, "qwen3moe", seed, head_dim=64, n_ff=128)
    t.w.add_rope_freq_base(1000000.0)
    t.w.add_expert_count(8)
    t.w.add_expert_used_count(3)
    t.w.add_expert_feed_forward_length(128)
    t.skeleton(layer_extra=qk_norms(t, whole=False), experts=8)
    t.close()


def write_mixtral(path: Path, seed: int) -> None:
    t = Tiny(path, "llama", seed, n_ff=128)
    t.w.add_rope_freq_base(1000000.0)
    t.w.add_expert_count(4)
    t.w.add_expert_used_count(2)
    t.skeleton(experts=4)  # tied: large logit margins, so float noise in the experts cannot flip greedy steps
    t.close()


def write_gpt_oss(path: Path, seed: int) -> None:
    import gguf

    # gpt-oss's shape in small: head size 64 != n_embd / n_head, GQA 2:1, merged experts with
    # biases, a per-head sink logit, no ffn_norm (post_attention_norm is the FFN's input norm).
    n_exp, ff = 4, 128
    t = Tiny(path, "gpt-oss", seed, n_embd=128, n_head=4, n_head_kv=2, n_ff=ff, n_layer=4, head_dim=64)
    w = t.w
    w.add_rope_freq_base(150000.0)
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(4.0)
    w.add_rope_scaling_orig_ctx_len(64)
    w.add_sliding_window(16)
    w.add_expert_count(n_exp)
    w.add_expert_used_count(2)
    w.add_expert_feed_forward_length(ff)
    d, q, kv = t.n_embd, t.n_head * t.head_dim, t.n_head_kv * t.head_dim

    def bias(*shape: int, gain: float = 0.3) -> np.ndarray:
        return (t.rng.standard_normal(shape) * gain).astype(np.float32)

    t.add("token_embd.weight", t.rng.standard_normal((N_VOCAB, d)).astype(np.float32))
    t.add("output_norm.weight", t.norm(d))
    t.add("output.weight", t.mat(N_VOCAB, d, 4.0))
    for il in range(t.n_layer):
        p = f"blk.{il}."
        t.add(p + "attn_norm.weight", t.norm(d))
        t.add(p + "attn_q.weight", t.mat(q, d, 2.0))
        t.add(p + "attn_q.bias", bias(q))
        t.add(p + "attn_k.weight", t.mat(kv, d, 2.0))
        t.add(p + "attn_k.bias", bias(kv))
        t.add(p + "attn_v.weight", t.mat(kv, d))
        t.add(p + "attn_v.bias", bias(kv))
        t.add(p + "attn_output.weight", t.mat(d, q))
        t.add(p + "attn_output.bias", bias(d))
        # Sinks around the scores' size, so they take a real share of the softmax.
        t.add(p + "attn_sinks.weight", (1.0 + t.rng.standard_normal(t.n_head)).astype(np.float32))
        t.add(p + "post_attention_norm.weight", t.norm(d))
        # Decisive routing, as qwen3moe-tiny. Written as Q8_0 (llama.cpp's quantizer leaves routers
        # as they are): the integer dot's order is llama.cpp's on every x86 build, where F32 routers
        # meet the float-dot lanes wisp has only for the AVX-512 build (see test_parity's mixtral case).
        router = t.mat(n_exp, d, 6.0)
        t.w.add_tensor(p + "ffn_gate_inp.weight", gguf.quants.quantize(router, gguf.GGMLQuantizationType.Q8_0),
                       raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        t.add(p + "ffn_gate_inp.bias", bias(n_exp))
        # Gate and up large enough that the SwiGLU's clamps at +-7 are reached.
        t.add(p + "ffn_gate_exps.weight", np.stack([t.mat(ff, d, 5.0) for _ in range(n_exp)]))
        t.add(p + "ffn_gate_exps.bias", bias(n_exp, ff))
        t.add(p + "ffn_up_exps.weight", np.stack([t.mat(ff, d, 5.0) for _ in range(n_exp)]))
        t.add(p + "ffn_up_exps.bias", bias(n_exp, ff))
        t.add(p + "ffn_down_exps.weight", np.stack([t.mat(d, ff, 0.3) for _ in range(n_exp)]))
        t.add(p + "ffn_down_exps.bias", bias(n_exp, d))
    t.close()


def tiny_arch(name: str, writer, seed: int, ftype_name: str = "LLAMA_FTYPE_MOSTLY_Q8_0") -> None:
    import llama_cpp

    dst = OUT / f"{name}.gguf"
    with tempfile.TemporaryDirectory() as tmp:
        f32 = Path(tmp) / f"{name}.f32.gguf"
        writer(f32, seed)
        base.quantize(f32, dst, getattr(llama_cpp, ftype_name))
    rng = np.random.default_rng(seed + 1)
    text = [1] + [int(x) for x in rng.integers(3, N_VOCAB, base.N_TEXT_TOKENS - 1)]
    prompts = [(f"random-{i}", [1] + [int(x) for x in rng.integers(3, N_VOCAB, 7 + 3 * i)]) for i in range(3)]
    base.record(name, dst, f"tests/golden/logits/{dst.name}", text, prompts, [0, 100, base.N_TEXT_TOKENS - 1], 32)
    print(f"  {dst.name}: {dst.stat().st_size} bytes")


JOBS = {
    "qwen3-tiny": (write_qwen3, 20251201),
    "qwen3-yarn-tiny": (lambda p, s: write_qwen3(p, s, yarn=True), 20251202),
    "llama3-tiny": (write_llama3, 20251203),
    "gemma2-tiny": (write_gemma2, 20251204),
    "phi3-tiny": (write_phi3, 20251205),
    "phi3-long-tiny": (lambda p, s: write_phi3(p, s, orig_ctx=256), 20251212),
    "smollm3-tiny": (write_smollm3, 20251206),
    "olmo2-tiny": (write_olmo2, 20251207),
    "granite-tiny": (write_granite, 20251208),
    "qwen3moe-tiny": (write_qwen3moe, 20251209),
    "granitemoe-tiny": (write_granitemoe, 20251213),
    "granitemoe-shared-tiny": (lambda p, s: write_granitemoe(p, s, shared=True), 20251214),
    "mixtral-tiny": (write_mixtral, 20251210),
    "gpt-oss-tiny": (write_gpt_oss, 20251211, "LLAMA_FTYPE_MOSTLY_MXFP4_MOE"),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", help="golden names to regenerate (default: all)")
    args = ap.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (writer, seed, *ftype) in JOBS.items():
        if args.only and name not in args.only:
            continue
        tiny_arch(name, writer, seed, *ftype)
    return 0


if __name__ == "__main__":
    sys.exit(main())

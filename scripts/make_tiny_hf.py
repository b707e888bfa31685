#!/usr/bin/env python3
"""Tiny Hugging Face checkpoint folders for the tests of `wisp quantize FOLDER` (hf_source.cpp).

  make_tiny_hf.py DIR CASE          writes DIR; CASE is one of
      llama | qwen2 | gemma3 | qwen3 | gemma2 | smollm3 | olmo2 | granite | phi3
                                     a valid folder of that architecture (random weights, a
                                     byte-level BPE tokenizer built with `tokenizers`)
      unknown_arch                   llama's folder with architectures = ["MambaForCausalLM"]
      missing_tensor                 llama's folder without model.layers.1.mlp.up_proj.weight
      wrong_shape                    llama's folder with a [12, 8] model.layers.0.self_attn.k_proj.weight
      llama_sharded_bf16             llama's tensors as BF16 in two shards with an index (written
                                     by hand: numpy has no bfloat16), plus reference.npz for --check
  make_tiny_hf.py DIR CASE --check OUT.gguf
                                     checks OUT.gguf (made from DIR with --type f16) against the
                                     folder's arrays transformed as llama.cpp's converter does,
                                     computed here independently of wisp: names, llama's Q/K
                                     permute, gemma's 1 + w norms, tied embeddings, hyper-parameters
                                     and the vocabulary (with [PADn] rows past the tokenizer).
  make_tiny_hf.py DIR CASE --llama-logits OUT.gguf
                                     prints llama.cpp's (llama-cpp-python's) logits for OUT.gguf
                                     over TOKENS below, one row per position, as JSON

Matrices are stored as F16 and norms/biases as F32, so both read paths are exercised.
"""

import json
import sys
from pathlib import Path

import numpy as np
import gguf
from safetensors.numpy import load_file, save_file
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

H, FF, LAYERS, HEADS, KV, N_VOCAB = 8, 16, 2, 2, 1, 264  # 256 bytes + 4 specials + 4 padding rows
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<pad>"]
ARCHS = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "gemma3": "Gemma3ForCausalLM",
         "qwen3": "Qwen3ForCausalLM", "gemma2": "Gemma2ForCausalLM", "smollm3": "SmolLM3ForCausalLM",
         "olmo2": "Olmo2ForCausalLM", "granite": "GraniteForCausalLM", "phi3": "Phi3ForCausalLM"}
PERMUTED = {"llama", "smollm3", "granite"}  # llama.cpp's converter reorders their Q/K rows
GEMMA = {"gemma2", "gemma3"}                # norms stored as w, converted to 1 + w
UNTIED = {"llama", "qwen3", "olmo2", "granite", "phi3"}
PHI3_ROPE = {"type": "longrope", "long_factor": [1.5], "short_factor": [1.25]}  # rotated dims 2: one factor
TOKENS = [1, 40, 300 % 264, 77, 5, 190, 260, 33, 101, 12, 250, 64]  # for --llama-logits


def head_dim(case):
    return 4 if case in ("gemma3", "gemma2", "qwen3") else H // HEADS


def hf_tensors(case, rng):
    hd = head_dim(case)
    mat = lambda *s: rng.standard_normal(s).astype(np.float16)
    vec = lambda n: rng.standard_normal(n).astype(np.float32)
    t = {"model.embed_tokens.weight": mat(N_VOCAB, H), "model.norm.weight": vec(H)}
    for i in range(LAYERS):
        p = f"model.layers.{i}."
        if case != "olmo2":  # OLMo 2 normalizes after attention and FFN only
            t[p + "input_layernorm.weight"] = vec(H)
        t[p + "post_attention_layernorm.weight"] = vec(H)
        t[p + "self_attn.q_proj.weight"] = mat(HEADS * hd, H)
        t[p + "self_attn.k_proj.weight"] = mat(KV * hd, H)
        t[p + "self_attn.v_proj.weight"] = mat(KV * hd, H)
        t[p + "self_attn.o_proj.weight"] = mat(H, HEADS * hd)
        t[p + "mlp.gate_proj.weight"] = mat(FF, H)
        t[p + "mlp.up_proj.weight"] = mat(FF, H)
        t[p + "mlp.down_proj.weight"] = mat(H, FF)
        if case == "qwen2":
            for n, rows in (("q", HEADS * hd), ("k", KV * hd), ("v", KV * hd)):
                t[p + f"self_attn.{n}_proj.bias"] = vec(rows)
        if case in ("gemma3", "qwen3"):
            t[p + "self_attn.q_norm.weight"] = vec(hd)
            t[p + "self_attn.k_norm.weight"] = vec(hd)
        if case == "olmo2":  # over the whole q (k) width
            t[p + "self_attn.q_norm.weight"] = vec(HEADS * hd)
            t[p + "self_attn.k_norm.weight"] = vec(KV * hd)
        if case in GEMMA:
            t[p + "pre_feedforward_layernorm.weight"] = vec(H)
        if case in GEMMA or case == "olmo2":
            t[p + "post_feedforward_layernorm.weight"] = vec(H)
    if case in UNTIED:
        t["lm_head.weight"] = mat(N_VOCAB, H)
    if case == "phi3":  # Phi-3 checkpoints store q/k/v and gate/up fused
        for i in range(LAYERS):
            p = f"model.layers.{i}."
            t[p + "self_attn.qkv_proj.weight"] = np.concatenate(
                [t.pop(p + f"self_attn.{n}_proj.weight") for n in "qkv"])
            t[p + "mlp.gate_up_proj.weight"] = np.concatenate(
                [t.pop(p + "mlp.gate_proj.weight"), t.pop(p + "mlp.up_proj.weight")])
    return t


def config(case):
    c = {"architectures": [ARCHS[case]], "model_type": case, "hidden_size": H, "intermediate_size": FF,
         "num_hidden_layers": LAYERS, "num_attention_heads": HEADS, "num_key_value_heads": KV,
         "max_position_embeddings": 256, "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
         "vocab_size": N_VOCAB, "tie_word_embeddings": case not in UNTIED}
    if case in ("gemma3", "gemma2", "qwen3"):
        c.update(head_dim=head_dim(case))
    if case in GEMMA:
        c.update(sliding_window=64)
    if case == "gemma2":
        c.update(attn_logit_softcapping=50.0, final_logit_softcapping=30.0, query_pre_attn_scalar=head_dim(case))
    if case == "granite":
        c.update(attention_multiplier=0.25, embedding_multiplier=3.0, residual_multiplier=0.5, logits_scaling=2.0)
    if case == "smollm3":
        c.update(no_rope_layers=[1] * LAYERS, no_rope_layer_interval=4)
    if case == "phi3":
        # A context (4096) past the original (1024): LongRoPE's long factors and attention factor
        # exist; short runs (llama.cpp pads its context to 256) use the short ones in both.
        c.update(partial_rotary_factor=0.5, max_position_embeddings=4096, original_max_position_embeddings=1024,
                 rope_scaling=PHI3_ROPE)
    return c


def write_tokenizer(d):
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = {t: i for i, t in enumerate(SPECIALS)}
    for ch in alphabet:
        vocab[ch] = len(vocab)
    merges = [("Ġ", "t"), ("h", "e")]
    for a, b in merges:
        vocab[a + b] = len(vocab)
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tk.decoder = decoders.ByteLevel()
    tk.post_processor = processors.ByteLevel(trim_offsets=False)
    tk.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in SPECIALS])
    tk.save(str(d / "tokenizer.json"))
    (d / "tokenizer_config.json").write_text(json.dumps(
        {"bos_token": "<|im_start|>", "eos_token": {"content": "<|im_end|>"}, "unk_token": "<|endoftext|>",
         "pad_token": "<pad>", "chat_template": "{{ messages[0]['content'] }}"}))
    return vocab, merges


def to_bf16(a):
    """float32 -> bfloat16 bits by truncation (any 16-bit pattern is a valid bf16), and its value."""
    bits = (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return bits, (bits.astype(np.uint32) << 16).view(np.float32)


def write_safetensors(path, arrays):
    """A safetensors file from (dtype name, shape, raw bytes) entries, per the format's spec."""
    header, offset, blobs = {}, 0, []
    for name, (dtype, shape, raw) in arrays.items():
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + len(raw)]}
        offset += len(raw)
        blobs.append(raw)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    Path(path).write_bytes(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def make_sharded_bf16(d, t):
    reference, shards, weight_map = {}, [{}, {}], {}
    for i, (name, a) in enumerate(sorted(t.items())):
        if a.ndim == 2:
            bits, value = to_bf16(a)
            entry = ("BF16", a.shape, bits.tobytes())
        else:
            value = a.astype(np.float32)
            entry = ("F32", a.shape, value.tobytes())
        reference[name] = value
        file = f"model-0000{i % 2 + 1}-of-00002.safetensors"
        shards[i % 2][name] = entry
        weight_map[name] = file
    for k, shard in enumerate(shards):
        write_safetensors(d / f"model-0000{k + 1}-of-00002.safetensors", shard)
    (d / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    np.savez(d / "reference.npz", **reference)


def make(d, case):
    d.mkdir(parents=True, exist_ok=True)
    base = case if case in ARCHS else "llama"
    t = hf_tensors(base, np.random.default_rng(7))
    c = config(base)
    if case == "llama_sharded_bf16":
        make_sharded_bf16(d, t)
        (d / "config.json").write_text(json.dumps(c))
        write_tokenizer(d)
        return
    if case == "unknown_arch":
        c["architectures"] = ["MambaForCausalLM"]
    elif case == "missing_tensor":
        del t["model.layers.1.mlp.up_proj.weight"]
    elif case == "wrong_shape":
        t["model.layers.0.self_attn.k_proj.weight"] = np.zeros((12, H), np.float16)
    save_file(t, str(d / "model.safetensors"))
    (d / "config.json").write_text(json.dumps(c))
    write_tokenizer(d)


def permute(w, heads):  # llama.cpp's reorder for the "llama" architecture, written from its description
    return w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def expected(d, case):
    if (d / "reference.npz").exists():
        t = dict(np.load(d / "reference.npz"))
        case = "llama"
    else:
        t = load_file(str(d / "model.safetensors"))
    norm_map = {"input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
                "self_attn.q_norm": "attn_q_norm", "self_attn.k_norm": "attn_k_norm"}
    if case in GEMMA or case == "olmo2":
        norm_map.update({"post_attention_layernorm": "post_attention_norm",
                         "pre_feedforward_layernorm": "ffn_norm", "post_feedforward_layernorm": "post_ffw_norm"})
    gemma = case in GEMMA
    other = {"self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
             "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
             "mlp.down_proj": "ffn_down", "self_attn.qkv_proj": "attn_qkv", "mlp.gate_up_proj": "ffn_up"}
    out = {}
    for name, w in t.items():
        w = w.astype(np.float32)
        if name == "model.embed_tokens.weight":
            out["token_embd.weight"] = w
        elif name == "lm_head.weight":
            out["output.weight"] = w
        elif name == "model.norm.weight":
            out["output_norm.weight"] = w + 1 if gemma else w
        else:
            _, _, layer, rest = name.split(".", 3)
            module, kind = rest.rsplit(".", 1)
            if module in norm_map:
                out[f"blk.{layer}.{norm_map[module]}.{kind}"] = w + 1 if gemma else w
                continue
            if case in PERMUTED and module == "self_attn.q_proj":
                w = permute(w, HEADS)
            if case in PERMUTED and module == "self_attn.k_proj":
                w = permute(w, KV)
            out[f"blk.{layer}.{other[module]}.{kind}"] = w
    if case == "phi3":  # made by the converter from rope_scaling
        out["rope_factors_long.weight"] = np.array(PHI3_ROPE["long_factor"], np.float32)
        out["rope_factors_short.weight"] = np.array(PHI3_ROPE["short_factor"], np.float32)
    return out


def check(d, case, out_path):
    r = gguf.GGUFReader(out_path)
    label, case = case, ("llama" if case == "llama_sharded_bf16" else case)
    problems = []
    want = expected(d, case)
    got = {t.name: t for t in r.tensors}
    if set(got) != set(want):
        problems.append(f"names: missing {sorted(set(want) - set(got))}, extra {sorted(set(got) - set(want))}")
    for name, e in want.items():
        if name not in got:
            continue
        g = got[name]
        o = gguf.quants.dequantize(g.data, g.tensor_type).astype(np.float32).reshape(e.shape)
        if g.tensor_type == gguf.GGMLQuantizationType.F16:
            e = e.astype(np.float16).astype(np.float32)
        if not np.array_equal(o, e):
            problems.append(f"{name}: values differ")
    f = lambda k: r.fields[k].contents() if k in r.fields else None
    hd = head_dim(case)
    keys = {"general.architecture": case, f"{case}.block_count": LAYERS, f"{case}.embedding_length": H,
            f"{case}.feed_forward_length": FF, f"{case}.attention.head_count": HEADS,
            f"{case}.attention.head_count_kv": KV, f"{case}.context_length": 256,
            "tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "gpt-2", "tokenizer.ggml.bos_token_id": 1,
            "tokenizer.ggml.eos_token_id": 2, "tokenizer.ggml.unknown_token_id": 0,
            "tokenizer.ggml.padding_token_id": 3, "tokenizer.ggml.add_bos_token": False,
            "tokenizer.chat_template": "{{ messages[0]['content'] }}", "tokenizer.ggml.merges": ["Ġ t", "h e"]}
    # What llama.cpp's convert_hf_to_gguf.py writes for each (read from its model classes).
    if case in PERMUTED:
        keys.update({f"{case}.rope.dimension_count": hd, f"{case}.vocab_size": N_VOCAB})
    if case in ("gemma3", "gemma2", "qwen3"):
        keys.update({f"{case}.attention.key_length": hd, f"{case}.attention.value_length": hd})
    if case in GEMMA:
        keys[f"{case}.attention.sliding_window"] = 64
    if case == "gemma2":
        keys.update({"gemma2.attn_logit_softcapping": 50.0, "gemma2.final_logit_softcapping": 30.0})
        if "gemma2.rope.freq_base" in r.fields:
            problems.append("gemma2.rope.freq_base written (llama.cpp's converter writes none)")
    else:
        keys[f"{case}.rope.freq_base"] = 10000.0
    if case == "phi3":  # rope dims int(0.5 * 8) // 2; attn factor sqrt(1 + ln(4096/1024) / ln(1024))
        keys.update({"phi3.rope.dimension_count": 2, "phi3.rope.scaling.original_context_length": 1024,
                     "phi3.attention.sliding_window": 0, "phi3.context_length": 4096,
                     "phi3.rope.scaling.attn_factor": float(np.float32(np.sqrt(1 + np.log(4) / np.log(1024))))})
    if case == "granite":
        keys.update({"granite.attention.scale": 0.25, "granite.embedding_scale": 3.0,
                     "granite.residual_scale": 0.5, "granite.logit_scale": 2.0})
    for k, v in keys.items():
        if f(k) != v:
            problems.append(f"metadata {k}: {f(k)!r}, expected {v!r}")
    toks, types = f("tokenizer.ggml.tokens"), f("tokenizer.ggml.token_type")
    if len(toks) != N_VOCAB or toks[:4] != SPECIALS or toks[-1] != f"[PAD{N_VOCAB - 1}]":
        problems.append(f"tokens: {len(toks)} {toks[:4]} {toks[-1]}")
    if types[:5] != [3, 3, 3, 3, 1] or types[-1] != 5:
        problems.append(f"token types: {types[:5]} ... {types[-1]}")
    for p in problems:
        print(p)
    print(f"{label}: {'OK' if not problems else 'MISMATCH'}")
    return 1 if problems else 0


def llama_logits(out_path):
    """llama.cpp's logits over TOKENS for OUT.gguf, every position, as JSON on stdout."""
    from llama_cpp import Llama

    llm = Llama(model_path=out_path, n_ctx=64, n_threads=1, n_threads_batch=1, logits_all=True, verbose=False)
    llm.eval(TOKENS)
    rows = np.array(llm.scores[:len(TOKENS)], dtype=np.float32)
    print(json.dumps({"tokens": TOKENS, "n_vocab": int(llm.n_vocab()), "logits": rows.tolist()}))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[3] == "--check":
        sys.exit(check(Path(sys.argv[1]), sys.argv[2], sys.argv[4]))
    if len(sys.argv) == 5 and sys.argv[3] == "--llama-logits":
        sys.exit(llama_logits(sys.argv[4]))
    make(Path(sys.argv[1]), sys.argv[2])

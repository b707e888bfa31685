#!/usr/bin/env python3
"""Writes a GGUF model (default: models/SmolLM2-135M-Instruct.Q4_1.gguf) out as a Hugging Face F16
checkpoint folder, so `wisp quantize FOLDER ...` is exercised on real weights:

  config.json            LlamaForCausalLM / Qwen2ForCausalLM / Gemma3ForCausalLM hyper-parameters
                         from the GGUF keys
  model.safetensors      every tensor dequantized by the `gguf` package, cast to float16, under its
                         HF name; llama's Q/K rows put back into HF's order (the inverse of the
                         reorder llama.cpp's converter applies); gemma's norms stored as w - 1 in
                         float32 (the GGUF holds 1 + w)
  tokenizer.json         built with the HF `tokenizers` package: byte-level BPE from the GGUF
                         vocabulary and merges, or (gemma) a Unigram model with the GGUF scores
  tokenizer.model        (gemma only) the SentencePiece model, written with sentencepiece's own
                         protobuf classes from the GGUF tokens, scores and types
  tokenizer_config.json  special tokens, add_bos/add_eos and the chat template

Usage: python3 scripts/export_hf_f16.py OUT_DIR [--gguf FILE]   (needs numpy, gguf, safetensors,
tokenizers; sentencepiece and protobuf for gemma3). Byte-level BPE vocabularies with the "smollm"
or "gpt-2" pre-tokenizer, or SentencePiece ("llama") vocabularies.
"""

import argparse
import json
from pathlib import Path

import numpy as np
import gguf
from safetensors.numpy import save_file
from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

ROOT = Path(__file__).resolve().parent.parent


def field(reader, key, default=None):
    f = reader.fields.get(key)
    return default if f is None else f.contents()


GEMMA_NORMS = {"attn_norm.weight": "input_layernorm.weight",
               "post_attention_norm.weight": "post_attention_layernorm.weight",
               "ffn_norm.weight": "pre_feedforward_layernorm.weight",
               "post_ffw_norm.weight": "post_feedforward_layernorm.weight",
               "attn_q_norm.weight": "self_attn.q_norm.weight", "attn_k_norm.weight": "self_attn.k_norm.weight"}


def hf_name(gguf_name, arch):
    if gguf_name == "token_embd.weight":
        return "model.embed_tokens.weight"
    if gguf_name == "output_norm.weight":
        return "model.norm.weight"
    if gguf_name == "output.weight":
        return "lm_head.weight"
    _, layer, rest = gguf_name.split(".", 2)
    if arch == "gemma3" and rest in GEMMA_NORMS:
        return f"model.layers.{layer}.{GEMMA_NORMS[rest]}"
    table = {
        "attn_norm.weight": "input_layernorm.weight",
        "ffn_norm.weight": "post_attention_layernorm.weight",
        "attn_q.weight": "self_attn.q_proj.weight",
        "attn_k.weight": "self_attn.k_proj.weight",
        "attn_v.weight": "self_attn.v_proj.weight",
        "attn_output.weight": "self_attn.o_proj.weight",
        "attn_q.bias": "self_attn.q_proj.bias",
        "attn_k.bias": "self_attn.k_proj.bias",
        "attn_v.bias": "self_attn.v_proj.bias",
        "ffn_gate.weight": "mlp.gate_proj.weight",
        "ffn_up.weight": "mlp.up_proj.weight",
        "ffn_down.weight": "mlp.down_proj.weight",
    }
    return f"model.layers.{layer}.{table[rest]}"


def unpermute(w, heads):
    """GGUF (llama) row order -> HF row order: each head's rows go from (pair, 2) to (2, pair)."""
    rows = w.shape[0]
    return w.reshape(heads, rows // heads // 2, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir")
    ap.add_argument("--gguf", default=str(ROOT / "models" / "SmolLM2-135M-Instruct.Q4_1.gguf"))
    args = ap.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    r = gguf.GGUFReader(args.gguf)
    arch = field(r, "general.architecture")
    if arch not in ("llama", "qwen2", "gemma3"):
        raise SystemExit(f"{args.gguf}: architecture {arch} not handled by this script (llama, qwen2, gemma3)")
    k = lambda key, d=None: field(r, f"{arch}.{key}", d)
    n_head, n_head_kv = int(k("attention.head_count")), int(k("attention.head_count_kv", k("attention.head_count")))

    tensors = {}
    for t in r.tensors:
        w = gguf.quants.dequantize(t.data, t.tensor_type).astype(np.float32)
        if arch == "llama" and t.name.endswith("attn_q.weight"):
            w = unpermute(w, n_head)
        elif arch == "llama" and t.name.endswith("attn_k.weight"):
            w = unpermute(w, n_head_kv)
        if arch == "gemma3" and t.name.endswith("norm.weight"):
            tensors[hf_name(t.name, arch)] = np.ascontiguousarray(w - np.float32(1))
            continue
        tensors[hf_name(t.name, arch)] = np.ascontiguousarray(w.astype(np.float16))
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})

    tokens = [str(x) for x in field(r, "tokenizer.ggml.tokens")]
    types = [int(x) for x in field(r, "tokenizer.ggml.token_type")]
    bos, eos = field(r, "tokenizer.ggml.bos_token_id"), field(r, "tokenizer.ggml.eos_token_id")
    config = {
        "architectures": [{"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM",
                           "gemma3": "Gemma3ForCausalLM"}[arch]],
        "model_type": "gemma3_text" if arch == "gemma3" else arch,
        "hidden_size": int(k("embedding_length")),
        "intermediate_size": int(k("feed_forward_length")),
        "num_hidden_layers": int(k("block_count")),
        "num_attention_heads": n_head,
        "num_key_value_heads": n_head_kv,
        "max_position_embeddings": int(k("context_length")),
        "rms_norm_eps": float(k("attention.layer_norm_rms_epsilon")),
        "rope_theta": float(k("rope.freq_base", 10000.0)),
        "vocab_size": len(tokens),
        "tie_word_embeddings": "lm_head.weight" not in tensors,
        "bos_token_id": bos,
        "eos_token_id": eos,
        "torch_dtype": "float16",
    }
    if arch == "gemma3":
        config["head_dim"] = int(k("attention.key_length"))
        config["sliding_window"] = int(k("attention.sliding_window"))
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")

    tcfg = {"model_max_length": config["max_position_embeddings"],
            "add_bos_token": bool(field(r, "tokenizer.ggml.add_bos_token", False))}
    if field(r, "tokenizer.ggml.model") == "llama":
        write_sentencepiece(r, out, tokens, types, tcfg)
    else:
        write_bpe(r, out, tokens, types, tcfg, args.gguf)
    for name, key in (("bos", "bos_token_id"), ("eos", "eos_token_id"), ("unk", "unknown_token_id"),
                      ("pad", "padding_token_id")):
        tid = field(r, f"tokenizer.ggml.{key}")
        if tid is not None:
            tcfg[f"{name}_token"] = tokens[int(tid)]
    template = field(r, "tokenizer.chat_template")
    if template is not None:
        tcfg["chat_template"] = str(template)
    (out / "tokenizer_config.json").write_text(json.dumps(tcfg, indent=2, ensure_ascii=False) + "\n")
    print(f"wrote {out}: {len(tensors)} tensors, {len(tokens)} tokens")


def write_sentencepiece(r, out, tokens, types, tcfg):
    from sentencepiece import sentencepiece_model_pb2 as spm  # only needed here

    scores = [float(x) for x in field(r, "tokenizer.ggml.scores")]
    unk = int(field(r, "tokenizer.ggml.unknown_token_id", 0))
    m = spm.ModelProto()
    for i, (t, sc, ty) in enumerate(zip(tokens, scores, types)):
        p = m.pieces.add()
        p.piece, p.score = t, sc
        p.type = spm.ModelProto.SentencePiece.UNKNOWN if i == unk else ty  # GGUF token types use SP's numbers
    m.trainer_spec.model_type = spm.TrainerSpec.BPE
    m.trainer_spec.unk_id = unk
    m.normalizer_spec.add_dummy_prefix = bool(field(r, "tokenizer.ggml.add_space_prefix", True))
    (out / "tokenizer.model").write_bytes(m.SerializeToString())
    tk = Tokenizer(models.Unigram([(t, sc) for t, sc in zip(tokens, scores)], unk_id=unk, byte_fallback=True))
    # add_special_tokens marks everything special, so user-defined tokens go through add_tokens.
    tk.add_special_tokens([AddedToken(t, special=True, normalized=False)
                           for t, ty in zip(tokens, types) if ty == gguf.TokenType.CONTROL])
    tk.add_tokens([AddedToken(t, special=False, normalized=False)
                   for t, ty in zip(tokens, types) if ty == gguf.TokenType.USER_DEFINED])
    tk.save(str(out / "tokenizer.json"))
    tcfg["add_eos_token"] = bool(field(r, "tokenizer.ggml.add_eos_token", False))


def write_bpe(r, out, tokens, types, tcfg, path):
    pre = field(r, "tokenizer.ggml.pre", "gpt-2")
    if field(r, "tokenizer.ggml.model") != "gpt2" or pre not in ("smollm", "gpt-2"):
        raise SystemExit(f"{path}: tokenizer {field(r, 'tokenizer.ggml.model')}/{pre} not handled")
    merges = [tuple(str(m).split(" ", 1)) for m in field(r, "tokenizer.ggml.merges")]
    tk = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tk.pre_tokenizer = (pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
                        if pre == "smollm" else byte_level)
    tk.decoder = decoders.ByteLevel()
    tk.post_processor = processors.ByteLevel(trim_offsets=False)
    tk.add_special_tokens([AddedToken(t, special=True, normalized=False)
                           for t, ty in zip(tokens, types) if ty == gguf.TokenType.CONTROL])
    tk.save(str(out / "tokenizer.json"))
    tcfg["tokenizer_class"] = "GPT2Tokenizer"


if __name__ == "__main__":
    main()

// Small random-weight models written with wisp's GgufWriter, for the tests that need a model file
// but not an oracle: bad input (missing/misshapen tensors, unknown architecture) and session
// mechanics (batching, forking, shared caches), which must agree with wisp's own results exactly.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/block_types.h"
#include "formats/gguf_writer.h"
#include "formats/half.h"

namespace wisp::test {

struct TinySpec {
  std::string arch = "llama";
  std::int64_t n_embd = 64, n_head = 4, n_head_kv = 2, n_ff = 96, n_layer = 2, n_vocab = 100, n_ctx = 2048;
  std::int64_t head_dim = 0;        // 0: n_embd / n_head
  std::int64_t sliding_window = 0;  // gemma3
  bool tied = true;
  std::set<std::string> drop_tensors;
  std::set<std::string> drop_keys;                           // suffixes after "<arch>." or full keys
  std::map<std::string, std::vector<std::int64_t>> reshape;  // name -> ne
  std::set<std::string> as_f16;                              // tensors stored as F16 instead of F32
  std::vector<std::string> extra_tensors;
  unsigned seed = 1;
};

inline std::string write_tiny_model(const TinySpec& s, const std::string& filename) {
  const std::string path = ::testing::TempDir() + filename;
  const bool gemma = s.arch == "gemma3";
  const std::int64_t hd = s.head_dim ? s.head_dim : s.n_embd / s.n_head;
  GgufWriter w;
  auto keep = [&](const std::string& k) { return !s.drop_keys.contains(k) && !s.drop_keys.contains(s.arch + "." + k); };
  if (keep("general.architecture")) w.set_string("general.architecture", s.arch);
  auto u32 = [&](const std::string& k, std::int64_t v) {
    if (keep(k)) w.set_u32(s.arch + "." + k, static_cast<std::uint32_t>(v));
  };
  u32("context_length", s.n_ctx);
  u32("embedding_length", s.n_embd);
  u32("block_count", s.n_layer);
  u32("feed_forward_length", s.n_ff);
  u32("attention.head_count", s.n_head);
  u32("attention.head_count_kv", s.n_head_kv);
  u32("vocab_size", s.n_vocab);
  if (gemma) u32("attention.key_length", hd);
  if (gemma) u32("attention.value_length", hd);
  if (s.sliding_window) u32("attention.sliding_window", s.sliding_window);
  if (keep("attention.layer_norm_rms_epsilon")) w.set_f32(s.arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
  if (keep("rope.freq_base")) w.set_f32(s.arch + ".rope.freq_base", 10000.0f);

  std::mt19937 rng(s.seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Tensor data must outlive write(), called below; moving a vector keeps its buffer in place.
  std::vector<std::vector<std::uint8_t>> store;
  auto add = [&](const std::string& name, std::vector<std::int64_t> ne, float gain, float mean) {
    if (s.drop_tensors.contains(name)) return;
    if (auto it = s.reshape.find(name); it != s.reshape.end()) ne = it->second;
    std::int64_t n = 1;
    for (auto d : ne) n *= d;
    const bool f16 = s.as_f16.contains(name);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n) * (f16 ? 2 : 4));
    for (std::int64_t i = 0; i < n; ++i) {
      const float v = mean + gain * normal(rng) / std::sqrt(static_cast<float>(ne[0]));
      if (f16) {
        const std::uint16_t h = f32_to_f16(v);
        std::memcpy(bytes.data() + 2 * i, &h, 2);
      } else {
        std::memcpy(bytes.data() + 4 * i, &v, 4);
      }
    }
    store.push_back(std::move(bytes));
    const auto type = static_cast<std::uint32_t>(f16 ? GgmlType::kF16 : GgmlType::kF32);
    w.add_tensor(name, type, ne, store.back());
  };
  const std::int64_t d = s.n_embd;
  add("token_embd.weight", {d, s.n_vocab}, std::sqrt(static_cast<float>(d)), 0.0f);
  add("output_norm.weight", {d}, 0.5f, 1.0f);
  if (!s.tied) add("output.weight", {d, s.n_vocab}, 3.0f, 0.0f);
  for (std::int64_t il = 0; il < s.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    add(p + "attn_norm.weight", {d}, 0.5f, 1.0f);
    add(p + "attn_q.weight", {d, s.n_head * hd}, 2.0f, 0.0f);
    add(p + "attn_k.weight", {d, s.n_head_kv * hd}, 2.0f, 0.0f);
    add(p + "attn_v.weight", {d, s.n_head_kv * hd}, 1.0f, 0.0f);
    add(p + "attn_output.weight", {s.n_head * hd, d}, 1.0f, 0.0f);
    add(p + "ffn_norm.weight", {d}, 0.5f, 1.0f);
    add(p + "ffn_gate.weight", {d, s.n_ff}, 2.0f, 0.0f);
    add(p + "ffn_up.weight", {d, s.n_ff}, 1.0f, 0.0f);
    add(p + "ffn_down.weight", {s.n_ff, d}, 1.0f, 0.0f);
    if (gemma) {
      add(p + "attn_q_norm.weight", {hd}, 0.5f, 1.0f);
      add(p + "attn_k_norm.weight", {hd}, 0.5f, 1.0f);
      add(p + "post_attention_norm.weight", {d}, 0.5f, 1.0f);
      add(p + "post_ffw_norm.weight", {d}, 0.5f, 1.0f);
    }
  }
  for (const auto& name : s.extra_tensors) add(name, {d}, 1.0f, 0.0f);
  w.write(path);
  return path;
}

}  // namespace wisp::test

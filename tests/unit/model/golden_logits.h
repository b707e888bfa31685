// Reader for the llama.cpp golden logits written by scripts/gen_golden_logits.py
// (tests/golden/logits/<name>.json and <name>.full.f16).
#pragma once

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/half.h"

namespace wisp::test {

struct GoldenContinuation {
  std::string prompt;
  std::vector<std::int32_t> prompt_tokens;
  std::vector<std::int32_t> tokens;  // llama.cpp's greedy continuation
  std::vector<float> margins;        // its top-1 minus top-2 logit at each step
};

struct GoldenLogits {
  std::string model_path;  // absolute
  // The x86 build of llama.cpp that made them, "avx512" or "avx2": the EngineOptions::exact_isa
  // whose numerics reproduce its bits.
  std::string ggml_isa;
  std::int64_t n_vocab = 0;
  std::vector<std::int32_t> tokens;
  std::vector<std::int32_t> argmax;
  std::vector<std::vector<std::pair<std::int32_t, float>>> top;  // per position, best first
  std::vector<std::int64_t> full_positions;
  std::vector<std::vector<float>> full;  // per full position: n_vocab logits (from float16)
  std::vector<GoldenContinuation> continuations;
};

inline GoldenLogits load_golden_logits(const std::string& name) {
  const std::string dir = std::string(WISP_GOLDEN_DIR) + "/logits/";
  std::ifstream in(dir + name + ".json");
  if (!in) throw std::runtime_error("cannot open " + dir + name + ".json (run scripts/gen_golden_logits.py)");
  const auto j = nlohmann::json::parse(in);
  GoldenLogits g;
  g.model_path = std::string(WISP_SOURCE_DIR) + "/" + j.at("model").get<std::string>();
  g.ggml_isa = j.at("ggml_isa").get<std::string>();
  g.n_vocab = j.at("n_vocab").get<std::int64_t>();
  g.tokens = j.at("tokens").get<std::vector<std::int32_t>>();
  g.argmax = j.at("argmax").get<std::vector<std::int32_t>>();
  for (const auto& pos : j.at("top")) {
    auto& row = g.top.emplace_back();
    for (const auto& e : pos) row.emplace_back(e.at(0).get<std::int32_t>(), e.at(1).get<float>());
  }
  g.full_positions = j.at("full_positions").get<std::vector<std::int64_t>>();
  std::ifstream f(dir + j.at("full_file").get<std::string>(), std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() != g.full_positions.size() * static_cast<std::size_t>(g.n_vocab) * 2) {
    throw std::runtime_error("golden " + name + ": full logits file has the wrong size");
  }
  for (std::size_t p = 0; p < g.full_positions.size(); ++p) {
    auto& row = g.full.emplace_back(static_cast<std::size_t>(g.n_vocab));
    for (std::int64_t i = 0; i < g.n_vocab; ++i) {
      std::uint16_t h;
      std::memcpy(&h, bytes.data() + (p * static_cast<std::size_t>(g.n_vocab) + static_cast<std::size_t>(i)) * 2, 2);
      row[static_cast<std::size_t>(i)] = f16_to_f32(h);
    }
  }
  for (const auto& c : j.at("continuations")) {
    g.continuations.push_back(
        {c.at("prompt").get<std::string>(), c.at("prompt_tokens").get<std::vector<std::int32_t>>(),
         c.at("tokens").get<std::vector<std::int32_t>>(), c.at("margins").get<std::vector<float>>()});
  }
  return g;
}

}  // namespace wisp::test

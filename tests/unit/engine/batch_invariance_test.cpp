// Batch invariance: a sequence's logits are bit for bit the same whether it runs alone or in a
// step with other sequences, at any step boundaries (chunked prefill included), for every
// architecture and KV type, on random-weight models and on the real ones (when fetched). This is
// the engine's promise (include/wisp/engine.h): the solo runs below evaluate the whole prompt in
// one pass and then one token per pass; the batched runs cut the same sequences into random
// chunks and mix them with each other in every step.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "../model/tiny_model.h"
#include "wisp/engine.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace wisp {
namespace {

struct Request {
  std::vector<std::int32_t> prompt;
  std::size_t n_decode = 0;
};

// Greedy continuation: the logits after the prompt, then after each fed-back token.
struct Trace {
  std::vector<std::vector<float>> logits;
  std::vector<std::int32_t> tokens;
};

std::int32_t argmax(std::span<const float> v) {
  return static_cast<std::int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

Trace solo(const std::shared_ptr<const Model>& model, const EngineOptions& eo, const Request& r) {
  auto engine = Engine::create(model, eo);
  Session s(engine);
  Trace t;
  std::span<const float> l = s.eval(r.prompt);
  for (std::size_t i = 0;; ++i) {
    t.logits.emplace_back(l.begin(), l.end());
    t.tokens.push_back(argmax(l));
    if (i == r.n_decode) break;
    l = s.eval(std::span(&t.tokens.back(), 1));
  }
  return t;
}

// All requests in one engine; each step takes a random chunk of every unfinished prompt (or the
// next decode token), requests start at random steps.
std::vector<Trace> batched(const std::shared_ptr<const Model>& model, EngineOptions eo, const std::vector<Request>& rs,
                           unsigned seed) {
  eo.kv_tokens = 0;
  for (const Request& r : rs) eo.kv_tokens += r.prompt.size() + r.n_decode + 16;
  auto engine = Engine::create(model, eo);
  std::mt19937 rng(seed);
  std::vector<Session> ss;
  for (std::size_t i = 0; i < rs.size(); ++i) ss.emplace_back(engine);
  std::vector<Trace> out(rs.size());
  std::vector<std::size_t> fed(rs.size(), 0);  // prompt tokens evaluated
  std::vector<int> start(rs.size());
  for (auto& s : start) s = static_cast<int>(rng() % 4);
  for (int step = 0;; ++step) {
    std::vector<StepEntry> entries;
    std::vector<std::size_t> who;
    std::size_t budget = eo.max_step_tokens;
    for (std::size_t i = 0; i < rs.size(); ++i) {
      const Request& r = rs[i];
      if (step < start[i] || out[i].tokens.size() == r.n_decode + 1 || budget == 0) continue;
      if (fed[i] < r.prompt.size()) {
        const std::size_t left = r.prompt.size() - fed[i];
        const std::size_t n = std::min({left, budget, 1 + static_cast<std::size_t>(rng() % 23)});
        entries.push_back({&ss[i], std::span(r.prompt).subspan(fed[i], n), n == left ? Logits::kLast : Logits::kNone});
        fed[i] += n;
        budget -= n;
      } else {
        entries.push_back({&ss[i], std::span(&out[i].tokens.back(), 1), Logits::kLast});
        budget -= 1;
      }
      who.push_back(i);
    }
    if (entries.empty()) {
      if (step > 8) break;
      continue;
    }
    std::shuffle(entries.begin(), entries.end(), rng);  // row order within a step must not matter either
    engine->step(entries);
    for (const StepEntry& e : entries) {
      const auto i = static_cast<std::size_t>(&*std::find_if(ss.begin(), ss.end(), [&](const Session& s) { return &s == e.session; }) - &ss[0]);
      if (e.logits == Logits::kNone) continue;
      const std::span<const float> l = ss[i].logits();
      out[i].logits.emplace_back(l.begin(), l.end());
      out[i].tokens.push_back(argmax(l));
    }
  }
  return out;
}

std::vector<Request> random_requests(int n, std::int64_t n_vocab, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<Request> rs(static_cast<std::size_t>(n));
  for (Request& r : rs) {
    r.prompt.resize(1 + rng() % 60);
    for (auto& t : r.prompt) t = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(n_vocab));
    r.n_decode = 1 + rng() % 12;
  }
  return rs;
}

void expect_invariant(const std::shared_ptr<const Model>& model, const EngineOptions& eo, int n_requests, unsigned seed) {
  const auto rs = random_requests(n_requests, model->info().n_vocab, seed);
  const auto got = batched(model, eo, rs, seed + 1);
  for (std::size_t i = 0; i < rs.size(); ++i) {
    const Trace want = solo(model, eo, rs[i]);
    ASSERT_EQ(got[i].tokens, want.tokens) << "request " << i;
    ASSERT_EQ(got[i].logits.size(), want.logits.size());
    for (std::size_t k = 0; k < want.logits.size(); ++k) {
      ASSERT_TRUE(got[i].logits[k] == want.logits[k]) << "request " << i << " step " << k << ": logits differ";
    }
  }
}

class TinyInvariance : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

TEST_P(TinyInvariance, BatchedEqualsSoloBitForBit) {
  test::TinySpec s;
  s.arch = std::get<0>(GetParam());
  if (s.arch == "gemma3") {
    s.head_dim = 32;
    s.sliding_window = 8;
    s.n_layer = 3;
  }
  s.tied = s.arch != "qwen2";
  // F16 weights too: their batched (tinyBLAS) and one-token orders differ in ggml.
  s.as_f16 = {"blk.0.ffn_up.weight", "blk.1.attn_q.weight", "blk.0.attn_output.weight"};
  const std::string kv = std::get<1>(GetParam());
  auto model = Model::load(test::write_tiny_model(s, "inv_" + s.arch + "_" + kv + ".gguf"));
  expect_invariant(model, {.n_threads = 2, .kv_type = kv, .max_step_tokens = 64}, 8, 11);
}

INSTANTIATE_TEST_SUITE_P(Architectures, TinyInvariance,
                         ::testing::Combine(::testing::Values("llama", "qwen2", "gemma3"),
                                            ::testing::Values("f16", "q8_0")),
                         [](const auto& p) { return std::string(std::get<0>(p.param)) + "_" + std::get<1>(p.param); });

class RealInvariance : public ::testing::TestWithParam<const char*> {};

TEST_P(RealInvariance, BatchedEqualsSoloBitForBit) {
  const std::string path = std::string(WISP_MODELS_DIR) + "/" + GetParam();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "model not found: " << path;
  expect_invariant(Model::load(path), {.n_threads = 2, .max_step_tokens = 96}, 5, 21);
}

// SmolLM2 (Q4_1: llama) and Gemma 3 (Q4_K_M: repacked Q4_K and tiled Q6_K in ggml's batches).
INSTANTIATE_TEST_SUITE_P(Models, RealInvariance,
                         ::testing::Values("SmolLM2-135M-Instruct.Q4_1.gguf", "gemma-3-270m-q4_k_m.gguf"),
                         [](const auto& p) {
                           std::string n = p.param;
                           std::replace_if(n.begin(), n.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
                           return n;
                         });

// The counter-check: with llama.cpp's batch-dependent orders (exact) batching does change bits
// on the K-quant model, so the test above can tell.
TEST(ExactNumerics, BatchingChangesBitsOnKQuants) {
  const std::string path = std::string(WISP_MODELS_DIR) + "/gemma-3-270m-q4_k_m.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "model not found: " << path;
  auto model = Model::load(path);
  const auto rs = random_requests(3, model->info().n_vocab, 5);
  const EngineOptions eo{.n_threads = 2, .exact = true, .max_step_tokens = 96};
  const auto got = batched(model, eo, rs, 6);
  bool differs = false;
  for (std::size_t i = 0; i < rs.size() && !differs; ++i) {
    const Trace want = solo(model, eo, rs[i]);
    for (std::size_t k = 0; k < want.logits.size() && k < got[i].logits.size(); ++k) differs |= got[i].logits[k] != want.logits[k];
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace wisp

namespace wisp {
namespace {

// What the default numerics are: llama.cpp evaluating one token at a time. A prompt evaluated
// in one pass with the batch-invariant order equals, bit for bit, the same prompt fed one token
// per pass with llama.cpp's exact (batch-dependent) order, whose one-token path is llama.cpp's
// vec_dot order (pinned to llama.cpp's logits by test_parity's greedy continuations).
TEST(InvariantNumerics, EqualLlamaCppsOneTokenAtATime) {
  const std::string path = std::string(WISP_MODELS_DIR) + "/SmolLM2-135M-Instruct.Q4_1.gguf";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "model not found: " << path;
  auto model = Model::load(path);
  std::vector<std::int32_t> toks(48);
  for (std::size_t i = 0; i < toks.size(); ++i) toks[i] = static_cast<std::int32_t>((i * 7919 + 13) % 49152);
  Session inv(model, {.n_ctx = 64, .n_threads = 2});
  const auto all = inv.eval_all(toks);
  Session one(model, {.n_ctx = 64, .n_threads = 2, .exact = true});
  const auto V = static_cast<std::size_t>(model->info().n_vocab);
  for (std::size_t i = 0; i < toks.size(); ++i) {
    const auto l = one.eval(std::span(toks).subspan(i, 1));
    ASSERT_TRUE(std::equal(l.begin(), l.end(), all.begin() + static_cast<std::ptrdiff_t>(i * V))) << "token " << i;
  }
}

}  // namespace
}  // namespace wisp

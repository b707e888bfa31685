// Shared by the scheduler's tests: a tiny random model with a toy vocabulary, a harness that
// records what each request's callback saw, and the solo greedy run every batched result must equal.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "../model/tiny_model.h"
#include "engine/engine_state.h"
#include "engine/scheduler.h"
#include "tokenizer/byte_level.h"

namespace wisp::test {

inline constexpr TokenId kEos = 99;

// 100 tokens: 94 printable ASCII characters, the two bytes of "é" (C3 A9), three more letters,
// and an end-of-sequence control token.
inline Tokenizer toy_tokenizer() {
  Vocab v;
  v.model = VocabModel::kBytePairGpt2;
  v.pre = "gpt-2";
  ByteLevelAlphabet alphabet;
  for (int i = 0; i < 94; ++i) v.tokens.push_back(alphabet.spelling(static_cast<std::uint8_t>('!' + i)));
  v.tokens.push_back(alphabet.spelling(0xC3));
  v.tokens.push_back(alphabet.spelling(0xA9));
  for (const char* t : {"xy", "zz", "qq"}) v.tokens.emplace_back(t);
  v.tokens.emplace_back("<eos>");
  v.types.assign(v.tokens.size(), TokenType::kNormal);
  v.types[kEos] = TokenType::kControl;
  v.eos = kEos;
  return Tokenizer(std::move(v));
}

inline std::shared_ptr<const Model> tiny_model(const std::string& arch = "llama") {
  TinySpec s;
  s.arch = arch;
  return Model::load(write_tiny_model(s, "sched_" + arch + ".gguf"));
}

inline std::vector<TokenId> tokens(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<TokenId> t(n);
  for (auto& x : t) x = static_cast<TokenId>(rng() % 94);
  return t;
}

inline SamplerParams greedy() {
  SamplerParams p;
  p.temperature = 0;
  return p;
}

// What a request's callback saw.
struct Outcome {
  std::vector<TokenId> tokens;
  std::string text;
  bool finished = false;
  FinishReason reason = FinishReason::kLength;
  std::size_t n_cached = 0;
  std::vector<std::uint64_t> token_steps;  // scheduler step at which each token arrived
};

struct Harness {
  std::shared_ptr<const Model> model = tiny_model();
  Tokenizer tok = toy_tokenizer();
  std::shared_ptr<Engine> engine;
  std::unique_ptr<Scheduler> sched;
  std::map<RequestId, Outcome> out;

  Harness(std::size_t kv_tokens, SchedulerOptions so = {}, std::uint32_t block = 16) {
    engine = Engine::create(model, {.n_threads = 2, .kv_tokens = kv_tokens, .block_size = block});
    sched = std::make_unique<Scheduler>(engine, tok, so);
  }
  RequestId submit(RequestParams p) {
    return sched->submit(std::move(p), [this](const RequestEvent& e) {
      Outcome& o = out[e.id];
      if (e.token >= 0) {
        o.tokens.push_back(e.token);
        o.token_steps.push_back(sched->stats().steps);
      }
      o.text += e.text;
      o.n_cached = e.n_cached;
      if (e.finished) {
        o.finished = true;
        o.reason = e.reason;
      }
    });
  }
  const BlockAllocator& alloc() const { return detail::engine_state(*engine).pool.allocator(); }
};

// The same request alone, through a Session: the reference for every batched result.
inline std::vector<TokenId> solo_greedy(const std::shared_ptr<const Model>& model, const std::vector<TokenId>& prompt,
                                        std::size_t max_tokens) {
  Session s(model, {.n_ctx = 512, .n_threads = 1});
  std::vector<TokenId> got;
  std::span<const float> l = s.eval(prompt);
  for (;;) {
    const auto t = static_cast<TokenId>(std::max_element(l.begin(), l.end()) - l.begin());
    got.push_back(t);
    if (got.size() == max_tokens) break;
    l = s.eval(std::span(&got.back(), 1));
  }
  return got;
}

inline RequestParams req(std::vector<TokenId> prompt, std::size_t max_tokens) {
  RequestParams p;
  p.prompt = std::move(prompt);
  p.max_tokens = max_tokens;
  p.sampling = greedy();
  p.ignore_eos = true;
  return p;
}

}  // namespace wisp::test

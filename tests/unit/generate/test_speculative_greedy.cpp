// Greedy speculative decoding gives the plain decode's tokens, token for token, on real models
// (SmolLM2, a llama; Gemma 3), for prompt lookup and for a draft model (the target's own Q4_0
// copy), over 22 prompts: quote-heavy ones where guesses are kept and open ones where they are
// mostly rejected. The oracle is the plain one-token-per-pass loop. Also: the session ends holding
// what the plain loop leaves, a chat over speculation answers as a plain chat does, and seeded
// sampling with speculation repeats itself.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "generate/draft_model.h"
#include "generate/prompt_lookup.h"
#include "generate/speculative.h"
#include "spec_models.h"
#include "wisp/conversation.h"
#include "wisp/generate.h"

namespace wisp {
namespace {

const std::vector<std::string> kPrompts = {
    "Repeat this sentence exactly: The quick brown fox jumps over the lazy dog near the river bank.\n"
    "The quick brown fox",
    "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n\ndef mul(a, b):\n",
    "Text: Paris is the capital of France. Berlin is the capital of Germany.\nRewrite: Paris is",
    "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,",
    "for i in range(10):\n    print(i)\nfor j in range(10):\n",
    "Monday, Tuesday, Wednesday, Thursday, Friday. Monday, Tuesday,",
    "The cat sat on the mat. The dog sat on the log. The bird sat on the",
    "Summarize: Water boils at 100 degrees Celsius at sea level. Summary: Water boils at",
    "<html><body><p>Hello</p><p>World</p><p>",
    "Fix the typo: 'Teh weather is nice today.' Corrected: 'The weather",
    "a b c d e f g a b c d e f g a b",
    "Once upon a time",
    "The best way to learn a language is",
    "Q: What is the capital of Italy?\nA:",
    "Write a haiku about autumn:",
    "Explain photosynthesis in one sentence:",
    "My favourite food is",
    "In 1969, the first humans",
    "How do I sort a list in Python?",
    "The three primary colours are",
    "Translate to French: Good morning, how are you?",
    "int main() {\n    int x = 0;\n    x = x + 1;\n    x = x + 1;\n",
};

constexpr std::size_t kTokens = 20;

std::vector<TokenId> prompt_ids(const test::SpecModel& m, const std::string& text) {
  return m.tokenizer->tokenize(text, {.add_special = true, .parse_special = false});
}

GenerationResult run_one(const test::SpecModel& m, const std::string& text, Speculator* spec, std::size_t* n_past) {
  Session s(m.engine, {.n_ctx = 512});
  Sampler greedy({.temperature = 0.0f});
  GenerationOptions o;
  o.n_predict = kTokens;
  o.speculator = spec;
  const std::vector<TokenId> ids = prompt_ids(m, text);
  GenerationResult r = generate(s, *m.tokenizer, greedy, ids, o);
  if (n_past != nullptr) *n_past = s.n_past();
  return r;
}

const std::vector<std::vector<TokenId>>& plain_outputs(const test::SpecModel& m) {
  static std::map<const test::SpecModel*, std::vector<std::vector<TokenId>>> cache;
  auto& out = cache[&m];
  if (out.empty()) {
    for (const std::string& p : kPrompts) out.push_back(run_one(m, p, nullptr, nullptr).tokens);
  }
  return out;
}

void expect_same_as_plain(const char* file, std::unique_ptr<Drafter> drafter) {
  const test::SpecModel* m = test::spec_model(file);
  if (m == nullptr) GTEST_SKIP() << "model not fetched: " << file;
  const auto& plain = plain_outputs(*m);
  // One speculator across every prompt: its record and the draft's cache are cut back each time.
  Speculator spec(std::move(drafter), {.draft_max = 8, .draft_start = 4});
  GenerationStats total;
  for (std::size_t i = 0; i < kPrompts.size(); ++i) {
    std::size_t n_past = 0;
    const GenerationResult r = run_one(*m, kPrompts[i], &spec, &n_past);
    EXPECT_EQ(r.tokens, plain[i]) << "prompt " << i << ": " << kPrompts[i];
    EXPECT_EQ(n_past, prompt_ids(*m, kPrompts[i]).size() + r.tokens.size() - 1) << "prompt " << i;
    total.n_drafted += r.stats.n_drafted;
    total.n_draft_accepted += r.stats.n_draft_accepted;
  }
  // Both paths of the verification ran: guesses kept and guesses rejected.
  EXPECT_GT(total.n_draft_accepted, 0u);
  EXPECT_LT(total.n_draft_accepted, total.n_drafted);
  std::printf("%s: drafted %zu, kept %zu\n", file, total.n_drafted, total.n_draft_accepted);
}

std::unique_ptr<Drafter> lookup() { return std::make_unique<PromptLookupDrafter>(3, 1); }
std::unique_ptr<Drafter> draft_of(const char* file) {
  const test::SpecModel* m = test::spec_model(file);
  if (m == nullptr) return lookup();  // the test skips anyway
  return std::make_unique<DraftModelDrafter>(m->draft, SessionOptions{.n_ctx = 512, .n_threads = 2},
                                             SamplerParams{.temperature = 0.0f}, 0.0f);
}

// Both drafting modes of a model in one test case: ctest runs each case in a process of its own,
// and the plain baseline (22 prompts decoded token by token) is the larger part of the cost.
TEST(SpeculativeGreedy, LlamaLookupAndDraftEqualPlain) {
  {
    SCOPED_TRACE("prompt lookup");
    expect_same_as_plain(test::kLlama, lookup());
  }
  SCOPED_TRACE("draft model");
  expect_same_as_plain(test::kLlama, draft_of(test::kLlama));
}
TEST(SpeculativeGreedy, GemmaLookupAndDraftEqualPlain) {
  {
    SCOPED_TRACE("prompt lookup");
    expect_same_as_plain(test::kGemma, lookup());
  }
  SCOPED_TRACE("draft model");
  expect_same_as_plain(test::kGemma, draft_of(test::kGemma));
}

TEST(SpeculativeGreedy, ChatAnswersAsWithoutSpeculation) {
  const test::SpecModel* m = test::spec_model(test::kLlama);
  if (m == nullptr) GTEST_SKIP() << "model not fetched";
  const std::vector<std::string> turns = {"Repeat after me: red, green, blue, red, green, blue.",
                                          "Now say it again, twice."};
  const auto source = detail::model_state(*m->target).file.get_string_opt("tokenizer.chat_template");
  ASSERT_TRUE(source.has_value()) << "SmolLM2's GGUF carries its chat template";
  auto chat = [&](Speculator* spec) {
    Session s(m->engine, {.n_ctx = 1024});
    Conversation c(s, *m->tokenizer, ChatTemplate::parse(*source));
    Sampler greedy({.temperature = 0.0f});
    std::vector<std::vector<TokenId>> out;
    for (const std::string& t : turns) {
      GenerationOptions o;
      o.n_predict = 40;
      o.speculator = spec;
      out.push_back(c.reply(t, greedy, o, 64).generation.tokens);
    }
    return out;
  };
  Speculator spec(lookup(), {});
  EXPECT_EQ(chat(&spec), chat(nullptr));
  EXPECT_GT(spec.stats().n_accepted, 0u);
}

TEST(SpeculativeSampling, SeededRunsRepeat) {
  const test::SpecModel* m = test::spec_model(test::kLlama);
  if (m == nullptr) GTEST_SKIP() << "model not fetched";
  const SamplerParams sp{.temperature = 0.8f, .seed = 1234};
  auto run = [&](bool use_draft) {
    std::unique_ptr<Drafter> d = use_draft ? std::unique_ptr<Drafter>(std::make_unique<DraftModelDrafter>(
                                                 m->draft, SessionOptions{.n_ctx = 512, .n_threads = 2}, sp, 0.0f))
                                           : lookup();
    Speculator spec(std::move(d), {.seed = sp.seed});
    Session s(m->engine, {.n_ctx = 512});
    Sampler sampler(sp);
    GenerationOptions o;
    o.n_predict = kTokens;
    o.speculator = &spec;
    return generate(s, *m->tokenizer, sampler, prompt_ids(*m, kPrompts[0]), o).tokens;
  };
  for (bool use_draft : {false, true}) {
    const auto a = run(use_draft);
    EXPECT_GT(a.size(), 1u);
    EXPECT_EQ(a, run(use_draft)) << (use_draft ? "draft" : "lookup");
  }
}

}  // namespace
}  // namespace wisp

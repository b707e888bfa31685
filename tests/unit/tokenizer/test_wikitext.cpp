// WikiText-2 test (1.3 MB, ../shared/data) through each tokenizer: the id sequence must equal
// llama.cpp's (token count and FNV-1a digest recorded by scripts/gen_golden_tokenizer.py), it must
// detokenize back to the text, and the time it took is printed (a benchmark figure, not a limit).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "../formats/fnv1a.h"
#include "tokenizer_test_util.h"

namespace wisp::test {
namespace {

// WISP_WIKITEXT names the file where the checkout does not sit beside shared/ (a git worktree, a
// clone elsewhere); otherwise the project's evaluation text beside the source tree.
std::string wikitext_path() {
  if (const char* env = std::getenv("WISP_WIKITEXT"); env != nullptr && *env != '\0') return env;
  return std::string(WISP_SOURCE_DIR) + "/../shared/data/wikitext-2-test.txt";
}

struct WikiCase {
  const char* golden;
  const char* file;
  const char* pre;
  bool spm_as_bpe = false;  // model_tokenizer's SentencePiece-as-BPE vocabulary
};

class WikiText : public ::testing::TestWithParam<WikiCase> {};

TEST_P(WikiText, MatchesLlamaCppAndRoundTrips) {
  WISP_REQUIRE_MODEL(GetParam().file);
  if (!std::filesystem::exists(wikitext_path()))
    GTEST_SKIP() << wikitext_path() << " is absent (WISP_WIKITEXT names it); skipping";
  const auto golden = read_json(golden_path(std::string(GetParam().golden) + ".json"));
  ASSERT_TRUE(golden.contains("wikitext")) << "golden data has no WikiText digest: rerun the script";
  std::ifstream in(wikitext_path(), std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  const Tokenizer& tok = model_tokenizer(GetParam().file, GetParam().pre, GetParam().spm_as_bpe);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<TokenId> ids = tok.tokenize(text, {.add_special = false, .parse_special = false});
  const auto t1 = std::chrono::steady_clock::now();
  const std::string back = tok.detokenize(ids);
  const auto t2 = std::chrono::steady_clock::now();

  Fnv1a h;
  h.update(ids.data(), ids.size() * sizeof(TokenId));  // little-endian int32, as the script hashes
  EXPECT_EQ(ids.size(), golden["wikitext"]["n_tokens"].get<std::size_t>());
  EXPECT_EQ(h.hex(), golden["wikitext"]["fnv1a"].get<std::string>());
  EXPECT_TRUE(back == text) << "WikiText does not round-trip through detokenize";

  const double enc = std::chrono::duration<double>(t1 - t0).count();
  const double dec = std::chrono::duration<double>(t2 - t1).count();
  std::printf("  %s: %zu bytes -> %zu tokens, tokenize %.3f s (%.1f MB/s), detokenize %.3f s\n", GetParam().golden,
              text.size(), ids.size(), enc, text.size() / enc / 1e6, dec);
}

INSTANTIATE_TEST_SUITE_P(
    Models, WikiText,
    ::testing::Values(WikiCase{"smollm2-135m", kSmolLm2File, ""}, WikiCase{"gemma3-270m", kGemma3File, ""},
                      WikiCase{"smollm2-vocab-pre-llama-bpe", kSmolLm2File, "llama-bpe"},
                      WikiCase{"smollm2-vocab-pre-qwen2", kSmolLm2File, "qwen2"},
                      WikiCase{"smollm2-vocab-pre-gpt-2", kSmolLm2File, "gpt-2"},
                      WikiCase{"smollm2-vocab-pre-gpt-4o", kSmolLm2File, "gpt-4o"},
                      WikiCase{"smollm2-vocab-pre-default", kSmolLm2File, "default"},
                      WikiCase{"smollm2-vocab-pre-tekken", kSmolLm2File, "tekken"},
                      WikiCase{"smollm2-vocab-pre-qwen35", kSmolLm2File, "qwen35"},
                      WikiCase{"smollm2-vocab-pre-bailingmoe", kSmolLm2File, "bailingmoe"},
                      WikiCase{"smollm2-vocab-pre-laguna", kSmolLm2File, "laguna"},
                      WikiCase{"smollm2-vocab-pre-ufakzeka", kSmolLm2File, "ufakzeka"},
                      WikiCase{"smollm2-vocab-pre-seed-coder", kSmolLm2File, "seed-coder"},
                      WikiCase{"smollm2-vocab-pre-minicpm5", kSmolLm2File, "minicpm5"},
                      WikiCase{"smollm2-vocab-pre-deepseek-v3", kSmolLm2File, "deepseek-v3"},
                      WikiCase{"smollm2-vocab-pre-falcon", kSmolLm2File, "falcon"},
                      WikiCase{"smollm2-vocab-pre-spark2_5", kSmolLm2File, "spark2_5"},
                      WikiCase{"smollm2-vocab-pre-bloom", kSmolLm2File, "bloom"},
                      WikiCase{"smollm2-vocab-pre-viking", kSmolLm2File, "viking"},
                      WikiCase{"smollm2-vocab-pre-deepseek-coder", kSmolLm2File, "deepseek-coder"},
                      WikiCase{"smollm2-vocab-pre-exaone-moe", kSmolLm2File, "exaone-moe"},
                      WikiCase{"smollm2-vocab-pre-jais-2", kSmolLm2File, "jais-2"},
                      WikiCase{"smollm2-vocab-pre-superbpe", kSmolLm2File, "superbpe"},
                      WikiCase{"smollm2-vocab-pre-tiny_aya", kSmolLm2File, "tiny_aya"},
                      WikiCase{"smollm2-vocab-pre-youtu", kSmolLm2File, "youtu"},
                      WikiCase{"smollm2-vocab-pre-kimi-k2", kSmolLm2File, "kimi-k2"},
                      WikiCase{"smollm2-vocab-pre-afmoe", kSmolLm2File, "afmoe"},
                      WikiCase{"smollm2-vocab-pre-deepseek-llm", kSmolLm2File, "deepseek-llm"},
                      WikiCase{"smollm2-vocab-pre-granite-embed-multi-97m", kSmolLm2File, "granite-embed-multi-97m"},
                      WikiCase{"smollm2-vocab-pre-chameleon", kSmolLm2File, "chameleon"},
                      WikiCase{"gemma3-vocab-bpe-gemma4", kGemma3File, "gemma4", true},
                      WikiCase{"gemma3-vocab-bpe-sarvam-moe", kGemma3File, "sarvam-moe", true}),
    [](const auto& info) {
      std::string n = info.param.golden;
      for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

}  // namespace
}  // namespace wisp::test

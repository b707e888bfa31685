// Each pre-tokenizer on a few readable examples. The expectations for gpt2, smollm, llama3 and
// qwen2 are what Python's `regex` module gives for the tokenizer.json regexes; the golden corpus
// and WikiText tests check all of them against llama.cpp at scale.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "wisp/error.h"

namespace wisp {
namespace {

std::vector<std::string> words(PreTokenizerKind kind, const std::string& text) {
  std::vector<WordSpan> spans;
  pre_tokenize(kind, text, spans);
  std::vector<std::string> out;
  std::uint32_t covered = 0;
  for (const WordSpan& w : spans) {
    EXPECT_EQ(w.begin, covered) << "words must tile the text";
    covered = w.end;
    out.push_back(text.substr(w.begin, w.end - w.begin));
  }
  EXPECT_EQ(covered, text.size());
  return out;
}

using W = std::vector<std::string>;

TEST(PreTokenizer, Gpt2) {
  EXPECT_EQ(words(PreTokenizerKind::kGpt2, "Hello world's  end\n\n x"),
            (W{"Hello", " world", "'s", " ", " end", "\n\n", " x"}));
  EXPECT_EQ(words(PreTokenizerKind::kGpt2, "I'M 12345 (ok)!!\r\n\tdone"),
            (W{"I", "'", "M", " 12345", " (", "ok", ")!!", "\r\n", "\t", "done"}));
  EXPECT_EQ(words(PreTokenizerKind::kGpt2, "  caf\u00e9 \u4e2d\u6587 \U0001F600 x\u00b2"),
            (W{" ", " caf\u00e9", " \u4e2d\u6587", " \U0001F600", " x", "\u00b2"}));
}

TEST(PreTokenizer, SmolLmIsolatesEveryDigit) {
  EXPECT_EQ(words(PreTokenizerKind::kSmollm, "I'M 12345 (ok)!!\r\n\tdone"),
            (W{"I", "'", "M", " ", "1", "2", "3", "4", "5", " (", "ok", ")!!", "\r\n", "\t", "done"}));
  EXPECT_EQ(words(PreTokenizerKind::kSmollm, "x\u0663\u0664y"), (W{"x", "\u0663", "\u0664", "y"}));
}

TEST(PreTokenizer, Llama3) {
  EXPECT_EQ(words(PreTokenizerKind::kLlama3, "Hello world's  end\n\n x"),
            (W{"Hello", " world", "'s", " ", " end", "\n\n", " x"}));
  // Case-insensitive contractions, digits in threes, punctuation keeps its line break, and a
  // single non-letter (here a tab) glues to the following word.
  EXPECT_EQ(words(PreTokenizerKind::kLlama3, "I'M 12345 (ok)!!\r\n\tdone"),
            (W{"I", "'M", " ", "123", "45", " (", "ok", ")!!\r\n", "\tdone"}));
}

TEST(PreTokenizer, Qwen2SplitsDigitsOneByOne) {
  EXPECT_EQ(words(PreTokenizerKind::kQwen2, "I'M 12345 (ok)!!\r\n\tdone"),
            (W{"I", "'M", " ", "1", "2", "3", "4", "5", " (", "ok", ")!!\r\n", "\tdone"}));
}

TEST(PreTokenizer, LlamaCppDefault) {
  // Punctuation runs first, then gpt2, then number runs, then ASCII digit triples.
  EXPECT_EQ(words(PreTokenizerKind::kDefault, "I'M 12345 (ok)!!\r\n\tdone"),
            (W{"I", "'", "M", " ", "123", "45", " ", "(", "ok", ")!!", "\r\n", "\t", "done"}));
}

TEST(PreTokenizer, TrailingAndRepeatedWhitespace) {
  for (auto kind : {PreTokenizerKind::kGpt2, PreTokenizerKind::kLlama3}) {
    EXPECT_EQ(words(kind, "a   "), (W{"a", "   "}));
    EXPECT_EQ(words(kind, "a   b"), (W{"a", "  ", " b"}));
    EXPECT_EQ(words(kind, " "), (W{" "}));
  }
  EXPECT_EQ(words(PreTokenizerKind::kLlama3, "a \n \n b"), (W{"a", " \n \n", " b"}));
  EXPECT_EQ(words(PreTokenizerKind::kGpt2, "a \n \n b"), (W{"a", " \n \n", " b"}));
}

TEST(PreTokenizer, EmptyTextHasNoWords) { EXPECT_TRUE(words(PreTokenizerKind::kGpt2, "").empty()); }

TEST(PreTokenizer, NamesMapLikeLlamaCpp) {
  EXPECT_EQ(pre_tokenizer_for("smollm").kind, PreTokenizerKind::kSmollm);
  EXPECT_EQ(pre_tokenizer_for("llama-bpe").kind, PreTokenizerKind::kLlama3);
  EXPECT_TRUE(pre_tokenizer_for("llama-bpe").ignore_merges);
  EXPECT_EQ(pre_tokenizer_for("qwen2").kind, PreTokenizerKind::kQwen2);
  EXPECT_EQ(pre_tokenizer_for("gpt-2").kind, PreTokenizerKind::kGpt2);
  EXPECT_EQ(pre_tokenizer_for("gpt2").kind, PreTokenizerKind::kGpt2);
  EXPECT_EQ(pre_tokenizer_for("").kind, PreTokenizerKind::kDefault);
  EXPECT_EQ(pre_tokenizer_for("default").kind, PreTokenizerKind::kDefault);
  try {
    pre_tokenizer_for("klingon-bpe");
    FAIL() << "an unknown pre-tokenizer must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'klingon-bpe'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wisp

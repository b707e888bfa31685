// TokenStreamDecoder: streamed output is always whole UTF-8 characters, whatever the token
// boundaries, and adds up to the full detokenization.
#include <gtest/gtest.h>

#include "tokenizer/stream_decoder.h"
#include "tokenizer/unicode.h"
#include "tokenizer_test_util.h"

namespace wisp::test {
namespace {

bool valid_utf8(const std::string& s) { return !utf8_find_invalid(s).has_value(); }

// Streams ids one by one; checks every chunk is whole characters; returns the chunks.
std::vector<std::string> stream(const Tokenizer& tok, const std::vector<TokenId>& ids) {
  TokenStreamDecoder dec(tok);
  std::vector<std::string> chunks;
  for (TokenId id : ids) {
    chunks.push_back(dec.push(id));
    EXPECT_TRUE(valid_utf8(chunks.back())) << "chunk after token " << id << " splits a character";
  }
  EXPECT_EQ(dec.pending_bytes(), 0u);
  EXPECT_EQ(dec.finish(), "");
  return chunks;
}

std::string joined(const std::vector<std::string>& chunks) {
  std::string s;
  for (const auto& c : chunks) s += c;
  return s;
}

TEST(TokenStreamDecoder, CjkSplitIntoByteTokensOnGemma) {
  WISP_REQUIRE_MODEL(kGemma3File);
  const Tokenizer& tok = model_tokenizer(kGemma3File);
  const std::string text = "\xE9\xBE\x98\xE9\xBD\x89";  // two rare CJK characters, three byte tokens each
  const auto ids = tok.tokenize(text, {.add_special = false});
  ASSERT_EQ(ids.size(), 6u) << "expected byte fallback: " << ids_string(ids);
  EXPECT_EQ(stream(tok, ids), (std::vector<std::string>{"", "", "\xE9\xBE\x98", "", "", "\xE9\xBD\x89"}));
}

TEST(TokenStreamDecoder, EmojiSplitIntoByteTokensOnGemma) {
  WISP_REQUIRE_MODEL(kGemma3File);
  const Tokenizer& tok = model_tokenizer(kGemma3File);
  const std::string text = "ok \xF0\x9F\xAB\xA8!";  // U+1FAE8, outside Gemma's vocabulary
  const auto ids = tok.tokenize(text, {.add_special = false});
  const auto chunks = stream(tok, ids);
  EXPECT_EQ(joined(chunks), text);
  EXPECT_NE(std::find(chunks.begin(), chunks.end(), "\xF0\x9F\xAB\xA8"), chunks.end())
      << "the emoji should arrive in one piece";
}

TEST(TokenStreamDecoder, EmojiSplitAcrossByteLevelPiecesOnSmolLm2) {
  WISP_REQUIRE_MODEL(kSmolLm2File);
  const Tokenizer& tok = model_tokenizer(kSmolLm2File);
  for (const std::string text : {"\xF0\x9F\x98\x80", "\xE9\xBE\x98\xE9\xBD\x89",
                                 "\xF0\x9F\x91\xA8\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA7"}) {
    const auto ids = tok.tokenize(text, {.add_special = false});
    bool split = false;
    for (TokenId id : ids) split |= !valid_utf8(tok.token_to_piece(id));
    EXPECT_TRUE(split) << "test premise: some piece of \"" << text << "\" is a partial character";
    EXPECT_EQ(joined(stream(tok, ids)), text);
  }
}

TEST(TokenStreamDecoder, WholeCorpusStreamsToTheDetokenization) {
  const auto corpus = read_json(golden_path("corpus.json"))["strings"].get<std::vector<std::string>>();
  for (const char* file : {kSmolLm2File, kGemma3File}) {
    if (!model_present(file)) continue;
    const Tokenizer& tok = model_tokenizer(file);
    for (const std::string& text : corpus) {
      const auto ids = tok.tokenize(text, {.add_special = true, .parse_special = true});
      EXPECT_EQ(joined(stream(tok, ids)), tok.detokenize(ids)) << file << ": \"" << escaped(text) << "\"";
    }
  }
}

TEST(TokenStreamDecoder, HoldsPartialSequencesAndReplacesDeadEnds) {
  // push_bytes needs no vocabulary; any tokenizer will do, so build the smallest one.
  Vocab v;
  v.model = VocabModel::kBytePairGpt2;
  v.pre = "gpt2";
  v.tokens = {"a"};
  const Tokenizer tok(v);
  TokenStreamDecoder dec(tok);
  EXPECT_EQ(dec.push_bytes("x\xE2\x82"), "x");
  EXPECT_EQ(dec.pending_bytes(), 2u);
  EXPECT_EQ(dec.push_bytes("\xAC y"), "\xE2\x82\xAC y");
  EXPECT_EQ(dec.push_bytes("\xE2\x82"
                           "A"),
            "\xEF\xBF\xBD"
            "A");                                                     // a lead and continuation, then ASCII: one U+FFFD
  EXPECT_EQ(dec.push_bytes("\x80\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // stray continuation bytes, one each
  EXPECT_EQ(dec.push_bytes("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong: never valid
  EXPECT_EQ(dec.push_bytes("\xF0\x9F"), "");
  EXPECT_EQ(dec.finish(), "\xEF\xBF\xBD");  // the stream ended mid-character
  EXPECT_EQ(dec.pending_bytes(), 0u);
  EXPECT_EQ(dec.push_bytes("\xF0\x9F"), "");
  dec.reset();
  EXPECT_EQ(dec.push_bytes("ok"), "ok");
}

}  // namespace
}  // namespace wisp::test

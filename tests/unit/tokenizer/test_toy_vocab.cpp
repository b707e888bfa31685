// The tokenizer's rules on small hand-built vocabularies (no model file needed): merge order,
// tie-breaking, special-token precedence and on/off parsing, BOS/EOS flags, SentencePiece scores,
// byte fallback and the leading-space rule, invalid input.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tokenizer/byte_level.h"
#include "tokenizer/tokenizer.h"
#include "wisp/error.h"

namespace wisp {
namespace {

using Ids = std::vector<TokenId>;

// Byte-level BPE: ids 0..255 are the single bytes (in byte order), then merged tokens, then specials.
struct ToyBpe {
  Vocab vocab;
  TokenId id(const std::string& spelled) const {
    for (std::size_t i = 0; i < vocab.tokens.size(); ++i)
      if (vocab.tokens[i] == spelled) return static_cast<TokenId>(i);
    ADD_FAILURE() << "no token " << spelled;
    return kNoToken;
  }
};

ToyBpe toy_bpe() {
  ToyBpe t;
  Vocab& v = t.vocab;
  v.model = VocabModel::kBytePairGpt2;
  v.pre = "gpt-2";
  ByteLevelAlphabet alphabet;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(alphabet.spelling(static_cast<std::uint8_t>(b)));
  v.types.assign(256, TokenType::kNormal);
  auto add = [&](const std::string& text, TokenType type = TokenType::kNormal) {
    v.tokens.push_back(text);
    v.types.push_back(type);
  };
  // Rank = position: "h e" first ... "e l" last, so "hello" never goes through "el".
  v.merges = {"h e", "l l", "he ll", "hell o", "\xC4\xA0 w", "\xC4\xA0w o", "e l"};
  for (const char* m : {"he", "ll", "hell", "hello", "\xC4\xA0w", "\xC4\xA0wo", "el"}) add(m);
  add("<|s|>", TokenType::kControl);
  add("<|im_end|>", TokenType::kControl);
  add("<u>", TokenType::kUserDefined);
  add("bcd", TokenType::kUserDefined);
  add("ab", TokenType::kUserDefined);
  v.bos = static_cast<TokenId>(v.tokens.size() - 5);  // <|s|>
  v.eos = static_cast<TokenId>(v.tokens.size() - 4);  // <|im_end|>
  return t;
}

TEST(ToyBpe, MergesLowestRankFirst) {
  ToyBpe t = toy_bpe();
  Tokenizer tok(t.vocab);
  EXPECT_EQ(tok.tokenize("hello", {.add_special = false}), (Ids{t.id("hello")}));
  EXPECT_EQ(tok.tokenize("hell", {.add_special = false}), (Ids{t.id("hell")}));
  EXPECT_EQ(tok.tokenize("hel", {.add_special = false}), (Ids{t.id("he"), 'l'}));
  EXPECT_EQ(tok.tokenize("elo", {.add_special = false}), (Ids{t.id("el"), 'o'}));
  // Equal ranks: the leftmost pair merges first.
  EXPECT_EQ(tok.tokenize("lll", {.add_special = false}), (Ids{t.id("ll"), 'l'}));
  // The space byte is spelled U+0120 and merges like any other symbol.
  EXPECT_EQ(tok.tokenize("hello wo", {.add_special = false}), (Ids{t.id("hello"), t.id("\xC4\xA0wo")}));
}

TEST(ToyBpe, SpecialTokensOnlyWhenAskedUserDefinedAlways) {
  ToyBpe t = toy_bpe();
  Tokenizer tok(t.vocab);
  const TokenId s = t.id("<|s|>");
  EXPECT_EQ(tok.tokenize("<|s|>hello", {.add_special = false, .parse_special = true}), (Ids{s, t.id("hello")}));
  EXPECT_EQ(tok.tokenize("<|s|>hello", {.add_special = false, .parse_special = false}),
            (Ids{'<', '|', 's', '|', '>', t.id("hello")}));
  for (bool parse : {false, true})
    EXPECT_EQ(tok.tokenize("x<u>y", {.add_special = false, .parse_special = parse}), (Ids{'x', t.id("<u>"), 'y'}));
}

TEST(ToyBpe, LongerSpecialTokensClaimTheirTextFirst) {
  // llama.cpp's precedence: "bcd" (longer) is taken before "ab", even though "ab" starts earlier.
  ToyBpe t = toy_bpe();
  Tokenizer tok(t.vocab);
  EXPECT_EQ(tok.tokenize("abcd", {.add_special = false}), (Ids{'a', t.id("bcd")}));
  EXPECT_EQ(tok.tokenize("abab", {.add_special = false}), (Ids{t.id("ab"), t.id("ab")}));
  EXPECT_EQ(tok.tokenize("abcdab", {.add_special = false}), (Ids{'a', t.id("bcd"), t.id("ab")}));
}

TEST(ToyBpe, BosAndEosFollowTheFlags) {
  ToyBpe t = toy_bpe();
  t.vocab.add_bos = true;
  t.vocab.add_eos = true;
  Tokenizer tok(t.vocab);
  EXPECT_EQ(tok.tokenize("hello"), (Ids{tok.bos(), t.id("hello"), tok.eos()}));
  EXPECT_EQ(tok.tokenize("hello", {.add_special = false}), (Ids{t.id("hello")}));
  EXPECT_EQ(tok.tokenize(""), (Ids{tok.bos(), tok.eos()}));
  EXPECT_TRUE(tok.tokenize("", {.add_special = false}).empty());
}

TEST(ToyBpe, AskingForAMissingBosIsAnError) {
  ToyBpe t = toy_bpe();
  t.vocab.add_bos = true;
  t.vocab.bos = kNoToken;
  EXPECT_THROW(Tokenizer{t.vocab}, Error);
}

TEST(ToyBpe, InvalidUtf8IsAnErrorNamingTheOffset) {
  ToyBpe t = toy_bpe();
  Tokenizer tok(t.vocab);
  try {
    tok.tokenize("ok\xC3(");
    FAIL() << "invalid UTF-8 must be rejected";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not valid UTF-8 (byte offset 2)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(tok.tokenize("\xED\xA0\x80"), Error);  // an encoded surrogate
  EXPECT_THROW(tok.tokenize("\xC0\xAF"), Error);      // an overlong '/'
}

TEST(ToyBpe, DetokenizeRendersControlTokensOnlyOnRequest) {
  ToyBpe t = toy_bpe();
  Tokenizer tok(t.vocab);
  const Ids ids = tok.tokenize("<|s|>hello wo<u>\xE2\x82\xAC", {.add_special = false, .parse_special = true});
  EXPECT_EQ(tok.detokenize(ids), "hello wo<u>\xE2\x82\xAC");
  EXPECT_EQ(tok.detokenize(ids, true), "<|s|>hello wo<u>\xE2\x82\xAC");
  EXPECT_EQ(tok.token_to_piece(t.id("\xC4\xA0w")), " w");
  EXPECT_THROW(tok.token_to_piece(static_cast<TokenId>(tok.n_vocab())), Error);
  EXPECT_THROW(tok.token_to_piece(-1), Error);
}

TEST(ToyBpe, EndOfGenerationTokens) {
  ToyBpe t = toy_bpe();
  t.vocab.eos = kNoToken;
  Tokenizer tok(t.vocab);
  EXPECT_TRUE(tok.is_eog(t.id("<|im_end|>")));  // by its text, as llama.cpp does
  EXPECT_FALSE(tok.is_eog(t.id("<|s|>")));
  EXPECT_TRUE(tok.is_control(t.id("<|s|>")));
  EXPECT_FALSE(tok.is_control(t.id("<u>")));
  EXPECT_EQ(tok.find_token("hello"), t.id("hello"));
  EXPECT_EQ(tok.find_token("nope"), kNoToken);
}

TEST(ToyBpe, UnknownPreTokenizerIsAnError) {
  ToyBpe t = toy_bpe();
  t.vocab.pre = "no-such-pre";
  EXPECT_THROW(Tokenizer{t.vocab}, Error);
}

// SentencePiece: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>, then scored pieces.
struct ToySpm {
  Vocab vocab;
  TokenId id(const std::string& text) const {
    for (std::size_t i = 0; i < vocab.tokens.size(); ++i)
      if (vocab.tokens[i] == text) return static_cast<TokenId>(i);
    ADD_FAILURE() << "no token " << text;
    return kNoToken;
  }
  static TokenId byte(unsigned char b) { return 3 + b; }
};

ToySpm toy_spm(float ab_score, float bc_score) {
  ToySpm t;
  Vocab& v = t.vocab;
  v.model = VocabModel::kSentencePiece;
  auto add = [&](const std::string& text, TokenType type, float score) {
    v.tokens.push_back(text);
    v.types.push_back(type);
    v.scores.push_back(score);
  };
  add("<unk>", TokenType::kUnknown, 0);
  add("<s>", TokenType::kControl, 0);
  add("</s>", TokenType::kControl, 0);
  for (int b = 0; b < 256; ++b) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "<0x%02X>", b);
    add(hex, TokenType::kByte, 0);
  }
  const std::string sp = "\xE2\x96\x81";
  add(sp, TokenType::kNormal, -1);
  add("a", TokenType::kNormal, -2);
  add("b", TokenType::kNormal, -2);
  add("c", TokenType::kNormal, -2);
  add(sp + "a", TokenType::kNormal, -3);
  add("ab", TokenType::kNormal, ab_score);
  add("bc", TokenType::kNormal, bc_score);
  add(sp + "ab", TokenType::kNormal, -0.1f);
  add("aa", TokenType::kNormal, -4);
  v.bos = 1;
  v.eos = 2;
  v.unk = 0;
  v.add_bos = true;
  v.add_space_prefix = false;
  return t;
}

TEST(ToySpm, HighestScoringPairMergesFirst) {
  {
    ToySpm t = toy_spm(-1.0f, -0.5f);  // "bc" outranks "ab"
    Tokenizer tok(t.vocab);
    EXPECT_EQ(tok.tokenize("abc", {.add_special = false}), (Ids{t.id("a"), t.id("bc")}));
  }
  {
    ToySpm t = toy_spm(-0.5f, -1.0f);  // "ab" outranks "bc"
    Tokenizer tok(t.vocab);
    EXPECT_EQ(tok.tokenize("abc", {.add_special = false}), (Ids{t.id("ab"), t.id("c")}));
    EXPECT_EQ(tok.tokenize("aaa", {.add_special = false}), (Ids{t.id("aa"), t.id("a")}));  // leftmost on ties
    EXPECT_EQ(tok.tokenize("abc"), (Ids{1, t.id("ab"), t.id("c")}));                       // add_bos
  }
}

TEST(ToySpm, SpacesBecomeTheVisibleSpaceAndUnknownTextFallsBackToBytes) {
  ToySpm t = toy_spm(-0.5f, -1.0f);
  Tokenizer tok(t.vocab);
  EXPECT_EQ(tok.tokenize("a ab", {.add_special = false}), (Ids{t.id("a"), t.id("\xE2\x96\x81"
                                                                               "ab")}));
  EXPECT_EQ(tok.tokenize("\xC3\xA9!", {.add_special = false}),
            (Ids{ToySpm::byte(0xC3), ToySpm::byte(0xA9), ToySpm::byte('!')}));
  const Ids ids = tok.tokenize("a ab \xC3\xA9");
  EXPECT_EQ(tok.detokenize(ids), "a ab \xC3\xA9");
  EXPECT_EQ(tok.detokenize(ids, true), "<s>a ab \xC3\xA9");
}

TEST(ToySpm, SpacePrefixGoesBeforeTextThatStartsThePromptOrFollowsASpecial) {
  ToySpm t = toy_spm(-0.5f, -1.0f);
  t.vocab.add_space_prefix = true;
  Tokenizer tok(t.vocab);
  const TokenId sp_ab = t.id(
      "\xE2\x96\x81"
      "ab");
  EXPECT_EQ(tok.tokenize("ab", {.add_special = false}), (Ids{sp_ab}));
  EXPECT_EQ(tok.tokenize("ab</s>ab", {.add_special = false, .parse_special = true}), (Ids{sp_ab, 2, sp_ab}));
  EXPECT_EQ(tok.tokenize("ab</s>ab", {.add_special = false, .parse_special = false}).front(), sp_ab);
}

}  // namespace
}  // namespace wisp

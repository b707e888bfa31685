// The GGUF vocabulary loader on the real models and on broken files, and the model-specific
// behaviour the golden corpus exercises only implicitly (named here so a regression reads clearly).
#include <gtest/gtest.h>

#include <cstring>

#include "tokenizer/vocab_gguf.h"
#include "tokenizer_test_util.h"
#include "wisp/error.h"

namespace wisp::test {
namespace {

TEST(VocabFromGguf, SmolLm2) {
  WISP_REQUIRE_MODEL(kSmolLm2File);
  const Vocab v = vocab_from_gguf(GgufFile::open(model_path(kSmolLm2File)));
  EXPECT_EQ(v.model, VocabModel::kBytePairGpt2);
  EXPECT_EQ(v.pre, "smollm");
  EXPECT_EQ(v.tokens.size(), 49152u);
  EXPECT_EQ(v.merges.size(), 48900u);
  EXPECT_TRUE(v.scores.empty());
  EXPECT_EQ(v.bos, 1);
  EXPECT_EQ(v.eos, 2);
  EXPECT_FALSE(v.add_bos);
  EXPECT_EQ(std::count(v.types.begin(), v.types.end(), TokenType::kControl), 17);
}

TEST(VocabFromGguf, Gemma3) {
  WISP_REQUIRE_MODEL(kGemma3File);
  const Vocab v = vocab_from_gguf(GgufFile::open(model_path(kGemma3File)));
  EXPECT_EQ(v.model, VocabModel::kSentencePiece);
  EXPECT_EQ(v.tokens.size(), 262144u);
  EXPECT_EQ(v.scores.size(), 262144u);
  EXPECT_TRUE(v.merges.empty());
  EXPECT_EQ(v.bos, 2);
  EXPECT_EQ(v.eos, 1);
  EXPECT_TRUE(v.add_bos);
  EXPECT_FALSE(v.add_space_prefix);  // the file overrides SentencePiece's default
  EXPECT_EQ(v.tokens[248], "<0x0A>");
  EXPECT_EQ(v.type_of(248), TokenType::kByte);
}

TEST(ModelTokenizer, SmolLm2ChatMarkup) {
  WISP_REQUIRE_MODEL(kSmolLm2File);
  const Tokenizer& tok = model_tokenizer(kSmolLm2File);
  const std::string turn = "<|im_start|>user\nHi<|im_end|>\n";
  const auto ids = tok.tokenize(turn, {.add_special = true, .parse_special = true});
  ASSERT_GE(ids.size(), 4u);
  EXPECT_EQ(ids.front(), tok.find_token("<|im_start|>"));
  EXPECT_NE(std::find(ids.begin(), ids.end(), tok.find_token("<|im_end|>")), ids.end());
  // The same text from an untrusted source stays text.
  const auto plain = tok.tokenize(turn, {.add_special = true, .parse_special = false});
  for (TokenId id : plain) EXPECT_FALSE(tok.is_control(id)) << id;
  EXPECT_TRUE(tok.is_eog(tok.find_token("<|im_end|>")));
  EXPECT_TRUE(tok.is_eog(tok.eos()));
  EXPECT_EQ(tok.detokenize(ids, true), turn);
}

TEST(ModelTokenizer, Gemma3TurnMarkersAndUserDefinedTokens) {
  WISP_REQUIRE_MODEL(kGemma3File);
  const Tokenizer& tok = model_tokenizer(kGemma3File);
  const TokenId start = tok.find_token("<start_of_turn>");
  const TokenId end = tok.find_token("<end_of_turn>");
  EXPECT_EQ(tok.tokenize("<start_of_turn>user\n", {.add_special = true, .parse_special = true}),
            (std::vector<TokenId>{tok.bos(), start, tok.find_token("user"), tok.find_token("\n")}));
  EXPECT_TRUE(tok.is_eog(end));
  // Runs of spaces and newlines are user-defined tokens: matched even in plain text.
  EXPECT_EQ(tok.tokenize("a  b", {.add_special = false}),
            (std::vector<TokenId>{tok.find_token("a"), tok.find_token("  "), tok.find_token("b")}));
  // "</s>" is user-defined in the file, but llama.cpp treats it as an end-of-generation control
  // token, so plain text does not produce it.
  const TokenId eos_s = tok.find_token("</s>");
  EXPECT_TRUE(tok.is_eog(eos_s));
  EXPECT_EQ(tok.tokenize("</s>", {.add_special = false, .parse_special = true}), (std::vector<TokenId>{eos_s}));
  const auto plain = tok.tokenize("</s>", {.add_special = false, .parse_special = false});
  EXPECT_EQ(std::find(plain.begin(), plain.end(), eos_s), plain.end());
}

// --- hand-made GGUF files for the loader's error paths ----------------------------------------

class GgufBytes {
 public:
  explicit GgufBytes(std::uint64_t n_kv) {
    put<std::uint32_t>(0x46554747);
    put<std::uint32_t>(3);
    put<std::uint64_t>(0);  // tensors
    put<std::uint64_t>(n_kv);
  }
  GgufBytes& string_kv(const std::string& key, const std::string& value) {
    str(key);
    put<std::uint32_t>(8);
    str(value);
    return *this;
  }
  GgufBytes& strings_kv(const std::string& key, const std::vector<std::string>& values) {
    str(key);
    put<std::uint32_t>(9);
    put<std::uint32_t>(8);
    put<std::uint64_t>(values.size());
    for (const auto& v : values) str(v);
    return *this;
  }
  GgufBytes& u32_kv(const std::string& key, std::uint32_t value) {
    str(key);
    put<std::uint32_t>(4);
    put<std::uint32_t>(value);
    return *this;
  }
  const std::vector<std::uint8_t>& bytes() {
    while (b_.size() % 32) b_.push_back(0);
    return b_;
  }

 private:
  template <typename T>
  void put(T v) {
    std::uint8_t raw[sizeof(T)];
    std::memcpy(raw, &v, sizeof(T));
    b_.insert(b_.end(), raw, raw + sizeof(T));
  }
  void str(const std::string& s) {
    put<std::uint64_t>(s.size());
    b_.insert(b_.end(), s.begin(), s.end());
  }
  std::vector<std::uint8_t> b_;
};

std::string load_error(GgufBytes& g) {
  const auto& bytes = g.bytes();
  try {
    const GgufFile f = GgufFile::parse(bytes, "test.gguf");
    (void)Tokenizer::from_gguf(f);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// tokenizer.ggml.model "gemma4" is BPE under the gemma4 pre-tokenizer whatever tokenizer.ggml.pre
// says (llama.cpp overrides it): spaces spelled U+2581, merges over characters, <0xNN> for a
// character no token spells, BOS added though the file does not ask for it.
TEST(VocabFromGguf, Gemma4ModelIsRawBpeWithForcedBos) {
  GgufBytes g(5);
  g.string_kv("tokenizer.ggml.model", "gemma4")
      .string_kv("tokenizer.ggml.pre", "llama-bpe")
      .strings_kv("tokenizer.ggml.tokens", {"<bos>", "\xE2\x96\x81", "a",
                                            "\xE2\x96\x81"
                                            "a",
                                            "<0x62>", "\n\n", "\n"})
      .strings_kv("tokenizer.ggml.merges", {"\xE2\x96\x81 a"})
      .u32_kv("tokenizer.ggml.bos_token_id", 0);
  const GgufFile f = GgufFile::parse(g.bytes(), "test.gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  EXPECT_EQ(tok.vocab().pre, "gemma4");
  EXPECT_TRUE(tok.add_bos());
  // " a" -> "▁a" (merged); "b" has no token: its byte's; "\n\n" is a token, looked up whole.
  EXPECT_EQ(tok.tokenize(" ab\n\n a", {.add_special = true}), (std::vector<TokenId>{0, 3, 4, 5, 3}));
  EXPECT_EQ(tok.detokenize(std::vector<TokenId>{3, 5, 3}), " a\n\n a");
}

TEST(VocabFromGguf, ErrorsNameTheFileAndKey) {
  {
    GgufBytes g(1);
    g.string_kv("general.architecture", "llama");
    const std::string e = load_error(g);
    EXPECT_NE(e.find("test.gguf"), std::string::npos) << e;
    EXPECT_NE(e.find("tokenizer.ggml.model"), std::string::npos) << e;
  }
  {
    GgufBytes g(2);
    g.string_kv("tokenizer.ggml.model", "bert").strings_kv("tokenizer.ggml.tokens", {"a"});
    const std::string e = load_error(g);
    EXPECT_NE(e.find("'bert' is not supported"), std::string::npos) << e;
  }
  {
    GgufBytes g(2);
    g.string_kv("tokenizer.ggml.model", "gpt2").strings_kv("tokenizer.ggml.tokens", {"a", "b"});
    const std::string e = load_error(g);
    EXPECT_NE(e.find("tokenizer.ggml.merges"), std::string::npos) << e;
  }
  {
    GgufBytes g(2);
    g.string_kv("tokenizer.ggml.model", "llama").u32_kv("tokenizer.ggml.tokens", 7);
    const std::string e = load_error(g);
    EXPECT_NE(e.find("tokenizer.ggml.tokens"), std::string::npos) << e;
  }
  {
    GgufBytes g(3);
    g.string_kv("tokenizer.ggml.model", "gpt2")
        .string_kv("tokenizer.ggml.pre", "mystery")
        .strings_kv("tokenizer.ggml.tokens", {"a", "b"});
    // merges are missing too, but the first complaint must be a clear one either way
    EXPECT_FALSE(load_error(g).empty());
  }
}

TEST(VocabFromGguf, MinimalSentencePieceVocabularyLoads) {
  GgufBytes g(2);
  g.string_kv("tokenizer.ggml.model", "llama")
      .strings_kv("tokenizer.ggml.tokens", {"<unk>", "<s>", "</s>",
                                            "\xE2\x96\x81"
                                            "a"});
  const auto& bytes = g.bytes();
  const GgufFile f = GgufFile::parse(bytes, "mini.gguf");
  const Tokenizer tok = Tokenizer::from_gguf(f);
  // SentencePiece defaults where the file is silent: BOS 1 added, a space prefix.
  EXPECT_EQ(tok.tokenize("a"), (std::vector<TokenId>{1, 3}));
  // No <0xNN> tokens: text outside the vocabulary is a clear error, not a silent drop.
  EXPECT_THROW(tok.tokenize("b"), Error);
}

// gpt-oss's harmony markers, appended to SmolLM2's vocabulary as control tokens under gpt-oss's
// pre-tokenizer (scripts/gen_golden_tokenizer.py builds the same vocabulary for llama.cpp): which
// tokens end generation, which render, and how harmony text tokenizes, all as llama.cpp decides.
TEST(ModelTokenizer, HarmonyMarkersAsLlamaCppTreatsThem) {
  WISP_REQUIRE_MODEL(kSmolLm2File);
  const nlohmann::json g = read_json(golden_path("smollm2-vocab-harmony.json"));
  ASSERT_EQ(g["model_file"], kSmolLm2File);
  Vocab v = vocab_from_gguf(GgufFile::open(model_path(kSmolLm2File)));
  v.pre = g["tokenizer_pre"];
  for (const auto& t : g["appended_control_tokens"]) {
    v.tokens.push_back(t.get<std::string>());
    v.types.push_back(TokenType::kControl);
  }
  const Tokenizer tok(std::move(v));
  ASSERT_EQ(tok.n_vocab(), g["n_vocab"].get<std::size_t>());
  std::vector<TokenId> eog;
  std::size_t n_control = 0;
  for (std::size_t id = 0; id < tok.n_vocab(); ++id) {
    if (tok.is_eog(static_cast<TokenId>(id))) eog.push_back(static_cast<TokenId>(id));
    n_control += tok.is_control(static_cast<TokenId>(id));
  }
  EXPECT_EQ(eog, g["eog"].get<std::vector<TokenId>>()) << "<|end|> must not end generation beside <|return|>";
  EXPECT_EQ(n_control, g["n_control"].get<std::size_t>());
  for (const auto& p : g["pieces"]) {
    const auto id = p[0].get<TokenId>();
    EXPECT_EQ(tok.token_to_piece(id, false), from_hex(p[1].get<std::string>())) << id;
    EXPECT_EQ(tok.token_to_piece(id, true), from_hex(p[2].get<std::string>())) << id;
  }
  for (const auto& c : g["cases"]) {
    const std::string text = c["text"];
    EXPECT_EQ(tok.tokenize(text, {.add_special = false, .parse_special = true}), c["s"].get<std::vector<TokenId>>())
        << escaped(text);
    EXPECT_EQ(tok.tokenize(text, {.add_special = false, .parse_special = false}), c["p"].get<std::vector<TokenId>>())
        << escaped(text);
  }
}

}  // namespace
}  // namespace wisp::test

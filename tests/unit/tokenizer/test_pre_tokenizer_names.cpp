// Every tokenizer.ggml.pre name llama.cpp's vocabulary loader knows (read from llama.cpp's own
// source by scripts/gen_pre_tokenizer_names.py -> tests/golden/tokenizer/llamacpp_pre_tokenizers.json)
// is either one wisp implements or an error that names it. For the implemented ones, the scanner
// wisp picks must be the one for the regex llama.cpp splits that name with: each wisp scanner is
// anchored to one name (llama3, qwen2, gpt-2, smollm, tekken, ...), and every name wisp maps to it
// must have exactly that name's regex list in llama.cpp, and llama.cpp's ignore_merges, byte
// encoding, space escaping, forced BOS and whole line-break words.
// (llama.cpp's clean_spaces, which only changes its detokenizer's clean-up of spaces, is not
// compared: wisp's detokenizer does not clean up spaces for any name.)
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/unicode.h"
#include "wisp/error.h"

namespace wisp {
namespace {

struct Name {
  std::string name;
  std::string pre_type;
  bool ignore_merges = false;
  std::vector<std::string> regex;
  bool byte_encode = true;
  bool escape_whitespaces = false;
  bool forces_bos = false;
  bool newline_runs_whole = false;
};

std::vector<Name> llamacpp_names() {
  std::ifstream in(std::string(WISP_GOLDEN_DIR) + "/tokenizer/llamacpp_pre_tokenizers.json");
  EXPECT_TRUE(in.good()) << "run scripts/gen_pre_tokenizer_names.py";
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<Name> out;
  for (const auto& n : j["names"]) {
    out.push_back({n["name"], n["pre_type"], n["ignore_merges"], n["regex"].get<std::vector<std::string>>(),
                   n["byte_encode"], n["escape_whitespaces"], n["forces_bos"], n["newline_runs_whole"]});
  }
  return out;
}

TEST(PreTokenizerNames, EveryLlamaCppNameIsImplementedOrNamedInTheError) {
  const std::vector<Name> names = llamacpp_names();
  ASSERT_GT(names.size(), 80u);  // the table parsed (0.3.36 knows 91)
  std::map<std::string, const Name*> by_name;
  for (const Name& n : names) by_name[n.name] = &n;

  // The name each scanner was written after: its regex is the one the scanner implements.
  const std::map<PreTokenizerKind, std::string> anchor = {
      {PreTokenizerKind::kLlama3, "llama3"},
      {PreTokenizerKind::kQwen2, "qwen2"},
      {PreTokenizerKind::kGpt2, "gpt-2"},
      {PreTokenizerKind::kSmollm, "smollm"},
      {PreTokenizerKind::kGpt4o, "gpt-4o"},
      {PreTokenizerKind::kDefault, "default"},
      {PreTokenizerKind::kMinicpm5, "minicpm5"},
      {PreTokenizerKind::kBailingmoe, "bailingmoe"},
      {PreTokenizerKind::kLaguna, "laguna"},
      {PreTokenizerKind::kQwen35, "qwen35"},
      {PreTokenizerKind::kUfakzeka, "ufakzeka"},
      {PreTokenizerKind::kSeedCoder, "seed-coder"},
      {PreTokenizerKind::kTekken, "tekken"},
      {PreTokenizerKind::kDeepseek3, "deepseek-v3"},
      {PreTokenizerKind::kFalcon, "falcon"},
      {PreTokenizerKind::kSpark, "spark2_5"},
      {PreTokenizerKind::kPoro, "bloom"},
      {PreTokenizerKind::kViking, "viking"},
      {PreTokenizerKind::kDeepseekCoder, "deepseek-coder"},
      {PreTokenizerKind::kExaoneMoe, "exaone-moe"},
      {PreTokenizerKind::kJais2, "jais-2"},
      {PreTokenizerKind::kSuperBpe, "superbpe"},
      {PreTokenizerKind::kTinyAya, "tiny_aya"},
      {PreTokenizerKind::kYoutu, "youtu"},
      {PreTokenizerKind::kKimiK2, "kimi-k2"},
      {PreTokenizerKind::kAfmoe, "afmoe"},
      {PreTokenizerKind::kDeepseekLlm, "deepseek-llm"},
      {PreTokenizerKind::kLines, "gemma4"},
      {PreTokenizerKind::kGraniteEmbMulti, "granite-embed-multi-97m"},
      {PreTokenizerKind::kChameleon, "chameleon"}};
  for (const auto& [kind, a] : anchor) ASSERT_TRUE(by_name.contains(a)) << a;

  std::size_t implemented = 0;
  std::string refused;
  for (const Name& n : names) {
    try {
      const PreTokenizerSpec spec = pre_tokenizer_for(n.name);
      ++implemented;
      const Name& ref = *by_name.at(anchor.at(spec.kind));
      EXPECT_EQ(n.regex, ref.regex) << "'" << n.name << "' (" << n.pre_type << ") is split by wisp's scanner for '"
                                    << ref.name << "', but llama.cpp splits it with another regex";
      EXPECT_EQ(spec.ignore_merges, n.ignore_merges) << "'" << n.name << "': ignore_merges differs from llama.cpp's";
      EXPECT_EQ(spec.byte_level, n.byte_encode) << "'" << n.name << "': byte encoding differs from llama.cpp's";
      EXPECT_EQ(spec.escape_spaces, n.escape_whitespaces) << "'" << n.name << "': space escaping differs";
      EXPECT_EQ(spec.force_bos, n.forces_bos) << "'" << n.name << "': forced BOS differs from llama.cpp's";
      EXPECT_EQ(spec.newline_runs_whole, n.newline_runs_whole) << "'" << n.name << "': line-break words differ";
    } catch (const Error& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'" + n.name + "'"), std::string::npos) << msg;
      EXPECT_NE(msg.find("wisp implements"), std::string::npos) << msg;
      refused += (refused.empty() ? "" : ", ") + n.name;
    }
  }
  std::printf("llama.cpp knows %zu pre-tokenizer names: wisp implements %zu; refuses, naming them: %s\n", names.size(),
              implemented, refused.c_str());
  RecordProperty("implemented", static_cast<int>(implemented));
}

// DeepSeek LLM's letter class is about ninety explicit ranges: wisp's table must hold exactly the
// code points of the bracket expression in llama.cpp's second regex for the name.
TEST(PreTokenizerNames, DeepseekLlmLetterRangesAreLlamaCppsRegex) {
  const std::vector<Name> names = llamacpp_names();
  const Name* n = nullptr;
  for (const Name& x : names)
    if (x.name == "deepseek-llm") n = &x;
  ASSERT_NE(n, nullptr);
  ASSERT_GE(n->regex.size(), 2u);
  const std::string& re = n->regex[1];  // \\s?[A-Za-z...]+ as spelled in the C++ source
  const std::size_t open = re.find('['), close = re.rfind(']');
  ASSERT_TRUE(open != std::string::npos && close != std::string::npos && close > open) << re;
  std::vector<char32_t> cps;
  for (std::size_t pos = open + 1; pos < close;) {
    std::optional<char32_t> cp = utf8_decode(re, pos);
    ASSERT_TRUE(cp.has_value());
    cps.push_back(*cp);
  }
  std::vector<std::pair<char32_t, char32_t>> ranges;
  for (std::size_t i = 0; i < cps.size();) {
    if (i + 2 < cps.size() && cps[i + 1] == '-') {
      ranges.emplace_back(cps[i], cps[i + 2]);
      i += 3;
    } else {
      ranges.emplace_back(cps[i], cps[i]);
      i += 1;
    }
  }
  ASSERT_GT(ranges.size(), 80u);
  std::size_t in_class = 0, differ = 0;
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    bool want = false;
    for (const auto& [lo, hi] : ranges) want = want || (lo <= c && c <= hi);
    in_class += want;
    if (deepseek_llm_letter(c) != want && ++differ <= 8)
      ADD_FAILURE() << "U+" << std::hex << static_cast<std::uint32_t>(c) << " want " << want;
  }
  EXPECT_EQ(differ, 0u);
  EXPECT_GT(in_class, 2000u);
}

TEST(PreTokenizerNames, AnUnknownNameIsAnErrorNamingIt) {
  try {
    pre_tokenizer_for("no-such-pre");
    ADD_FAILURE() << "accepted an unknown pre-tokenizer";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'no-such-pre'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace wisp

// Every tokenizer.ggml.pre name llama.cpp's vocabulary loader knows (read from llama.cpp's own
// source by scripts/gen_pre_tokenizer_names.py -> tests/golden/tokenizer/llamacpp_pre_tokenizers.json)
// is either one wisp implements or an error that names it. For the implemented ones, the scanner
// wisp picks must be the one for the regex llama.cpp splits that name with: each wisp scanner is
// anchored to one name (llama3, qwen2, gpt-2, smollm, tekken, ...), and every name wisp maps to it
// must have exactly that name's regex list in llama.cpp, and llama.cpp's ignore_merges.
// (llama.cpp's clean_spaces, which only changes its detokenizer's clean-up of spaces, is not
// compared: wisp's detokenizer does not clean up spaces for any name.)
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "wisp/error.h"

namespace wisp {
namespace {

struct Name {
  std::string name;
  std::string pre_type;
  bool ignore_merges = false;
  std::vector<std::string> regex;
};

std::vector<Name> llamacpp_names() {
  std::ifstream in(std::string(WISP_GOLDEN_DIR) + "/tokenizer/llamacpp_pre_tokenizers.json");
  EXPECT_TRUE(in.good()) << "run scripts/gen_pre_tokenizer_names.py";
  const nlohmann::json j = nlohmann::json::parse(in);
  std::vector<Name> out;
  for (const auto& n : j["names"]) {
    out.push_back({n["name"], n["pre_type"], n["ignore_merges"], n["regex"].get<std::vector<std::string>>()});
  }
  return out;
}

TEST(PreTokenizerNames, EveryLlamaCppNameIsImplementedOrNamedInTheError) {
  const std::vector<Name> names = llamacpp_names();
  ASSERT_GT(names.size(), 80u);  // the table parsed (0.3.36 knows 91)
  std::map<std::string, const Name*> by_name;
  for (const Name& n : names) by_name[n.name] = &n;

  // The name each scanner was written after: its regex is the one the scanner implements.
  const std::map<PreTokenizerKind, std::string> anchor = {{PreTokenizerKind::kLlama3, "llama3"},
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
                                                          {PreTokenizerKind::kSuperBpe, "superbpe"}};
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

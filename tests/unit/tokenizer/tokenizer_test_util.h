// Shared helpers for the tokenizer tests: model paths, a tokenizer cache per model file (loading
// Gemma's 262k-token vocabulary takes a moment, so each test binary loads it once), golden JSON.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/gguf_file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_gguf.h"

namespace wisp::test {

inline const char* kSmolLm2File = "SmolLM2-135M-Instruct.Q4_1.gguf";
inline const char* kGemma3File = "gemma-3-270m-q4_k_m.gguf";

inline std::string model_path(const std::string& file) { return std::string(WISP_MODELS_DIR) + "/" + file; }
inline bool model_present(const std::string& file) { return std::filesystem::exists(model_path(file)); }

// One Tokenizer per model file (and pre-tokenizer override) for the life of the test binary;
// read-only after construction. `pre` non-empty swaps tokenizer.ggml.pre, to run another
// pre-tokenizer over the file's real vocabulary.
// The merges scripts/gen_golden_tokenizer.py derives for a SentencePiece vocabulary read as BPE
// (spm_merges there): for each normal token in id order, every split into two tokens at a UTF-8
// character boundary, shorter left part first; tokens with a space left out.
inline std::vector<std::string> spm_merges(const Vocab& v) {
  std::unordered_set<std::string_view> index(v.tokens.begin(), v.tokens.end());
  std::vector<std::string> merges;
  for (std::size_t id = 0; id < v.size(); ++id) {
    const std::string& t = v.tokens[id];
    if (v.type_of(static_cast<TokenId>(id)) != TokenType::kNormal || t.find(' ') != std::string::npos) continue;
    for (std::size_t k = 1; k < t.size(); ++k) {
      if ((static_cast<unsigned char>(t[k]) & 0xC0) == 0x80) continue;
      const std::string_view sv(t);
      if (index.contains(sv.substr(0, k)) && index.contains(sv.substr(k)))
        merges.push_back(t.substr(0, k) + " " + t.substr(k));
    }
  }
  return merges;
}

// `pre` non-empty: the file's vocabulary under this tokenizer.ggml.pre. `spm_as_bpe`: a
// SentencePiece file's vocabulary as a BPE one with spm_merges and add_bos_token false, as the
// script writes it for the Gemma 4 / Sarvam MoE goldens.
inline const Tokenizer& model_tokenizer(const std::string& file, const std::string& pre = "", bool spm_as_bpe = false) {
  static std::map<std::string, std::unique_ptr<Tokenizer>> cache;
  auto& slot = cache[file + "|" + pre + (spm_as_bpe ? "|bpe" : "")];
  if (!slot) {
    GgufFile gguf = GgufFile::open(model_path(file));
    if (pre.empty()) {
      slot = std::make_unique<Tokenizer>(Tokenizer::from_gguf(gguf));
    } else {
      Vocab v = vocab_from_gguf(gguf);
      v.pre = pre;
      if (spm_as_bpe) {
        v.model = VocabModel::kBytePairGpt2;
        v.merges = spm_merges(v);
        v.add_bos = false;
        v.add_space_prefix = false;
      }
      slot = std::make_unique<Tokenizer>(std::move(v));
    }
  }
  return *slot;
}

#define WISP_REQUIRE_MODEL(file)                                                \
  do {                                                                          \
    if (!::wisp::test::model_present(file))                                     \
      GTEST_SKIP() << "model file " << ::wisp::test::model_path(file)           \
                   << " is absent (scripts/fetch_models fetches it); skipping"; \
  } while (0)

inline nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

inline std::string golden_path(const std::string& name) { return std::string(WISP_GOLDEN_DIR) + "/tokenizer/" + name; }

inline std::string from_hex(const std::string& hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return out;
}

inline std::string ids_string(const std::vector<TokenId>& ids) {
  std::ostringstream s;
  s << "[";
  for (std::size_t i = 0; i < ids.size(); ++i) s << (i ? "," : "") << ids[i];
  s << "]";
  return s.str();
}

// Printable rendering of a test string for failure messages.
inline std::string escaped(const std::string& s, std::size_t max = 80) {
  std::string out;
  for (unsigned char c : s) {
    if (out.size() >= max) {
      out += "...";
      break;
    }
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else
      out.push_back(static_cast<char>(c));
  }
  return out;
}

}  // namespace wisp::test

// Tokenizer files into GGUF metadata, the way llama.cpp's convert_hf_to_gguf.py does it:
// _set_vocab_gpt2 for byte-level BPE, _set_vocab_sentencepiece for tokenizer.model, and gguf-py's
// SpecialVocab for special token ids, add_bos and the chat template.
#include "quantize/hf_tokenizer.h"

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "quantize/sentencepiece_model.h"
#include "wisp/error.h"

namespace wisp::quantize {

namespace {

using nlohmann::json;

// llama_token_type values as GGUF stores them.
constexpr std::int32_t kNormal = 1, kUnused = 5, kControl = 3, kUserDefined = 4;
// Score llama.cpp gives added, control and padding tokens in a SentencePiece vocabulary.
constexpr float kAddedScore = -1000.0f;

json read_json(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(p.string() + ": cannot open");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw Error(p.string() + ": invalid JSON: " + e.what());
  }
}

bool is_byte_level(const json& pre) {
  if (!pre.is_object()) return false;
  if (pre.value("type", "") == "ByteLevel") return true;
  if (pre.value("type", "") == "Sequence" && pre.contains("pretokenizers")) {
    for (const json& p : pre["pretokenizers"]) {
      if (is_byte_level(p)) return true;
    }
  }
  return false;
}

// llama.cpp names the pre-tokenizer by hashing what the HF tokenizer makes of a test text; we
// cannot run the HF tokenizer here, so we recognise the same regexes from their description in
// tokenizer.json. Each name below selects the regex llama.cpp (and wisp) use for it.
std::string choose_pre(const json& pre, const std::string& path) {
  std::string regexes;
  bool digits_individual = false, byte_level_regex = false;
  auto visit = [&](const json& p, auto&& self) -> void {
    if (!p.is_object()) return;
    const std::string type = p.value("type", "");
    if (type == "Sequence" && p.contains("pretokenizers")) {
      for (const json& c : p["pretokenizers"]) self(c, self);
    } else if (type == "Split" && p.contains("pattern") && p["pattern"].contains("Regex")) {
      regexes += p["pattern"]["Regex"].get<std::string>() + "\n";
    } else if (type == "Digits") {
      digits_individual = p.value("individual_digits", false);
    } else if (type == "ByteLevel") {
      byte_level_regex = p.value("use_regex", true);
    }
  };
  visit(pre, visit);
  if (regexes.find("\\p{N}{1,3}") != std::string::npos) return "llama-bpe";       // Llama 3
  if (regexes.find("\\p{L}+|\\p{N}|") != std::string::npos) return "qwen2";       // single digits
  if (regexes.empty() && digits_individual && byte_level_regex) return "smollm";  // SmolLM, StarCoder
  if (regexes.empty() && !digits_individual && byte_level_regex) return "gpt-2";
  throw Error(path + ": unrecognised byte-level pre-tokenizer " + pre.dump().substr(0, 300) +
              "; recognised: Llama 3 (llama-bpe), Qwen2 (qwen2), SmolLM (smollm), GPT-2 (gpt-2)");
}

// A special token in tokenizer_config.json is a string or {"content": ...}.
std::optional<std::string> token_text(const json& cfg, const std::string& key) {
  auto it = cfg.find(key);
  if (it == cfg.end()) return std::nullopt;
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  return std::nullopt;
}

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<std::int32_t> types;
  std::map<std::string, std::int64_t, std::less<>> id_of;
};

// Added tokens (id -> special) from tokenizer.json, else tokenizer_config.json's added_tokens_decoder.
std::map<std::int64_t, std::pair<std::string, bool>> added_tokens(const json& tok, const json& tcfg) {
  std::map<std::int64_t, std::pair<std::string, bool>> out;
  for (const json& a : tok.value("added_tokens", json::array())) {
    out[a.at("id").get<std::int64_t>()] = {a.at("content").get<std::string>(), a.value("special", false)};
  }
  if (out.empty() && tcfg.contains("added_tokens_decoder") && tcfg["added_tokens_decoder"].is_object()) {
    for (auto it = tcfg["added_tokens_decoder"].begin(); it != tcfg["added_tokens_decoder"].end(); ++it) {
      out[std::stoll(it.key())] = {it.value().value("content", ""), it.value().value("special", false)};
    }
  }
  return out;
}

void write_gpt2_vocab(const json& tok, const json& tcfg, const std::string& path, std::int64_t n_vocab, GgufWriter& w,
                      Vocab& v) {
  const json& model = tok["model"];
  // id -> text: the model's vocabulary, then added tokens (which may extend it).
  std::map<std::int64_t, std::string> by_id;
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it)
    by_id[it.value().get<std::int64_t>()] = it.key();
  const auto added = added_tokens(tok, tcfg);
  for (const auto& [id, a] : added) by_id[id] = a.first;
  const std::int64_t size = std::max<std::int64_t>(n_vocab, by_id.empty() ? 0 : by_id.rbegin()->first + 1);
  v.tokens.assign(static_cast<std::size_t>(size), {});
  v.types.assign(static_cast<std::size_t>(size), kUnused);
  for (std::int64_t i = 0; i < size; ++i) {
    auto it = by_id.find(i);
    if (it == by_id.end()) {
      v.tokens[i] = "[PAD" + std::to_string(i) + "]";
      continue;
    }
    v.tokens[i] = it->second;
    auto ad = added.find(i);
    v.types[i] = ad == added.end() ? kNormal : (ad->second.second ? kControl : kUserDefined);
  }

  std::vector<std::string> merges;
  for (const json& m : model.value("merges", json::array())) {
    if (m.is_string()) {
      merges.push_back(m.get<std::string>());
    } else if (m.is_array() && m.size() == 2) {  // newer tokenizers write [left, right]
      merges.push_back(m[0].get<std::string>() + " " + m[1].get<std::string>());
    } else {
      throw Error(path + ": malformed entry in model.merges");
    }
  }
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", choose_pre(tok["pre_tokenizer"], path));
  w.set_strings("tokenizer.ggml.tokens", v.tokens);
  w.set_i32s("tokenizer.ggml.token_type", v.types);
  w.set_strings("tokenizer.ggml.merges", merges);

  // add_bos: tokenizer_config.json says so explicitly, or the post-processor template starts with
  // a special token; a ByteLevel post-processor (SmolLM, Qwen2) adds nothing.
  bool add_bos = false;
  if (auto it = tcfg.find("add_bos_token"); it != tcfg.end() && it->is_boolean()) {
    add_bos = it->get<bool>();
  } else if (const json pp = tok.value("post_processor", json()); pp.is_object()) {
    auto first_special = [](const json& p) {
      return p.value("type", "") == "TemplateProcessing" && p.contains("single") && !p["single"].empty() &&
             p["single"][0].contains("SpecialToken");
    };
    if (first_special(pp)) add_bos = true;
    if (pp.value("type", "") == "Sequence") {
      for (const json& p : pp.value("processors", json::array())) add_bos = add_bos || first_special(p);
    }
  }
  w.set_bool("tokenizer.ggml.add_bos_token", add_bos);
  // Byte-level BPE never prepends a space unless the pre-tokenizer is told to.
  const json& pre = tok["pre_tokenizer"];
  w.set_bool("tokenizer.ggml.add_space_prefix",
             pre.value("type", "") == "ByteLevel" && pre.value("add_prefix_space", false));
}

void write_spm_vocab(const std::filesystem::path& model_path, const json& tok, const json& tcfg, std::int64_t n_vocab,
                     GgufWriter& w, Vocab& v) {
  const SentencePieceModel sp = read_sentencepiece_model(model_path);
  const auto added = added_tokens(tok, tcfg);
  std::int64_t size = std::max<std::int64_t>(n_vocab, static_cast<std::int64_t>(sp.pieces.size()));
  if (!added.empty()) size = std::max(size, added.rbegin()->first + 1);
  v.tokens.assign(static_cast<std::size_t>(size), {});
  v.types.assign(static_cast<std::size_t>(size), kUnused);
  std::vector<float> scores(static_cast<std::size_t>(size), kAddedScore);
  for (std::size_t i = 0; i < static_cast<std::size_t>(size); ++i) {
    if (i < sp.pieces.size()) {
      const SentencePiece& p = sp.pieces[i];
      v.tokens[i] = p.piece;
      scores[i] = p.score;
      // llama.cpp keeps unknown, control, unused and byte pieces' types; user-defined ones are
      // normal unless the added tokens below say otherwise.
      v.types[i] = p.type == 2 || p.type == 3 || p.type == 5 || p.type == 6 ? p.type : kNormal;
    } else {
      v.tokens[i] = "[PAD" + std::to_string(i) + "]";
    }
  }
  for (const auto& [id, a] : added) {
    v.tokens[id] = a.first;
    v.types[id] = a.second ? kControl : kUserDefined;
    scores[id] = kAddedScore;
  }
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_string("tokenizer.ggml.pre", "default");
  w.set_strings("tokenizer.ggml.tokens", v.tokens);
  w.set_f32s("tokenizer.ggml.scores", scores);
  w.set_i32s("tokenizer.ggml.token_type", v.types);
  auto flag = [&](const char* key, bool dflt) {
    auto it = tcfg.find(key);
    return it != tcfg.end() && it->is_boolean() ? it->get<bool>() : dflt;
  };
  w.set_bool("tokenizer.ggml.add_bos_token", flag("add_bos_token", true));
  w.set_bool("tokenizer.ggml.add_sep_token", false);
  w.set_bool("tokenizer.ggml.add_eos_token", flag("add_eos_token", false));
  w.set_bool("tokenizer.ggml.add_space_prefix", sp.add_dummy_prefix);
}

bool is_byte_level_bpe(const json& tok) {
  const json& model = tok.contains("model") ? tok["model"] : json::object();
  return model.is_object() && model.value("type", "") == "BPE" && model.contains("vocab") &&
         is_byte_level(tok.value("pre_tokenizer", json()));
}

}  // namespace

void write_hf_tokenizer(const HfTokenizerFiles& files, std::int64_t n_vocab, GgufWriter& w) {
  const json tok = files.tokenizer_json ? read_json(*files.tokenizer_json) : json::object();
  const json tcfg = files.tokenizer_config_json ? read_json(*files.tokenizer_config_json) : json::object();
  Vocab v;
  if (files.tokenizer_json && is_byte_level_bpe(tok)) {
    write_gpt2_vocab(tok, tcfg, files.tokenizer_json->string(), n_vocab, w, v);
  } else if (files.sentencepiece_model) {
    write_spm_vocab(*files.sentencepiece_model, tok, tcfg, n_vocab, w, v);
  } else {
    const std::string where =
        files.tokenizer_json ? files.tokenizer_json->string() : files.config_json.parent_path().string();
    const std::string type = tok.contains("model") && tok["model"].is_object() ? tok["model"].value("type", "") : "";
    throw Error(where + ": tokenizer \"" + type +
                "\" is neither a byte-level BPE tokenizer.json nor accompanied by a SentencePiece tokenizer.model; "
                "those two are supported");
  }
  for (std::size_t i = 0; i < v.tokens.size(); ++i) v.id_of.emplace(v.tokens[i], static_cast<std::int64_t>(i));
  const auto size = static_cast<std::int64_t>(v.tokens.size());

  const json cfg = read_json(files.config_json);
  // Special token ids: by text from tokenizer_config.json, else config.json's *_token_id.
  const std::pair<const char*, const char*> specials[] = {
      {"bos", "bos_token_id"}, {"eos", "eos_token_id"}, {"unk", nullptr}, {"pad", "pad_token_id"}};
  const char* gguf_key[] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                            "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"};
  for (std::size_t k = 0; k < 4; ++k) {
    std::optional<std::int64_t> id;
    if (auto text = token_text(tcfg, std::string(specials[k].first) + "_token")) {
      auto it = v.id_of.find(*text);
      if (it != v.id_of.end()) id = it->second;
    }
    if (!id && specials[k].second && cfg.contains(specials[k].second) && cfg[specials[k].second].is_number_integer()) {
      id = cfg[specials[k].second].get<std::int64_t>();
    }
    if (id && *id >= 0 && *id < size) w.set_u32(gguf_key[k], static_cast<std::uint32_t>(*id));
  }

  if (auto it = tcfg.find("chat_template"); it != tcfg.end()) {
    if (it->is_string()) {
      w.set_string("tokenizer.chat_template", it->get<std::string>());
    } else if (it->is_array()) {  // [{"name": "default", "template": ...}, ...]
      for (const json& t : *it) {
        if (t.value("name", "") == "default") w.set_string("tokenizer.chat_template", t.value("template", ""));
      }
    }
  }
}

}  // namespace wisp::quantize

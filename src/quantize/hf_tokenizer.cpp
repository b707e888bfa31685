// Byte-level BPE vocabulary from tokenizer.json into GGUF metadata, the way llama.cpp's
// convert_hf_to_gguf.py (_set_vocab_gpt2 plus gguf-py's SpecialVocab) does it.
#include "quantize/hf_tokenizer.h"

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "wisp/error.h"

namespace wisp::quantize {

namespace {

using nlohmann::json;

// llama_token_type values as GGUF stores them.
constexpr std::int32_t kNormal = 1, kUnused = 5, kControl = 3, kUserDefined = 4;

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
  if (regexes.find("\\p{N}{1,3}") != std::string::npos) return "llama-bpe";  // Llama 3
  if (regexes.find("\\p{L}+|\\p{N}|") != std::string::npos) return "qwen2";  // single digits
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
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string()) return (*it)["content"].get<std::string>();
  return std::nullopt;
}

}  // namespace

void write_hf_tokenizer(const std::filesystem::path& tokenizer_json,
                        const std::optional<std::filesystem::path>& tokenizer_config_json,
                        const std::filesystem::path& config_json, std::int64_t n_vocab, GgufWriter& w) {
  const std::string path = tokenizer_json.string();
  const json tok = read_json(tokenizer_json);
  const json& model = tok.contains("model") ? tok["model"] : json::object();
  const std::string type = model.is_object() ? model.value("type", "") : "";
  if (type != "BPE" || !is_byte_level(tok.value("pre_tokenizer", json())) || !model.contains("vocab")) {
    throw Error(path + ": tokenizer model \"" + type +
                "\" is not a byte-level BPE; only byte-level BPE tokenizers (GGUF \"gpt2\") are supported so far "
                "(SentencePiece-style vocabularies such as Gemma's are not)");
  }

  // id -> text: the model's vocabulary, then added tokens (which may extend it).
  std::map<std::int64_t, std::string> by_id;
  for (auto it = model["vocab"].begin(); it != model["vocab"].end(); ++it) by_id[it.value().get<std::int64_t>()] = it.key();
  std::map<std::int64_t, bool> added;  // id -> special
  for (const json& a : tok.value("added_tokens", json::array())) {
    const std::int64_t id = a.at("id").get<std::int64_t>();
    by_id[id] = a.at("content").get<std::string>();
    added[id] = a.value("special", false);
  }
  const std::int64_t size = std::max<std::int64_t>(n_vocab, by_id.empty() ? 0 : by_id.rbegin()->first + 1);
  std::vector<std::string> tokens(static_cast<std::size_t>(size));
  std::vector<std::int32_t> types(static_cast<std::size_t>(size), kUnused);
  std::map<std::string, std::int64_t, std::less<>> id_of;
  for (std::int64_t i = 0; i < size; ++i) {
    auto it = by_id.find(i);
    if (it == by_id.end()) {
      tokens[i] = "[PAD" + std::to_string(i) + "]";
      continue;
    }
    tokens[i] = it->second;
    id_of.emplace(it->second, i);
    auto ad = added.find(i);
    types[i] = ad == added.end() ? kNormal : (ad->second ? kControl : kUserDefined);
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
  w.set_strings("tokenizer.ggml.tokens", tokens);
  w.set_i32s("tokenizer.ggml.token_type", types);
  w.set_strings("tokenizer.ggml.merges", merges);

  const json tcfg = tokenizer_config_json ? read_json(*tokenizer_config_json) : json::object();
  const json cfg = read_json(config_json);
  // Special token ids: by text from tokenizer_config.json, else config.json's *_token_id.
  const std::pair<const char*, const char*> specials[] = {
      {"bos", "bos_token_id"}, {"eos", "eos_token_id"}, {"unk", nullptr}, {"pad", "pad_token_id"}};
  const char* gguf_key[] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                            "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.padding_token_id"};
  for (std::size_t k = 0; k < 4; ++k) {
    std::optional<std::int64_t> id;
    if (auto text = token_text(tcfg, std::string(specials[k].first) + "_token")) {
      auto it = id_of.find(*text);
      if (it != id_of.end()) id = it->second;
    }
    if (!id && specials[k].second && cfg.contains(specials[k].second) && cfg[specials[k].second].is_number_integer()) {
      id = cfg[specials[k].second].get<std::int64_t>();
    }
    if (id && *id >= 0 && *id < size) w.set_u32(gguf_key[k], static_cast<std::uint32_t>(*id));
  }

  // add_bos: tokenizer_config.json says so explicitly, or the post-processor template starts with
  // a special token; a ByteLevel post-processor (SmolLM, Qwen2) adds nothing.
  bool add_bos = false;
  if (auto it = tcfg.find("add_bos_token"); it != tcfg.end() && it->is_boolean()) {
    add_bos = it->get<bool>();
  } else if (const json& pp = tok.value("post_processor", json()); pp.is_object()) {
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
  bool prefix_space = false;
  const json& pre = tok["pre_tokenizer"];
  if (pre.value("type", "") == "ByteLevel") prefix_space = pre.value("add_prefix_space", false);
  w.set_bool("tokenizer.ggml.add_space_prefix", prefix_space);

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

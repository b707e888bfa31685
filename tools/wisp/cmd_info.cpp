// `wisp info FILE`: what a GGUF model is, from its metadata and tensor table.
#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "command_line.h"
#include "commands.h"
#include "engine/backend_choice.h"
#include "formats/gguf_file.h"
#include "wisp/error.h"

namespace wisp::cli {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

struct InfoFlags {
  std::vector<std::string> files;
  std::optional<std::string> model;
  bool tensors = false, metadata = false, json = false, device = false;
};

void declare(CommandLine& cl, InfoFlags& f) {
  cl.positionals("FILE", f.files, 0, 1);
  cl.option("-m,--model", f.model).value_name("FILE").help("the GGUF file (or give it as the positional argument)");
  cl.flag("--tensors", f.tensors).help("also list every tensor: name, type, shape, size");
  cl.flag("--metadata", f.metadata).help("also list every metadata key with its value");
  cl.flag("--json", f.json).help("print one JSON object instead of text (for scripts)");
  cl.flag("--device", f.device)
      .help("list the devices this wisp can run on (the CPU; CUDA devices with their memory) and exit");
  cl.epilog("Sizes: MiB = 1024^2 bytes.");
}

struct TypeRow {
  std::string name;
  std::uint64_t tensors = 0;
  std::uint64_t params = 0;
  std::uint64_t bytes = 0;
};

std::string tokenizer_kind(std::string_view model) {
  if (model == "gpt2") return "byte-level BPE";
  if (model == "llama") return "SentencePiece BPE";
  if (model == "bert") return "WordPiece";
  if (model == "t5") return "SentencePiece unigram";
  if (model == "rwkv") return "RWKV trie";
  if (model.empty()) return "none";
  return "unknown (" + std::string(model) + ")";
}

// A tensor's type for the listings: its name, or for a type id wisp does not read "id N?" (the
// unreadable section below names it in full).
std::string type_label(const GgufTensor& t) {
  return t.type ? std::string(t.type->name) : "id " + std::to_string(t.type_id) + "?";
}

std::vector<TypeRow> rows_by_type(const GgufFile& f) {
  std::map<std::uint32_t, TypeRow> by_id;
  for (const GgufTensor& t : f.tensors()) {
    TypeRow& r = by_id[t.type_id];
    r.name = type_label(t);
    r.tensors += 1;
    r.params += static_cast<std::uint64_t>(t.n_elements());
    r.bytes += t.n_bytes;
  }
  std::vector<TypeRow> rows;
  for (auto& [id, r] : by_id) rows.push_back(r);
  std::sort(rows.begin(), rows.end(), [](const TypeRow& a, const TypeRow& b) { return a.bytes > b.bytes; });
  return rows;
}

// The tensors of type ids wisp does not read, one message per type id (with its first tensor).
std::vector<std::string> unreadable_types(const GgufFile& f) {
  std::map<std::uint32_t, std::pair<std::string, std::size_t>> by_id;  // first tensor, count
  for (const GgufTensor& t : f.tensors()) {
    if (t.type != nullptr) continue;
    auto [it, fresh] = by_id.try_emplace(t.type_id, std::string(t.name), 0);
    ++it->second.second;
  }
  std::vector<std::string> out;
  for (const auto& [id, first] : by_id) {
    out.push_back(std::to_string(first.second) + " tensor(s), the first '" + first.first +
                  "': " + unsupported_type_message(id));
  }
  return out;
}

std::string human_count(std::uint64_t n) {
  char buf[32];
  if (n >= 1000000000ull)
    std::snprintf(buf, sizeof buf, "%.2f B", n / 1e9);
  else if (n >= 1000000ull)
    std::snprintf(buf, sizeof buf, "%.2f M", n / 1e6);
  else if (n >= 1000ull)
    std::snprintf(buf, sizeof buf, "%.2f K", n / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(n));
  return buf;
}

nlohmann::json value_to_json(const GgufValue& v) {
  if (v.is_array()) {
    nlohmann::json a = nlohmann::json::array();
    if (v.array_type() == GgufValueType::kString) {
      for (std::string_view s : v.array_strings()) a.push_back(std::string(s));
    } else if (v.array_type() == GgufValueType::kArray) {
      for (const GgufValue& item : v.array_items()) a.push_back(value_to_json(item));
    } else {
      for (std::uint64_t i = 0; i < v.array_size(); ++i) a.push_back(value_to_json(v.array_element(i)));
    }
    return a;
  }
  switch (v.type()) {
    case GgufValueType::kString: return std::string(v.as_string());
    case GgufValueType::kBool: return v.as_bool();
    case GgufValueType::kFloat32:
    case GgufValueType::kFloat64: return v.as_f64();
    case GgufValueType::kInt8:
    case GgufValueType::kInt16:
    case GgufValueType::kInt32:
    case GgufValueType::kInt64: return v.as_i64();
    default: return v.as_u64();
  }
}

// Hyper-parameters: every "<arch>.*" key, in file order, with the prefix dropped.
std::vector<const GgufKeyValue*> arch_keys(const GgufFile& f) {
  std::vector<const GgufKeyValue*> out;
  std::string prefix = std::string(f.architecture()) + ".";
  if (prefix.size() == 1) return out;
  for (const GgufKeyValue& kv : f.metadata())
    if (kv.key.starts_with(prefix)) out.push_back(&kv);
  return out;
}

struct Summary {
  std::string arch, name, tok_model, tok_pre;
  std::uint64_t vocab = 0, merges = 0, params = 0, bytes = 0;
  std::optional<std::uint64_t> bos, eos;
  std::size_t template_chars = 0;
  bool has_template = false;
};

Summary summarize(const GgufFile& f) {
  Summary s;
  s.arch = std::string(f.architecture());
  s.name = std::string(f.get_string_opt("general.name").value_or(""));
  s.tok_model = std::string(f.get_string_opt("tokenizer.ggml.model").value_or(""));
  s.tok_pre = std::string(f.get_string_opt("tokenizer.ggml.pre").value_or(""));
  if (const GgufValue* t = f.find("tokenizer.ggml.tokens")) s.vocab = t->is_array() ? t->array_size() : 0;
  if (const GgufValue* m = f.find("tokenizer.ggml.merges")) s.merges = m->is_array() ? m->array_size() : 0;
  s.bos = f.get_u64_opt("tokenizer.ggml.bos_token_id");
  s.eos = f.get_u64_opt("tokenizer.ggml.eos_token_id");
  if (auto tpl = f.get_string_opt("tokenizer.chat_template")) {
    s.has_template = true;
    s.template_chars = tpl->size();
  }
  for (const GgufTensor& t : f.tensors()) {
    s.params += static_cast<std::uint64_t>(t.n_elements());
    s.bytes += t.n_bytes;
  }
  return s;
}

void print_json(const GgufFile& f, bool tensors, bool metadata) {
  Summary s = summarize(f);
  nlohmann::json j;
  j["file"] = f.path();
  j["file_bytes"] = f.file_size();
  j["gguf_version"] = f.version();
  j["alignment"] = f.alignment();
  j["architecture"] = s.arch;
  j["name"] = s.name;
  nlohmann::json hp = nlohmann::json::object();
  for (const GgufKeyValue* kv : arch_keys(f))
    hp[std::string(kv->key.substr(s.arch.size() + 1))] = value_to_json(kv->value);
  j["hyperparameters"] = hp;
  j["tokenizer"] = {{"model", s.tok_model},
                    {"kind", tokenizer_kind(s.tok_model)},
                    {"pre", s.tok_pre},
                    {"vocab_size", s.vocab},
                    {"merges", s.merges}};
  if (s.bos) j["tokenizer"]["bos_token_id"] = *s.bos;
  if (s.eos) j["tokenizer"]["eos_token_id"] = *s.eos;
  j["chat_template"] = s.has_template;
  j["tensor_count"] = f.tensors().size();
  j["parameters"] = s.params;
  j["tensor_bytes"] = s.bytes;
  j["tensor_mib"] = s.bytes / kMiB;
  j["bits_per_weight"] = s.params ? 8.0 * s.bytes / s.params : 0.0;
  nlohmann::json types = nlohmann::json::array();
  for (const TypeRow& r : rows_by_type(f))
    types.push_back({{"type", r.name},
                     {"tensors", r.tensors},
                     {"parameters", r.params},
                     {"bytes", r.bytes},
                     {"mib", r.bytes / kMiB},
                     {"bits_per_weight", 8.0 * r.bytes / r.params}});
  j["types"] = types;
  if (const auto bad = unreadable_types(f); !bad.empty()) j["unreadable_types"] = bad;
  if (tensors) {
    nlohmann::json ts = nlohmann::json::array();
    for (const GgufTensor& t : f.tensors())
      ts.push_back({{"name", std::string(t.name)},
                    {"type", type_label(t)},
                    {"shape", std::vector<std::int64_t>(t.ne, t.ne + t.n_dims)},
                    {"bytes", t.n_bytes},
                    {"offset", t.file_offset}});
    j["tensors"] = ts;
  }
  if (metadata) {
    nlohmann::json md = nlohmann::json::object();
    for (const GgufKeyValue& kv : f.metadata()) md[std::string(kv.key)] = value_to_json(kv.value);
    j["metadata"] = md;
  }
  std::printf("%s\n", j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

void print_text(const GgufFile& f, bool tensors, bool metadata) {
  Summary s = summarize(f);
  std::printf("file:           %s\n", f.path().c_str());
  std::printf("format:         GGUF v%u, alignment %u, %.2f MiB on disk\n", f.version(), f.alignment(),
              f.file_size() / kMiB);
  if (!s.name.empty()) std::printf("name:           %s\n", s.name.c_str());
  std::printf("architecture:   %s\n", s.arch.empty() ? "(not set)" : s.arch.c_str());
  for (const GgufKeyValue* kv : arch_keys(f)) {
    std::string k(kv->key.substr(s.arch.size() + 1));
    std::printf("  %-36s %s\n", k.c_str(), kv->value.to_display_string().c_str());
  }
  std::printf("tokenizer:      %s", tokenizer_kind(s.tok_model).c_str());
  if (!s.tok_model.empty()) std::printf(" (model '%s'", s.tok_model.c_str());
  if (!s.tok_pre.empty()) std::printf(", pre '%s'", s.tok_pre.c_str());
  if (!s.tok_model.empty()) std::printf(")");
  std::printf(", vocab %llu", static_cast<unsigned long long>(s.vocab));
  if (s.merges) std::printf(", %llu merges", static_cast<unsigned long long>(s.merges));
  if (s.bos) std::printf(", bos %llu", static_cast<unsigned long long>(*s.bos));
  if (s.eos) std::printf(", eos %llu", static_cast<unsigned long long>(*s.eos));
  std::printf("\n");
  if (s.has_template)
    std::printf("chat template:  yes (%zu characters)\n", s.template_chars);
  else
    std::printf("chat template:  none in the file\n");
  std::printf("tensors:        %zu, %s parameters\n\n", f.tensors().size(), human_count(s.params).c_str());

  std::printf("  %-8s %8s %14s %12s %12s\n", "type", "tensors", "parameters", "size MiB", "bits/weight");
  for (const TypeRow& r : rows_by_type(f))
    std::printf("  %-8s %8llu %14llu %12.2f %12.3f\n", r.name.c_str(), static_cast<unsigned long long>(r.tensors),
                static_cast<unsigned long long>(r.params), r.bytes / kMiB, 8.0 * r.bytes / r.params);
  std::printf("  %-8s %8zu %14llu %12.2f %12.3f\n", "total", f.tensors().size(),
              static_cast<unsigned long long>(s.params), s.bytes / kMiB, s.params ? 8.0 * s.bytes / s.params : 0.0);
  if (const auto bad = unreadable_types(f); !bad.empty()) {
    std::printf("\nunreadable types (sizes above leave them out; the model will not load):\n");
    for (const std::string& b : bad) std::printf("  %s\n", b.c_str());
  }

  if (metadata) {
    std::printf("\nmetadata (%zu keys):\n", f.metadata().size());
    for (const GgufKeyValue& kv : f.metadata())
      std::printf("  %-40s %s\n", std::string(kv.key).c_str(), kv.value.to_display_string().c_str());
  }
  if (tensors) {
    std::printf("\n  %-40s %-6s %-22s %12s\n", "tensor", "type", "shape", "size MiB");
    for (const GgufTensor& t : f.tensors())
      std::printf("  %-40s %-6s %-22s %12.4f\n", std::string(t.name).c_str(), type_label(t).c_str(),
                  t.shape_string().c_str(), t.n_bytes / kMiB);
  }
}

}  // namespace

int cmd_info(int argc, char** argv) {
  InfoFlags flags;
  CommandLine cl("info",
                 "Describes a GGUF model: architecture and hyper-parameters, tokenizer, chat template,\n"
                 "tensors by type (count, parameters, size, bits per weight) and the total size.");
  declare(cl, flags);
  if (!cl.parse(argc, argv)) {
    std::fputs(cl.help().c_str(), stdout);
    return 0;
  }
  if (flags.device) {
    std::fputs(detail::device_report().c_str(), stdout);
    return 0;
  }
  const std::optional<std::string>& model = flags.model;
  if (model && !flags.files.empty())
    throw UsageError("give the model once: -m " + *model + " and '" + flags.files[0] + "'");
  if (!model && flags.files.empty()) throw UsageError("no model file given");
  std::string path = model ? *model : flags.files[0];
  // A tensor type wisp cannot read still leaves the rest of the file to describe.
  GgufFile f = GgufFile::open(path, {.keep_unknown_types = true});
  if (flags.json)
    print_json(f, flags.tensors, flags.metadata);
  else
    print_text(f, flags.tensors, flags.metadata);
  return 0;
}

}  // namespace wisp::cli

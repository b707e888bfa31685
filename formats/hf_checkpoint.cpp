#include "formats/hf_checkpoint.h"

#include <set>
#include <system_error>
#include <utility>

#include "core/mapped_file.h"
#include "formats/message_text.h"
#include "formats/strict_json.h"
#include "wisp/error.h"

namespace wisp {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// The non-throwing std::filesystem overloads are used throughout: a filesystem_error escaping
// would not be a wisp::Error.
bool file_exists(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

json read_json_file(const fs::path& path) {
  MappedFile file(path.string());  // throws a wisp::Error naming the path
  std::string_view text(reinterpret_cast<const char*>(file.data()), file.size());
  return parse_strict_json(text, path.string());
}

// Shard names come from a file we do not control; only a plain name inside the folder is
// accepted, so an index cannot point the reader at "../../somewhere".
bool is_plain_file_name(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\\') == std::string::npos && name.find('\0') == std::string::npos;
}

std::optional<fs::path> if_present(const fs::path& p) {
  if (file_exists(p)) return p;
  return std::nullopt;
}

}  // namespace

HfCheckpoint HfCheckpoint::open(const fs::path& dir) {
  HfCheckpoint ckpt;
  ckpt.dir_ = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw Error(dir.string() + ": not a folder; expected a Hugging Face checkpoint folder holding " + kHfConfigFile +
                " and " + kHfSingleWeightsFile + " or " + kHfWeightsIndexFile);
  }
  ckpt.load_config();
  if (file_exists(dir / kHfSingleWeightsFile)) {
    ckpt.load_single();
  } else if (file_exists(dir / kHfWeightsIndexFile)) {
    ckpt.load_sharded();
  } else {
    throw Error(dir.string() + ": no weights: neither " + kHfSingleWeightsFile + " nor " + kHfWeightsIndexFile +
                " is in the folder");
  }
  ckpt.index_tensors();
  ckpt.tokenizer_json_ = if_present(dir / "tokenizer.json");
  ckpt.tokenizer_config_ = if_present(dir / "tokenizer_config.json");
  return ckpt;
}

void HfCheckpoint::load_config() {
  fs::path path = dir_ / kHfConfigFile;
  if (!file_exists(path)) throw Error(path.string() + ": missing; a checkpoint folder needs its config.json");
  config_ = read_json_file(path);
  if (!config_.is_object()) {
    throw Error(path.string() + ": top level is a JSON " + json_type_name(config_) + ", expected an object");
  }
}

std::string HfCheckpoint::architecture() const {
  auto it = config_.find("architectures");
  if (it == config_.end()) throw Error(config_path() + ": missing field 'architectures'");
  if (!it->is_array() || it->empty() || !(*it)[0].is_string()) {
    throw Error(config_path() + ": field 'architectures' must be a non-empty array of strings");
  }
  return (*it)[0].get<std::string>();
}

std::string HfCheckpoint::model_type() const {
  auto it = config_.find("model_type");
  if (it == config_.end()) throw Error(config_path() + ": missing field 'model_type'");
  if (!it->is_string()) {
    throw Error(config_path() + ": field 'model_type' is a JSON " + json_type_name(*it) + ", expected a string");
  }
  return it->get<std::string>();
}

void HfCheckpoint::load_single() {
  sharded_ = false;
  shards_.push_back(SafetensorsFile::open((dir_ / kHfSingleWeightsFile).string()));
}

void HfCheckpoint::load_sharded() {
  sharded_ = true;
  const fs::path index_path = dir_ / kHfWeightsIndexFile;
  const std::string index_name = index_path.string();
  json index = read_json_file(index_path);
  if (!index.is_object()) {
    throw Error(index_name + ": top level is a JSON " + json_type_name(index) + ", expected an object");
  }
  auto wm = index.find("weight_map");
  if (wm == index.end()) throw Error(index_name + ": missing field 'weight_map'");
  if (!wm->is_object()) {
    throw Error(index_name + ": field 'weight_map' is a JSON " + json_type_name(*wm) + ", expected an object");
  }
  if (wm->empty()) throw Error(index_name + ": field 'weight_map' is empty");

  // Sorted shard names give a stable shard order whatever order the index lists tensors in.
  std::map<std::string, std::string, std::less<>> shard_of_tensor;
  std::map<std::string, std::string> first_tensor_of_shard;  // for "listed for tensor ..." messages
  for (const auto& [tensor, shard] : wm->items()) {
    if (!shard.is_string()) {
      throw Error(index_name + ": weight_map entry " + in_quotes(tensor) + " is a JSON " + json_type_name(shard) +
                  ", expected a shard file name");
    }
    const auto& file = shard.get_ref<const std::string&>();
    if (!is_plain_file_name(file)) {
      throw Error(index_name + ": weight_map entry " + in_quotes(tensor) + " names shard " + in_quotes(file) +
                  ", which is not a plain file name inside the checkpoint folder");
    }
    shard_of_tensor.emplace(tensor, file);
    first_tensor_of_shard.emplace(file, tensor);
  }

  std::map<std::string, std::size_t> shard_position;
  for (const auto& [file, first_tensor] : first_tensor_of_shard) {
    fs::path path = dir_ / file;
    if (!file_exists(path)) {
      throw Error(index_name + ": shard " + in_quotes(file) + " (listed for tensor " + in_quotes(first_tensor) +
                  ") is missing from " + dir_.string());
    }
    shard_position.emplace(file, shards_.size());
    shards_.push_back(SafetensorsFile::open(path.string()));
  }

  for (const auto& [tensor, file] : shard_of_tensor) {
    const SafetensorsFile& shard = shards_[shard_position.at(file)];
    if (shard.find_tensor(tensor) == nullptr) {
      throw Error(index_name + ": tensor " + in_quotes(tensor) + " is listed in weight_map for shard " +
                  in_quotes(file) + ", but " + shard.path() + " has no tensor of that name");
    }
  }
}

void HfCheckpoint::index_tensors() {
  // Tensors a shard holds beyond those the index lists are kept: the shards are the data, the
  // index only a map to them. The same name in two shards, though, has no right answer.
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    for (const auto& t : shards_[s].tensors()) {
      auto [it, inserted] = by_name_.emplace(t.name, tensors_.size());
      if (!inserted) {
        const auto& other = shards_[tensors_[it->second].shard];
        throw Error(dir_.string() + ": tensor " + in_quotes(t.name) + " is stored in two shards: " + other.path() +
                    " and " + shards_[s].path());
      }
      tensors_.push_back({&t, s});
    }
  }
}

const HfCheckpoint::TensorRef* HfCheckpoint::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

const SafetensorsTensor* HfCheckpoint::find_tensor(std::string_view name) const {
  const TensorRef* ref = find(name);
  return ref == nullptr ? nullptr : ref->tensor;
}

const SafetensorsTensor& HfCheckpoint::tensor(std::string_view name) const {
  if (const auto* t = find_tensor(name)) return *t;
  throw Error(dir_.string() + ": no tensor named " + in_quotes(name) + " in any of " + std::to_string(shards_.size()) +
              " weights file(s)");
}

const SafetensorsFile& HfCheckpoint::shard_of(std::string_view name) const {
  const TensorRef* ref = find(name);
  if (ref == nullptr) throw Error(dir_.string() + ": no tensor named " + in_quotes(name));
  return shards_[ref->shard];
}

}  // namespace wisp

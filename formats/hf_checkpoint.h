// A Hugging Face checkpoint folder: config.json, the weights as model.safetensors or as shards
// named by model.safetensors.index.json, and the tokenizer files when present.
//
// Every shard is mapped once; tensors stay views into those mappings. Lookup by name spans all
// shards. A tensor the index names but its shard lacks, a shard that is missing, or a tensor
// stored in two shards is a wisp::Error naming the file and the tensor.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/safetensors_file.h"

namespace wisp {

inline constexpr const char* kHfConfigFile = "config.json";
inline constexpr const char* kHfSingleWeightsFile = "model.safetensors";
inline constexpr const char* kHfWeightsIndexFile = "model.safetensors.index.json";

class HfCheckpoint {
 public:
  // A tensor together with the shard it lives in.
  struct TensorRef {
    const SafetensorsTensor* tensor = nullptr;
    std::size_t shard = 0;  // index into shards()
  };

  // Opens the folder `dir`. model.safetensors wins over an index when both exist, as in
  // transformers. Throws wisp::Error on anything missing or malformed.
  static HfCheckpoint open(const std::filesystem::path& dir);

  const std::filesystem::path& dir() const { return dir_; }

  // config.json as parsed (always an object).
  const nlohmann::json& config() const { return config_; }
  // config.json "architectures"[0] ("LlamaForCausalLM"); throws naming the file and field.
  std::string architecture() const;
  // config.json "model_type" ("llama"); throws naming the file and field.
  std::string model_type() const;

  // Paths of the tokenizer files when the folder has them.
  const std::optional<std::filesystem::path>& tokenizer_json() const { return tokenizer_json_; }
  const std::optional<std::filesystem::path>& tokenizer_config_json() const { return tokenizer_config_; }

  bool is_sharded() const { return sharded_; }
  // One entry per weights file: the single model.safetensors, or the shards sorted by file name.
  const std::vector<SafetensorsFile>& shards() const { return shards_; }

  // Every tensor, shard by shard (in shards() order), and within a shard in data order.
  const std::vector<TensorRef>& tensors() const { return tensors_; }
  std::size_t n_tensors() const { return tensors_.size(); }
  const TensorRef* find(std::string_view name) const;
  const SafetensorsTensor* find_tensor(std::string_view name) const;
  const SafetensorsTensor& tensor(std::string_view name) const;  // throws naming the folder and tensor
  // The shard holding tensor `name`; throws when there is no such tensor.
  const SafetensorsFile& shard_of(std::string_view name) const;

 private:
  HfCheckpoint() = default;
  void load_config();
  void load_single();
  void load_sharded();
  void index_tensors();
  std::string config_path() const { return (dir_ / kHfConfigFile).string(); }

  std::filesystem::path dir_;
  nlohmann::json config_;
  std::optional<std::filesystem::path> tokenizer_json_;
  std::optional<std::filesystem::path> tokenizer_config_;
  bool sharded_ = false;
  std::vector<SafetensorsFile> shards_;
  std::vector<TensorRef> tensors_;
  std::map<std::string, std::size_t, std::less<>> by_name_;  // name -> position in tensors_
};

}  // namespace wisp

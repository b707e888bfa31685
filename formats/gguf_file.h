// GGUF v2/v3 reader over a read-only memory map. Tensors are views into the mapping.
// Every structural problem (bad magic, truncation, overflowing counts, data outside the file,
// unknown types, misalignment, duplicate names, non-UTF-8 keys) is a wisp::Error that names the
// file, the field and the byte offset.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/mapped_file.h"
#include "formats/block_types.h"
#include "formats/gguf_value.h"

namespace wisp {

inline constexpr std::uint32_t kGgufMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr std::uint32_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufMaxDims = 4;

struct GgufTensor {
  std::string_view name;
  std::uint32_t type_id = 0;
  // Never null in a file opened normally; null for a type id wisp does not read when the file was
  // opened with GgufOpenOptions::keep_unknown_types (n_bytes is then 0: its size is unknown).
  const BlockTypeInfo* type = nullptr;
  int n_dims = 0;
  std::int64_t ne[kGgufMaxDims] = {1, 1, 1, 1};  // ne[0] is the contiguous (row) dimension
  std::uint64_t offset = 0;                      // relative to the data section, as stored
  std::uint64_t file_offset = 0;                 // absolute byte offset in the file
  std::uint64_t n_bytes = 0;
  const std::uint8_t* data = nullptr;  // points into the mapping

  std::int64_t n_elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
  std::int64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
  std::uint64_t row_bytes() const { return n_bytes / static_cast<std::uint64_t>(n_rows()); }
  std::string shape_string() const;  // "[576, 49152]"
};

struct GgufKeyValue {
  std::string_view key;
  GgufValue value;
  std::uint64_t file_offset = 0;  // where the key/value pair starts, for error messages
};

struct GgufOpenOptions {
  // A tensor whose type id wisp does not read is kept (type null, size unknown, its data
  // unchecked) instead of failing the file, so `wisp info` can describe the rest. Nothing that
  // multiplies or dequantizes tensors opens files this way.
  bool keep_unknown_types = false;
};

// "unknown or unsupported tensor type id 41 (GGML's Q1_0, which wisp does not implement); wisp
// reads F32, F16, ...": the error for a type id wisp cannot read.
std::string unsupported_type_message(std::uint32_t type_id);

class GgufFile {
 public:
  // Maps and parses `path`. Throws wisp::Error on any malformed input.
  static GgufFile open(const std::string& path, GgufOpenOptions options = {});
  // Parses an in-memory image (fuzzing, tests). `bytes` must outlive the GgufFile;
  // `name` stands in for the file name in error messages.
  static GgufFile parse(std::span<const std::uint8_t> bytes, std::string name, GgufOpenOptions options = {});

  const std::string& path() const { return name_; }
  std::uint32_t version() const { return version_; }
  std::uint32_t alignment() const { return alignment_; }
  std::uint64_t data_offset() const { return data_offset_; }
  std::uint64_t file_size() const { return bytes_.size(); }

  const std::vector<GgufKeyValue>& metadata() const { return kv_; }
  const GgufValue* find(std::string_view key) const;
  // Typed getters that throw a wisp::Error naming the file and key when missing or mistyped.
  const GgufValue& get(std::string_view key) const;
  std::uint64_t get_u64(std::string_view key) const;
  double get_f64(std::string_view key) const;
  std::string_view get_string(std::string_view key) const;
  std::optional<std::uint64_t> get_u64_opt(std::string_view key) const;
  std::optional<double> get_f64_opt(std::string_view key) const;
  std::optional<std::string_view> get_string_opt(std::string_view key) const;
  std::optional<bool> get_bool_opt(std::string_view key) const;

  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(std::string_view name) const;
  const GgufTensor& tensor(std::string_view name) const;  // throws naming file and tensor

  // The architecture string ("llama", "gemma3", ...) or "" when absent.
  std::string_view architecture() const;

 private:
  GgufFile() = default;
  void parse_all();

  GgufOpenOptions options_;

  std::unique_ptr<MappedFile> map_;  // null for parse()
  std::span<const std::uint8_t> bytes_;
  std::string name_;
  std::uint32_t version_ = 0;
  std::uint32_t alignment_ = kGgufDefaultAlignment;
  std::uint64_t data_offset_ = 0;
  std::vector<GgufKeyValue> kv_;
  std::unordered_map<std::string_view, std::size_t> kv_index_;
  std::vector<GgufTensor> tensors_;
  std::unordered_map<std::string_view, std::size_t> tensor_index_;
};

}  // namespace wisp

// Safetensors reader over a read-only memory map. Tensors are views into the mapping (no copies).
//
// Layout: 8-byte little-endian header length N, N bytes of UTF-8 JSON, then the data region.
// The JSON maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
// relative to the data region) plus an optional "__metadata__" map of strings.
//
// Validation follows the format's own rules (huggingface/safetensors): header within the file and
// at most 100 MB, valid JSON object, known dtypes, shape x dtype size equal to the byte span, and
// spans that tile the data region exactly (sorted by offset, no overlap, no gap, no trailing bytes).
// Every failure is a wisp::Error naming the file, the tensor or field and, where one applies, the
// absolute byte offset in the file.
//
// Tensor data is at whatever offset the writer chose; it is not guaranteed to be aligned to the
// element size, so consumers read it with memcpy or unaligned loads.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/mapped_file.h"
#include "formats/safetensors_dtype.h"

namespace wisp {

// The format's own cap on header size; anything larger is corrupt or hostile.
inline constexpr std::uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;

struct SafetensorsTensor {
  std::string name;
  SafetensorsDtype dtype = SafetensorsDtype::kF32;
  std::vector<std::int64_t> shape;  // outermost first, last dimension contiguous (numpy/torch order)
  std::int64_t n_elements = 1;      // product of shape (1 for a scalar, 0 when any dimension is 0)
  std::uint64_t data_begin = 0;     // data_offsets as stored: relative to the data region
  std::uint64_t data_end = 0;
  std::uint64_t file_offset = 0;       // absolute offset of the first byte in the file
  const std::uint8_t* data = nullptr;  // points into the mapping (or the parsed span)

  std::uint64_t n_bytes() const { return data_end - data_begin; }
  std::span<const std::uint8_t> bytes() const { return {data, static_cast<std::size_t>(n_bytes())}; }
  const char* dtype_name() const { return safetensors_dtype_name(dtype); }
  std::string shape_string() const;  // "[16, 8]", "[]" for a scalar
};

class SafetensorsFile {
 public:
  // Maps and parses `path`. Throws wisp::Error on any malformed input.
  static SafetensorsFile open(const std::string& path);
  // Parses an in-memory image (fuzzing, tests). `bytes` must outlive the SafetensorsFile;
  // `name` stands in for the file name in error messages.
  static SafetensorsFile parse(std::span<const std::uint8_t> bytes, std::string name);

  const std::string& path() const { return name_; }
  std::uint64_t file_size() const { return bytes_.size(); }
  std::uint64_t header_size() const { return header_size_; }      // N, the JSON length
  std::uint64_t data_offset() const { return 8 + header_size_; }  // start of the data region

  // In data order (ascending offset; ties, which only zero-size tensors can have, by name).
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  const SafetensorsTensor* find_tensor(std::string_view name) const;
  const SafetensorsTensor& tensor(std::string_view name) const;  // throws naming file and tensor

  // The "__metadata__" map (empty when absent).
  const std::map<std::string, std::string, std::less<>>& metadata() const { return metadata_; }

  // The GGML type to load `t` as; throws naming the file, tensor and dtype when it is not
  // F32, F16 or BF16.
  GgmlType ggml_type(const SafetensorsTensor& t) const;

 private:
  SafetensorsFile() = default;
  void parse_all();

  std::unique_ptr<MappedFile> map_;  // null for parse(); heap-held so moves keep `data` valid
  std::span<const std::uint8_t> bytes_;
  std::string name_;
  std::uint64_t header_size_ = 0;
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, std::size_t, std::less<>> index_;  // name -> position in tensors_
  std::map<std::string, std::string, std::less<>> metadata_;
};

}  // namespace wisp

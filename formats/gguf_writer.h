// GGUF v3 writer. Metadata is serialized as it is added; tensor data is produced by a callback
// at write time so a converter can stream a large model without holding it in memory.
// The output goes to a temporary file beside the target and is renamed only when complete, so a
// failed or killed run never leaves a partial file under the final name.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "formats/gguf_value.h"

namespace wisp {

class GgufWriter {
 public:
  // Fills exactly `out.size()` bytes of a tensor's data.
  using TensorFill = std::function<void(std::span<std::uint8_t> out)>;

  explicit GgufWriter(std::uint32_t alignment = 32);

  void set_u8(std::string_view key, std::uint8_t v);
  void set_i8(std::string_view key, std::int8_t v);
  void set_u16(std::string_view key, std::uint16_t v);
  void set_i16(std::string_view key, std::int16_t v);
  void set_u32(std::string_view key, std::uint32_t v);
  void set_i32(std::string_view key, std::int32_t v);
  void set_u64(std::string_view key, std::uint64_t v);
  void set_i64(std::string_view key, std::int64_t v);
  void set_f32(std::string_view key, float v);
  void set_f64(std::string_view key, double v);
  void set_bool(std::string_view key, bool v);
  void set_string(std::string_view key, std::string_view v);
  void set_strings(std::string_view key, const std::vector<std::string>& v);
  void set_i32s(std::string_view key, const std::vector<std::int32_t>& v);
  void set_u32s(std::string_view key, const std::vector<std::uint32_t>& v);
  void set_f32s(std::string_view key, const std::vector<float>& v);
  // Copies a value read from another GGUF file (converters carry metadata over this way).
  void set_value(std::string_view key, const GgufValue& v);

  // Declares a tensor of GGML/wisp type `type_id` with dims `ne` (ne[0] contiguous).
  void add_tensor(std::string_view name, std::uint32_t type_id, std::vector<std::int64_t> ne, TensorFill fill);
  // Convenience: data already in memory; `data` must stay alive until write() returns.
  void add_tensor(std::string_view name, std::uint32_t type_id, std::vector<std::int64_t> ne,
                  std::span<const std::uint8_t> data);

  // Writes the file (temporary + rename). Throws wisp::Error naming the path on any I/O failure.
  void write(const std::string& path) const;
  // The bytes write() would produce, for tests and fuzz seeds.
  std::vector<std::uint8_t> to_bytes() const;

  std::uint32_t alignment() const { return alignment_; }

 private:
  struct Tensor {
    std::string name;
    std::uint32_t type_id;
    std::vector<std::int64_t> ne;
    std::uint64_t n_bytes;
    std::uint64_t offset;  // within the data section
    TensorFill fill;
  };
  void begin_key(std::string_view key, GgufValueType type);
  std::vector<std::uint8_t> header_bytes() const;
  template <typename Sink>
  void emit(Sink&& sink) const;

  std::uint32_t alignment_;
  std::uint64_t n_kv_ = 0;
  std::vector<std::uint8_t> kv_bytes_;
  std::unordered_set<std::string> keys_;
  std::vector<Tensor> tensors_;
  std::unordered_set<std::string> tensor_names_;
  std::uint64_t data_size_ = 0;
};

}  // namespace wisp

// A GGUF metadata value: scalars, strings and (nested) arrays, as the file stores them.
// Strings and numeric arrays are views into the memory-mapped file: nothing is copied at load.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wisp/error.h"

namespace wisp {

enum class GgufValueType : std::uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// Name as the GGUF specification spells it ("UINT32", "ARRAY", ...); "?" for an unknown id.
const char* gguf_value_type_name(GgufValueType t);
// Byte size of a fixed-size scalar type; 0 for STRING and ARRAY (variable size) and unknown ids.
std::size_t gguf_scalar_size(GgufValueType t);
bool gguf_value_type_valid(std::uint32_t id);

class GgufValue {
 public:
  GgufValueType type() const { return type_; }
  bool is_array() const { return type_ == GgufValueType::kArray; }
  bool is_string() const { return type_ == GgufValueType::kString; }
  bool is_integer() const;  // any of the eight integer types
  bool is_float() const { return type_ == GgufValueType::kFloat32 || type_ == GgufValueType::kFloat64; }

  // Scalar accessors convert between compatible kinds and throw wisp::Error otherwise
  // (a negative value read as unsigned, a string read as a number, ...).
  std::uint64_t as_u64() const;
  std::int64_t as_i64() const;
  double as_f64() const;
  bool as_bool() const;
  std::string_view as_string() const;

  // Arrays.
  GgufValueType array_type() const { return elem_type_; }
  std::uint64_t array_size() const { return count_; }
  // Elements of a string array (views into the mapping).
  const std::vector<std::string_view>& array_strings() const;
  // Elements of a nested array (an array of arrays).
  const std::vector<GgufValue>& array_items() const;
  // The packed little-endian elements of a numeric or bool array, as stored in the file.
  std::span<const std::uint8_t> array_bytes() const;
  // Element i of a numeric or bool array, as a scalar value.
  GgufValue array_element(std::uint64_t i) const;
  // A numeric array converted element-wise to T (e.g. int32 token types, float scores).
  template <typename T>
  std::vector<T> array_as() const {
    std::vector<T> out;
    out.reserve(count_);
    for (std::uint64_t i = 0; i < count_; ++i) {
      GgufValue e = array_element(i);
      if constexpr (std::is_floating_point_v<T>) {
        out.push_back(static_cast<T>(e.as_f64()));
      } else if constexpr (std::is_same_v<T, bool>) {
        out.push_back(e.as_bool());
      } else if constexpr (std::is_signed_v<T>) {
        out.push_back(static_cast<T>(e.as_i64()));
      } else {
        out.push_back(static_cast<T>(e.as_u64()));
      }
    }
    return out;
  }

  // A short human-readable rendering (arrays are abbreviated), for `wisp info`.
  std::string to_display_string(std::size_t max_items = 8) const;

  // Construction (used by the reader and the writer).
  static GgufValue scalar(GgufValueType t, const void* little_endian_bytes);
  static GgufValue string(std::string_view s);
  static GgufValue numeric_array(GgufValueType elem, std::uint64_t count, const std::uint8_t* raw);
  static GgufValue string_array(std::vector<std::string_view> items);
  static GgufValue nested_array(GgufValueType elem, std::vector<GgufValue> items);

 private:
  GgufValueType type_ = GgufValueType::kUint8;
  std::uint64_t bits_ = 0;  // scalar payload, little-endian, zero-extended
  std::string_view str_;
  GgufValueType elem_type_ = GgufValueType::kUint8;
  std::uint64_t count_ = 0;
  const std::uint8_t* raw_ = nullptr;  // numeric array elements, packed, in the mapping
  std::vector<std::string_view> strings_;
  std::vector<GgufValue> items_;
};

}  // namespace wisp

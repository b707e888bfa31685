#include "formats/gguf_value.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace wisp {

const char* gguf_value_type_name(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8: return "UINT8";
    case GgufValueType::kInt8: return "INT8";
    case GgufValueType::kUint16: return "UINT16";
    case GgufValueType::kInt16: return "INT16";
    case GgufValueType::kUint32: return "UINT32";
    case GgufValueType::kInt32: return "INT32";
    case GgufValueType::kFloat32: return "FLOAT32";
    case GgufValueType::kBool: return "BOOL";
    case GgufValueType::kString: return "STRING";
    case GgufValueType::kArray: return "ARRAY";
    case GgufValueType::kUint64: return "UINT64";
    case GgufValueType::kInt64: return "INT64";
    case GgufValueType::kFloat64: return "FLOAT64";
  }
  return "?";
}

std::size_t gguf_scalar_size(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool: return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16: return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32: return 4;
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64: return 8;
    case GgufValueType::kString:
    case GgufValueType::kArray: return 0;
  }
  return 0;
}

bool gguf_value_type_valid(std::uint32_t id) { return id <= 12; }

bool GgufValue::is_integer() const {
  switch (type_) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kUint64:
    case GgufValueType::kInt64: return true;
    default: return false;
  }
}

namespace {

bool is_signed_type(GgufValueType t) {
  return t == GgufValueType::kInt8 || t == GgufValueType::kInt16 || t == GgufValueType::kInt32 ||
         t == GgufValueType::kInt64;
}

// Sign-extends the stored little-endian payload of a signed integer type.
std::int64_t signed_payload(GgufValueType t, std::uint64_t bits) {
  switch (t) {
    case GgufValueType::kInt8: return static_cast<std::int8_t>(bits);
    case GgufValueType::kInt16: return static_cast<std::int16_t>(bits);
    case GgufValueType::kInt32: return static_cast<std::int32_t>(bits);
    default: return static_cast<std::int64_t>(bits);
  }
}

[[noreturn]] void type_mismatch(GgufValueType have, const char* want) {
  throw Error(std::string("value is ") + gguf_value_type_name(have) + ", expected " + want);
}

}  // namespace

std::uint64_t GgufValue::as_u64() const {
  if (type_ == GgufValueType::kBool) return bits_ != 0;
  if (!is_integer()) type_mismatch(type_, "an unsigned integer");
  if (is_signed_type(type_)) {
    std::int64_t v = signed_payload(type_, bits_);
    if (v < 0) throw Error("value " + std::to_string(v) + " is negative, expected an unsigned integer");
    return static_cast<std::uint64_t>(v);
  }
  return bits_;
}

std::int64_t GgufValue::as_i64() const {
  if (type_ == GgufValueType::kBool) return bits_ != 0;
  if (!is_integer()) type_mismatch(type_, "an integer");
  if (is_signed_type(type_)) return signed_payload(type_, bits_);
  if (bits_ > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw Error("value " + std::to_string(bits_) + " does not fit a signed 64-bit integer");
  return static_cast<std::int64_t>(bits_);
}

double GgufValue::as_f64() const {
  if (type_ == GgufValueType::kFloat32) {
    float f;
    std::uint32_t b = static_cast<std::uint32_t>(bits_);
    std::memcpy(&f, &b, 4);
    return f;
  }
  if (type_ == GgufValueType::kFloat64) {
    double d;
    std::memcpy(&d, &bits_, 8);
    return d;
  }
  if (is_integer()) {
    return is_signed_type(type_) ? static_cast<double>(signed_payload(type_, bits_)) : static_cast<double>(bits_);
  }
  type_mismatch(type_, "a number");
}

bool GgufValue::as_bool() const {
  if (type_ == GgufValueType::kBool) return bits_ != 0;
  if (is_integer()) return bits_ != 0;
  type_mismatch(type_, "a bool");
}

std::string_view GgufValue::as_string() const {
  if (type_ != GgufValueType::kString) type_mismatch(type_, "a string");
  return str_;
}

const std::vector<std::string_view>& GgufValue::array_strings() const {
  if (type_ != GgufValueType::kArray || elem_type_ != GgufValueType::kString) {
    type_mismatch(type_ == GgufValueType::kArray ? elem_type_ : type_, "an array of strings");
  }
  return strings_;
}

const std::vector<GgufValue>& GgufValue::array_items() const {
  if (type_ != GgufValueType::kArray || elem_type_ != GgufValueType::kArray)
    type_mismatch(type_ == GgufValueType::kArray ? elem_type_ : type_, "an array of arrays");
  return items_;
}

std::span<const std::uint8_t> GgufValue::array_bytes() const {
  if (type_ != GgufValueType::kArray || elem_type_ == GgufValueType::kString || elem_type_ == GgufValueType::kArray)
    type_mismatch(type_ == GgufValueType::kArray ? elem_type_ : type_, "a numeric array");
  return {raw_, static_cast<std::size_t>(count_ * gguf_scalar_size(elem_type_))};
}

GgufValue GgufValue::array_element(std::uint64_t i) const {
  if (type_ != GgufValueType::kArray) type_mismatch(type_, "an array");
  if (i >= count_)
    throw Error("array index " + std::to_string(i) + " out of range (size " + std::to_string(count_) + ")");
  if (elem_type_ == GgufValueType::kString) return string(strings_[i]);
  if (elem_type_ == GgufValueType::kArray) return items_[i];
  std::size_t sz = gguf_scalar_size(elem_type_);
  return scalar(elem_type_, raw_ + i * sz);
}

GgufValue GgufValue::scalar(GgufValueType t, const void* little_endian_bytes) {
  GgufValue v;
  v.type_ = t;
  std::memcpy(&v.bits_, little_endian_bytes, gguf_scalar_size(t));  // hosts are little-endian
  return v;
}

GgufValue GgufValue::string(std::string_view s) {
  GgufValue v;
  v.type_ = GgufValueType::kString;
  v.str_ = s;
  return v;
}

GgufValue GgufValue::numeric_array(GgufValueType elem, std::uint64_t count, const std::uint8_t* raw) {
  GgufValue v;
  v.type_ = GgufValueType::kArray;
  v.elem_type_ = elem;
  v.count_ = count;
  v.raw_ = raw;
  return v;
}

GgufValue GgufValue::string_array(std::vector<std::string_view> items) {
  GgufValue v;
  v.type_ = GgufValueType::kArray;
  v.elem_type_ = GgufValueType::kString;
  v.count_ = items.size();
  v.strings_ = std::move(items);
  return v;
}

GgufValue GgufValue::nested_array(GgufValueType elem, std::vector<GgufValue> items) {
  GgufValue v;
  v.type_ = GgufValueType::kArray;
  v.elem_type_ = elem;
  v.count_ = items.size();
  v.items_ = std::move(items);
  return v;
}

namespace {

std::string quote(std::string_view s, std::size_t max_len = 60) {
  std::string out = "\"";
  std::size_t n = 0;
  for (char c : s) {
    if (n++ == max_len) {
      out += "...";
      break;
    }
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '"')
      out += "\\\"";
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else
      out += c;
  }
  return out + "\"";
}

std::string scalar_string(const GgufValue& v) {
  switch (v.type()) {
    case GgufValueType::kBool: return v.as_bool() ? "true" : "false";
    case GgufValueType::kFloat32:
    case GgufValueType::kFloat64: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%g", v.as_f64());
      return buf;
    }
    case GgufValueType::kString: return quote(v.as_string());
    default:
      return v.type() == GgufValueType::kInt8 || v.type() == GgufValueType::kInt16 ||
                     v.type() == GgufValueType::kInt32 || v.type() == GgufValueType::kInt64
                 ? std::to_string(v.as_i64())
                 : std::to_string(v.as_u64());
  }
}

}  // namespace

std::string GgufValue::to_display_string(std::size_t max_items) const {
  if (type_ != GgufValueType::kArray) return scalar_string(*this);
  std::string out = "[";
  for (std::uint64_t i = 0; i < count_ && i < max_items; ++i) {
    if (i) out += ", ";
    out +=
        elem_type_ == GgufValueType::kArray ? items_[i].to_display_string(max_items) : scalar_string(array_element(i));
  }
  if (count_ > max_items) out += ", ... (" + std::to_string(count_) + " " + gguf_value_type_name(elem_type_) + ")";
  return out + "]";
}

}  // namespace wisp

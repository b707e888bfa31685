#include "formats/safetensors_file.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "formats/message_text.h"
#include "formats/strict_json.h"
#include "wisp/error.h"

namespace wisp {
namespace {

using json = nlohmann::json;

constexpr std::string_view kMetadataKey = "__metadata__";
// A valid header nests three deep ({name: {shape: [..]}}); a little slack lets a mistyped field
// fail with a message about that field rather than about depth.
constexpr int kMaxHeaderDepth = 8;

std::uint64_t read_le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A JSON number that is a non-negative integer representable as uint64, or nullopt.
std::optional<std::uint64_t> as_unsigned(const json& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    auto i = v.get<std::int64_t>();
    if (i >= 0) return static_cast<std::uint64_t>(i);
  }
  return std::nullopt;
}

// Shortens a JSON value for an error message: the user needs to recognise it, not read all of it.
std::string brief(const json& v) {
  std::string s = v.dump(-1, ' ', /*ensure_ascii=*/true);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

}  // namespace

std::string SafetensorsTensor::shape_string() const {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.map_ = std::make_unique<MappedFile>(path);
  f.bytes_ = f.map_->bytes();
  f.name_ = path;
  f.parse_all();
  return f;
}

SafetensorsFile SafetensorsFile::parse(std::span<const std::uint8_t> bytes, std::string name) {
  SafetensorsFile f;
  f.bytes_ = bytes;
  f.name_ = std::move(name);
  f.parse_all();
  return f;
}

const SafetensorsTensor* SafetensorsFile::find_tensor(std::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &tensors_[it->second];
}

const SafetensorsTensor& SafetensorsFile::tensor(std::string_view name) const {
  if (const auto* t = find_tensor(name)) return *t;
  throw Error(name_ + ": no tensor named " + in_quotes(name));
}

GgmlType SafetensorsFile::ggml_type(const SafetensorsTensor& t) const {
  if (auto g = safetensors_to_ggml_type(t.dtype)) return *g;
  throw Error(name_ + ": tensor " + in_quotes(t.name) + " has dtype " + t.dtype_name() +
              ", which wisp cannot load as weights (supported: F32, F16, BF16)");
}

void SafetensorsFile::parse_all() {
  const std::uint64_t file_size = bytes_.size();
  if (file_size < 8) {
    throw Error(name_ + ": file is " + std::to_string(file_size) +
                " bytes, too short for the 8-byte header length at byte offset 0");
  }
  header_size_ = read_le64(bytes_.data());
  if (header_size_ > kSafetensorsMaxHeaderBytes) {
    throw Error(name_ + ": header length " + std::to_string(header_size_) +
                " (byte offset 0) exceeds the format's limit of " + std::to_string(kSafetensorsMaxHeaderBytes) +
                " bytes");
  }
  if (header_size_ > file_size - 8) {
    throw Error(name_ + ": header length " + std::to_string(header_size_) +
                " (byte offset 0) runs past the end of the file: header would end at byte offset " +
                std::to_string(8 + header_size_) + ", file size is " + std::to_string(file_size));
  }
  const std::uint64_t data_start = 8 + header_size_;
  const std::uint64_t data_size = file_size - data_start;
  const std::string in_header = " (JSON header, byte offsets 8.." + std::to_string(data_start) + ")";
  auto header_error = [&](const std::string& what) -> Error { return Error(name_ + ": " + what + in_header); };

  std::string_view text(reinterpret_cast<const char*>(bytes_.data() + 8), header_size_);
  // The strict parser also rejects ill-formed UTF-8, so every name below is valid UTF-8.
  json header = parse_strict_json(text, name_, {.base_offset = 8, .max_depth = kMaxHeaderDepth});
  if (!header.is_object()) {
    throw header_error(std::string("header is a JSON ") + json_type_name(header) + ", expected an object");
  }

  tensors_.reserve(header.size());
  for (const auto& item : header.items()) {
    // Named references rather than structured bindings: clang 14 cannot capture those in lambdas.
    const std::string& name = item.key();
    const json& entry = item.value();
    if (name == kMetadataKey) {
      if (!entry.is_object()) {
        throw header_error("'__metadata__' is a JSON " + std::string(json_type_name(entry)) +
                           ", expected an object of strings");
      }
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) {
          throw header_error("'__metadata__' entry " + in_quotes(key) + " is a JSON " + json_type_name(value) +
                             ", expected a string");
        }
        metadata_.emplace(key, value.get<std::string>());
      }
      continue;
    }

    const std::string where = "tensor " + in_quotes(name);
    if (name.find('\0') != std::string::npos) {
      throw header_error(where + ": name contains a NUL character");
    }
    if (!entry.is_object()) {
      throw header_error(where + ": entry is a JSON " + std::string(json_type_name(entry)) +
                         ", expected an object with dtype, shape and data_offsets");
    }
    auto field = [&](const char* key) -> const json& {
      auto it = entry.find(key);
      if (it == entry.end()) throw header_error(where + ": missing field '" + key + "'");
      return *it;
    };

    SafetensorsTensor t;
    t.name = name;

    const json& dtype = field("dtype");
    if (!dtype.is_string()) {
      throw header_error(where + ": field 'dtype' is a JSON " + json_type_name(dtype) + ", expected a string");
    }
    const auto* info = find_safetensors_dtype(dtype.get_ref<const std::string&>());
    if (info == nullptr) {
      throw header_error(where + ": field 'dtype' has unknown dtype " + brief(dtype));
    }
    t.dtype = info->dtype;

    const json& shape = field("shape");
    if (!shape.is_array()) {
      throw header_error(where + ": field 'shape' is a JSON " + json_type_name(shape) + ", expected an array");
    }
    // Element count and bit count are checked for overflow at every step: a hostile shape such
    // as [2^40, 2^40] must be an error, not a wrapped small number that happens to match the span.
    std::uint64_t n_elements = 1;
    bool overflow = false;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      auto dim = as_unsigned(shape[i]);
      if (!dim) {
        throw header_error(where + ": field 'shape' element " + std::to_string(i) + " is " + brief(shape[i]) +
                           ", expected a non-negative integer");
      }
      if (*dim > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) overflow = true;
      if (__builtin_mul_overflow(n_elements, *dim, &n_elements)) overflow = true;
      t.shape.push_back(static_cast<std::int64_t>(*dim));
    }
    std::uint64_t n_bits = 0;
    if (overflow || n_elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
        __builtin_mul_overflow(n_elements, std::uint64_t{info->bits}, &n_bits)) {
      throw header_error(where + ": field 'shape' " + brief(shape) + " overflows: element count x " + info->name +
                         " size does not fit in 64 bits");
    }
    // overflow was checked above, so the dimension casts and this one are exact.
    t.n_elements = static_cast<std::int64_t>(n_elements);
    if (n_bits % 8 != 0) {
      throw header_error(where + ": shape " + t.shape_string() + " of " + info->name + " is " + std::to_string(n_bits) +
                         " bits, not a whole number of bytes");
    }

    const json& offsets = field("data_offsets");
    if (!offsets.is_array() || offsets.size() != 2) {
      throw header_error(where + ": field 'data_offsets' is " + brief(offsets) +
                         ", expected an array of two integers [begin, end]");
    }
    auto begin = as_unsigned(offsets[0]);
    auto end = as_unsigned(offsets[1]);
    if (!begin || !end) {
      throw header_error(where + ": field 'data_offsets' " + brief(offsets) + " must hold two non-negative integers");
    }
    t.data_begin = *begin;
    t.data_end = *end;
    if (t.data_begin > t.data_end) {
      throw header_error(where + ": field 'data_offsets' " + brief(offsets) + " has begin after end");
    }
    if (t.data_end > data_size) {
      throw Error(name_ + ": " + where + ": data_offsets " + brief(offsets) +
                  " end past the data region: it would end at byte offset " + std::to_string(data_start) + " + " +
                  std::to_string(t.data_end) + ", but the file is " + std::to_string(file_size) +
                  " bytes (data region is " + std::to_string(data_size) + " bytes)");
    }
    t.file_offset = data_start + t.data_begin;
    if (t.n_bytes() != n_bits / 8) {
      throw Error(name_ + ": " + where + ": shape " + t.shape_string() + " of " + info->name + " needs " +
                  std::to_string(n_bits / 8) + " bytes but data_offsets " + brief(offsets) + " span " +
                  std::to_string(t.n_bytes()) + " bytes (byte offset " + std::to_string(t.file_offset) + ")");
    }
    t.data = bytes_.data() + t.file_offset;
    tensors_.push_back(std::move(t));
  }

  // The spans must tile the data region exactly, as the format requires: this rules out two
  // tensors sharing bytes (a write through one view would change the other) and hidden payloads.
  std::sort(tensors_.begin(), tensors_.end(), [](const SafetensorsTensor& a, const SafetensorsTensor& b) {
    return std::tie(a.data_begin, a.data_end, a.name) < std::tie(b.data_begin, b.data_end, b.name);
  });
  std::uint64_t cursor = 0;
  const SafetensorsTensor* prev = nullptr;
  for (const auto& t : tensors_) {
    if (t.data_begin < cursor) {
      throw Error(name_ + ": tensor " + in_quotes(t.name) + " data [" + std::to_string(t.data_begin) + ", " +
                  std::to_string(t.data_end) + ") overlaps tensor " + in_quotes(prev->name) + " data [" +
                  std::to_string(prev->data_begin) + ", " + std::to_string(prev->data_end) + ") at byte offset " +
                  std::to_string(t.file_offset));
    }
    if (t.data_begin > cursor) {
      throw Error(name_ + ": gap of " + std::to_string(t.data_begin - cursor) + " unused bytes before tensor " +
                  in_quotes(t.name) + " at byte offset " + std::to_string(data_start + cursor) +
                  ": tensor data must be contiguous");
    }
    cursor = t.data_end;
    prev = &t;
  }
  if (cursor != data_size) {
    throw Error(name_ + ": " + std::to_string(data_size - cursor) +
                " unused bytes after the last tensor at byte offset " + std::to_string(data_start + cursor) +
                ": tensor data must cover the data region exactly");
  }

  for (std::size_t i = 0; i < tensors_.size(); ++i) index_.emplace(tensors_[i].name, i);
}

}  // namespace wisp

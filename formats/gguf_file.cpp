#include "formats/gguf_file.h"

#include <bit>
#include <cstdio>
#include <limits>

#include "formats/gguf_cursor.h"

namespace wisp {

namespace {

// Nested arrays deeper than this are not produced by any GGUF writer; the cap keeps a hostile
// file from recursing the parser into a stack overflow.
constexpr int kMaxArrayDepth = 8;
constexpr std::uint64_t kMaxDim = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());

std::string key_field(std::string_view key, const char* what) { return "metadata '" + std::string(key) + "' " + what; }

GgufValue read_value(ByteCursor& cur, GgufValueType type, std::string_view key, int depth);

GgufValue read_array(ByteCursor& cur, std::string_view key, int depth) {
  std::uint64_t at = cur.pos();
  if (depth >= kMaxArrayDepth)
    cur.fail(key_field(key, "array"), at, "arrays nested deeper than " + std::to_string(kMaxArrayDepth));
  std::uint32_t elem_id = cur.read<std::uint32_t>(key_field(key, "array element type"));
  if (!gguf_value_type_valid(elem_id))
    cur.fail(key_field(key, "array element type"), at, "unknown value type id " + std::to_string(elem_id));
  auto elem = static_cast<GgufValueType>(elem_id);
  std::uint64_t count_at = cur.pos();
  std::uint64_t count = cur.read<std::uint64_t>(key_field(key, "array length"));
  // Every element takes at least one byte (strings and arrays at least 8 and 12), so a count larger
  // than the bytes left is a lie; checking first keeps us from reserving absurd amounts.
  std::size_t min_elem = elem == GgufValueType::kString  ? 8
                         : elem == GgufValueType::kArray ? 12
                                                         : gguf_scalar_size(elem);
  if (count > cur.remaining() / min_elem) {
    cur.fail(key_field(key, "array length"), count_at,
             "length " + std::to_string(count) + " of " + gguf_value_type_name(elem) +
                 " runs past the end of the file (" + std::to_string(cur.remaining()) + " bytes left)");
  }
  if (elem == GgufValueType::kString) {
    std::vector<std::string_view> items;
    items.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) items.push_back(cur.read_string(key_field(key, "array string")));
    return GgufValue::string_array(std::move(items));
  }
  if (elem == GgufValueType::kArray) {
    std::vector<GgufValue> items;
    items.reserve(count);
    for (std::uint64_t i = 0; i < count; ++i) items.push_back(read_array(cur, key, depth + 1));
    return GgufValue::nested_array(elem, std::move(items));
  }
  const std::uint8_t* raw = cur.here();
  cur.skip(count * min_elem, key_field(key, "array data"));
  if (elem == GgufValueType::kBool) {
    for (std::uint64_t i = 0; i < count; ++i)
      if (raw[i] > 1)
        cur.fail(key_field(key, "bool array"), at + 12 + i,
                 "bool byte " + std::to_string(raw[i]) + " is neither 0 nor 1");
  }
  return GgufValue::numeric_array(elem, count, raw);
}

GgufValue read_value(ByteCursor& cur, GgufValueType type, std::string_view key, int depth) {
  std::uint64_t at = cur.pos();
  switch (type) {
    case GgufValueType::kString: return GgufValue::string(cur.read_string(key_field(key, "string value")));
    case GgufValueType::kArray: return read_array(cur, key, depth);
    default: {
      std::size_t n = gguf_scalar_size(type);
      cur.need(n, key_field(key, "value"));
      GgufValue v = GgufValue::scalar(type, cur.here());
      if (type == GgufValueType::kBool && *cur.here() > 1)
        cur.fail(key_field(key, "bool value"), at, "bool byte " + std::to_string(*cur.here()) + " is neither 0 nor 1");
      cur.skip(n, key_field(key, "value"));
      return v;
    }
  }
}

}  // namespace

std::string GgufTensor::shape_string() const {
  std::string s = "[";
  for (int i = 0; i < n_dims; ++i) {
    if (i) s += ", ";
    s += std::to_string(ne[i]);
  }
  return s + "]";
}

// A tensor type wisp cannot read: named when GGML defines it (a newer or rarer block type), with
// the types wisp does read, so the user knows whether another quantization of the model would do.
std::string unsupported_type_message(std::uint32_t id) {
  const char* name = ggml_type_name(id);
  return "unknown or unsupported tensor type id " + std::to_string(id) +
         (name ? std::string(" (GGML's ") + name + ", which wisp does not implement)"
               : std::string(" (not a GGML type)")) +
         "; wisp reads " + supported_block_type_names();
}

GgufFile GgufFile::open(const std::string& path, GgufOpenOptions options) {
  GgufFile f;
  f.map_ = std::make_unique<MappedFile>(path);
  f.bytes_ = f.map_->bytes();
  f.name_ = path;
  f.options_ = options;
  f.parse_all();
  return f;
}

GgufFile GgufFile::parse(std::span<const std::uint8_t> bytes, std::string name, GgufOpenOptions options) {
  GgufFile f;
  f.bytes_ = bytes;
  f.name_ = std::move(name);
  f.options_ = options;
  f.parse_all();
  return f;
}

void GgufFile::parse_all() {
  ByteCursor cur(bytes_, name_);
  std::uint32_t magic = cur.read<std::uint32_t>("magic");
  if (magic != kGgufMagic) {
    std::string got;
    for (int i = 0; i < 4; ++i) {
      unsigned char c = static_cast<unsigned char>(magic >> (8 * i));
      char buf[8];
      std::snprintf(buf, sizeof buf, (c >= 0x20 && c < 0x7f) ? "%c" : "\\x%02x", c);
      got += buf;
    }
    cur.fail("magic", 0, "not a GGUF file (expected \"GGUF\", found \"" + got + "\")");
  }
  version_ = cur.read<std::uint32_t>("version");
  if (version_ != 2 && version_ != 3) {
    if (__builtin_bswap32(version_) == 2 || __builtin_bswap32(version_) == 3)
      cur.fail("version", 4, "big-endian GGUF files are not supported");
    cur.fail("version", 4, "unsupported GGUF version " + std::to_string(version_) + " (wisp reads versions 2 and 3)");
  }
  std::uint64_t n_tensors = cur.read<std::uint64_t>("tensor_count");
  std::uint64_t n_kv = cur.read<std::uint64_t>("metadata_kv_count");
  // A key/value pair takes at least 8 (key length) + 4 (type) + 1 bytes; a tensor info at least
  // 8 + 4 + 8 + 4 + 8. Larger counts cannot be real.
  if (n_kv > cur.remaining() / 13)
    cur.fail("metadata_kv_count", 16, "count " + std::to_string(n_kv) + " exceeds what the file can hold");
  if (n_tensors > cur.remaining() / 32)
    cur.fail("tensor_count", 8, "count " + std::to_string(n_tensors) + " exceeds what the file can hold");

  kv_.reserve(n_kv);
  for (std::uint64_t i = 0; i < n_kv; ++i) {
    std::uint64_t at = cur.pos();
    std::string field = "metadata key #" + std::to_string(i);
    std::string_view key = cur.read_string(field);
    if (key.empty()) cur.fail(field, at, "empty key");
    if (!is_valid_utf8(key)) cur.fail(field, at, "key is not valid UTF-8");
    std::uint64_t type_at = cur.pos();
    std::uint32_t type_id = cur.read<std::uint32_t>(key_field(key, "type"));
    if (!gguf_value_type_valid(type_id))
      cur.fail(key_field(key, "type"), type_at, "unknown value type id " + std::to_string(type_id));
    GgufValue v = read_value(cur, static_cast<GgufValueType>(type_id), key, 0);
    if (!kv_index_.emplace(key, kv_.size()).second) cur.fail(key_field(key, "key"), at, "duplicate metadata key");
    kv_.push_back({key, std::move(v), at});
  }

  if (const GgufValue* a = find("general.alignment")) {
    const GgufKeyValue& kv = kv_[kv_index_.at("general.alignment")];
    std::uint64_t al = 0;
    try {
      al = a->as_u64();
    } catch (const Error& e) {
      cur.fail("metadata 'general.alignment'", kv.file_offset, e.what());
    }
    if (al == 0 || !std::has_single_bit(al) || al > (1u << 30))
      cur.fail("metadata 'general.alignment'", kv.file_offset,
               "alignment " + std::to_string(al) + " is not a power of two in [1, 2^30]");
    alignment_ = static_cast<std::uint32_t>(al);
  }

  tensors_.reserve(n_tensors);
  for (std::uint64_t i = 0; i < n_tensors; ++i) {
    std::uint64_t at = cur.pos();
    std::string field = "tensor info #" + std::to_string(i);
    GgufTensor t;
    t.name = cur.read_string(field + " name");
    if (!is_valid_utf8(t.name)) cur.fail(field + " name", at, "tensor name is not valid UTF-8");
    std::string tf = "tensor '" + std::string(t.name) + "'";
    std::uint64_t dims_at = cur.pos();
    std::uint32_t n_dims = cur.read<std::uint32_t>(tf + " n_dims");
    if (n_dims == 0 || n_dims > kGgufMaxDims)
      cur.fail(tf + " n_dims", dims_at, "n_dims " + std::to_string(n_dims) + " is outside [1, 4]");
    t.n_dims = static_cast<int>(n_dims);
    std::uint64_t n_elems = 1;
    for (std::uint32_t d = 0; d < n_dims; ++d) {
      std::uint64_t dim_at = cur.pos();
      std::uint64_t ne = cur.read<std::uint64_t>(tf + " dimension");
      if (ne == 0 || ne > kMaxDim)
        cur.fail(tf + " dimension " + std::to_string(d), dim_at, "size " + std::to_string(ne) + " is invalid");
      if (n_elems > kMaxDim / ne) cur.fail(tf + " shape", dims_at, "element count overflows 63 bits");
      n_elems *= ne;
      t.ne[d] = static_cast<std::int64_t>(ne);
    }
    std::uint64_t type_at = cur.pos();
    t.type_id = cur.read<std::uint32_t>(tf + " type");
    t.type = find_block_type(t.type_id);
    if (t.type == nullptr && !options_.keep_unknown_types) {
      cur.fail(tf + " type", type_at, unsupported_type_message(t.type_id));
    }
    if (t.type == nullptr) {
      // Kept for `wisp info`: its size is unknown, so only its offset is read (and checked below
      // for alignment and against the file's end as an empty extent).
      t.offset = cur.read<std::uint64_t>(tf + " offset");
      if (t.offset % alignment_ != 0) {
        cur.fail(tf + " offset", cur.pos() - 8,
                 "data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                     std::to_string(alignment_));
      }
      if (!tensor_index_.emplace(t.name, tensors_.size()).second)
        cur.fail(field + " name", at, "duplicate tensor name '" + std::string(t.name) + "'");
      tensors_.push_back(t);
      continue;
    }
    if (t.ne[0] % t.type->block_elems != 0)
      cur.fail(tf + " shape", dims_at,
               "row length " + std::to_string(t.ne[0]) + " is not a multiple of the " + t.type->name + " block size " +
                   std::to_string(t.type->block_elems));
    std::uint64_t n_blocks = n_elems / static_cast<std::uint64_t>(t.type->block_elems);
    if (n_blocks > std::numeric_limits<std::uint64_t>::max() / t.type->block_bytes)
      cur.fail(tf + " shape", dims_at, "byte size overflows 64 bits");
    t.n_bytes = n_blocks * t.type->block_bytes;
    std::uint64_t off_at = cur.pos();
    t.offset = cur.read<std::uint64_t>(tf + " offset");
    if (t.offset % alignment_ != 0)
      cur.fail(tf + " offset", off_at,
               "data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                   std::to_string(alignment_));
    if (!tensor_index_.emplace(t.name, tensors_.size()).second)
      cur.fail(field + " name", at, "duplicate tensor name '" + std::string(t.name) + "'");
    tensors_.push_back(t);
  }

  std::uint64_t end_of_infos = cur.pos();
  data_offset_ = (end_of_infos + alignment_ - 1) / alignment_ * alignment_;
  for (GgufTensor& t : tensors_) {
    std::string tf = "tensor '" + std::string(t.name) + "'";
    if (data_offset_ > bytes_.size() || t.offset > bytes_.size() - data_offset_ ||
        t.n_bytes > bytes_.size() - data_offset_ - t.offset) {
      cur.fail(tf + " data", data_offset_ + std::min<std::uint64_t>(t.offset, kMaxDim),
               std::to_string(t.n_bytes) + " bytes at data offset " + std::to_string(t.offset) +
                   " lie outside the file (size " + std::to_string(bytes_.size()) + ", data section at " +
                   std::to_string(data_offset_) + ")");
    }
    t.file_offset = data_offset_ + t.offset;
    t.data = bytes_.data() + t.file_offset;
  }
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].value;
}

const GgufValue& GgufFile::get(std::string_view key) const {
  const GgufValue* v = find(key);
  if (v == nullptr) throw Error(name_ + ": metadata key '" + std::string(key) + "' is missing");
  return *v;
}

namespace {
template <typename F>
auto typed_opt(const GgufFile& f, std::string_view key, F&& conv) -> std::optional<decltype(conv(*f.find(key)))> {
  const GgufValue* v = f.find(key);
  if (v == nullptr) return std::nullopt;
  try {
    return conv(*v);
  } catch (const Error& e) {
    throw Error(f.path() + ": metadata key '" + std::string(key) + "': " + e.what());
  }
}
}  // namespace

std::uint64_t GgufFile::get_u64(std::string_view key) const {
  get(key);
  return *get_u64_opt(key);
}
double GgufFile::get_f64(std::string_view key) const {
  get(key);
  return *get_f64_opt(key);
}
std::string_view GgufFile::get_string(std::string_view key) const {
  get(key);
  return *get_string_opt(key);
}

std::optional<std::uint64_t> GgufFile::get_u64_opt(std::string_view key) const {
  return typed_opt(*this, key, [](const GgufValue& v) { return v.as_u64(); });
}
std::optional<double> GgufFile::get_f64_opt(std::string_view key) const {
  return typed_opt(*this, key, [](const GgufValue& v) { return v.as_f64(); });
}
std::optional<std::string_view> GgufFile::get_string_opt(std::string_view key) const {
  return typed_opt(*this, key, [](const GgufValue& v) { return v.as_string(); });
}
std::optional<bool> GgufFile::get_bool_opt(std::string_view key) const {
  return typed_opt(*this, key, [](const GgufValue& v) { return v.as_bool(); });
}

const GgufTensor* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const GgufTensor& GgufFile::tensor(std::string_view name) const {
  const GgufTensor* t = find_tensor(name);
  if (t == nullptr) throw Error(name_ + ": tensor '" + std::string(name) + "' is missing");
  return *t;
}

std::string_view GgufFile::architecture() const {
  auto a = get_string_opt("general.architecture");
  return a ? *a : std::string_view();
}

}  // namespace wisp

#include "formats/gguf_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "formats/block_types.h"
#include "formats/gguf_file.h"
#include "wisp/error.h"

namespace wisp {

namespace {

template <typename T>
void put(std::vector<std::uint8_t>& out, T v) {
  std::uint8_t b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // little-endian hosts
  out.insert(out.end(), b, b + sizeof(T));
}

void put_string(std::vector<std::uint8_t>& out, std::string_view s) {
  put<std::uint64_t>(out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

void put_value_body(std::vector<std::uint8_t>& out, const GgufValue& v) {
  switch (v.type()) {
    case GgufValueType::kString: put_string(out, v.as_string()); return;
    case GgufValueType::kArray: {
      put<std::uint32_t>(out, static_cast<std::uint32_t>(v.array_type()));
      put<std::uint64_t>(out, v.array_size());
      if (v.array_type() == GgufValueType::kString) {
        for (std::string_view s : v.array_strings()) put_string(out, s);
      } else if (v.array_type() == GgufValueType::kArray) {
        for (const GgufValue& item : v.array_items()) put_value_body(out, item);
      } else {
        for (std::uint64_t i = 0; i < v.array_size(); ++i) put_value_body(out, v.array_element(i));
      }
      return;
    }
    default: {
      // Scalars: re-emit the stored little-endian payload at the type's width.
      std::uint64_t bits = 0;
      if (v.type() == GgufValueType::kFloat32) {
        float f = static_cast<float>(v.as_f64());
        std::memcpy(&bits, &f, 4);
      } else if (v.type() == GgufValueType::kFloat64) {
        double d = v.as_f64();
        std::memcpy(&bits, &d, 8);
      } else if (v.type() == GgufValueType::kBool) {
        bits = v.as_bool();
      } else if (v.type() == GgufValueType::kInt8 || v.type() == GgufValueType::kInt16 ||
                 v.type() == GgufValueType::kInt32 || v.type() == GgufValueType::kInt64) {
        bits = static_cast<std::uint64_t>(v.as_i64());
      } else {
        bits = v.as_u64();
      }
      std::uint8_t b[8];
      std::memcpy(b, &bits, 8);
      out.insert(out.end(), b, b + gguf_scalar_size(v.type()));
    }
  }
}

std::uint64_t align_up(std::uint64_t x, std::uint64_t a) { return (x + a - 1) / a * a; }

}  // namespace

GgufWriter::GgufWriter(std::uint32_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0)
    throw Error("GGUF writer: alignment " + std::to_string(alignment) + " is not a power of two");
  if (alignment != kGgufDefaultAlignment) set_u32("general.alignment", alignment);
}

void GgufWriter::begin_key(std::string_view key, GgufValueType type) {
  if (key.empty()) throw Error("GGUF writer: empty metadata key");
  if (!keys_.emplace(key).second) throw Error("GGUF writer: duplicate metadata key '" + std::string(key) + "'");
  put_string(kv_bytes_, key);
  put<std::uint32_t>(kv_bytes_, static_cast<std::uint32_t>(type));
  ++n_kv_;
}

void GgufWriter::set_u8(std::string_view k, std::uint8_t v) {
  begin_key(k, GgufValueType::kUint8);
  put(kv_bytes_, v);
}
void GgufWriter::set_i8(std::string_view k, std::int8_t v) {
  begin_key(k, GgufValueType::kInt8);
  put(kv_bytes_, v);
}
void GgufWriter::set_u16(std::string_view k, std::uint16_t v) {
  begin_key(k, GgufValueType::kUint16);
  put(kv_bytes_, v);
}
void GgufWriter::set_i16(std::string_view k, std::int16_t v) {
  begin_key(k, GgufValueType::kInt16);
  put(kv_bytes_, v);
}
void GgufWriter::set_u32(std::string_view k, std::uint32_t v) {
  begin_key(k, GgufValueType::kUint32);
  put(kv_bytes_, v);
}
void GgufWriter::set_i32(std::string_view k, std::int32_t v) {
  begin_key(k, GgufValueType::kInt32);
  put(kv_bytes_, v);
}
void GgufWriter::set_u64(std::string_view k, std::uint64_t v) {
  begin_key(k, GgufValueType::kUint64);
  put(kv_bytes_, v);
}
void GgufWriter::set_i64(std::string_view k, std::int64_t v) {
  begin_key(k, GgufValueType::kInt64);
  put(kv_bytes_, v);
}
void GgufWriter::set_f32(std::string_view k, float v) {
  begin_key(k, GgufValueType::kFloat32);
  put(kv_bytes_, v);
}
void GgufWriter::set_f64(std::string_view k, double v) {
  begin_key(k, GgufValueType::kFloat64);
  put(kv_bytes_, v);
}
void GgufWriter::set_bool(std::string_view k, bool v) {
  begin_key(k, GgufValueType::kBool);
  put<std::uint8_t>(kv_bytes_, v ? 1 : 0);
}
void GgufWriter::set_string(std::string_view k, std::string_view v) {
  begin_key(k, GgufValueType::kString);
  put_string(kv_bytes_, v);
}

namespace {
template <typename T>
void put_array(std::vector<std::uint8_t>& out, GgufValueType elem, const std::vector<T>& v) {
  put<std::uint32_t>(out, static_cast<std::uint32_t>(elem));
  put<std::uint64_t>(out, v.size());
  for (const T& x : v) put(out, x);
}
}  // namespace

void GgufWriter::set_strings(std::string_view k, const std::vector<std::string>& v) {
  begin_key(k, GgufValueType::kArray);
  put<std::uint32_t>(kv_bytes_, static_cast<std::uint32_t>(GgufValueType::kString));
  put<std::uint64_t>(kv_bytes_, v.size());
  for (const std::string& s : v) put_string(kv_bytes_, s);
}
void GgufWriter::set_i32s(std::string_view k, const std::vector<std::int32_t>& v) {
  begin_key(k, GgufValueType::kArray);
  put_array(kv_bytes_, GgufValueType::kInt32, v);
}
void GgufWriter::set_u32s(std::string_view k, const std::vector<std::uint32_t>& v) {
  begin_key(k, GgufValueType::kArray);
  put_array(kv_bytes_, GgufValueType::kUint32, v);
}
void GgufWriter::set_f32s(std::string_view k, const std::vector<float>& v) {
  begin_key(k, GgufValueType::kArray);
  put_array(kv_bytes_, GgufValueType::kFloat32, v);
}
void GgufWriter::set_value(std::string_view k, const GgufValue& v) {
  begin_key(k, v.type());
  put_value_body(kv_bytes_, v);
}

void GgufWriter::add_tensor(std::string_view name, std::uint32_t type_id, std::vector<std::int64_t> ne,
                            TensorFill fill) {
  std::string where = "GGUF writer: tensor '" + std::string(name) + "'";
  const BlockTypeInfo* type = find_block_type(type_id);
  if (type == nullptr) throw Error(where + ": unknown type id " + std::to_string(type_id));
  if (ne.empty() || ne.size() > static_cast<std::size_t>(kGgufMaxDims))
    throw Error(where + ": " + std::to_string(ne.size()) + " dimensions, expected 1 to 4");
  std::uint64_t n = 1;
  for (std::int64_t d : ne) {
    if (d <= 0) throw Error(where + ": dimension " + std::to_string(d) + " is not positive");
    n *= static_cast<std::uint64_t>(d);
  }
  if (ne[0] % type->block_elems != 0)
    throw Error(where + ": row length " + std::to_string(ne[0]) + " is not a multiple of the " + type->name +
                " block size " + std::to_string(type->block_elems));
  if (!tensor_names_.emplace(name).second) throw Error(where + ": duplicate tensor name");
  Tensor t{std::string(name), type_id, std::move(ne), n / type->block_elems * type->block_bytes, 0, std::move(fill)};
  t.offset = align_up(data_size_, alignment_);
  data_size_ = t.offset + t.n_bytes;
  tensors_.push_back(std::move(t));
}

void GgufWriter::add_tensor(std::string_view name, std::uint32_t type_id, std::vector<std::int64_t> ne,
                            std::span<const std::uint8_t> data) {
  std::string n(name);
  add_tensor(name, type_id, std::move(ne), [data, n](std::span<std::uint8_t> out) {
    if (out.size() != data.size())
      throw Error("GGUF writer: tensor '" + n + "' has " + std::to_string(data.size()) +
                  " bytes of data, its shape needs " + std::to_string(out.size()));
    std::memcpy(out.data(), data.data(), out.size());
  });
}

std::vector<std::uint8_t> GgufWriter::header_bytes() const {
  std::vector<std::uint8_t> h;
  put<std::uint32_t>(h, kGgufMagic);
  put<std::uint32_t>(h, 3);
  put<std::uint64_t>(h, tensors_.size());
  put<std::uint64_t>(h, n_kv_);
  h.insert(h.end(), kv_bytes_.begin(), kv_bytes_.end());
  for (const Tensor& t : tensors_) {
    put_string(h, t.name);
    put<std::uint32_t>(h, static_cast<std::uint32_t>(t.ne.size()));
    for (std::int64_t d : t.ne) put<std::uint64_t>(h, static_cast<std::uint64_t>(d));
    put<std::uint32_t>(h, t.type_id);
    put<std::uint64_t>(h, t.offset);
  }
  h.resize(align_up(h.size(), alignment_), 0);
  return h;
}

// Emits the whole file as a sequence of chunks to `sink(const uint8_t*, size_t)`.
template <typename Sink>
void GgufWriter::emit(Sink&& sink) const {
  std::vector<std::uint8_t> h = header_bytes();
  sink(h.data(), h.size());
  std::uint64_t pos = 0;
  std::vector<std::uint8_t> buf;
  static const std::uint8_t kZeros[64] = {};
  for (const Tensor& t : tensors_) {
    while (pos < t.offset) {
      std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(sizeof kZeros, t.offset - pos));
      sink(kZeros, n);
      pos += n;
    }
    buf.assign(t.n_bytes, 0);
    t.fill(buf);
    sink(buf.data(), buf.size());
    pos += t.n_bytes;
  }
}

std::vector<std::uint8_t> GgufWriter::to_bytes() const {
  std::vector<std::uint8_t> out;
  emit([&](const std::uint8_t* p, std::size_t n) { out.insert(out.end(), p, p + n); });
  return out;
}

void GgufWriter::write(const std::string& path) const {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw Error(path + ": cannot create output file: " + std::strerror(errno));
  try {
    emit([&](const std::uint8_t* p, std::size_t n) {
      if (std::fwrite(p, 1, n, f) != n) throw Error(path + ": write failed: " + std::strerror(errno));
    });
    if (std::fflush(f) != 0 || ::fsync(::fileno(f)) != 0) throw Error(path + ": write failed: " + std::strerror(errno));
  } catch (...) {
    std::fclose(f);
    std::remove(tmp.c_str());
    throw;
  }
  if (std::fclose(f) != 0) {
    std::remove(tmp.c_str());
    throw Error(path + ": write failed: " + std::strerror(errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    std::remove(tmp.c_str());
    throw Error(path + ": cannot rename the finished temporary file into place: " + std::strerror(err));
  }
}

}  // namespace wisp

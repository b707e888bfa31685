#include "plan/gguf_model.h"

#include <optional>

#include "wisp/error.h"

namespace wisp::plan {
namespace {

// A count that some architectures store per layer (an array) and most as one scalar.
std::optional<std::uint64_t> uniform_count(const GgufFile& f, const std::string& key) {
  const GgufValue* v = f.find(key);
  if (v == nullptr) return std::nullopt;
  if (!v->is_array()) return v->as_u64();
  if (v->array_size() == 0) throw Error(f.path() + ": " + key + " is an empty array");
  const std::uint64_t first = v->array_element(0).as_u64();
  for (std::uint64_t i = 1; i < v->array_size(); ++i) {
    if (v->array_element(i).as_u64() != first) {
      throw Error(f.path() + ": " + key + " differs between layers; wisp plan assumes every layer has the same shape");
    }
  }
  return first;
}

std::uint64_t required_count(const GgufFile& f, const std::string& key) {
  auto v = uniform_count(f, key);
  if (!v) throw Error(f.path() + ": missing metadata key " + key);
  if (*v == 0) throw Error(f.path() + ": " + key + " is 0");
  return *v;
}

}  // namespace

ModelShape model_shape_from_gguf(const GgufFile& f) {
  const std::string arch(f.architecture());
  if (arch.empty()) {
    throw Error(f.path() +
                ": no general.architecture key, so the layer and head counts "
                "cannot be found");
  }
  ModelShape m;
  m.source = f.path();
  m.architecture = arch;
  m.kv.layers = required_count(f, arch + ".block_count");
  const std::uint64_t heads = required_count(f, arch + ".attention.head_count");
  m.kv.kv_heads = uniform_count(f, arch + ".attention.head_count_kv").value_or(heads);
  if (m.kv.kv_heads == 0) throw Error(f.path() + ": " + arch + ".attention.head_count_kv is 0");

  if (auto k = uniform_count(f, arch + ".attention.key_length")) {
    m.kv.head_dim = *k;
    auto v = uniform_count(f, arch + ".attention.value_length");
    if (v && *v != *k) {
      throw Error(f.path() + ": K and V head sizes differ (" + std::to_string(*k) + " vs " + std::to_string(*v) +
                  "); wisp plan's KV formula assumes they are equal");
    }
  } else {
    const std::uint64_t d_model = required_count(f, arch + ".embedding_length");
    if (d_model % heads != 0) {
      throw Error(f.path() + ": " + arch + ".embedding_length " + std::to_string(d_model) +
                  " is not a multiple of head_count " + std::to_string(heads) + " and no key_length is stored");
    }
    m.kv.head_dim = d_model / heads;
  }
  if (m.kv.head_dim == 0) throw Error(f.path() + ": head size is 0");

  std::uint64_t bytes = 0;
  double params = 0;
  for (const GgufTensor& t : f.tensors()) {
    params += static_cast<double>(t.n_elements());
    bytes += t.n_bytes;
  }
  if (f.tensors().empty()) throw Error(f.path() + ": the file holds no tensors");
  m.params = params;
  m.file_weight_bytes = bytes;
  m.reads = decode_reads_from_gguf(f);
  m.context_length = uniform_count(f, arch + ".context_length");
  m.sliding_window = uniform_count(f, arch + ".attention.sliding_window");
  if (m.sliding_window && *m.sliding_window == 0) m.sliding_window.reset();
  return m;
}

ModelShape model_shape_from_gguf(const std::string& path) { return model_shape_from_gguf(GgufFile::open(path)); }

}  // namespace wisp::plan

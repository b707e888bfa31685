#include "kv/kv_layout.h"

#include <string>

#include "wisp/error.h"

namespace wisp {

std::string_view kv_type_name(KvType t) {
  switch (t) {
    case KvType::kF32: return "f32";
    case KvType::kF16: return "f16";
  }
  return "unknown";
}

std::size_t kv_type_bytes(KvType t) {
  switch (t) {
    case KvType::kF32: return 4;
    case KvType::kF16: return 2;
  }
  throw Error("KV layout: unknown element type " + std::to_string(static_cast<int>(t)));
}

void KvLayout::validate() const {
  auto need = [](std::uint32_t v, const char* name) {
    if (v == 0) throw Error(std::string("KV layout: ") + name + " must be at least 1 (got 0)");
  };
  need(n_layers, "n_layers");
  need(n_kv_heads, "n_kv_heads");
  need(head_dim, "head_dim");
  need(block_size, "block_size");
  kv_type_bytes(type);
}

}  // namespace wisp

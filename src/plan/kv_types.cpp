#include "plan/kv_types.h"

#include <array>

#include "wisp/error.h"

namespace wisp::plan {
namespace {

constexpr std::array<KvElementType, 4> kKvTypes = {{
    {"f16", 1, 2, "IEEE half, 2 bytes per value"},
    {"f32", 1, 4, "IEEE single, 4 bytes per value"},
    {"q8_0", 32, 34, "32 int8 codes + f16 scale per 32 values = 1.0625 bytes per value"},
    {"q4", 32, 20,
     "32 4-bit codes + f16 scale + f16 zero-point per 32 values = 0.625 bytes per value"},
}};

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

}  // namespace

std::span<const KvElementType> kv_types() { return kKvTypes; }

const KvElementType& kv_type_by_name(std::string_view name) {
  for (const KvElementType& t : kKvTypes) {
    if (iequals(t.name, name)) return t;
  }
  throw Error("unknown KV type '" + std::string(name) + "' (known: " + kv_type_names() + ")");
}

std::string kv_type_names() {
  std::string out;
  for (const KvElementType& t : kKvTypes) {
    if (!out.empty()) out += ", ";
    out += t.name;
  }
  return out;
}

KvElementType kv_plain_type(std::uint32_t bytes_per_value) {
  if (bytes_per_value == 0) throw Error("bytes per KV value must be positive");
  return {"plain", 1, bytes_per_value, "plain bytes per value, no scales"};
}

}  // namespace wisp::plan

#include "kv/kv_type.h"

#include <array>

#include "wisp/error.h"

namespace wisp {
namespace {

struct Entry {
  KvType type;
  KvTypeInfo info;
};

constexpr std::array<Entry, 4> kTypes = {{
    {KvType::kF16, {"f16", 1, 2, "IEEE half, 2 bytes per value"}},
    {KvType::kF32, {"f32", 1, 4, "IEEE single, 4 bytes per value"}},
    {KvType::kQ8_0, {"q8_0", 32, 34, "32 int8 codes + f16 scale per 32 values = 1.0625 bytes per value"}},
    {KvType::kQ4, {"q4", 32, 20, "32 4-bit codes + f16 scale + f16 zero-point per 32 values = 0.625 bytes per value"}},
}};

// The table is indexed by search, not by enum value, so its order is free to follow the help text.
constexpr std::array<KvTypeInfo, 4> infos() {
  std::array<KvTypeInfo, 4> out{};
  for (std::size_t i = 0; i < kTypes.size(); ++i) out[i] = kTypes[i].info;
  return out;
}
constexpr std::array<KvTypeInfo, 4> kInfos = infos();

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

const Entry& entry_by_name(std::string_view name) {
  for (const Entry& e : kTypes) {
    if (iequals(e.info.name, name)) return e;
  }
  throw Error("unknown KV type '" + std::string(name) + "' (known: " + kv_type_names() + ")");
}

}  // namespace

std::span<const KvTypeInfo> kv_types() { return kInfos; }

const KvTypeInfo& kv_type_info(KvType t) {
  for (std::size_t i = 0; i < kTypes.size(); ++i) {
    if (kTypes[i].type == t) return kInfos[i];
  }
  throw Error("KV layout: unknown element type " + std::to_string(static_cast<int>(t)));
}

std::string_view kv_type_name(KvType t) { return kv_type_info(t).name; }

const KvTypeInfo& kv_type_by_name(std::string_view name) { return kv_type_info(entry_by_name(name).type); }

KvType kv_type_from_name(std::string_view name) { return entry_by_name(name).type; }

std::string kv_type_names() {
  std::string out;
  for (const Entry& e : kTypes) {
    if (!out.empty()) out += ", ";
    out += e.info.name;
  }
  return out;
}

}  // namespace wisp

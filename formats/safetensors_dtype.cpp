#include "formats/safetensors_dtype.h"

#include <array>

namespace wisp {
namespace {

// Indexed by the enum value; the static_assert below keeps the two in step.
constexpr std::array<SafetensorsDtypeInfo, 22> kDtypes = {{
    {SafetensorsDtype::kBool, "BOOL", 8},
    {SafetensorsDtype::kU8, "U8", 8},
    {SafetensorsDtype::kI8, "I8", 8},
    {SafetensorsDtype::kF8_E5M2, "F8_E5M2", 8},
    {SafetensorsDtype::kF8_E4M3, "F8_E4M3", 8},
    {SafetensorsDtype::kF8_E5M2FNUZ, "F8_E5M2FNUZ", 8},
    {SafetensorsDtype::kF8_E4M3FNUZ, "F8_E4M3FNUZ", 8},
    {SafetensorsDtype::kF8_E8M0, "F8_E8M0", 8},
    {SafetensorsDtype::kI16, "I16", 16},
    {SafetensorsDtype::kU16, "U16", 16},
    {SafetensorsDtype::kF16, "F16", 16},
    {SafetensorsDtype::kBF16, "BF16", 16},
    {SafetensorsDtype::kI32, "I32", 32},
    {SafetensorsDtype::kU32, "U32", 32},
    {SafetensorsDtype::kF32, "F32", 32},
    {SafetensorsDtype::kF64, "F64", 64},
    {SafetensorsDtype::kI64, "I64", 64},
    {SafetensorsDtype::kU64, "U64", 64},
    {SafetensorsDtype::kC64, "C64", 64},
    {SafetensorsDtype::kF4, "F4", 4},
    {SafetensorsDtype::kF6_E2M3, "F6_E2M3", 6},
    {SafetensorsDtype::kF6_E3M2, "F6_E3M2", 6},
}};

constexpr bool table_matches_enum() {
  for (std::size_t i = 0; i < kDtypes.size(); ++i) {
    if (static_cast<std::size_t>(kDtypes[i].dtype) != i) return false;
  }
  return true;
}
static_assert(table_matches_enum(), "kDtypes must be in enum order");

}  // namespace

const SafetensorsDtypeInfo* find_safetensors_dtype(std::string_view name) {
  for (const auto& info : kDtypes) {
    if (name == info.name) return &info;
  }
  return nullptr;
}

const SafetensorsDtypeInfo& safetensors_dtype_info(SafetensorsDtype dtype) {
  return kDtypes[static_cast<std::size_t>(dtype)];
}

std::optional<GgmlType> safetensors_to_ggml_type(SafetensorsDtype dtype) {
  switch (dtype) {
    case SafetensorsDtype::kF32: return GgmlType::kF32;
    case SafetensorsDtype::kF16: return GgmlType::kF16;
    case SafetensorsDtype::kBF16: return GgmlType::kBF16;
    default: return std::nullopt;
  }
}

}  // namespace wisp

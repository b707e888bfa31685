// The block-type registry: a constant table, in id order, of every type wisp can load, each with
// its scalar reference kernels (formats/blocks/).
#include "formats/block_types.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

#include "formats/block_layouts.h"
#include "formats/blocks/reference.h"
#include "formats/wq_format.h"
#include "wisp/error.h"

namespace wisp {

namespace {

using namespace blocks;

constexpr std::array kBlockTypes = {
    BlockTypeInfo{0, "F32", 1, 4, dequantize_f32, quantize_f32},
    BlockTypeInfo{1, "F16", 1, 2, dequantize_f16, quantize_f16},
    BlockTypeInfo{2, "Q4_0", kQK, sizeof(BlockQ4_0), dequantize_q4_0, quantize_q4_0},
    BlockTypeInfo{3, "Q4_1", kQK, sizeof(BlockQ4_1), dequantize_q4_1, quantize_q4_1},
    BlockTypeInfo{6, "Q5_0", kQK, sizeof(BlockQ5_0), dequantize_q5_0, quantize_q5_0},
    BlockTypeInfo{7, "Q5_1", kQK, sizeof(BlockQ5_1), dequantize_q5_1, quantize_q5_1},
    BlockTypeInfo{8, "Q8_0", kQK, sizeof(BlockQ8_0), dequantize_q8_0, quantize_q8_0},
    BlockTypeInfo{10, "Q2_K", kQK_K, sizeof(BlockQ2_K), dequantize_q2_k, nullptr},
    BlockTypeInfo{11, "Q3_K", kQK_K, sizeof(BlockQ3_K), dequantize_q3_k, nullptr},
    BlockTypeInfo{12, "Q4_K", kQK_K, sizeof(BlockQ4_K), dequantize_q4_k, nullptr},
    BlockTypeInfo{13, "Q5_K", kQK_K, sizeof(BlockQ5_K), dequantize_q5_k, nullptr},
    BlockTypeInfo{14, "Q6_K", kQK_K, sizeof(BlockQ6_K), dequantize_q6_k, nullptr},
    BlockTypeInfo{16, "IQ2_XXS", kQK_K, sizeof(BlockIQ2_XXS), dequantize_iq2_xxs, nullptr},
    BlockTypeInfo{17, "IQ2_XS", kQK_K, sizeof(BlockIQ2_XS), dequantize_iq2_xs, nullptr},
    BlockTypeInfo{18, "IQ3_XXS", kQK_K, sizeof(BlockIQ3_XXS), dequantize_iq3_xxs, nullptr},
    BlockTypeInfo{19, "IQ1_S", kQK_K, sizeof(BlockIQ1_S), dequantize_iq1_s, nullptr},
    BlockTypeInfo{20, "IQ4_NL", kQK, sizeof(BlockIQ4_NL), dequantize_iq4_nl, nullptr},
    BlockTypeInfo{21, "IQ3_S", kQK_K, sizeof(BlockIQ3_S), dequantize_iq3_s, nullptr},
    BlockTypeInfo{22, "IQ2_S", kQK_K, sizeof(BlockIQ2_S), dequantize_iq2_s, nullptr},
    BlockTypeInfo{23, "IQ4_XS", kQK_K, sizeof(BlockIQ4_XS), dequantize_iq4_xs, nullptr},
    BlockTypeInfo{29, "IQ1_M", kQK_K, sizeof(BlockIQ1_M), dequantize_iq1_m, nullptr},
    BlockTypeInfo{30, "BF16", 1, 2, dequantize_bf16, quantize_bf16},
    BlockTypeInfo{34, "TQ1_0", kQK_K, sizeof(BlockTQ1_0), dequantize_tq1_0, nullptr},
    BlockTypeInfo{35, "TQ2_0", kQK_K, sizeof(BlockTQ2_0), dequantize_tq2_0, nullptr},
    BlockTypeInfo{39, "MXFP4", kQK, sizeof(BlockMXFP4), dequantize_mxfp4, nullptr},
    BlockTypeInfo{40, "NVFP4", kQK_NVFP4, sizeof(BlockNVFP4), dequantize_nvfp4, nullptr},
};

constexpr bool ids_ascending() {
  for (std::size_t i = 1; i < kBlockTypes.size(); ++i) {
    if (kBlockTypes[i - 1].id >= kBlockTypes[i].id) return false;
  }
  return true;
}
static_assert(ids_ascending(), "all_block_types() promises id order");
static_assert(static_cast<std::uint32_t>(GgmlType::kQ6_K) == 14 && static_cast<std::uint32_t>(GgmlType::kBF16) == 30);

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

namespace blocks {

void require_whole_blocks(const char* type_name, std::int64_t n_elems, std::int64_t block_elems) {
  if (n_elems < 0 || n_elems % block_elems != 0) {
    throw Error(std::string(type_name) + ": " + std::to_string(n_elems) + " values is not a whole number of " +
                std::to_string(block_elems) + "-value blocks");
  }
}

}  // namespace blocks

const BlockTypeInfo* find_block_type(std::uint32_t id) {
  for (const auto& t : kBlockTypes) {
    if (t.id == id) return &t;
  }
  for (const auto& t : all_wq_block_types()) {  // wisp's own types (formats/wq_format.h)
    if (t.id == id) return &t;
  }
  return nullptr;
}

const BlockTypeInfo* find_block_type(std::string_view name) {
  for (const auto& t : kBlockTypes) {
    if (iequals(t.name, name)) return &t;
  }
  for (const auto& t : all_wq_block_types()) {
    if (iequals(t.name, name)) return &t;
  }
  return nullptr;
}

const BlockTypeInfo& block_type(GgmlType t) {
  const BlockTypeInfo* info = find_block_type(static_cast<std::uint32_t>(t));
  if (info == nullptr) {
    const char* name = ggml_type_name(static_cast<std::uint32_t>(t));
    throw Error("block type id " + std::to_string(static_cast<std::uint32_t>(t)) +
                (name ? std::string(" (") + name + ")" : "") +
                " is a GGML type wisp does not implement (no reference dequantizer); it reads " +
                supported_block_type_names());
  }
  return *info;
}

std::span<const BlockTypeInfo> all_block_types() { return kBlockTypes; }

const char* ggml_type_name(std::uint32_t id) {
  // GGML's type ids (ggml.h's enum ggml_type, as the gguf package lists them); the gaps (4, 5:
  // the removed Q4_2/Q4_3; 31-33: the removed Q4_0_4_4 ... repacked layouts) hold nothing.
  static constexpr const char* kNames[] = {
      "F32",   "F16",    "Q4_0",  "Q4_1", "",     "",        "Q5_0",   "Q5_1",    "Q8_0",  "Q8_1",   "Q2_K",
      "Q3_K",  "Q4_K",   "Q5_K",  "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S",
      "IQ2_S", "IQ4_XS", "I8",    "I16",  "I32",  "I64",     "F64",    "IQ1_M",   "BF16",  "",       "",
      "",      "TQ1_0",  "TQ2_0", "",     "",     "",        "MXFP4",  "NVFP4",   "Q1_0"};
  if (id < std::size(kNames) && kNames[id][0] != '\0') return kNames[id];
  return nullptr;
}

std::string supported_block_type_names() {
  std::string out;
  auto append = [&out](const BlockTypeInfo& t) {
    if (!out.empty()) out += ", ";
    out += t.name;
  };
  for (const auto& t : kBlockTypes) append(t);
  for (const auto& t : all_wq_block_types()) append(t);
  return out;
}

}  // namespace wisp

// -m FILE: the model shape read from the two real GGUF models (models/, fetched by
// scripts/fetch_models). Expected values come from the `gguf` Python package, the format's own
// reader (sum of tensor.n_elements and tensor.n_bytes over GGUFReader(path).tensors, and the
// metadata fields), not from wisp.
#include <gtest/gtest.h>

#include <filesystem>

#include "plan/gguf_model.h"
#include "plan/kv_bytes.h"
#include "plan/kv_types.h"

namespace wisp::plan {
namespace {

std::string model_path(const char* name) { return std::string(WISP_MODELS_DIR) + "/" + name; }

TEST(GgufModel, SmolLm2GroupedQueryAttention) {
  const std::string path = model_path("SmolLM2-135M-Instruct.Q4_1.gguf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not fetched";
  const ModelShape m = model_shape_from_gguf(path);
  EXPECT_EQ(m.architecture, "llama");
  EXPECT_EQ(m.kv.layers, 30u);
  EXPECT_EQ(m.kv.kv_heads, 3u);
  EXPECT_EQ(m.kv.head_dim, 64u);  // no key_length stored: embedding_length 576 / head_count 9
  EXPECT_EQ(m.params, 134515008.0);
  EXPECT_EQ(*m.file_weight_bytes, 96576768u);
  EXPECT_EQ(kv_bytes_per_token(m.kv, kv_type_by_name("f16")), 2u * 30 * 3 * 64 * 2);
}

TEST(GgufModel, Gemma3KeyLength) {
  const std::string path = model_path("gemma-3-270m-q4_k_m.gguf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " not fetched";
  const ModelShape m = model_shape_from_gguf(path);
  EXPECT_EQ(m.architecture, "gemma3");
  EXPECT_EQ(m.kv.layers, 18u);
  EXPECT_EQ(m.kv.kv_heads, 1u);
  EXPECT_EQ(m.kv.head_dim, 256u);  // key_length, not 640 / 4
  EXPECT_EQ(m.params, 268098176.0);
  EXPECT_EQ(*m.file_weight_bytes, 246587904u);
  EXPECT_EQ(*m.context_length, 32768u);
}

}  // namespace
}  // namespace wisp::plan

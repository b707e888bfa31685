// `wisp quantize FOLDER` on Hugging Face checkpoint folders (src/quantize/hf_source.cpp).
// The folders are written by Python scripts with the `safetensors` and `tokenizers` packages and
// the results judged by the `gguf` package, so wisp is checked against independent code:
//  - tiny llama / qwen2 / gemma3 / qwen3 / gemma2 / smollm3 / olmo2 / granite / phi3 folders (and llama
//    as BF16 in two shards): names, the llama family's Q/K permute, gemma's 1 + w norms, tied
//    embeddings, hyper-parameters and vocabulary (scripts/make_tiny_hf.py --check), and
//    llama-cpp-python loading the output with wisp's logits (--llama-logits);
//  - broken folders: unknown architecture, missing tensor, wrong shape give errors naming them;
//  - SmolLM2 (byte-level BPE) and Gemma 3 270M (SentencePiece tokenizer.model) exported as F16
//    folders (scripts/export_hf_f16.py): every tensor bit-exact against the source GGUF dequantized
//    to F16, metadata equal to what llama.cpp wrote (scripts/check_hf_quantize.py), and `wisp run`
//    greedy text equal to that of the source converted to F16 directly.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "quantize/sentencepiece_model.h"
#include "tests/support/run_command.h"
#include "wisp/error.h"
#include "wisp/model.h"
#include "wisp/session.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int rc;
  std::string out;
};

// Runs `cmd` through the shell; stderr joins stdout unless `stdout_only` (generated text alone).
Result run(const std::string& cmd, bool stdout_only = false) {
  const wisp::test::CommandResult r = wisp::test::run_command(cmd);
  return {r.status, stdout_only ? r.out : r.out + r.err};
}

// A fresh folder under the system temp dir, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "wisp_hf_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name();
    for (char& c : name) c = c == '/' ? '_' : c;  // parameterized names ("Archs/TinyHf") hold slashes
    path_ = fs::temp_directory_path() / name;
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string str(const std::string& sub = "") const { return (path_ / sub).string(); }

 private:
  fs::path path_;
};

const std::string kScripts = WISP_SOURCE_DIR "/scripts/";
const std::string kWisp = WISP_BINARY;

class TinyHf : public ::testing::TestWithParam<std::string> {};

TEST_P(TinyHf, ConvertsAsLlamaCppWould) {
  TempDir tmp;
  const std::string c = GetParam(), dir = tmp.str(c), out = tmp.str(c + ".gguf");
  Result made = run("python3 " + kScripts + "make_tiny_hf.py " + dir + " " + c);
  ASSERT_EQ(made.rc, 0) << made.out;
  Result q = run(kWisp + " quantize " + dir + " " + out + " --type f16");
  ASSERT_EQ(q.rc, 0) << q.out;
  Result chk = run("python3 " + kScripts + "make_tiny_hf.py " + dir + " " + c + " --check " + out);
  EXPECT_EQ(chk.rc, 0) << chk.out;
}

INSTANTIATE_TEST_SUITE_P(Archs, TinyHf,
                         ::testing::Values("llama", "qwen2", "gemma3", "llama_sharded_bf16", "qwen3", "gemma2",
                                           "smollm3", "olmo2", "granite", "phi3"));

// llama.cpp loads what `wisp quantize FOLDER` wrote and computes the same logits as wisp on that
// file (wisp in its exact order, llama.cpp's; F16 weights): the names, the row orders and the
// hyper-parameter keys mean to llama.cpp what they mean to wisp.
class TinyHfLogits : public ::testing::TestWithParam<std::string> {};

TEST_P(TinyHfLogits, LlamaCppLoadsItWithWispsLogits) {
  if (run("python3 -c 'import llama_cpp'").rc != 0) GTEST_SKIP() << "llama-cpp-python is not installed";
  TempDir tmp;
  // The folder's name becomes general.name, and llama.cpp's vocabulary loader special-cases
  // names containing "phi3" (it then looks up "</s>", which the tiny vocabulary lacks).
  const std::string c = GetParam(), dir = tmp.str("tiny"), out = tmp.str(c + ".gguf");
  Result made = run("python3 " + kScripts + "make_tiny_hf.py " + dir + " " + c);
  ASSERT_EQ(made.rc, 0) << made.out;
  Result q = run(kWisp + " quantize " + dir + " " + out + " --type f16");
  ASSERT_EQ(q.rc, 0) << q.out;
  Result lc = run("python3 " + kScripts + "make_tiny_hf.py " + dir + " " + c + " --llama-logits " + out, true);
  ASSERT_EQ(lc.rc, 0) << lc.out;
  const nlohmann::json j = nlohmann::json::parse(lc.out);
  const auto tokens = j["tokens"].get<std::vector<std::int32_t>>();
  const auto want = j["logits"].get<std::vector<std::vector<float>>>();
  const std::size_t n_vocab = j["n_vocab"].get<std::size_t>();

  std::shared_ptr<const wisp::Model> model = wisp::Model::load(out);
  ASSERT_EQ(static_cast<std::size_t>(model->info().n_vocab), n_vocab);
  wisp::Session s(model, wisp::SessionOptions{.n_ctx = 64, .n_threads = 1, .exact = true});
  const std::span<const float> got = s.eval_all(tokens);
  ASSERT_EQ(got.size(), tokens.size() * n_vocab);
  ASSERT_EQ(want.size(), tokens.size());
  for (std::size_t p = 0; p < tokens.size(); ++p) {
    float scale = 1.0f, worst = 0.0f, lo = want[p][0], hi = want[p][0];
    std::size_t bad = 0;
    for (std::size_t v = 0; v < n_vocab; ++v) {
      const float g = got[p * n_vocab + v], w = want[p][v];
      if (!std::isfinite(g) || !std::isfinite(w)) ++bad;
      scale = std::max(scale, std::abs(w));
      worst = std::max(worst, std::abs(g - w));
      lo = std::min(lo, w);
      hi = std::max(hi, w);
    }
    ASSERT_EQ(bad, 0u) << c << " position " << p << ": non-finite logits";
    EXPECT_GT(hi - lo, 0.1f) << c << " position " << p << ": flat logits say nothing";
    // F16 weights and 8-wide rows: at most float rounding apart (llama.cpp's own build and ISA
    // against wisp's exact path; bit-equal on the AVX-512 machine), far below a logit's scale.
    EXPECT_LE(worst, 1e-4f * scale) << c << " position " << p << ": worst " << worst << " of scale " << scale;
  }
}

INSTANTIATE_TEST_SUITE_P(Archs, TinyHfLogits,
                         ::testing::Values("llama", "qwen2", "gemma3", "qwen3", "gemma2", "smollm3", "olmo2", "granite",
                                           "phi3"));

struct BrokenCase {
  const char* name;
  std::vector<std::string> expect;  // substrings of the error message
};

class BrokenHf : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(BrokenHf, FailsNamingTheProblem) {
  TempDir tmp;
  const BrokenCase& c = GetParam();
  const std::string dir = tmp.str(c.name), out = tmp.str("out.gguf");
  Result made = run("python3 " + kScripts + "make_tiny_hf.py " + dir + " " + c.name);
  ASSERT_EQ(made.rc, 0) << made.out;
  Result q = run(kWisp + " quantize " + dir + " " + out + " --type f16");
  EXPECT_NE(q.rc, 0) << q.out;
  for (const std::string& s : c.expect)
    EXPECT_NE(q.out.find(s), std::string::npos) << "missing '" << s << "' in: " << q.out;
  EXPECT_FALSE(fs::exists(out)) << "a failed conversion left an output file";
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BrokenHf,
    ::testing::Values(BrokenCase{"unknown_arch",
                                 {"config.json", "MambaForCausalLM", "LlamaForCausalLM", "Qwen2ForCausalLM",
                                  "Gemma3ForCausalLM"}},
                      BrokenCase{"missing_tensor", {"missing_tensor", "model.layers.1.mlp.up_proj.weight"}},
                      BrokenCase{"wrong_shape",
                                 {"model.safetensors", "model.layers.0.self_attn.k_proj.weight", "[12, 8]", "[4, 8]"}}),
    [](const auto& info) { return std::string(info.param.name); });

struct RealModel {
  const char* name;    // test name
  const char* file;    // under models/
  bool sentencepiece;  // its export needs the sentencepiece and protobuf Python packages
};

class RealHf : public ::testing::TestWithParam<RealModel> {};

TEST_P(RealHf, ExportedAsF16FolderRoundTrips) {
  const RealModel& m = GetParam();
  const std::string model = std::string(WISP_MODELS_DIR "/") + m.file;
  if (!fs::exists(model)) GTEST_SKIP() << model << " not present (scripts/fetch_models)";
  if (m.sentencepiece && run("python3 -c 'import sentencepiece.sentencepiece_model_pb2'").rc != 0) {
    GTEST_SKIP() << "the sentencepiece/protobuf Python packages are needed to write tokenizer.model";
  }
  TempDir tmp;
  const std::string dir = tmp.str("hf"), out = tmp.str("from_hf.gguf"), ref = tmp.str("from_gguf.gguf");
  Result ex = run("python3 " + kScripts + "export_hf_f16.py " + dir + " --gguf " + model);
  ASSERT_EQ(ex.rc, 0) << ex.out;
  Result q = run(kWisp + " quantize " + dir + " " + out + " --type f16");
  ASSERT_EQ(q.rc, 0) << q.out;
  Result chk = run("python3 " + kScripts + "check_hf_quantize.py " + model + " " + out);
  EXPECT_EQ(chk.rc, 0) << chk.out;

  // The same weights reached through the GGUF path must generate the same greedy text.
  Result r = run(kWisp + " quantize " + model + " " + ref + " --type f16");
  ASSERT_EQ(r.rc, 0) << r.out;
  const std::string gen = " -p \"The capital of France is\" -n 8 --temp 0";
  Result a = run(kWisp + " run -m " + out + gen, true);
  Result b = run(kWisp + " run -m " + ref + gen, true);
  ASSERT_EQ(a.rc, 0) << a.out;
  ASSERT_EQ(b.rc, 0) << b.out;
  EXPECT_FALSE(a.out.empty());
  EXPECT_EQ(a.out, b.out);
}

INSTANTIATE_TEST_SUITE_P(Models, RealHf,
                         ::testing::Values(RealModel{"SmolLM2", "SmolLM2-135M-Instruct.Q4_1.gguf", false},
                                           RealModel{"Gemma3", "gemma-3-270m-q4_k_m.gguf", true}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SentencePieceModel, TruncatedFileIsAnErrorNamingIt) {
  TempDir tmp;
  const std::string path = tmp.str("tokenizer.model");
  {
    std::ofstream f(path, std::ios::binary);
    f << std::string("\x0a\x05\x0a\x01", 4);  // pieces: 5 bytes announced, 2 present
  }
  try {
    wisp::quantize::read_sentencepiece_model(path);
    FAIL() << "no error";
  } catch (const wisp::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("malformed"), std::string::npos) << e.what();
  }
}

}  // namespace

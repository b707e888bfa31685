// `wisp quantize --gptq --gptq-sequential` (quantize/sequential_hessians.h) on a tiny model: layer
// 0's Hessian is the source calibration's, a later layer's is the one the calibration statistics
// give for a *file* whose earlier layers are quantized (the independent oracle: that file run as a
// model by the ordinary calibration), and differs from the source's; the layers must come in
// order; the conversion makes one pass per layer, loads, and stays under a stated memory bound.
// (A numpy oracle would need a whole transformer; the file-based oracle checks the same thing with
// the runtime's own forward pass, which the model tests pin to llama.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "formats/block_types.h"
#include "formats/gguf_file.h"
#include "formats/wq_format.h"
#include "model/activation_stats.h"
#include "quantize/converter.h"
#include "quantize/gptq.h"
#include "quantize/sequential_hessians.h"
#include "quantize/type_policy.h"
#include "tests/support/run_command.h"
#include "tests/unit/model/tiny_model.h"
#include "wisp/error.h"
#include "wisp/model.h"

namespace wisp::quantize {
namespace {

constexpr std::int64_t kCtx = 128;

struct Fixture {
  test::TinySpec spec;
  std::string src;
  std::vector<std::int32_t> tokens;

  explicit Fixture(const std::string& name, std::int64_t n_layer = 3) {
    spec.n_embd = 128;
    spec.n_ff = 256;
    spec.n_layer = n_layer;
    spec.n_vocab = 300;
    src = test::write_tiny_model(spec, name);
    std::mt19937 rng(11);
    for (int i = 0; i < 3 * kCtx; ++i) tokens.push_back(static_cast<std::int32_t>(rng() % spec.n_vocab));
  }
  SequentialCalib calib() const { return {.model_path = src, .tokens = tokens, .n_ctx = kCtx, .bos = -1}; }
};

// H = 2/N X^T X of `tensor`'s input when `model_path` runs as a model over the tokens (every row
// kept by the ordinary calibration statistics), accumulated a window at a time.
std::vector<double> calibration_hessian(const std::string& model_path, const std::vector<std::int32_t>& tokens,
                                        const std::string& tensor) {
  model::ActivationStatsOptions so;
  so.n_ctx = kCtx;
  so.n_threads = 2;
  so.max_sample_rows = static_cast<std::int64_t>(tokens.size());
  const model::ActivationStats st = model::collect_activation_stats(Model::load(model_path), tokens, so);
  const model::ChannelStats* cs = st.find(tensor);
  EXPECT_NE(cs, nullptr) << tensor;
  if (cs == nullptr) return {};
  HessianAccumulator acc(cs->cols());
  for (std::int64_t r0 = 0; r0 < cs->sample_rows(); r0 += kCtx) {
    acc.add(cs->sample.data() + r0 * cs->cols(), std::min(kCtx, cs->sample_rows() - r0));
  }
  return acc.hessian();
}

// max |a - b| / max |b|.
double rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double d = 0, m = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    d = std::max(d, std::fabs(a[i] - b[i]));
    m = std::max(m, std::fabs(b[i]));
  }
  return d / m;
}

TEST(GptqSequential, LayerZeroIsTheSourceAndLaterLayersSeeTheQuantizedOnes) {
  const Fixture fx("gptq_seq_src.gguf");
  // The oracle model: the source with layer 0's block weights quantized (WQ3_G32), the rest F32.
  ConvertOptions o;
  o.input = fx.src;
  o.output = ::testing::TempDir() + "gptq_seq_part.gguf";
  o.policy.base = find_block_type("F32");
  o.policy.rules.push_back(parse_type_rule("blk\\.0\\.(attn_(q|k|v|output)|ffn_(gate|up|down))\\.weight=WQ3_G32"));
  o.n_threads = 2;
  o.log = nullptr;
  convert(o);
  const GgufFile part = GgufFile::open(o.output);
  ASSERT_EQ(part.tensor("blk.0.attn_q.weight").type_id, wq_type_id(3, 32));

  SequentialHessians seq(fx.calib(), 2, nullptr);
  for (const char* name : {"blk.0.attn_q.weight", "blk.0.attn_v.weight", "blk.0.attn_output.weight",
                           "blk.0.ffn_up.weight", "blk.0.ffn_down.weight"}) {
    const std::vector<double> h = seq.hessian(name);
    EXPECT_LT(rel_diff(h, calibration_hessian(fx.src, fx.tokens, name)), 1e-12) << name;
  }
  EXPECT_EQ(seq.passes(), 1);  // one pass gave all of layer 0's inputs
  for (const GgufTensor& t : part.tensors()) {
    const std::string name(t.name);
    if (SequentialHessians::layer_of(name) == 0 && t.n_dims == 2) {
      seq.record(name, *t.type, std::span(t.data, t.n_bytes), nullptr);
    }
  }
  for (const char* name :
       {"blk.1.attn_k.weight", "blk.1.attn_output.weight", "blk.1.ffn_gate.weight", "blk.1.ffn_down.weight"}) {
    const std::vector<double> h = seq.hessian(name);
    const std::vector<double> want = calibration_hessian(o.output, fx.tokens, name);
    EXPECT_LT(rel_diff(h, want), 1e-12) << name;
    // ... and not the source's: layer 0's 3-bit rounding reaches layer 1's inputs.
    EXPECT_GT(rel_diff(h, calibration_hessian(fx.src, fx.tokens, name)), 1e-3) << name;
  }
  EXPECT_EQ(seq.passes(), 2);
  try {
    seq.hessian("blk.0.attn_q.weight");
    ADD_FAILURE() << "an earlier layer after a later one was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("in order"), std::string::npos) << e.what();
  }
  EXPECT_THROW(seq.hessian("output.weight"), Error);
}

TEST(GptqSequential, LayerOfParsesBlockNames) {
  EXPECT_EQ(SequentialHessians::layer_of("blk.0.attn_q.weight"), 0);
  EXPECT_EQ(SequentialHessians::layer_of("blk.27.ffn_down.weight"), 27);
  EXPECT_EQ(SequentialHessians::layer_of("token_embd.weight"), -1);
  EXPECT_EQ(SequentialHessians::layer_of("blk.x.attn_q.weight"), -1);
  EXPECT_EQ(SequentialHessians::layer_of("blk.3"), -1);
}

long status_kib(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind(key, 0) == 0) return std::stol(line.substr(std::string(key).size()));
  }
  return -1;
}

TEST(GptqSequential, ConvertsLayerByLayerUnderTheMemoryBound) {
  const Fixture fx("gptq_seq_conv_src.gguf", 4);
  // The statistics only decide which tensors GPTQ takes: the default 256-row sample, not every row.
  model::ActivationStatsOptions so;
  so.n_ctx = kCtx;
  so.n_threads = 2;
  auto stats = std::make_shared<const model::ActivationStats>(
      model::collect_activation_stats(Model::load(fx.src), fx.tokens, so));
  auto convert_seq = [&](const std::string& name, double outliers) {
    ConvertOptions o;
    o.input = fx.src;
    o.output = ::testing::TempDir() + name;
    o.policy.base = find_block_type("WQ3_G32");
    o.n_threads = 2;
    o.calib = stats;
    o.gptq = true;
    o.outlier_fraction = outliers;
    o.sequential = std::make_shared<const SequentialCalib>(fx.calib());
    std::FILE* log = std::tmpfile();
    o.log = log;
    convert(o);
    std::rewind(log);
    std::string text;
    for (int c; (c = std::fgetc(log)) != EOF;) text += static_cast<char>(c);
    std::fclose(log);
    return std::pair(o.output, text);
  };
  ASSERT_TRUE(static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5"));
  const long before = status_kib("VmRSS:");
  const auto [out, log] = convert_seq("gptq_seq_conv_out.gguf", 0.01);
  const long grew = status_kib("VmHWM:") - before;
  // Progress per layer, one pass each.
  for (int l = 0; l < 4; ++l) {
    EXPECT_NE(log.find("gptq-sequential: layer " + std::to_string(l) + ":"), std::string::npos) << log;
  }
  const GgufFile f = GgufFile::open(out);
  EXPECT_EQ(f.tensor("blk.3.ffn_down.weight").type_id, wq_type_id(3, 32));
  EXPECT_TRUE(f.find_tensor("blk.2.attn_q.weight.outlier_idx") != nullptr);
  EXPECT_NO_THROW({ auto m = Model::load(out); });

  // The bound on what the conversion adds: the quantized block weights kept for the later passes
  // and the writer's one tensor (each at most the output file), one tensor's rows as floats and
  // doubles, one layer's accumulators (q/k/v, attn_output, gate/up: 128^2; ffn_down 256^2
  // doubles), the largest Hessian and its factor with their temporaries (4 x 256^2 doubles), the
  // source model loaded once more for the passes (its file), one window's activations and the
  // cache, and 4 MiB of slack for allocator and stack.
  const double file_kib = static_cast<double>(std::filesystem::file_size(out)) / 1024;
  const double src_kib = static_cast<double>(std::filesystem::file_size(fx.src)) / 1024;
  const double tensor_kib = 256.0 * 128 * (4 + 8 + 4) / 1024;
  const double acc_kib = (3.0 * 128 * 128 + 256.0 * 256) * 8 / 1024;
  const double hess_kib = 4.0 * 256 * 256 * 8 / 1024;
  const double window_kib = kCtx * (3 * 128.0 + 3 * 256 + 300) * 4 / 1024 + 4.0 * kCtx * 128 * 4 * 2 / 1024;
  const double bound = 2 * file_kib + src_kib + tensor_kib + acc_kib + hess_kib + window_kib + 4 * 1024;
  std::printf("  sequential converter peak RSS growth %ld KiB (bound %.0f KiB)\n", grew, bound);
  EXPECT_GE(grew, 0);
  EXPECT_LE(static_cast<double>(grew), bound);
}

TEST(GptqSequential, CliFlagErrors) {
  test::TinySpec spec;
  const std::string src = test::write_tiny_model(spec, "gptq_seq_cli.gguf");
  const std::string out = ::testing::TempDir() + "gptq_seq_cli_out.gguf";
  const std::string calib = WISP_SOURCE_DIR "/tests/data/calibration.txt";
  auto r = test::run_wisp("quantize '" + src + "' '" + out + "' --type wq4_g32 --gptq-sequential");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("need --gptq"), std::string::npos) << r.err;
  r = test::run_wisp("quantize '" + src + "' '" + out + "' --type wq4_g32 --calib " + calib +
                     " --gptq --gptq-sequential --awq");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--awq"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace wisp::quantize

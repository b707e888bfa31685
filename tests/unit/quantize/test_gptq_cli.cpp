// `wisp quantize --gptq` end to end on a tiny model: the flags' errors, a file that loads and is
// each layer's output error below the calibrated conversion's, and the converter's peak memory under a stated bound.
#include <gtest/gtest.h>

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
#include "tests/support/run_command.h"
#include "tests/unit/model/tiny_model.h"
#include "wisp/model.h"

namespace wisp::quantize {
namespace {

namespace fs = std::filesystem;

const char* const kCalib = WISP_SOURCE_DIR "/tests/data/calibration.txt";

TEST(GptqCli, FlagErrorsAreClear) {
  test::TinySpec spec;
  const std::string src = test::write_tiny_model(spec, "gptq_cli_err.gguf");
  const std::string out = ::testing::TempDir() + "gptq_cli_err_out.gguf";
  auto r = test::run_wisp("quantize '" + src + "' '" + out + "' --type wq4_g32 --gptq");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--gptq needs --calib"), std::string::npos) << r.err;
  r = test::run_wisp("quantize '" + src + "' '" + out + "' --type wq4_g32 --act-order");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("need --gptq"), std::string::npos) << r.err;
  r = test::run_wisp("quantize '" + src + "' '" + out + "' --type wq4_g32 --calib " + kCalib +
                     " --gptq --gptq-damp -1");
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("--gptq-damp"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// Peak resident memory of this process since the last reset_peak_rss(), in KiB (VmHWM).
long peak_rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}
long rss_kib() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}
bool reset_peak_rss() { return static_cast<bool>(std::ofstream("/proc/self/clear_refs") << "5"); }

TEST(GptqConvert, LowerLayerErrorThanCalibratedRoundingAndMemoryUnderTheBound) {
  // Rows of 128 values so every block weight is WQ; 4 layers; calibration on random tokens (the
  // tiny model has no tokenizer) with every row kept, as --gptq collects them.
  test::TinySpec spec;
  spec.n_embd = 128;
  spec.n_ff = 256;
  spec.n_layer = 4;
  spec.n_vocab = 300;
  const std::string src = test::write_tiny_model(spec, "gptq_conv_src.gguf");
  std::mt19937 rng(5);
  std::vector<std::int32_t> tokens;
  const std::int64_t n_tok = 768;
  for (std::int64_t i = 0; i < n_tok; ++i) tokens.push_back(static_cast<std::int32_t>(rng() % spec.n_vocab));
  model::ActivationStatsOptions so;
  so.n_ctx = 128;
  so.n_threads = 2;
  so.max_sample_rows = n_tok;
  auto stats =
      std::make_shared<const model::ActivationStats>(model::collect_activation_stats(Model::load(src), tokens, so));

  auto convert_with = [&](bool gptq, double outliers, const std::string& name) {
    ConvertOptions o;
    o.input = src;
    o.output = ::testing::TempDir() + name;
    o.policy.base = find_block_type("WQ3_G32");
    o.n_threads = 2;
    o.log = nullptr;
    o.calib = stats;
    o.gptq = gptq;
    o.outlier_fraction = outliers;
    o.gptq_opt.act_order = true;
    convert(o);
    return o.output;
  };
  const std::string plain = convert_with(false, 0, "gptq_conv_plain.gguf");
  const std::string gptq = convert_with(true, 0, "gptq_conv_gptq.gguf");
  ASSERT_TRUE(reset_peak_rss()) << "/proc/self/clear_refs";
  const long before = rss_kib();
  const std::string out = convert_with(true, 0.01, "gptq_conv_out.gguf");
  const long grew = peak_rss_kib() - before;
  const GgufFile f = GgufFile::open(out);
  EXPECT_TRUE(f.find_tensor("blk.0.attn_q.weight.outlier_idx") != nullptr);
  EXPECT_EQ(f.tensor("blk.0.attn_q.weight").type_id, wq_type_id(3, 32));
  EXPECT_NO_THROW({ auto m = Model::load(out); });

  // Every block weight's output error on the calibration activations (the Hessian of its input,
  // computed here from the same rows): GPTQ's below the calibrated conversion's, tensor by tensor.
  const GgufFile fs = GgufFile::open(src), fp = GgufFile::open(plain), fg = GgufFile::open(gptq);
  int compared = 0;
  for (const GgufTensor& t : fs.tensors()) {
    const std::string name(t.name);
    const model::ChannelStats* cs = stats->find(name);
    if (name.rfind("blk.", 0) != 0 || cs == nullptr || t.n_dims != 2) continue;
    const std::int64_t n = t.ne[0], rows = t.n_rows();
    HessianAccumulator acc(n);
    acc.add(cs->sample.data(), cs->sample_rows());
    const std::vector<double> h = acc.hessian();
    auto dense = [&](const GgufFile& file) {
      const GgufTensor& q = file.tensor(name);
      std::vector<float> y(static_cast<std::size_t>(rows * n));
      for (std::int64_t r = 0; r < rows; ++r) q.type->dequantize(q.data + r * q.row_bytes(), y.data() + r * n, n);
      return y;
    };
    const auto w = dense(fs);
    const double e_plain = hessian_relative_error(h, w.data(), dense(fp).data(), rows, n);
    const double e_gptq = hessian_relative_error(h, w.data(), dense(fg).data(), rows, n);
    EXPECT_LT(e_gptq, e_plain) << name;
    ++compared;
  }
  EXPECT_EQ(compared, 4 * 7);

  // The bound on what the conversion adds (the statistics already exist): the output's tensors
  // (the writer holds one at a time; bounded by the whole file), one tensor's rows as floats and
  // doubles, the largest Hessian and its factor with their temporaries (4 x 256^2 doubles), and
  // 4 MiB of slack for allocator and stack.
  const double file_kib = static_cast<double>(std::filesystem::file_size(out)) / 1024;
  const double tensor_kib = 256.0 * 128 * (4 + 8 + 4) / 1024;
  const double hess_kib = 4.0 * 256 * 256 * 8 / 1024;
  const double bound = file_kib + tensor_kib + hess_kib + 4 * 1024;
  std::printf("  converter peak RSS growth %ld KiB (bound %.0f KiB)\n", grew, bound);
  EXPECT_GE(grew, 0);
  EXPECT_LE(static_cast<double>(grew), bound);
}

}  // namespace
}  // namespace wisp::quantize

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
#include "quantize/gptq_tensors.h"
#include "quantize/source.h"
#include "quantize/target_bpw.h"
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
  r = test::run_wisp("quantize '" + src + "' '" + out + "' --type wq4_g32 --gptq-refit");
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

// The output error of w_hat against w on the calibration rows X, computed from X itself:
// sum_t ||X_t (w - w_hat)_r||^2 / sum_t ||X_t w_r||^2 over rows r (what H = 2/N X^T X stands for).
double output_error(const model::ChannelStats& cs, const std::vector<float>& w, const std::vector<float>& w_hat,
                    std::int64_t rows, std::int64_t n) {
  double num = 0, den = 0;
  for (std::int64_t t = 0; t < cs.sample_rows(); ++t) {
    const float* x = cs.sample.data() + t * n;
    for (std::int64_t r = 0; r < rows; ++r) {
      double y = 0, e = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        y += static_cast<double>(x[j]) * w[static_cast<std::size_t>(r * n + j)];
        e += static_cast<double>(x[j]) *
             (w[static_cast<std::size_t>(r * n + j)] - w_hat[static_cast<std::size_t>(r * n + j)]);
      }
      num += e * e;
      den += y * y;
    }
  }
  return num / den;
}

TEST(GptqConvert, TargetBpwMeasuresCandidatesByTheirGptqError) {
  // With --gptq, each GPTQ-handled candidate's error is the output error GPTQ leaves on the
  // calibration activations: checked against a conversion with that type (all rows sampled) and
  // the error computed from the activation rows directly; the plan's file fits its budget and loads.
  test::TinySpec spec;
  spec.n_embd = 64;
  spec.n_ff = 128;
  spec.n_layer = 2;
  spec.n_vocab = 200;
  const std::string src = test::write_tiny_model(spec, "gptq_bpw_src.gguf");
  std::mt19937 rng(9);
  std::vector<std::int32_t> tokens;
  const std::int64_t n_tok = 256;
  for (std::int64_t i = 0; i < n_tok; ++i) tokens.push_back(static_cast<std::int32_t>(rng() % spec.n_vocab));
  model::ActivationStatsOptions so;
  so.n_ctx = 64;
  so.n_threads = 2;
  so.max_sample_rows = n_tok;
  auto stats =
      std::make_shared<const model::ActivationStats>(model::collect_activation_stats(Model::load(src), tokens, so));

  const std::unique_ptr<Source> source = open_source(src);  // the tensors read their rows from it
  const std::vector<SourceTensor> tensors = source->tensors();
  TypePolicy policy;
  policy.base = find_block_type("WQ4_G64");
  GptqOptions go;
  go.n_threads = 2;
  const AwqPlan no_awq;
  GptqTensors probe(stats, no_awq, go, nullptr);
  TargetBpwOptions to;
  to.gptq = &probe;
  to.sample_rows = 1 << 20;  // every row: the candidate's error is then the whole tensor's
  const std::vector<BitItem> items = target_bpw_candidates(tensors, policy, to);
  TargetBpwOptions plain_opt = to;
  plain_opt.gptq = nullptr;
  const std::vector<BitItem> plain = target_bpw_candidates(tensors, policy, plain_opt);

  int checked = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const SourceTensor& t = tensors[i];
    const model::ChannelStats* cs = stats->find(t.name);
    if (t.name.rfind("blk.", 0) != 0 || t.ne.size() != 2 || cs == nullptr) continue;
    const std::int64_t n = t.ne[0], rows = t.n_rows();
    std::vector<float> w(static_cast<std::size_t>(rows * n));
    for (std::int64_t r = 0; r < rows; ++r) t.read_row(r, w.data() + r * n);
    for (std::size_t c = 0; c < items[i].candidates.size(); ++c) {
      const BlockTypeInfo& type = *items[i].candidates[c].type;
      const int bits = wq_format(type.id).bits;
      if (bits != 2 && bits != 4) continue;  // two widths, every group: enough to tell, and quick
      GptqTensors whole(stats, no_awq, go, nullptr);
      whole.expect(t);
      std::vector<std::uint8_t> q(type.row_bytes(n) * static_cast<std::size_t>(rows));
      whole.quantize(t, type, q, nullptr, nullptr, nullptr);
      std::vector<float> y(w.size());
      for (std::int64_t r = 0; r < rows; ++r) type.dequantize(q.data() + r * type.row_bytes(n), y.data() + r * n, n);
      const double want = output_error(*cs, w, y, rows, n);
      EXPECT_NEAR(items[i].candidates[c].error, want, 1e-6 * want + 1e-12) << t.name << " " << type.name;
      // Not the diagonal (plain-rounding) measure it replaces.
      EXPECT_NE(items[i].candidates[c].error, plain[i].candidates[c].error) << t.name << " " << type.name;
      ++checked;
    }
  }
  // 2 layers x (6 weights with 64-wide rows x 2 widths x groups 32/64, ffn_down's 128-wide rows x 2 x 3 groups)
  EXPECT_EQ(checked, 2 * (6 * 4 + 6));

  ConvertOptions o;
  o.input = src;
  o.output = ::testing::TempDir() + "gptq_bpw_out.gguf";
  o.policy = policy;
  o.target_bpw = 5.5;
  o.n_threads = 2;
  o.log = nullptr;
  o.calib = stats;
  o.gptq = true;
  const ConvertReport rep = convert(o);
  EXPECT_LE(rep.bits_per_weight(), 5.5);
  EXPECT_GT(rep.bits_per_weight(), 4.0);
  EXPECT_NO_THROW({ auto m = Model::load(o.output); });
}

}  // namespace
}  // namespace wisp::quantize

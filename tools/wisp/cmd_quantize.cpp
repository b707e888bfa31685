// `wisp quantize IN OUT --type TYPE`: FP16/BF16/F32 checkpoints (HF folder or GGUF) to a
// quantized GGUF (src/quantize/).
#include <cstdio>
#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>

#include "command_line.h"
#include "commands.h"
#include "formats/block_types.h"
#include "quantize/calibration.h"
#include "quantize/converter.h"
#include "quantize_eval.h"
#include "wisp/error.h"
#include "wisp/model.h"

namespace wisp::cli {

namespace {

struct QuantizeFlags {
  std::vector<std::string> files;  // IN OUT
  const BlockTypeInfo* type = nullptr;
  std::optional<double> target_bpw;
  std::optional<std::string> type_override;
  bool no_protect = false, range_search = false;
  std::optional<std::string> calib;
  std::uint64_t calib_tokens = 4096;
  bool awq = false;
  std::optional<double> awq_alpha;
  bool gptq = false;
  double gptq_damp = 0.01;
  bool act_order = false;
  bool gptq_refit = false;
  bool gptq_sequential = false;
  std::uint64_t gptq_block = 128;
  std::optional<double> outliers;
  std::optional<int> threads;
  bool verbose = false;
  std::optional<std::string> eval;
  std::uint64_t eval_ctx = 512;
  std::optional<std::uint64_t> eval_chunks;
};

void declare(CommandLine& cl, QuantizeFlags& f) {
  cl.positionals("IN OUT", f.files, 2, 2);
  cl.converted("-t,--type", f.type, [](std::string_view v) { return &quantize::parse_target_type(std::string(v)); })
      .value_name("TYPE")
      .help(
          "target type: wq{2,3,4,5,6,8}_g{32,64,128} (wisp group-wise), q8_0, q5_1, q5_0, q4_1, q4_0, f16, bf16, "
          "f32");
  cl.option("--target-bpw", f.target_bpw)
      .value_name("X")
      .help("instead of --type: a WQ type per tensor, chosen from measured errors, averaging at most X bits/weight");
  cl.option("--type-override", f.type_override)
      .value_name("REGEX=TYPE")
      .help("type for tensors whose name matches REGEX (comma-separated rules, first match wins)");
  cl.flag("--no-protect", f.no_protect)
      .help(
          "quantize token_embd/output like the rest (default: Q8_0 when TYPE has < 8 bits; >= 6 bits with "
          "--target-bpw)");
  cl.flag("--range-search", f.range_search)
      .help("WQ types: per-group clipping range minimising the squared error (outlier handling)");
  cl.option("--calib", f.calib)
      .value_name("FILE")
      .help(
          "calibration text: run the source model over it and weight --range-search by each input channel's mean "
          "x^2");
  cl.positive("--calib-tokens", f.calib_tokens).value_name("N").help("tokens of --calib to run");
  cl.flag("--awq", f.awq)
      .help("with --calib: scale salient input channels before quantizing, inverse folded into the preceding op");
  cl.option("--awq-alpha", f.awq_alpha)
      .value_name("A")
      .help("with --awq: use scale exponent A in [0, 1] for every layer instead of searching it");
  cl.flag("--gptq", f.gptq)
      .help(
          "with --calib: GPTQ for the WQ tensors (each column's rounding error compensated by the later ones, "
          "Hessian from the calibration activations)");
  cl.option("--gptq-damp", f.gptq_damp)
      .value_name("D")
      .help("with --gptq: dampening, a fraction of the mean Hessian diagonal added to it");
  cl.flag("--act-order", f.act_order)
      .help("with --gptq: quantize columns by descending Hessian diagonal instead of in input order");
  cl.flag("--gptq-refit", f.gptq_refit)
      .help(
          "with --gptq: afterwards re-fit each row's group scales to its codes by the least Hessian-weighted "
          "output error (kept where lower)");
  cl.flag("--gptq-sequential", f.gptq_sequential)
      .help(
          "with --gptq: each layer's Hessians from the calibration run through the model with its earlier layers "
          "already quantized (one pass per layer) instead of through the source");
  cl.positive("--gptq-block", f.gptq_block).value_name("N").help("with --gptq: columns per lazy error update");
  cl.option("--outliers", f.outliers)
      .value_name("FRACTION")
      .help(
          "keep this fraction of each row's largest weights in f16 in a sparse side table (e.g. 0.005; wisp-only "
          "files)");
  cl.positive("--threads", f.threads).value_name("N").help("threads (default: all hardware threads)");
  cl.flag("-v,--verbose", f.verbose).help("per-tensor error statistics: RMSE, max |error|, relative RMSE");
  cl.option("--eval", f.eval)
      .value_name("TEXT")
      .help("after writing OUT: its PPL, the source's, delta PPL, mean KL and top-1 agreement");
  cl.positive("--eval-ctx", f.eval_ctx).value_name("N").help("--eval window length in tokens");
  cl.positive("--eval-chunks", f.eval_chunks).value_name("N").help("--eval: score at most N windows (default: all)");
  cl.epilog("Sizes: MiB = 1024^2 bytes. Output is written to OUT.tmp-* and renamed when complete.");
}

std::string number_text(double v) { return flag_parsing::number_text(v); }

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::size_t b = 0;
  while (b <= s.size()) {
    const std::size_t e = s.find(',', b);
    std::string part = s.substr(b, e == std::string::npos ? std::string::npos : e - b);
    if (!part.empty()) out.push_back(part);
    if (e == std::string::npos) break;
    b = e + 1;
  }
  return out;
}

}  // namespace

int cmd_quantize(int argc, char** argv) {
  QuantizeFlags f;
  CommandLine cl("quantize",
                 "Converts a model to a quantized GGUF: IN is a Hugging Face folder (config.json + safetensors)\n"
                 "or a GGUF (F16/BF16/F32; a quantized one is accepted with a warning); OUT is the new GGUF.");
  declare(cl, f);
  if (!cl.parse(argc, argv)) {
    std::printf("%s", cl.help().c_str());
    return 0;
  }
  quantize::ConvertOptions opt;
  opt.input = f.files[0];
  opt.output = f.files[1];
  if (f.target_bpw.has_value() == (f.type != nullptr)) {
    throw UsageError("give --type TYPE or --target-bpw X (one of them)");
  }
  if (f.target_bpw) {
    const double x = *f.target_bpw;
    if (!(x > 1)) throw UsageError("--target-bpw must be above 1 bit per weight (e.g. 4.5), got " + number_text(x));
    opt.target_bpw = x;
    // Only names the run: the plan gives every tensor its type.
    opt.policy.base = &quantize::parse_target_type("wq4_g64");
  } else {
    opt.policy.base = f.type;
  }
  std::optional<QuantizeEval> eval;
  if (f.eval) eval = QuantizeEval::from_args(*f.eval, f.eval_ctx, f.eval_chunks.value_or(0));
  if (f.type_override) {
    for (const std::string& r : split_commas(*f.type_override)) {
      try {
        opt.policy.rules.push_back(quantize::parse_type_rule(r));
      } catch (const Error& e) {
        throw UsageError(e.what());
      }
    }
  }
  opt.policy.keep_embeddings_high = !f.no_protect;
  opt.range_search = f.range_search;
  if (f.threads) opt.n_threads = *f.threads;
  opt.verbose = f.verbose;
  if (f.awq && !f.calib) throw UsageError("--awq needs --calib FILE");
  if (f.awq_alpha) {
    if (!f.awq) throw UsageError("--awq-alpha needs --awq");
    const double a = *f.awq_alpha;
    if (!(a >= 0 && a <= 1)) throw UsageError("--awq-alpha must be in [0, 1], got " + number_text(a));
    opt.awq_alpha = static_cast<float>(a);
  }
  if (f.outliers) {
    const double x = *f.outliers;
    if (!(x > 0 && x <= 0.1)) throw UsageError("--outliers must be a fraction in (0, 0.1], got " + number_text(x));
    opt.outlier_fraction = x;
  }
  if (f.gptq) {
    if (!f.calib) throw UsageError("--gptq needs --calib FILE");
    const double d = f.gptq_damp;
    if (!(d >= 0 && d <= 10)) throw UsageError("--gptq-damp must be in [0, 10], got " + number_text(d));
    opt.gptq = true;
    opt.gptq_opt.damp = d;
    opt.gptq_opt.act_order = f.act_order;
    opt.gptq_opt.refit_scales = f.gptq_refit;
    opt.gptq_opt.block_size = static_cast<int>(std::min<std::uint64_t>(f.gptq_block, 1 << 16));
  } else if (f.act_order || f.gptq_refit || f.gptq_sequential || cl.given("--gptq-damp") || cl.given("--gptq-block")) {
    throw UsageError("--act-order, --gptq-refit, --gptq-sequential, --gptq-damp and --gptq-block need --gptq");
  }
  if (f.gptq_sequential && f.awq) throw UsageError("--gptq-sequential does not work with --awq yet");
  if (f.calib) {
    quantize::CalibOptions co;
    // Sequential Hessians stream their rows; only --target-bpw's probes still need them all.
    co.keep_all_rows = opt.gptq && (!f.gptq_sequential || f.target_bpw);
    co.text_path = *f.calib;
    co.max_tokens = static_cast<std::int64_t>(f.calib_tokens);
    co.temp_dir = std::filesystem::path(opt.output).has_parent_path()
                      ? std::filesystem::path(opt.output).parent_path().string()
                      : std::string(".");
    co.n_threads = opt.n_threads;
    if (f.gptq_sequential) {  // checked before the calibration run
      // The layer passes run the input itself: its tensor names are what gets swapped in.
      try {
        (void)Model::load(opt.input);
      } catch (const Error& e) {
        throw UsageError("--gptq-sequential needs a GGUF source wisp can run (" + std::string(e.what()) +
                         "): convert it to F16 first (wisp quantize IN F16.gguf --type f16)");
      }
    }
    opt.calib = quantize::calibrate(opt.input, co);
    opt.awq = f.awq;
    if (f.gptq_sequential) {
      auto sc = std::make_shared<quantize::SequentialCalib>();
      sc->model_path = opt.input;
      sc->tokens = quantize::calibration_tokens(opt.input, co, &sc->bos);
      sc->n_ctx = co.n_ctx;
      opt.sequential = sc;
    }
  }
  quantize::convert(opt);
  if (eval) eval->run(opt);
  return 0;
}

}  // namespace wisp::cli

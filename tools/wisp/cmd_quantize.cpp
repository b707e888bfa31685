// `wisp quantize IN OUT --type TYPE`: FP16/BF16/F32 checkpoints (HF folder or GGUF) to a
// quantized GGUF (src/quantize/).
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>

#include "args.h"
#include "commands.h"
#include "quantize/calibration.h"
#include "quantize/converter.h"
#include "quantize_eval.h"
#include "wisp/error.h"

namespace wisp::cli {

namespace {

ArgParser make_parser() {
  ArgParser p("quantize",
              "Converts a model to a quantized GGUF: IN is a Hugging Face folder (config.json + safetensors)\n"
              "or a GGUF (F16/BF16/F32; a quantized one is accepted with a warning); OUT is the new GGUF.");
  p.positionals("IN OUT", 2, 2);
  p.option("type").short_name('t').value_name("TYPE").help(
      "target type: wq{2,3,4,5,6,8}_g{32,64,128} (wisp group-wise), q8_0, q5_1, q5_0, q4_1, q4_0, f16, bf16, f32");
  p.option("target-bpw", ArgKind::kNumber)
      .value_name("X")
      .help("instead of --type: a WQ type per tensor, chosen from measured errors, averaging at most X bits/weight");
  p.option("type-override")
      .value_name("REGEX=TYPE")
      .help("type for tensors whose name matches REGEX (comma-separated rules, first match wins)");
  p.flag("no-protect")
      .help(
          "quantize token_embd/output like the rest (default: Q8_0 when TYPE has < 8 bits; >= 6 bits with "
          "--target-bpw)");
  p.flag("range-search").help("WQ types: per-group clipping range minimising the squared error (outlier handling)");
  p.option("calib").value_name("FILE").help(
      "calibration text: run the source model over it and weight --range-search by each input channel's mean x^2");
  p.option("calib-tokens", ArgKind::kInt).value_name("N").default_value("4096").help("tokens of --calib to run");
  p.flag("awq").help(
      "with --calib: scale salient input channels before quantizing, inverse folded into the preceding op");
  p.option("awq-alpha", ArgKind::kNumber)
      .value_name("A")
      .help("with --awq: use scale exponent A in [0, 1] for every layer instead of searching it");
  p.flag("gptq").help(
      "with --calib: GPTQ for the WQ tensors (each column's rounding error compensated by the later ones, Hessian from "
      "the calibration activations)");
  p.option("gptq-damp", ArgKind::kNumber)
      .value_name("D")
      .default_value("0.01")
      .help("with --gptq: dampening, a fraction of the mean Hessian diagonal added to it");
  p.flag("act-order").help("with --gptq: quantize columns by descending Hessian diagonal instead of in input order");
  p.option("gptq-block", ArgKind::kInt)
      .value_name("N")
      .default_value("128")
      .help("with --gptq: columns per lazy error update");
  p.option("outliers", ArgKind::kNumber)
      .value_name("FRACTION")
      .help(
          "keep this fraction of each row's largest weights in f16 in a sparse side table (e.g. 0.005; wisp-only "
          "files)");
  p.option("threads", ArgKind::kInt).value_name("N").help("threads (default: all hardware threads)");
  p.flag("verbose").short_name('v').help("per-tensor error statistics: RMSE, max |error|, relative RMSE");
  p.option("eval").value_name("TEXT").help(
      "after writing OUT: its PPL, the source's, delta PPL, mean KL and top-1 agreement");
  p.option("eval-ctx", ArgKind::kInt).value_name("N").default_value("512").help("--eval window length in tokens");
  p.option("eval-chunks", ArgKind::kInt).value_name("N").help("--eval: score at most N windows (default: all)");
  p.epilog("Sizes: MiB = 1024^2 bytes. Output is written to OUT.tmp-* and renamed when complete.");
  return p;
}

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
  const ArgParser parser = make_parser();
  const Args args = parser.parse(argc, argv);
  if (args.help_requested()) {
    std::printf("%s", parser.help().c_str());
    return 0;
  }
  quantize::ConvertOptions opt;
  opt.input = args.positionals()[0];
  opt.output = args.positionals()[1];
  if (args.has("target-bpw") == args.has("type")) throw UsageError("give --type TYPE or --target-bpw X (one of them)");
  if (args.has("target-bpw")) {
    const double x = args.number("target-bpw");
    if (!(x > 1))
      throw UsageError("--target-bpw must be above 1 bit per weight (e.g. 4.5), got " + *args.value("target-bpw"));
    opt.target_bpw = x;
    // Only names the run: the plan gives every tensor its type.
    opt.policy.base = &quantize::parse_target_type("wq4_g64");
  } else {
    opt.policy.base =
        *args.convert("type", [](std::string_view v) { return &quantize::parse_target_type(std::string(v)); });
  }
  std::optional<QuantizeEval> eval;
  if (auto text = args.value("eval")) {
    eval = QuantizeEval::from_args(*text, args.positive("eval-ctx"), args.opt_positive("eval-chunks").value_or(0));
  }
  if (auto rules = args.value("type-override")) {
    for (const std::string& r : split_commas(*rules)) {
      try {
        opt.policy.rules.push_back(quantize::parse_type_rule(r));
      } catch (const Error& e) {
        throw UsageError(e.what());
      }
    }
  }
  opt.policy.keep_embeddings_high = !args.flag("no-protect");
  opt.range_search = args.flag("range-search");
  if (auto n = args.opt_positive("threads")) opt.n_threads = static_cast<int>(*n);
  opt.verbose = args.flag("verbose");
  if (args.flag("awq") && !args.has("calib")) throw UsageError("--awq needs --calib FILE");
  if (args.has("awq-alpha")) {
    if (!args.flag("awq")) throw UsageError("--awq-alpha needs --awq");
    const double a = args.number("awq-alpha");
    if (!(a >= 0 && a <= 1)) throw UsageError("--awq-alpha must be in [0, 1], got " + *args.value("awq-alpha"));
    opt.awq_alpha = static_cast<float>(a);
  }
  if (args.has("outliers")) {
    const double f = args.number("outliers");
    if (!(f > 0 && f <= 0.1))
      throw UsageError("--outliers must be a fraction in (0, 0.1], got " + *args.value("outliers"));
    opt.outlier_fraction = f;
  }
  if (args.flag("gptq")) {
    if (!args.has("calib")) throw UsageError("--gptq needs --calib FILE");
    const double d = args.number("gptq-damp");
    if (!(d >= 0 && d <= 10)) throw UsageError("--gptq-damp must be in [0, 10], got " + *args.value("gptq-damp"));
    opt.gptq = true;
    opt.gptq_opt.damp = d;
    opt.gptq_opt.act_order = args.flag("act-order");
    opt.gptq_opt.block_size = static_cast<int>(std::min<std::int64_t>(args.positive("gptq-block"), 1 << 16));
  } else if (args.flag("act-order") || args.has("gptq-damp") || args.has("gptq-block")) {
    throw UsageError("--act-order, --gptq-damp and --gptq-block need --gptq");
  }
  if (auto calib = args.value("calib")) {
    quantize::CalibOptions co;
    co.keep_all_rows = opt.gptq;
    co.text_path = *calib;
    co.max_tokens = static_cast<std::int64_t>(args.positive("calib-tokens"));
    co.temp_dir = std::filesystem::path(opt.output).has_parent_path()
                      ? std::filesystem::path(opt.output).parent_path().string()
                      : std::string(".");
    co.n_threads = opt.n_threads;
    opt.calib = quantize::calibrate(opt.input, co);
    opt.awq = args.flag("awq");
  }
  quantize::convert(opt);
  if (eval) eval->run(opt);
  return 0;
}

}  // namespace wisp::cli

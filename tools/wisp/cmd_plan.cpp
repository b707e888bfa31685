// `wisp plan`: serving arithmetic for the user's own model and machine — weight bytes, KV bytes
// per token and per request, how many users fit, paged vs naive allocation, the memory-bound
// decode ceiling, prefill cost and the 16/8/4-bit precision ladder. The arithmetic lives in
// src/plan/; this file only turns flags into PlanInputs and prints the report.
#include <cstdio>
#include <string>
#include <thread>

#include "args.h"
#include "commands.h"
#include "core/read_bandwidth.h"
#include "formats/block_types.h"
#include "plan/gguf_model.h"
#include "plan/plan.h"
#include "plan/report_json.h"
#include "plan/report_text.h"
#include "plan/units.h"
#include "wisp/error.h"

namespace wisp::cli {
namespace {

using plan::ModelShape;
using plan::PlanInputs;

ArgParser make_parser() {
  ArgParser p("plan",
              "Serving arithmetic: weight and KV-cache bytes, users that fit, paged vs naive\n"
              "allocation, decode ceiling, prefill cost and a 16/8/4-bit precision ladder.\n"
              "Give a model file, or describe the model by hand.");
  const std::string m = "model (-m FILE, or by hand)";
  p.option("model").short_name('m').value_name("FILE").group(m).help(
      "GGUF model: layers, KV heads, head size, parameters and weight bytes");
  p.option("params").value_name("N").group(m).help("parameter count: 13e9, 13B, 135M");
  p.option("layers", ArgKind::kInt).value_name("L").group(m).help("transformer layers");
  p.option("d-model", ArgKind::kInt)
      .group(m)
      .help("model width; alone it means plain multi-head attention (K/V width = d_model)");
  p.option("heads", ArgKind::kInt).group(m).help("query heads (head size = d_model / heads)");
  p.option("kv-heads", ArgKind::kInt).group(m).help("key/value heads (grouped-query attention)");
  p.option("head-dim", ArgKind::kInt).group(m).help("values per head");

  const std::string w = "weights (one of)";
  p.option("weight-bits", ArgKind::kNumber)
      .value_name("BITS")
      .group(w)
      .help("bits per weight: 16, 8, 4 (default 16 by hand; the file's own bytes with -m)");
  p.option("weight-type")
      .value_name("TYPE")
      .group(w)
      .help("a GGML/wisp block type, scales included: Q4_K, Q8_0, F16, ...");
  p.option("weight-bytes").value_name("SIZE").group(w).help("the weight bytes outright: 26GiB");

  const std::string kv = "KV cache";
  p.option("kv-type").value_name("TYPE").group(kv).default_value("f16").help("cached K/V precision: " +
                                                                             plan::kv_type_names());
  p.option("ctx", ArgKind::kInt)
      .value_name("S")
      .group(kv)
      .default_value("4096")
      .help("tokens per request (context length)");
  p.option("users", ArgKind::kInt).value_name("B").group(kv).default_value("1").help("concurrent requests");
  p.option("block-size", ArgKind::kInt).group(kv).default_value("16").help("paged KV block, tokens");
  p.option("len", ArgKind::kInt)
      .group(kv)
      .help("a request's actual length, for paged vs naive (max length S) waste (default S)");

  const std::string mem = "memory and speed";
  p.option("mem").value_name("SIZE").group(mem).help("memory budget: 80GiB, 160GB");
  p.option("overhead")
      .value_name("SIZE")
      .group(mem)
      .default_value("0")
      .help("reserved for activations, runtime, fragmentation: 4GiB");
  p.option("bandwidth")
      .value_name("RATE")
      .group(mem)
      .help("memory bandwidth for the decode ceiling: 3.35TB/s, 50GB/s, or 'measure' (this machine)");
  p.option("compute").value_name("RATE").group(mem).help("compute rate for prefill: 100TFLOP/s");
  p.option("prompt", ArgKind::kInt).group(mem).help("prompt tokens for prefill (default S)");

  const std::string out = "output";
  p.flag("json").group(out).help("print JSON (exact bytes, bytes/s, tokens/s) for scripts");
  p.flag("decimal").group(out).help("print sizes in kB/MB/GB (1000-based) instead of KiB/MiB/GiB");

  p.epilog(
      "examples:\n"
      "  wisp plan --params 13e9 --layers 40 --d-model 5120 --mem 80GiB --overhead 4GiB\n"
      "  wisp plan --params 70B --layers 80 --kv-heads 8 --head-dim 128 --mem 160GB \\\n"
      "            --bandwidth 3.35TB/s --decimal\n"
      "  wisp plan -m model.gguf --kv-type q8_0 --ctx 8192 --users 4 --bandwidth 50GB/s\n");
  return p;
}

// A size flag that must not be zero (a budget, the weights).
std::optional<std::uint64_t> positive_size(const Args& a, std::string_view name) {
  auto v = a.convert(name, plan::parse_size);
  if (v && *v == 0) throw UsageError(a.spelling(name) + " must be positive, got 0");
  return v;
}

std::optional<double> positive_rate(const Args& a, std::string_view name, double (*parse)(std::string_view)) {
  auto v = a.convert(name, parse);
  if (v && !(*v > 0)) throw UsageError(a.spelling(name) + " must be positive");
  return v;
}

// The attention shape from by-hand flags: --kv-heads/--head-dim, or --d-model (with --heads).
void hand_geometry(const Args& a, ModelShape& m) {
  const auto d_model = a.opt_positive("d-model");
  const auto heads = a.opt_positive("heads");
  const auto kv_heads = a.opt_positive("kv-heads");
  auto head_dim = a.opt_positive("head-dim");
  if (!head_dim && d_model && heads) {
    if (*d_model % *heads != 0) {
      throw UsageError("--d-model " + std::to_string(*d_model) + " is not a multiple of --heads " +
                       std::to_string(*heads));
    }
    head_dim = *d_model / *heads;
  }
  if (head_dim) {
    std::optional<std::uint64_t> n = kv_heads ? kv_heads : heads;
    if (!n && d_model) {
      if (*d_model % *head_dim != 0) {
        throw UsageError("--d-model " + std::to_string(*d_model) + " is not a multiple of --head-dim " +
                         std::to_string(*head_dim));
      }
      n = *d_model / *head_dim;  // multi-head: as many K/V heads as query heads
    }
    if (!n) throw UsageError("--head-dim needs --kv-heads (or --heads, or --d-model)");
    m.kv.kv_heads = *n;
    m.kv.head_dim = *head_dim;
    return;
  }
  if (d_model && !kv_heads) {
    m.kv.kv_heads = 1;
    m.kv.head_dim = *d_model;
    m.kv_width_from_d_model = true;
    return;
  }
  throw UsageError(
      "describe the attention: --d-model N (plain multi-head), or --kv-heads N --head-dim N "
      "(or --d-model N --heads N --kv-heads N)");
}

ModelShape model_from_flags(const Args& a) {
  if (a.has("model")) {
    for (const char* name : {"params", "layers", "d-model", "heads", "kv-heads", "head-dim"}) {
      if (a.has(name)) {
        throw UsageError(std::string("--") + name + " conflicts with -m: the model file gives the shape");
      }
    }
    return plan::model_shape_from_gguf(a.str("model"));  // file errors: exit 1, not usage
  }
  ModelShape m;
  m.source = "by hand";
  if (auto params = a.convert("params", plan::parse_count)) {
    if (!(*params > 0)) throw UsageError("--params must be positive");
    m.params = *params;
  }
  if (!a.has("layers")) throw UsageError("--layers is required without -m FILE");
  m.kv.layers = a.positive("layers");
  hand_geometry(a, m);
  return m;
}

plan::WeightChoice weights_from_flags(const Args& a, const ModelShape& m) {
  int given = a.has("weight-bits") + a.has("weight-type") + a.has("weight-bytes");
  if (given > 1) throw UsageError("give only one of --weight-bits, --weight-type, --weight-bytes");
  plan::WeightChoice w;
  if (auto bytes = positive_size(a, "weight-bytes")) {
    w.source = plan::WeightChoice::Source::kBytes;
    w.bytes = *bytes;
  } else if (auto bits = a.opt_number("weight-bits")) {
    if (!(*bits > 0) || *bits > 64) {
      throw UsageError("--weight-bits must be in (0, 64], got " + plan::format_number(*bits));
    }
    w.bits = *bits;
  } else if (a.has("weight-type")) {
    const std::string name = a.str("weight-type");
    const BlockTypeInfo* t = find_block_type(name);
    if (t == nullptr) {
      std::string known;
      for (const BlockTypeInfo& b : all_block_types()) known += (known.empty() ? "" : ", ") + std::string(b.name);
      throw UsageError("--weight-type: unknown type '" + name + "' (known: " + known + ")");
    }
    w.bits = t->bits_per_weight();
    w.type_name = t->name;
  } else if (m.file_weight_bytes) {
    w.source = plan::WeightChoice::Source::kFile;
  }
  if (w.source == plan::WeightChoice::Source::kBits && !(m.params > 0)) {
    throw UsageError("weight bytes need --params (or -m FILE), or give --weight-bytes");
  }
  return w;
}

PlanInputs inputs_from_flags(const Args& a) {
  PlanInputs in;
  in.model = model_from_flags(a);
  in.weights = weights_from_flags(a, in.model);
  in.kv_type = *a.convert("kv-type", [](std::string_view s) { return plan::kv_type_by_name(s); });
  in.ctx = a.positive("ctx");
  in.users = a.positive("users");
  in.block_size = a.positive("block-size");
  in.len = a.opt_positive("len");
  if (in.len && *in.len > in.ctx) {
    throw UsageError("--len " + std::to_string(*in.len) + " exceeds --ctx " + std::to_string(in.ctx) +
                     " (the naive reservation's max length)");
  }
  in.prompt = a.opt_positive("prompt");
  in.budget = positive_size(a, "mem");
  in.overhead = *a.convert("overhead", plan::parse_size);
  if (a.has("overhead") && !in.budget) throw UsageError("--overhead needs --mem");
  if (a.value("bandwidth") == std::optional<std::string>("measure")) {
    // This machine's own read bandwidth, measured now (a few seconds), with every hardware thread.
    in.bandwidth = measure_read_bandwidth(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  } else {
    in.bandwidth = positive_rate(a, "bandwidth", plan::parse_bandwidth);
  }
  in.compute = positive_rate(a, "compute", plan::parse_flops);
  if (in.compute && !(in.model.params > 0)) {
    throw UsageError("--compute needs the parameter count (--params or -m FILE)");
  }
  in.units = a.flag("decimal") ? plan::UnitSystem::kDecimal : plan::UnitSystem::kBinary;
  return in;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "wisp plan: error: %s\nrun 'wisp plan --help' for the options\n", message.c_str());
  return kUsageExit;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  const ArgParser parser = make_parser();
  Args args;
  PlanInputs in;
  try {
    args = parser.parse(argc, argv);
    if (args.help_requested()) {
      std::fputs(parser.help().c_str(), stdout);
      return 0;
    }
    in = inputs_from_flags(args);
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
  plan::PlanReport report;
  try {
    report = plan::make_plan(in);
  } catch (const Error& e) {
    // Every input here is the user's own number: an impossible plan is a usage error.
    return usage_error(e.what());
  }
  const std::string out = args.flag("json") ? plan::render_json(report) : plan::render_text(report);
  std::fputs(out.c_str(), stdout);
  if (!args.flag("json") && out.back() != '\n') std::fputc('\n', stdout);
  return 0;
}

}  // namespace wisp::cli

// `wisp plan`: serving arithmetic for the user's own model and machine — weight bytes, KV bytes
// per token and per request, how many users fit, paged vs naive allocation, the memory-bound
// decode ceiling, prefill cost and the 16/8/4-bit precision ladder. The arithmetic lives in
// src/plan/; this file only turns flags into PlanInputs and prints the report.
#include <cstdio>
#include <string>
#include <thread>

#include "command_line.h"
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

// What the flags say, as typed values; the checks that involve several flags are in *_from_flags.
struct PlanFlags {
  std::optional<std::string> model;
  std::optional<double> params;
  std::optional<std::uint64_t> layers, d_model, heads, kv_heads, head_dim;
  std::optional<double> weight_bits;
  std::optional<std::string> weight_type;
  std::optional<std::uint64_t> weight_bytes;
  plan::KvElementType kv_type = plan::kv_type_by_name("f16");
  std::uint64_t ctx = 4096, users = 1, block_size = 16;
  std::optional<std::uint64_t> len, prompt;
  std::optional<std::uint64_t> mem;
  std::uint64_t overhead = 0;
  bool measure_bandwidth = false;  // --bandwidth measure
  std::optional<double> bandwidth, compute;
  bool json = false, decimal = false;
};

void declare(CommandLine& cl, PlanFlags& f) {
  const std::string m = "model (-m FILE, or by hand)";
  cl.option("-m,--model", f.model)
      .value_name("FILE")
      .group(m)
      .help("GGUF model: layers, KV heads, head size, parameters and weight bytes");
  cl.converted("--params", f.params, plan::parse_count)
      .value_name("N")
      .group(m)
      .help("parameter count: 13e9, 13B, 135M");
  cl.positive("--layers", f.layers).value_name("L").group(m).help("transformer layers");
  cl.positive("--d-model", f.d_model)
      .group(m)
      .help("model width; alone it means plain multi-head attention (K/V width = d_model)");
  cl.positive("--heads", f.heads).group(m).help("query heads (head size = d_model / heads)");
  cl.positive("--kv-heads", f.kv_heads).group(m).help("key/value heads (grouped-query attention)");
  cl.positive("--head-dim", f.head_dim).group(m).help("values per head");

  const std::string w = "weights (one of)";
  cl.option("--weight-bits", f.weight_bits)
      .value_name("BITS")
      .group(w)
      .help("bits per weight: 16, 8, 4 (default 16 by hand; the file's own bytes with -m)");
  cl.option("--weight-type", f.weight_type)
      .value_name("TYPE")
      .group(w)
      .help("a GGML/wisp block type, scales included: Q4_K, Q8_0, F16, ...");
  cl.converted("--weight-bytes", f.weight_bytes, plan::parse_size)
      .value_name("SIZE")
      .group(w)
      .help("the weight bytes outright: 26GiB");

  const std::string kv = "KV cache";
  cl.converted("--kv-type", f.kv_type, [](std::string_view s) { return plan::kv_type_by_name(s); })
      .value_name("TYPE")
      .group(kv)
      .default_text("f16")
      .help("cached K/V precision: " + plan::kv_type_names());
  cl.positive("--ctx", f.ctx).value_name("S").group(kv).help("tokens per request (context length)");
  cl.positive("--users", f.users).value_name("B").group(kv).help("concurrent requests");
  cl.positive("--block-size", f.block_size).group(kv).help("paged KV block, tokens");
  cl.positive("--len", f.len)
      .group(kv)
      .help("a request's actual length, for paged vs naive (max length S) waste (default S)");

  const std::string mem = "memory and speed";
  cl.converted("--mem", f.mem, plan::parse_size).value_name("SIZE").group(mem).help("memory budget: 80GiB, 160GB");
  cl.converted("--overhead", f.overhead, plan::parse_size)
      .value_name("SIZE")
      .group(mem)
      .default_text("0")
      .help("reserved for activations, runtime, fragmentation: 4GiB");
  cl.converted("--bandwidth", f.bandwidth,
               [&f](std::string_view s) -> double {
                 f.measure_bandwidth = s == "measure";
                 return f.measure_bandwidth ? 0.0 : plan::parse_bandwidth(s);
               })
      .value_name("RATE")
      .group(mem)
      .help("memory bandwidth for the decode ceiling: 3.35TB/s, 50GB/s, or 'measure' (this machine)");
  cl.converted("--compute", f.compute, plan::parse_flops)
      .value_name("RATE")
      .group(mem)
      .help("compute rate for prefill: 100TFLOP/s");
  cl.positive("--prompt", f.prompt).group(mem).help("prompt tokens for prefill (default S)");

  const std::string out = "output";
  cl.flag("--json", f.json).group(out).help("print JSON (exact bytes, bytes/s, tokens/s) for scripts");
  cl.flag("--decimal", f.decimal).group(out).help("print sizes in kB/MB/GB (1000-based) instead of KiB/MiB/GiB");

  cl.epilog(
      "examples:\n"
      "  wisp plan --params 13e9 --layers 40 --d-model 5120 --mem 80GiB --overhead 4GiB\n"
      "  wisp plan --params 70B --layers 80 --kv-heads 8 --head-dim 128 --mem 160GB \\\n"
      "            --bandwidth 3.35TB/s --decimal\n"
      "  wisp plan -m model.gguf --kv-type q8_0 --ctx 8192 --users 4 --bandwidth 50GB/s\n");
}

// A size that must not be zero (a budget, the weights).
void check_positive_size(const std::optional<std::uint64_t>& v, const char* flag) {
  if (v && *v == 0) throw UsageError(std::string(flag) + " must be positive, got 0");
}

void check_positive_rate(const std::optional<double>& v, const char* flag) {
  if (v && !(*v > 0)) throw UsageError(std::string(flag) + " must be positive");
}

// The attention shape from by-hand flags: --kv-heads/--head-dim, or --d-model (with --heads).
void hand_geometry(const PlanFlags& f, ModelShape& m) {
  const auto& d_model = f.d_model;
  const auto& heads = f.heads;
  const auto& kv_heads = f.kv_heads;
  auto head_dim = f.head_dim;
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

ModelShape model_from_flags(const CommandLine& cl, const PlanFlags& f) {
  if (f.model) {
    for (const char* flag : {"--params", "--layers", "--d-model", "--heads", "--kv-heads", "--head-dim"}) {
      if (cl.given(flag)) throw UsageError(std::string(flag) + " conflicts with -m: the model file gives the shape");
    }
    return plan::model_shape_from_gguf(*f.model);  // file errors: exit 1, not usage
  }
  ModelShape m;
  m.source = "by hand";
  if (f.params) {
    if (!(*f.params > 0)) throw UsageError("--params must be positive");
    m.params = *f.params;
  }
  if (!f.layers) throw UsageError("--layers is required without -m FILE");
  m.kv.layers = *f.layers;
  hand_geometry(f, m);
  return m;
}

plan::WeightChoice weights_from_flags(const PlanFlags& f, const ModelShape& m) {
  int given = f.weight_bits.has_value() + f.weight_type.has_value() + f.weight_bytes.has_value();
  if (given > 1) throw UsageError("give only one of --weight-bits, --weight-type, --weight-bytes");
  check_positive_size(f.weight_bytes, "--weight-bytes");
  plan::WeightChoice w;
  if (const auto& bytes = f.weight_bytes) {
    w.source = plan::WeightChoice::Source::kBytes;
    w.bytes = *bytes;
  } else if (const auto& bits = f.weight_bits) {
    if (!(*bits > 0) || *bits > 64) {
      throw UsageError("--weight-bits must be in (0, 64], got " + plan::format_number(*bits));
    }
    w.bits = *bits;
  } else if (f.weight_type) {
    const std::string& name = *f.weight_type;
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

PlanInputs inputs_from_flags(const CommandLine& cl, const PlanFlags& f) {
  PlanInputs in;
  in.model = model_from_flags(cl, f);
  in.weights = weights_from_flags(f, in.model);
  in.kv_type = f.kv_type;
  in.ctx = f.ctx;
  in.users = f.users;
  in.block_size = f.block_size;
  in.len = f.len;
  if (in.len && *in.len > in.ctx) {
    throw UsageError("--len " + std::to_string(*in.len) + " exceeds --ctx " + std::to_string(in.ctx) +
                     " (the naive reservation's max length)");
  }
  in.prompt = f.prompt;
  check_positive_size(f.mem, "--mem");
  in.budget = f.mem;
  in.overhead = f.overhead;
  if (cl.given("--overhead") && !in.budget) throw UsageError("--overhead needs --mem");
  if (f.measure_bandwidth) {
    // This machine's own read bandwidth, measured now (a few seconds), with every hardware thread.
    in.bandwidth =
        measure_read_bandwidth(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))).bytes_per_s;
  } else {
    check_positive_rate(f.bandwidth, "--bandwidth");
    in.bandwidth = f.bandwidth;
  }
  check_positive_rate(f.compute, "--compute");
  in.compute = f.compute;
  if (in.compute && !(in.model.params > 0)) {
    throw UsageError("--compute needs the parameter count (--params or -m FILE)");
  }
  in.units = f.decimal ? plan::UnitSystem::kDecimal : plan::UnitSystem::kBinary;
  return in;
}

int usage_error(const std::string& message) {
  std::fprintf(stderr, "wisp plan: error: %s\nrun 'wisp plan --help' for the options\n", message.c_str());
  return kUsageExit;
}

}  // namespace

int cmd_plan(int argc, char** argv) {
  PlanFlags flags;
  CommandLine cl("plan",
                 "Serving arithmetic: weight and KV-cache bytes, users that fit, paged vs naive\n"
                 "allocation, decode ceiling, prefill cost and a 16/8/4-bit precision ladder.\n"
                 "Give a model file, or describe the model by hand.");
  declare(cl, flags);
  PlanInputs in;
  try {
    if (!cl.parse(argc, argv)) {
      std::fputs(cl.help().c_str(), stdout);
      return 0;
    }
    in = inputs_from_flags(cl, flags);
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
  const std::string out = flags.json ? plan::render_json(report) : plan::render_text(report);
  std::fputs(out.c_str(), stdout);
  if (!flags.json && out.back() != '\n') std::fputc('\n', stdout);
  return 0;
}

}  // namespace wisp::cli

#include "generation_flags.h"

#include <chrono>
#include <cstdio>
#include <random>
#include <thread>

#include "kv/kv_type.h"
#include "wisp/error.h"

namespace wisp::cli {

void add_model_flags(ArgParser& p) {
  p.option("model").short_name('m').value_name("FILE").help("the GGUF model").required().group("model");
  p.option("ctx-size", ArgKind::kInt)
      .short_name('c')
      .value_name("N")
      .help("context size in tokens (default: the model's training context, at most 4096)")
      .group("model");
  p.option("threads", ArgKind::kInt)
      .short_name('t')
      .value_name("N")
      .help("threads for the forward pass (default: the machine's cores)")
      .group("model");
  p.option("kv-type").value_name("TYPE").default_value("f16").group("model").help(
      "how the KV cache stores K and V: " + kv_type_names() +
      " (f16 as llama.cpp; q8_0 = 8.5 bits, q4 = 5 bits per value, group-wise per 32)");
  p.option("device").value_name("DEV").default_value("auto").group("model").help(
      "where the forward pass runs: cpu, cuda, cuda:N, or auto (the first CUDA device if the build and the "
      "machine have one, else the CPU)");
  p.flag("exact").group("model").help(
      "llama.cpp's float order, which depends on the batch (prompt logits equal llama.cpp's bit for bit); "
      "default: one order for every token, so results never depend on batching");
}

void add_sampling_flags(ArgParser& p) {
  SamplerParams d;
  auto num = [](double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return std::string(buf);
  };
  p.option("temp", ArgKind::kNumber)
      .value_name("T")
      .default_value(num(d.temperature))
      .help("temperature; 0 = greedy")
      .group("sampling");
  p.option("top-k", ArgKind::kInt)
      .value_name("K")
      .default_value(std::to_string(d.top_k))
      .help("keep the K most likely tokens; 0 = off")
      .group("sampling");
  p.option("top-p", ArgKind::kNumber)
      .value_name("P")
      .default_value(num(d.top_p))
      .help("keep the smallest set of tokens reaching probability P; 1 = off")
      .group("sampling");
  p.option("min-p", ArgKind::kNumber)
      .value_name("P")
      .default_value(num(d.min_p))
      .help("drop tokens less likely than P times the most likely; 0 = off")
      .group("sampling");
  p.option("repeat-penalty", ArgKind::kNumber)
      .value_name("X")
      .default_value(num(d.repeat_penalty))
      .help("penalise tokens seen in the last --repeat-last-n; 1 = off")
      .group("sampling");
  p.option("repeat-last-n", ArgKind::kInt)
      .value_name("N")
      .default_value(std::to_string(d.penalty_last_n))
      .help("how many recent tokens the penalties look at; 0 = off")
      .group("sampling");
  p.option("frequency-penalty", ArgKind::kNumber)
      .value_name("X")
      .default_value(num(d.frequency_penalty))
      .help("subtract X per earlier occurrence")
      .group("sampling");
  p.option("presence-penalty", ArgKind::kNumber)
      .value_name("X")
      .default_value(num(d.presence_penalty))
      .help("subtract X once if the token occurred")
      .group("sampling");
  p.option("seed", ArgKind::kInt)
      .short_name('s')
      .value_name("N")
      .help("sampler seed; the same seed and settings give the same text (default: random)")
      .group("sampling");
}

LoadedModel load_model_from_flags(const Args& a) {
  LoadedModel out;
  // Checked before the model loads so a typo costs nothing; kv_type_by_name's message lists the types.
  out.session.kv_type = std::string(a.convert("kv-type", [](std::string_view s) { return kv_type_by_name(s); })->name);
  out.session.exact = a.flag("exact");
  out.session.device = a.str("device");
  std::string path = a.str("model");
  auto t0 = std::chrono::steady_clock::now();
  out.model = Model::load(path);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const ModelInfo& info = out.model->info();
  if (auto c = a.opt_positive("ctx-size")) {
    out.session.n_ctx = static_cast<std::size_t>(*c);
    if (info.n_ctx_train > 0 && *c > static_cast<std::uint64_t>(info.n_ctx_train)) {
      std::fprintf(stderr, "warning: -c %llu is longer than the %lld tokens the model was trained on\n",
                   static_cast<unsigned long long>(*c), static_cast<long long>(info.n_ctx_train));
    }
  }
  if (auto t = a.opt_positive("threads")) {
    if (*t > 1024) throw UsageError("--threads " + std::to_string(*t) + " is more than 1024");
    out.session.n_threads = static_cast<int>(*t);
  }
  std::fprintf(stderr, "loaded %s: %s, %lld layers, %.1f MiB of weights, in %.0f ms\n", path.c_str(),
               info.architecture.c_str(), static_cast<long long>(info.n_layer), info.weight_bytes / 1048576.0, ms);
  return out;
}

SamplerParams sampler_params_from_flags(const Args& a, std::string* seed_note) {
  SamplerParams p;
  p.temperature = static_cast<float>(a.number("temp"));
  p.top_k = static_cast<int>(a.int64("top-k"));
  p.top_p = static_cast<float>(a.number("top-p"));
  p.min_p = static_cast<float>(a.number("min-p"));
  p.repeat_penalty = static_cast<float>(a.number("repeat-penalty"));
  std::int64_t last_n = a.int64("repeat-last-n");
  if (last_n < 0) throw UsageError("--repeat-last-n must be 0 or more, got " + std::to_string(last_n));
  p.penalty_last_n = static_cast<std::size_t>(last_n);
  p.frequency_penalty = static_cast<float>(a.number("frequency-penalty"));
  p.presence_penalty = static_cast<float>(a.number("presence-penalty"));
  if (auto s = a.opt_int("seed")) {
    p.seed = static_cast<std::uint64_t>(*s);
  } else {
    p.seed = std::random_device{}() & 0xffffffffu;
    if (seed_note) *seed_note = "seed " + std::to_string(p.seed) + " (pass --seed to repeat)";
  }
  try {
    p.validate();
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  return p;
}

}  // namespace wisp::cli

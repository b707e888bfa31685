#include "generation_flags.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

#include "kv/kv_type.h"
#include "wisp/error.h"

namespace wisp::cli {

void add_model_flags(CommandLine& cl, ModelFlags& f) {
  cl.option("-m,--model", f.model).value_name("FILE").help("the GGUF model").required().group("model");
  cl.positive("-c,--ctx-size", f.ctx_size)
      .value_name("N")
      .help("context size in tokens (default: the model's training context, at most 4096)")
      .group("model");
  cl.positive("-t,--threads", f.threads)
      .value_name("N")
      .help("threads for the forward pass (default: the machine's cores)")
      .group("model");
  // Checked as it is parsed, before the model loads, so a typo costs nothing; kv_type_by_name's
  // message lists the types.
  cl.converted("--kv-type", f.kv_type, [](std::string_view s) { return std::string(kv_type_by_name(s).name); })
      .value_name("TYPE")
      .default_text("f16")
      .group("model")
      .help("how the KV cache stores K and V: " + kv_type_names() +
            " (f16 as llama.cpp; q8_0 = 8.5 bits, q4 = 5 bits per value, group-wise per 32)");
  cl.option("--device", f.device)
      .value_name("DEV")
      .group("model")
      .help(
          "where the forward pass runs: cpu, cuda, cuda:N, or auto (the first CUDA device if the build and the "
          "machine have one, else the CPU)");
  cl.flag("--exact", f.exact)
      .group("model")
      .help(
          "llama.cpp's float order, which depends on the batch (prompt logits equal llama.cpp's bit for bit); "
          "default: one order for every token, so results never depend on batching");
}

std::vector<LogitBias> parse_logit_biases(std::string_view text) {
  std::vector<LogitBias> out;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    const std::size_t sign = item.find_first_of("+-");
    auto bad = [&] {
      return Error("'" + std::string(item) + "' is not TOKEN_ID+BIAS or TOKEN_ID-BIAS (e.g. 15043+1.5, 2-inf)");
    };
    if (sign == std::string_view::npos || sign == 0) throw bad();
    std::int32_t id = 0;
    const auto [id_end, id_ec] = std::from_chars(item.data(), item.data() + sign, id);
    if (id_ec != std::errc() || id_end != item.data() + sign || id < 0) throw bad();
    const std::string_view number = item.substr(sign + 1);
    float bias = 0.0f;
    if (number == "inf") {
      bias = INFINITY;
    } else {
      const auto [b_end, b_ec] = std::from_chars(number.data(), number.data() + number.size(), bias);
      if (number.empty() || b_ec != std::errc() || b_end != number.data() + number.size() || !std::isfinite(bias))
        throw bad();
    }
    if (item[sign] == '-') bias = -bias;
    if (bias == INFINITY) throw Error("'" + std::string(item) + "': a bias of +inf would make every sample that token");
    out.push_back({id, bias});
    at = comma + 1;
  }
  return out;
}

void check_logit_bias_tokens(const SamplerParams& p, const Model& model) {
  const std::int64_t n_vocab = model.info().n_vocab;
  for (const LogitBias& b : p.logit_bias) {
    if (b.token >= n_vocab) {
      throw UsageError("--logit-bias: token " + std::to_string(b.token) + " is outside the model's vocabulary (0 .. " +
                       std::to_string(n_vocab - 1) + ")");
    }
  }
}

void add_sampling_flags(CommandLine& cl, SamplingFlags& f) {
  SamplerParams& p = f.params;
  cl.option("--temp", p.temperature).value_name("T").help("temperature; 0 = greedy").group("sampling");
  cl.option("--top-k", p.top_k).value_name("K").help("keep the K most likely tokens; 0 = off").group("sampling");
  cl.option("--top-p", p.top_p)
      .value_name("P")
      .help("keep the smallest set of tokens reaching probability P; 1 = off")
      .group("sampling");
  cl.option("--min-p", p.min_p)
      .value_name("P")
      .help("drop tokens less likely than P times the most likely; 0 = off")
      .group("sampling");
  cl.option("--repeat-penalty", p.repeat_penalty)
      .value_name("X")
      .help("penalise tokens seen in the last --repeat-last-n; 1 = off")
      .group("sampling");
  cl.option("--repeat-last-n", p.penalty_last_n)
      .value_name("N")
      .help("how many recent tokens the penalties look at; 0 = off")
      .group("sampling");
  cl.option("--frequency-penalty", p.frequency_penalty)
      .value_name("X")
      .help("subtract X per earlier occurrence")
      .group("sampling");
  cl.option("--presence-penalty", p.presence_penalty)
      .value_name("X")
      .help("subtract X once if the token occurred")
      .group("sampling");
  cl.converted("-l,--logit-bias", p.logit_bias, parse_logit_biases)
      .value_name("ID+B,...")
      .group("sampling")
      .help(
          "add B to token ID's logit before the rest of the chain, as llama.cpp's -l (e.g. 15043+1.5, 2-inf bans "
          "token 2); several comma-separated");
  cl.option("-s,--seed", f.seed)
      .value_name("N")
      .help("sampler seed; the same seed and settings give the same text (default: random)")
      .group("sampling");
}

LoadedModel load_model_from_flags(const ModelFlags& f) {
  LoadedModel out;
  out.session.kv_type = f.kv_type;
  out.session.exact = f.exact;
  out.session.device = f.device;
  auto t0 = std::chrono::steady_clock::now();
  out.model = Model::load(f.model);
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const ModelInfo& info = out.model->info();
  if (const auto& c = f.ctx_size) {
    out.session.n_ctx = static_cast<std::size_t>(*c);
    if (info.n_ctx_train > 0 && *c > static_cast<std::uint64_t>(info.n_ctx_train)) {
      std::fprintf(stderr, "warning: -c %llu is longer than the %lld tokens the model was trained on\n",
                   static_cast<unsigned long long>(*c), static_cast<long long>(info.n_ctx_train));
    }
  }
  if (const auto& t = f.threads) {
    if (*t > 1024) throw UsageError("--threads " + std::to_string(*t) + " is more than 1024");
    out.session.n_threads = *t;
  }
  std::fprintf(stderr, "loaded %s: %s, %lld layers, %.1f MiB of weights, in %.0f ms\n", f.model.c_str(),
               info.architecture.c_str(), static_cast<long long>(info.n_layer), info.weight_bytes / 1048576.0, ms);
  return out;
}

SamplerParams sampler_params_from_flags(const SamplingFlags& f, std::string* seed_note) {
  SamplerParams p = f.params;
  if (f.seed) {
    p.seed = *f.seed;
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

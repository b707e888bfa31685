// Method: for each task (a prompt, already in the model's chat format), greedy decoding of -n
// tokens plain and with speculation, each once to warm up and then -r times, alternating so a
// change in the machine's load hits both alike. tok/s is generated tokens after the first over the
// time from the first sample to the last (the timing line's decode speed: the prompt's evaluation is
// not in it); the row reports the median of the runs, and checks that the speculative tokens equal
// the plain ones (greedy exactness).
#include "bench_speculative.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "generate/speculative.h"
#include "generation_flags.h"
#include "model/model_state.h"
#include "speculation_flags.h"
#include "wisp/error.h"
#include "wisp/generate.h"

namespace wisp::cli {

namespace {

struct Task {
  std::string name, kind, prompt;
};

std::vector<Task> load_tasks(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(path + ": cannot read the task file");
  std::vector<Task> out;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
      out.push_back(
          {j.at("name").get<std::string>(), j.value("kind", std::string("chat")), j.at("prompt").get<std::string>()});
    } catch (const nlohmann::json::exception& e) {
      throw Error(path + ":" + std::to_string(n) + ": not a task ({\"name\", \"kind\", \"prompt\"}): " + e.what());
    }
  }
  if (out.empty()) throw Error(path + ": no tasks");
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Row {
  Task task;
  double plain_tps = 0, spec_tps = 0;
  GenerationStats spec;  // of the last timed run
  bool same = true;
  std::size_t n_prompt = 0;
};

}  // namespace

void add_speculative_bench_flags(CommandLine& cl, SpeculativeBenchFlags& f) {
  cl.option("--tasks", f.tasks)
      .value_name("FILE")
      .help("with --lookup/--draft: the task set, one JSON object a line: name, kind (quote|chat), prompt");
}

int bench_speculative(const SpeculativeBenchFlags& f, const std::string& model, int threads, std::size_t n_gen,
                      int reps) {
  if (n_gen < 2) throw UsageError("bench --lookup/--draft: -n must be at least 2");
  const std::vector<Task> tasks = load_tasks(f.tasks);
  LoadedModel lm;
  lm.model = Model::load(model);
  lm.session.n_threads = threads;
  lm.session.n_ctx = 2048;
  lm.session.exact = f.exact;
  const Tokenizer tokenizer = Tokenizer::from_gguf(detail::model_state(*lm.model).file);
  const SamplerParams greedy{.temperature = 0.0f};
  std::unique_ptr<Speculator> spec = speculator_from_flags(f.speculation, lm, tokenizer, greedy);
  auto engine = Engine::create(lm.model, {.n_threads = threads, .kv_tokens = lm.session.n_ctx});

  std::vector<Row> rows;
  for (const Task& t : tasks) {
    const std::vector<TokenId> ids = tokenizer.tokenize(t.prompt, {.add_special = true, .parse_special = true});
    auto run = [&](Speculator* s) {
      Session session(engine, {.n_ctx = lm.session.n_ctx});
      Sampler sampler(greedy);
      GenerationOptions o;
      o.n_predict = n_gen;
      o.speculator = s;
      return generate(session, tokenizer, sampler, ids, o);
    };
    Row row{t};
    row.n_prompt = ids.size();
    std::vector<double> plain, sped;
    for (int r = 0; r <= reps; ++r) {
      const GenerationResult p = run(nullptr);
      const GenerationResult q = run(spec.get());
      row.same = row.same && p.tokens == q.tokens;
      if (r == 0) continue;  // warm-up
      plain.push_back(p.stats.decode_tokens_per_second());
      sped.push_back(q.stats.decode_tokens_per_second());
      row.spec = q.stats;
    }
    row.plain_tps = median(plain);
    row.spec_tps = median(sped);
    std::fprintf(stderr, "%s: plain %.1f tok/s, speculative %.1f tok/s (%.2fx)\n", t.name.c_str(), row.plain_tps,
                 row.spec_tps, row.spec_tps / row.plain_tps);
    rows.push_back(row);
  }

  std::map<std::string, std::vector<double>> by_kind;
  for (const Row& r : rows) by_kind[r.task.kind].push_back(r.spec_tps / r.plain_tps);
  auto geomean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += std::log(x);
    return std::exp(s / static_cast<double>(v.size()));
  };
  const char* mode = f.speculation.lookup ? "lookup" : "draft";
  if (f.json) {
    nlohmann::json j = {
        {"model", model}, {"mode", mode}, {"threads", threads}, {"n_gen", n_gen}, {"repetitions", reps}};
    if (f.speculation.draft) j["draft"] = *f.speculation.draft;
    if (f.speculation.lookup) j["lookup"] = *f.speculation.lookup;
    for (const Row& r : rows) {
      j["tasks"].push_back({{"name", r.task.name},
                            {"kind", r.task.kind},
                            {"n_prompt", r.n_prompt},
                            {"plain_tok_s", r.plain_tps},
                            {"spec_tok_s", r.spec_tps},
                            {"speedup", r.spec_tps / r.plain_tps},
                            {"acceptance", r.spec.acceptance_rate()},
                            {"accepted_per_pass", r.spec.mean_accepted_length()},
                            {"same_tokens", r.same}});
    }
    for (const auto& [k, v] : by_kind) j["geomean_speedup"][k] = geomean(v);
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  std::printf("wisp bench, speculative (%s): %s, %d threads, %zu tokens greedy, median of %d runs\n\n", mode,
              model.c_str(), threads, n_gen, reps);
  std::printf(
      "| task | kind | prompt | plain tok/s | speculative tok/s | speedup | accepted | kept per pass | same tokens "
      "|\n");
  std::printf("|---|---|---:|---:|---:|---:|---:|---:|---|\n");
  for (const Row& r : rows) {
    std::printf("| %s | %s | %zu | %.1f | %.1f | %.2fx | %.0f%% | %.2f | %s |\n", r.task.name.c_str(),
                r.task.kind.c_str(), r.n_prompt, r.plain_tps, r.spec_tps, r.spec_tps / r.plain_tps,
                100 * r.spec.acceptance_rate(), r.spec.mean_accepted_length(), r.same ? "yes" : "NO");
  }
  std::printf("\n");
  for (const auto& [k, v] : by_kind) std::printf("geometric mean speedup, %s tasks: %.2fx\n", k.c_str(), geomean(v));
  bool all_same = true;
  for (const Row& r : rows) all_same = all_same && r.same;
  return all_same ? 0 : 1;
}

}  // namespace wisp::cli

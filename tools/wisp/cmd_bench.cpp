// `wisp bench -m FILE...`: prefill (ppP) and decode (tgN) throughput per model file, as a table,
// JSON, CSV or an SVG chart of tokens/s against bits per weight; `--bandwidth` measures the
// machine's read bandwidth so decode can be stated as a fraction of it.
//
// Method (as llama-bench): ppP evaluates P tokens as one batch from an empty context; tgN evaluates
// N tokens one at a time from an empty context. Each test runs once to warm up, then -r times;
// tok/s is the mean over the runs with its standard deviation. Decode reads, per token, the weight
// bytes wisp plan counts (plan/decode_reads.h: every tensor, but of a mixture of experts only the
// chosen experts' rows, and of an untied embedding one row), hence effective GB/s = tok/s x those
// bytes ("read MiB"), not the file size. "load ms" is open to first logits (map, build, one token) on a warm
// page cache, best of the runs. Units: MiB = 1024^2 bytes, GB/s = 10^9 bytes per second.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "command_line.h"
#include "bench_speculative.h"
#include "commands.h"
#include "core/cpu_features.h"
#include "core/progress.h"
#include "core/read_bandwidth.h"
#include "formats/gguf_file.h"
#include "kernels/dot.h"
#include "plan/decode.h"
#include "plan/decode_reads.h"
#include "plan/kv_bytes.h"
#include "speculation_flags.h"
#include "wisp/error.h"
#include "wisp/model.h"
#include "wisp/engine.h"
#include "wisp/session.h"

namespace wisp::cli {

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
using Clock = std::chrono::steady_clock;

struct BenchFlags {
  std::vector<std::string> files;
  std::optional<std::string> model;
  std::int64_t n_prompt = 512, n_gen = 128;
  int repetitions = 5;
  std::optional<int> threads;
  std::optional<std::string> batch;
  bool exact = false;
  std::string device = "auto";
  bool bandwidth = false, json = false, csv = false;
  std::optional<std::string> svg;
  SpeculativeBenchFlags spec;
};

void declare(CommandLine& cl, BenchFlags& f) {
  cl.positionals("FILE...", f.files, 0, 64);
  cl.option("-m,--model", f.model).value_name("FILE[,FILE...]").help("model files (comma-separated; or positional)");
  cl.option("-p,--n-prompt", f.n_prompt).help("prompt tokens of the prefill test (0: skip)");
  cl.option("-n,--n-gen", f.n_gen).help("generated tokens of the decode test (0: skip)");
  cl.option("-r,--repetitions", f.repetitions).help("timed runs per test (after one warm-up)");
  cl.option("-t,--threads", f.threads).help("threads (default: physical cores)");
  cl.option("--batch", f.batch)
      .value_name("N[,N...]")
      .help(
          "concurrent sequences: for each N, N prompts of -p tokens through the batched engine "
          "(steps of up to 512 tokens), then -n decode steps of one token per sequence; reports "
          "aggregate and per-sequence tok/s (as llama-batched-bench's -npl)");
  cl.flag("--exact", f.exact).help("llama.cpp's batch-dependent float order (default: the batch-invariant order)");
  cl.option("--device", f.device)
      .value_name("DEV")
      .help(
          "where the models run: cpu, cuda, cuda:N, or auto (the first CUDA device if the build and machine have "
          "one)");
  cl.flag("--bandwidth", f.bandwidth)
      .help(
          "measure the read bandwidth and report decode's % of it: the -t threads (at most the hardware "
          "threads) each stream through their own slice of a 1-2 GiB buffer (4x the last-level cache), four "
          "places of it at once with the widest vector loads, pages touched first, best of 5 passes started together; "
          "the rate is "
          "bytes per CPU second of the readers, so other processes on the cores do not lower it (the wall-clock "
          "rate is printed beside it)");
  cl.flag("--json", f.json).help("print JSON (for scripts)");
  cl.flag("--csv", f.csv).help("print CSV");
  cl.option("--svg", f.svg).value_name("FILE").help("write a chart of tok/s against bits per weight");
  add_speculation_flags(cl, f.spec.speculation);
  add_speculative_bench_flags(cl, f.spec);
  cl.epilog("WISP_ISA=scalar|avx2|avx512 forces a kernel path. MiB = 1024^2 bytes; GB/s = 1e9 bytes/s.");
}

// Physical cores: distinct (package, core) pairs in sysfs; hardware threads if unreadable.
int physical_cores() {
  std::set<std::pair<int, int>> cores;
  for (unsigned cpu = 0; cpu < 4096; ++cpu) {
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    std::ifstream pk(base + "physical_package_id"), co(base + "core_id");
    int p = 0, c = 0;
    if (!(pk >> p) || !(co >> c)) break;
    cores.insert({p, c});
  }
  if (!cores.empty()) return static_cast<int>(cores.size());
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

std::string ftype_name(std::uint64_t ft) {
  static const std::map<std::uint64_t, const char*> names = {
      {0, "F32"},     {1, "F16"},     {2, "Q4_0"},      {3, "Q4_1"},    {7, "Q8_0"},     {8, "Q5_0"},
      {9, "Q5_1"},    {10, "Q2_K"},   {11, "Q3_K_S"},   {12, "Q3_K_M"}, {13, "Q3_K_L"},  {14, "Q4_K_S"},
      {15, "Q4_K_M"}, {16, "Q5_K_S"}, {17, "Q5_K_M"},   {18, "Q6_K"},   {19, "IQ2_XXS"}, {20, "IQ2_XS"},
      {21, "Q2_K_S"}, {22, "IQ3_XS"}, {23, "IQ3_XXS"},  {24, "IQ1_S"},  {25, "IQ4_NL"},  {26, "IQ3_S"},
      {27, "IQ3_M"},  {28, "IQ2_S"},  {29, "IQ2_M"},    {30, "IQ4_XS"}, {31, "IQ1_M"},   {32, "BF16"},
      {36, "TQ1_0"},  {37, "TQ2_0"},  {38, "MXFP4_MOE"}};
  const auto it = names.find(ft);
  return it == names.end() ? "ftype " + std::to_string(ft) : it->second;
}

struct FileFacts {
  std::string name;  // file name without directories
  std::string type;
  std::uint64_t bytes = 0;  // tensor bytes
  std::uint64_t params = 0;
  plan::DecodeReads reads;       // what a decode step reads of them
  std::uint64_t read_bytes = 0;  // ... one token's step
  double bpw() const { return params ? 8.0 * static_cast<double>(bytes) / static_cast<double>(params) : 0.0; }
};

FileFacts file_facts(const std::string& path) {
  const GgufFile f = GgufFile::open(path);
  FileFacts r;
  r.name = path.substr(path.find_last_of('/') + 1);
  std::map<std::string, std::uint64_t> by_type;
  for (const GgufTensor& t : f.tensors()) {
    r.bytes += t.n_bytes;
    r.params += static_cast<std::uint64_t>(t.n_elements());
    by_type[std::string(t.type->name)] += t.n_bytes;
  }
  r.reads = plan::decode_reads_from_gguf(f);
  r.read_bytes = plan::decode_bytes_read(r.reads);
  if (auto ft = f.get_u64_opt("general.file_type")) {
    r.type = ftype_name(*ft);
  } else {
    r.type =
        std::max_element(by_type.begin(), by_type.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
  }
  return r;
}

struct Result {
  FileFacts file;
  std::string test;  // "pp512", "tg128"
  int n_tokens = 0;
  std::vector<double> tok_s;
  double mean = 0.0, stddev = 0.0;
  double gb_s = 0.0;  // effective: tok/s x bytes (decode only)
  // Decode only: the KV bytes an average step of this test reads (wisp plan's arithmetic: from an
  // empty cache, step i reads i tokens of K and V, so tgN averages (N + 1) / 2 tokens).
  std::uint64_t kv_bytes_per_step = 0;
  double load_ms = 0.0;
  double peak_rss_mib = 0.0;
  int n_seq = 1;  // concurrent sequences (--batch); tok/s is then the aggregate over all of them
};

void finish(Result& r) {
  double s = 0.0;
  for (double v : r.tok_s) s += v;
  r.mean = s / static_cast<double>(r.tok_s.size());
  double q = 0.0;
  for (double v : r.tok_s) q += (v - r.mean) * (v - r.mean);
  r.stddev = r.tok_s.size() > 1 ? std::sqrt(q / static_cast<double>(r.tok_s.size() - 1)) : 0.0;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0 / kMiB;  // ru_maxrss is in KiB on Linux
}

std::vector<std::int32_t> bench_tokens(std::int64_t n, std::int64_t n_vocab) {
  std::vector<std::int32_t> t(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    t[static_cast<std::size_t>(i)] = static_cast<std::int32_t>((i * 7919 + 13) % n_vocab);
  return t;
}

// Open to first logits: map and check the file, build the model and a session, evaluate one
// token. Run reps + 1 times; the first warms the page cache (and the process's one-time tables)
// and is dropped, the best of the rest is reported: a warm-cache start, as a user who runs
// `wisp chat` twice sees it.
double open_to_first_logits_ms(const std::string& path, int reps, int threads, const std::string& device) {
  double best = 0.0;
  for (int rep = -1; rep < std::max(1, reps); ++rep) {
    const auto t0 = Clock::now();
    std::shared_ptr<const Model> model = Model::load(path);
    Session s(model, SessionOptions{.n_ctx = 16, .n_threads = threads, .device = device});
    const std::int32_t tok = 1;
    s.eval(std::span<const std::int32_t>(&tok, 1));
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (rep >= 0 && (best == 0.0 || ms < best)) best = ms;
  }
  return best;
}

std::vector<Result> bench_file(const std::string& path, std::int64_t n_prompt, std::int64_t n_gen, int reps,
                               int threads, bool exact, const std::string& device, Progress& progress) {
  const FileFacts facts = file_facts(path);
  const double load_ms = open_to_first_logits_ms(path, reps, threads, device);
  std::shared_ptr<const Model> model = Model::load(path);
  const SessionOptions so{
      .n_ctx = static_cast<std::size_t>(n_prompt + n_gen + 16), .n_threads = threads, .exact = exact, .device = device};
  Session s(model, so);
  progress.print_line("bench: " + path + " on " + s.engine().device());
  const std::int64_t n_vocab = model->info().n_vocab;
  std::vector<Result> out;
  auto timed = [&](auto&& body) {
    const auto a = Clock::now();
    body();
    return std::chrono::duration<double>(Clock::now() - a).count();
  };
  if (n_prompt > 0) {
    Result r{facts, "pp" + std::to_string(n_prompt), static_cast<int>(n_prompt)};
    const std::vector<std::int32_t> toks = bench_tokens(n_prompt, n_vocab);
    for (int rep = -1; rep < reps; ++rep) {
      s.truncate(0);
      const double sec = timed([&] { s.eval(toks); });
      if (rep >= 0) r.tok_s.push_back(static_cast<double>(n_prompt) / sec);
    }
    finish(r);
    out.push_back(r);
  }
  if (n_gen > 0) {
    Result r{facts, "tg" + std::to_string(n_gen), static_cast<int>(n_gen)};
    const std::vector<std::int32_t> toks = bench_tokens(n_gen, n_vocab);
    for (int rep = -1; rep < reps; ++rep) {
      s.truncate(0);
      const double sec = timed([&] {
        for (std::int32_t t : toks) s.eval(std::span<const std::int32_t>(&t, 1));
      });
      if (rep >= 0) r.tok_s.push_back(static_cast<double>(n_gen) / sec);
    }
    finish(r);
    r.gb_s = r.mean * static_cast<double>(facts.read_bytes) / 1e9;
    const ModelInfo& info = model->info();
    const std::uint64_t kv_per_token =
        plan::kv_bytes_per_token(static_cast<std::uint64_t>(info.n_layer), static_cast<std::uint64_t>(info.n_head_kv),
                                 static_cast<std::uint64_t>(info.head_dim), plan::kv_type_by_name(so.kv_type));
    r.kv_bytes_per_step = kv_per_token * static_cast<std::uint64_t>(n_gen + 1) / 2;
    out.push_back(r);
  }
  for (Result& r : out) {
    r.load_ms = load_ms;
    r.peak_rss_mib = peak_rss_mib();
  }
  return out;
}

// --batch: n_seq sequences in one engine. Prefill: the n_seq prompts of n_prompt tokens are cut
// into steps of up to the engine's step size (a step may hold pieces of several prompts), timed
// from empty caches to the last prompt's logits. Decode: n_gen steps, each one token of every
// sequence. tok/s is the aggregate (all sequences' tokens over the wall time).
std::vector<Result> bench_batched(const std::string& path, std::int64_t n_prompt, std::int64_t n_gen, int reps,
                                  int threads, const std::vector<int>& n_seqs, bool exact, const std::string& device) {
  const FileFacts facts = file_facts(path);
  std::shared_ptr<const Model> model = Model::load(path);
  const std::int64_t n_vocab = model->info().n_vocab;
  std::vector<Result> out;
  for (const int B : n_seqs) {
    const std::size_t per_seq = static_cast<std::size_t>(n_prompt + n_gen + 16);
    auto engine = Engine::create(
        model,
        {.n_threads = threads, .kv_tokens = per_seq * static_cast<std::size_t>(B), .exact = exact, .device = device});
    const std::size_t step = engine->options().max_step_tokens;
    std::vector<std::vector<std::int32_t>> prompts;
    for (int b = 0; b < B; ++b) {
      std::vector<std::int32_t> t = bench_tokens(n_prompt, n_vocab);
      if (!t.empty()) t[0] = static_cast<std::int32_t>((b * 104729 + 7) % n_vocab);  // distinct sequences
      prompts.push_back(std::move(t));
    }
    Result pp{facts, "pp" + std::to_string(n_prompt), static_cast<int>(n_prompt * B)};
    Result tg{facts, "tg" + std::to_string(n_gen), static_cast<int>(n_gen * B)};
    pp.n_seq = tg.n_seq = B;
    for (int rep = -1; rep < reps; ++rep) {
      std::vector<Session> ss;
      for (int b = 0; b < B; ++b) ss.emplace_back(engine, SessionOptions{.n_ctx = per_seq});
      const auto a = Clock::now();
      if (n_prompt > 0) {
        std::vector<std::size_t> fed(static_cast<std::size_t>(B), 0);
        for (std::size_t b = 0; b < static_cast<std::size_t>(B);) {
          std::vector<StepEntry> entries;
          std::size_t room = step;
          for (std::size_t c = b; c < static_cast<std::size_t>(B) && room > 0; ++c) {
            const std::size_t n = std::min(room, prompts[c].size() - fed[c]);
            const bool last = fed[c] + n == prompts[c].size();
            entries.push_back({&ss[c], std::span(prompts[c]).subspan(fed[c], n), last ? Logits::kLast : Logits::kNone});
            fed[c] += n;
            room -= n;
          }
          engine->step(entries);
          while (b < static_cast<std::size_t>(B) && fed[b] == prompts[b].size()) ++b;
        }
      }
      const auto m = Clock::now();
      if (n_gen > 0) {
        std::vector<std::int32_t> next(static_cast<std::size_t>(B));
        std::vector<StepEntry> entries(static_cast<std::size_t>(B));
        for (std::int64_t i = 0; i < n_gen; ++i) {
          for (std::size_t b = 0; b < static_cast<std::size_t>(B); ++b) {
            next[b] = static_cast<std::int32_t>((i * 31 + static_cast<std::int64_t>(b) * 17 + 5) % n_vocab);
            entries[b] = {&ss[b], std::span(&next[b], 1), Logits::kLast};
          }
          engine->step(entries);
        }
      }
      const auto e = Clock::now();
      if (rep < 0) continue;
      if (n_prompt > 0)
        pp.tok_s.push_back(static_cast<double>(n_prompt * B) / std::chrono::duration<double>(m - a).count());
      if (n_gen > 0) tg.tok_s.push_back(static_cast<double>(n_gen * B) / std::chrono::duration<double>(e - m).count());
    }
    if (n_prompt > 0) {
      finish(pp);
      out.push_back(pp);
    }
    if (n_gen > 0) {
      finish(tg);
      // One read of the step's weights per step: B tokens read the union of their experts.
      tg.gb_s = tg.mean / B * static_cast<double>(plan::decode_bytes_read(facts.reads, B)) / 1e9;
      out.push_back(tg);
    }
  }
  for (Result& r : out) r.peak_rss_mib = peak_rss_mib();
  return out;
}

void print_batch_table(const std::vector<Result>& rs) {
  std::printf("| %-34s | %-7s | %5s | %-8s | %18s | %14s |\n", "model", "type", "n_seq", "test", "aggregate tok/s",
              "per-seq tok/s");
  std::printf("|%s|%s|%s|%s|%s|%s|\n", std::string(36, '-').c_str(), std::string(9, '-').c_str(),
              std::string(7, '-').c_str(), std::string(10, '-').c_str(), std::string(20, '-').c_str(),
              std::string(16, '-').c_str());
  for (const Result& r : rs) {
    char tps[48];
    std::snprintf(tps, sizeof tps, "%.2f ± %.2f", r.mean, r.stddev);
    std::printf("| %-34s | %-7s | %5d | %-8s | %18s | %14.2f |\n", r.file.name.c_str(), r.file.type.c_str(), r.n_seq,
                r.test.c_str(), tps, r.mean / r.n_seq);
  }
}

// The decode ceiling `wisp plan` predicts for this file on this machine (measured bandwidth, one
// stream): bandwidth / (weight bytes read + KV bytes per step). 0 when there is nothing to predict.
double ceiling_tok_s(const Result& r, double bw) {
  if (bw <= 0.0 || r.test.rfind("tg", 0) != 0) return 0.0;
  return plan::decode_ceiling(bw * 1e9, r.file.read_bytes, r.kv_bytes_per_step, 1).per_stream_tokens_per_second;
}

std::string pct(double gb_s, double bw) {
  if (bw <= 0.0 || gb_s <= 0.0) return "";
  char b[32];
  std::snprintf(b, sizeof b, "%.0f%%", 100.0 * gb_s / bw);
  return b;
}

void print_table(const std::vector<Result>& rs, double bw) {
  std::printf("| %-34s | %-7s | %8s | %8s | %5s | %-6s | %16s | %7s | %6s | %13s | %8s | %7s |\n", "model", "type",
              "size MiB", "read MiB", "bpw", "test", "tok/s", "GB/s", "% bw", "ceiling tok/s", "RSS MiB", "load ms");
  std::printf("|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|\n", std::string(36, '-').c_str(), std::string(9, '-').c_str(),
              std::string(10, '-').c_str(), std::string(10, '-').c_str(), std::string(7, '-').c_str(),
              std::string(8, '-').c_str(), std::string(18, '-').c_str(), std::string(9, '-').c_str(),
              std::string(8, '-').c_str(), std::string(15, '-').c_str(), std::string(10, '-').c_str(),
              std::string(9, '-').c_str());
  for (const Result& r : rs) {
    char tps[48], gbs[16] = "";
    std::snprintf(tps, sizeof tps, "%.2f ± %.2f", r.mean, r.stddev);
    if (r.gb_s > 0.0) std::snprintf(gbs, sizeof gbs, "%.2f", r.gb_s);
    char ceil[40] = "";
    if (const double c = ceiling_tok_s(r, bw); c > 0.0)
      std::snprintf(ceil, sizeof ceil, "%.0f (%.0f%%)", c, 100.0 * r.mean / c);
    std::printf("| %-34s | %-7s | %8.1f | %8.1f | %5.2f | %-6s | %16s | %7s | %6s | %13s | %8.0f | %7.1f |\n",
                r.file.name.c_str(), r.file.type.c_str(), static_cast<double>(r.file.bytes) / kMiB,
                static_cast<double>(r.file.read_bytes) / kMiB, r.file.bpw(), r.test.c_str(), tps, gbs,
                pct(r.gb_s, bw).c_str(), ceil, r.peak_rss_mib, r.load_ms);
  }
  std::set<std::string> noted;
  for (const Result& r : rs) {
    if (!r.file.reads.moe() || !noted.insert(r.file.name).second) continue;
    std::printf(
        "\n%s: mixture of experts, a token reads %llu of %llu experts' rows: %.1f of %.1f MiB (GB/s, %% bw "
        "and the ceiling count those)\n",
        r.file.name.c_str(), static_cast<unsigned long long>(r.file.reads.n_expert_used),
        static_cast<unsigned long long>(r.file.reads.n_expert), static_cast<double>(r.file.read_bytes) / kMiB,
        static_cast<double>(r.file.bytes) / kMiB);
  }
}

void print_csv(const std::vector<Result>& rs, double bw) {
  std::printf(
      "model,type,size_mib,read_mib,bpw,test,tok_s,stddev,gb_s,pct_bandwidth,load_ms,peak_rss_mib,ceiling_tok_s,"
      "fraction_of_"
      "ceiling\n");
  for (const Result& r : rs) {
    const double c = ceiling_tok_s(r, bw);
    std::printf("%s,%s,%.2f,%.2f,%.3f,%s,%.3f,%.3f,%.3f,%.1f,%.1f,%.1f,%.2f,%.4f\n", r.file.name.c_str(),
                r.file.type.c_str(), static_cast<double>(r.file.bytes) / kMiB,
                static_cast<double>(r.file.read_bytes) / kMiB, r.file.bpw(), r.test.c_str(), r.mean, r.stddev, r.gb_s,
                bw > 0 && r.gb_s > 0 ? 100.0 * r.gb_s / bw : 0.0, r.load_ms, r.peak_rss_mib, c,
                c > 0 ? r.mean / c : 0.0);
  }
}

nlohmann::json to_json(const std::vector<Result>& rs, double bw, int threads) {
  nlohmann::json j;
  j["cpu"] = cpu_model();
  j["threads"] = threads;
  j["isa"] = isa_name(kernels::dot_kernel_isa());
  if (bw > 0) j["read_bandwidth_gb_s"] = bw;
  j["results"] = nlohmann::json::array();
  for (const Result& r : rs) {
    nlohmann::json e = {{"model", r.file.name},
                        {"type", r.file.type},
                        {"size_mib", r.file.bytes / kMiB},
                        {"bytes", r.file.bytes},
                        {"decode_bytes_per_token", r.file.read_bytes},
                        {"params", r.file.params},
                        {"bpw", r.file.bpw()},
                        {"test", r.test},
                        {"n_tokens", r.n_tokens},
                        {"tok_s", r.mean},
                        {"stddev", r.stddev},
                        {"samples", r.tok_s},
                        {"load_ms", r.load_ms},
                        {"peak_rss_mib", r.peak_rss_mib},
                        {"n_seq", r.n_seq},
                        {"aggregate_tok_s", r.mean},
                        {"per_seq_tok_s", r.mean / r.n_seq}};
    if (r.file.reads.moe()) e["experts"] = {{"count", r.file.reads.n_expert}, {"used", r.file.reads.n_expert_used}};
    if (r.gb_s > 0) e["gb_s"] = r.gb_s;
    if (bw > 0 && r.gb_s > 0) e["pct_bandwidth"] = 100.0 * r.gb_s / bw;
    if (const double c = ceiling_tok_s(r, bw); c > 0.0) {
      e["kv_bytes_per_step"] = r.kv_bytes_per_step;
      e["ceiling_tok_s"] = c;  // wisp plan's decode ceiling at the measured bandwidth
      e["fraction_of_ceiling"] = r.mean / c;
    }
    j["results"].push_back(e);
  }
  return j;
}

std::string xml_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<')
      o += "&lt;";
    else if (c == '>')
      o += "&gt;";
    else if (c == '&')
      o += "&amp;";
    else
      o += c;
  }
  return o;
}

// Two panels side by side (prefill, decode): tok/s (with a +-stddev bar) against bits per weight,
// one labelled point per file, a "nice" linear axis from zero.
void write_svg(const std::string& path, const std::vector<Result>& rs, const std::string& title) {
  const double W = 1080, H = 600, pw = 420, ph = 360, top = 80, left0 = 80, gap = 80;
  std::string svg;
  auto add = [&](const std::string& s) { svg += s + "\n"; };
  char b[512];
  std::snprintf(b, sizeof b,
                "<svg xmlns='http://www.w3.org/2000/svg' width='%.0f' height='%.0f' font-family='sans-serif'>", W, H);
  add(b);
  add("<rect width='100%' height='100%' fill='white'/>");
  std::snprintf(b, sizeof b, "<text x='%.0f' y='32' font-size='20' text-anchor='middle'>%s</text>", W / 2,
                xml_escape(title).c_str());
  add(b);
  // Point labels: the type, prefixed with the model family ("gemma", "SmolLM2") when files of
  // several families are on the chart.
  auto family = [](const std::string& file) { return file.substr(0, file.find_first_of("-.")); };
  std::set<std::string> families;
  for (const Result& r : rs) families.insert(family(r.file.name));
  auto label = [&](const Result& r) {
    return families.size() > 1 ? family(r.file.name) + " " + r.file.type : r.file.type;
  };
  const char* palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
  int panel = 0;
  for (const char* kind : {"pp", "tg"}) {
    std::vector<const Result*> pts;
    for (const Result& r : rs)
      if (r.test.rfind(kind, 0) == 0) pts.push_back(&r);
    if (pts.empty()) continue;
    const double x0 = left0 + panel * (pw + gap), y0 = top;
    double xmax = 0, ymax = 0;
    for (const Result* r : pts) {
      xmax = std::max(xmax, r->file.bpw());
      ymax = std::max(ymax, r->mean + r->stddev);
    }
    auto nice = [](double v) {
      const double e = std::pow(10.0, std::floor(std::log10(std::max(v, 1e-9))));
      for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
        if (m * e >= v) return m * e;
      return 10 * e;
    };
    xmax = std::max(10.0, 2.0 * std::ceil((xmax + 1.0) / 2.0));  // ticks every 2 bits
    ymax = nice(ymax * 1.1);
    auto X = [&](double v) { return x0 + pw * v / xmax; };
    auto Y = [&](double v) { return y0 + ph - ph * v / ymax; };
    std::snprintf(b, sizeof b, "<text x='%.0f' y='%.0f' font-size='16' text-anchor='middle'>%s (%s)</text>",
                  x0 + pw / 2, y0 - 12, std::string(kind) == "pp" ? "prefill" : "decode", pts[0]->test.c_str());
    add(b);
    for (int i = 0; i <= 5; ++i) {
      const double yv = ymax * i / 5;
      std::snprintf(
          b, sizeof b,
          "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/><text x='%.1f' y='%.1f' font-size='12' "
          "text-anchor='end'>%g</text>",
          x0, Y(yv), x0 + pw, Y(yv), x0 - 6, Y(yv) + 4, yv);
      add(b);
    }
    for (double xv = 0; xv <= xmax + 1e-9; xv += 2.0) {
      std::snprintf(b, sizeof b, "<text x='%.1f' y='%.1f' font-size='12' text-anchor='middle'>%g</text>", X(xv),
                    y0 + ph + 18, xv);
      add(b);
    }
    std::snprintf(b, sizeof b, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='black'/>", x0,
                  y0, pw, ph);
    add(b);
    std::snprintf(b, sizeof b, "<text x='%.1f' y='%.1f' font-size='13' text-anchor='middle'>bits per weight</text>",
                  x0 + pw / 2, y0 + ph + 40);
    add(b);
    std::snprintf(
        b, sizeof b,
        "<text x='%.1f' y='%.1f' font-size='13' text-anchor='middle' transform='rotate(-90 %.1f %.1f)'>tokens/s</text>",
        x0 - 50, y0 + ph / 2, x0 - 50, y0 + ph / 2);
    add(b);
    int i = 0;
    for (const Result* r : pts) {
      const char* col = palette[i++ % 8];
      const double cx = X(r->file.bpw()), cy = Y(r->mean);
      std::snprintf(
          b, sizeof b,
          "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='%s'/><circle cx='%.1f' cy='%.1f' r='5' fill='%s'/>"
          "<text x='%.1f' y='%.1f' font-size='11' fill='%s'>%s</text>",
          cx, Y(r->mean - r->stddev), cx, Y(r->mean + r->stddev), col, cx, cy, col, cx + 7, cy - 6, col,
          pts.size() <= 4 ? xml_escape(label(*r)).c_str() : "");
      add(b);
    }
    ++panel;
  }
  // Legend: one coloured entry per file (the colours follow the files' order, as in the panels),
  // three to a row under the charts.
  std::vector<std::string> names;
  for (const Result& r : rs)
    if (std::find(names.begin(), names.end(), r.file.name) == names.end()) names.push_back(r.file.name);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const double lx = 40.0 + 340.0 * static_cast<double>(i % 3),
                 ly = top + ph + 62.0 + 18.0 * static_cast<double>(i / 3);
    std::snprintf(b, sizeof b,
                  "<circle cx='%.1f' cy='%.1f' r='5' fill='%s'/><text x='%.1f' y='%.1f' font-size='12'>%s</text>", lx,
                  ly - 4, palette[i % 8], lx + 10, ly, xml_escape(names[i]).c_str());
    add(b);
  }
  add("</svg>");
  std::ofstream f(path);
  if (!f) throw Error("bench: cannot write " + path);
  f << svg;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  BenchFlags flags;
  CommandLine cl("bench",
                 "Measures prefill (pp) and decode (tg) tokens/s for each model file: size, bits per\n"
                 "weight, tok/s +- stddev, effective GB/s and, with --bandwidth, the share of the\n"
                 "machine's measured read bandwidth that decode reaches.");
  declare(cl, flags);
  if (!cl.parse(argc, argv)) {
    std::fputs(cl.help().c_str(), stdout);
    return 0;
  }
  std::vector<std::string> files = flags.files;
  if (const auto& m = flags.model) {
    std::size_t start = 0;
    while (start <= m->size()) {
      const std::size_t comma = m->find(',', start);
      const std::string f = m->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (!f.empty()) files.push_back(f);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  const bool want_bw = flags.bandwidth;
  if (files.empty() && !want_bw) throw UsageError("bench: give at least one model file (-m FILE or FILE...)");
  const std::int64_t n_prompt = flags.n_prompt, n_gen = flags.n_gen;
  const int reps = flags.repetitions;
  if (n_prompt < 0 || n_gen < 0 || reps < 1) throw UsageError("bench: -p and -n must be >= 0 and -r >= 1");
  const int threads = flags.threads.value_or(physical_cores());
  if (threads < 1) throw UsageError("bench: --threads must be >= 1");

  if (flags.spec.speculation.lookup || flags.spec.speculation.draft) {
    if (files.size() != 1) throw UsageError("bench --lookup/--draft: give one target model");
    flags.spec.exact = flags.exact;
    flags.spec.json = flags.json;
    return bench_speculative(flags.spec, files.front(), threads, static_cast<std::size_t>(n_gen), reps);
  }

  std::vector<int> n_seqs;
  if (const auto& b = flags.batch) {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = b->find(',', start);
      const std::string item = b->substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      char* end = nullptr;
      const long v = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 1 || v > 256) {
        throw UsageError("bench: --batch " + *b + ": '" + item + "' is not a number of sequences from 1 to 256");
      }
      n_seqs.push_back(static_cast<int>(v));
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }

  std::vector<Result> results;
  // Which file is being measured, of how many (a comparison over many files takes minutes); on a
  // terminal only.
  Progress progress("bench", "files", files.size());
  for (const std::string& f : files) {
    progress.update(static_cast<std::uint64_t>(&f - files.data()), 0, "now " + f.substr(f.find_last_of('/') + 1));
    const bool exact = flags.exact;
    const std::string& device = flags.device;
    std::vector<Result> r = n_seqs.empty() ? bench_file(f, n_prompt, n_gen, reps, threads, exact, device, progress)
                                           : bench_batched(f, n_prompt, n_gen, reps, threads, n_seqs, exact, device);
    results.insert(results.end(), r.begin(), r.end());
  }
  progress.finish();
  // After the models, so its 1-2 GiB buffer does not show in their peak RSS (a process-wide peak:
  // each row reports the largest resident size so far).
  const ReadBandwidth probe = want_bw ? measure_read_bandwidth(threads) : ReadBandwidth{};
  const double bw = probe.bytes_per_s / 1e9;  // GB/s
  if (flags.json) {
    nlohmann::json j = to_json(results, bw, threads);
    if (want_bw) j["read_bandwidth_wall_gb_s"] = probe.wall_bytes_per_s / 1e9;
    std::printf("%s\n", j.dump(2).c_str());
  } else if (flags.csv) {
    print_csv(results, bw);
  } else {
    std::printf("wisp bench: %s, %d threads, kernels %s", cpu_model().c_str(), threads,
                isa_name(kernels::dot_kernel_isa()));
    if (want_bw) {
      std::printf(
          ", measured read bandwidth %.2f GB/s (%d-thread streaming read of %zu MiB per CPU second; wall "
          "clock %.2f GB/s)",
          bw, probe.threads, probe.buffer_bytes >> 20, probe.wall_bytes_per_s / 1e9);
    }
    std::printf("\n\n");
    if (!results.empty() && n_seqs.empty()) print_table(results, bw);
    if (!results.empty() && !n_seqs.empty()) print_batch_table(results);
  }
  if (const auto& svg = flags.svg) {
    char title[160];
    std::snprintf(title, sizeof title, "wisp: tokens/s vs bits per weight (%d threads, %s)", threads,
                  isa_name(kernels::dot_kernel_isa()));
    write_svg(*svg, results, title);
  }
  return 0;
}

}  // namespace wisp::cli

// `wisp serve -m FILE`: the OpenAI-compatible HTTP server (src/serve/server.h, docs/serve.md).
// Binds loopback by default. SIGINT/SIGTERM stop it cleanly: new connections are refused, requests
// in flight are cancelled (their clients get an error), and the process exits 0.
//
// The signals are blocked in every thread (the mask is set before any thread starts) and taken
// synchronously with sigwait() here, so no handler runs inside the server's threads.
#include <signal.h>

#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "command_line.h"
#include "commands.h"
#include "kv/kv_type.h"
#include "plan/units.h"
#include "serve/server.h"
#include "wisp/error.h"

namespace wisp::cli {

namespace {

struct ServeFlags {
  std::string model;
  std::optional<std::string> alias;
  std::string host = "127.0.0.1";
  int port = 8080;
  std::optional<std::string> api_key;
  std::size_t max_queue = 64;
  std::uint64_t max_body = 8u << 20;
  std::optional<std::size_t> http_threads;
  bool quiet = false;
  std::size_t parallel = 8;
  std::optional<std::size_t> ctx;
  std::string kv_type = "f16";
  std::optional<std::uint64_t> kv_mem;
  std::optional<std::size_t> kv_tokens;
  std::uint32_t kv_block = 16;
  std::optional<int> threads;
  std::size_t step_tokens = 512;
  std::optional<std::size_t> n_predict;
  std::string device = "auto";
  std::optional<std::size_t> lookup;
  std::size_t lookup_min = 2, draft_max = 8;
  std::optional<std::string> draft;
  double draft_p_min = 0.5;
  std::size_t spec_max_decodes = 1;
  bool exact = false;
};

void declare(CommandLine& cl, ServeFlags& f) {
  cl.option("-m,--model", f.model).value_name("FILE").help("the GGUF model").required().group("model");
  cl.option("--alias", f.alias)
      .value_name("NAME")
      .help("the model's name in answers (default: the file's name)")
      .group("model");
  cl.option("--host", f.host).value_name("ADDR").help("address to listen on (0.0.0.0: every interface)").group("http");
  cl.option("--port", f.port).value_name("N").help("port to listen on (0: any free one)").group("http");
  cl.option("--api-key", f.api_key)
      .value_name("KEY")
      .help("require 'Authorization: Bearer KEY' on every route but /health and /openapi.json")
      .group("http");
  cl.option("--max-queue", f.max_queue)
      .value_name("N")
      .help("requests that may wait beyond the running ones; more get 503 with Retry-After")
      .group("http");
  cl.converted("--max-body", f.max_body, plan::parse_size)
      .value_name("SIZE")
      .default_text("8MiB")
      .help("largest request body (more: 413)")
      .group("http");
  cl.positive("--http-threads", f.http_threads)
      .value_name("N")
      .help("connection threads (default: parallel + max-queue + 16, at least 32)")
      .group("http");
  cl.flag("--quiet", f.quiet).help("no line per answer on stderr").group("http");
  cl.positive("-n,--parallel", f.parallel)
      .value_name("N")
      .help("requests running at once (continuous batching)")
      .group("engine");
  cl.positive("-c,--ctx", f.ctx)
      .value_name("N")
      .help("tokens per request, prompt and answer (default: the training context, at most 4096)")
      .group("engine");
  cl.converted("--kv-type", f.kv_type, [](std::string_view s) { return std::string(kv_type_by_name(s).name); })
      .value_name("TYPE")
      .default_text("f16")
      .help("how the KV cache stores K and V: " + kv_type_names())
      .group("engine");
  cl.converted("--kv-mem", f.kv_mem, plan::parse_size)
      .value_name("SIZE")
      .help("KV pool size in bytes (\"512MiB\"); default: parallel * ctx tokens")
      .group("engine");
  cl.positive("--kv-tokens", f.kv_tokens)
      .value_name("N")
      .help("KV pool size in tokens (instead of --kv-mem)")
      .group("engine");
  cl.positive("--kv-block", f.kv_block)
      .value_name("N")
      .help("tokens per KV block (1 to 256): prompts share their cached prefix in whole blocks")
      .group("engine");
  cl.positive("-t,--threads", f.threads)
      .value_name("N")
      .help("threads for the forward pass (default: the machine's cores)")
      .group("engine");
  cl.positive("--step-tokens", f.step_tokens)
      .value_name("N")
      .help("tokens per forward pass at most (decodes first, then prompt chunks)")
      .group("engine");
  cl.positive("--n-predict", f.n_predict)
      .value_name("N")
      .help(
          "most tokens an answer generates, whatever max_tokens asks (cut with finish_reason length; default: the "
          "context)")
      .group("engine");
  cl.option("--device", f.device)
      .value_name("DEV")
      .group("engine")
      .help(
          "where the forward pass runs: cpu, cuda, cuda:N, or auto (the first CUDA device if the build and the "
          "machine have one, else the CPU)");
  cl.option("--lookup", f.lookup)
      .value_name("N")
      .group("speculation")
      .help(
          "prompt-lookup speculative decoding for every request (a request's \"speculative\": {\"lookup\": N} "
          "overrides, 0 turns it off): guesses from the text's earlier occurrences of its final N tokens, verified "
          "in the batched step; answers are unchanged");
  cl.option("--lookup-min", f.lookup_min).value_name("N").group("speculation").help("shortest n-gram --lookup matches");
  cl.option("--draft", f.draft)
      .value_name("FILE")
      .group("speculation")
      .help(
          "speculative decoding with a draft model (a GGUF with the same vocabulary, e.g. a lower-bit copy) for every "
          "request (a request's \"speculative\": {\"draft\": false} opts out): loaded once, with a KV pool of its "
          "own as large as the model's; its guesses are verified in the batched step; answers are unchanged");
  cl.option("--draft-p-min", f.draft_p_min)
      .value_name("P")
      .group("speculation")
      .help("--draft: stop guessing at a token the draft gives probability below P");
  cl.option("--draft-max", f.draft_max)
      .value_name("K")
      .group("speculation")
      .help("most guesses verified per step and request (the number adapts to how many are kept)");
  cl.positive("--spec-max-decodes", f.spec_max_decodes)
      .value_name("N")
      .group("speculation")
      .help(
          "guess (either way) only in steps with at most N decodes: beside other decodes a guess costs them more than "
          "it gains on the CPU");
  cl.flag("--exact", f.exact)
      .group("engine")
      .help("llama.cpp's batch-dependent float order (answers then depend on what they are batched with)");
  cl.epilog(
      "routes: POST /v1/chat/completions, POST /v1/completions, GET /v1/models, GET /health, GET /metrics,\n"
      "        POST /tokenize, POST /detokenize, GET /openapi.json (docs/serve.md)\n"
      "example:\n"
      "  wisp serve -m models/SmolLM2-135M-Instruct.Q4_1.gguf --port 8080 &\n"
      "  curl http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \\\n"
      "       -d '{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"max_tokens\": 32}'\n");
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  ServeFlags f;
  CommandLine cl("serve",
                 "An OpenAI-compatible HTTP server (chat and text completions, streaming) over the batched engine.");
  declare(cl, f);
  if (!cl.parse(argc, argv)) {
    std::fputs(cl.help().c_str(), stdout);
    return 0;
  }
  serve::ServeOptions o;
  o.model_path = f.model;
  o.alias = f.alias.value_or("");
  o.host = f.host;
  if (f.port < 0 || f.port > 65535)
    throw UsageError("--port must be between 0 and 65535, got " + std::to_string(f.port));
  o.port = f.port;
  o.api_key = f.api_key.value_or("");
  if (f.api_key && o.api_key.empty()) throw UsageError("--api-key is empty");
  o.max_queue = f.max_queue;
  if (f.max_body < 1024) throw UsageError("--max-body must be at least 1KiB");
  o.max_body = static_cast<std::size_t>(f.max_body);
  if (f.http_threads) o.http_threads = *f.http_threads;
  o.log_requests = !f.quiet;
  o.parallel = f.parallel;
  if (o.parallel > 1024) throw UsageError("--parallel must be at most 1024");
  if (f.ctx) o.ctx = *f.ctx;
  o.kv_type = f.kv_type;
  if (f.kv_mem && f.kv_tokens) throw UsageError("give the KV pool once: --kv-mem or --kv-tokens");
  if (f.kv_mem) o.kv_mem = *f.kv_mem;
  if (f.kv_tokens) o.kv_tokens = *f.kv_tokens;
  if (f.kv_block > 256) throw UsageError("--kv-block must be at most 256 tokens, got " + std::to_string(f.kv_block));
  o.kv_block = f.kv_block;
  if (f.threads) {
    if (*f.threads > 1024) throw UsageError("--threads must be at most 1024");
    o.threads = *f.threads;
  }
  o.step_tokens = f.step_tokens;
  if (o.step_tokens > 512) throw UsageError("--step-tokens must be at most 512 (the engine's step)");
  if (f.n_predict) o.n_predict = *f.n_predict;
  o.exact = f.exact;
  if (f.lookup) {
    if (*f.lookup > kMaxLookup) throw UsageError("--lookup must be 0..64, got " + std::to_string(*f.lookup));
    o.lookup.ngram_max = *f.lookup;
  }
  if (f.lookup_min < 1 || f.lookup_min > kMaxLookup) {
    throw UsageError("--lookup-min must be 1..64, got " + std::to_string(f.lookup_min));
  }
  o.lookup.ngram_min = f.lookup_min;
  if (f.draft_max < 1 || f.draft_max > kMaxLookup) {
    throw UsageError("--draft-max must be 1..64, got " + std::to_string(f.draft_max));
  }
  o.lookup.draft_max = f.draft_max;
  if (o.lookup.ngram_max > 0 && o.exact) throw UsageError("--lookup needs the default numerics; drop --exact");
  if (f.draft) {
    if (f.draft->empty()) throw UsageError("--draft is empty");
    if (o.exact) throw UsageError("--draft needs the default numerics; drop --exact");
    if (o.lookup.ngram_max > 0) throw UsageError("choose one way to draft: --lookup N or --draft FILE, not both");
    o.draft_path = *f.draft;
  }
  if (!(f.draft_p_min >= 0.0 && f.draft_p_min <= 1.0)) throw UsageError("--draft-p-min must be in [0, 1]");
  o.draft_p_min = static_cast<float>(f.draft_p_min);
  o.speculate_max_decodes = f.spec_max_decodes;
  o.device = f.device;

  // Block the stop signals before any thread starts, so every thread inherits the mask and
  // sigwait() below is the one place they arrive. A client hanging up must not kill the server.
  // The dispositions go back to default first: a shell starts background jobs with SIGINT
  // ignored, and an ignored signal is discarded instead of reaching sigwait().
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);

  serve::Server server(o);
  server.bind();
  std::fprintf(stderr, "serve: listening on http://%s:%d (loading %s)\n", o.host.c_str(), server.port(),
               o.model_path.c_str());
  try {
    server.load();
  } catch (const Error& e) {
    server.shutdown(1.0);
    throw;
  }
  std::fprintf(stderr, "serve: ready: %s\n", server.describe().c_str());
  int sig = 0;
  sigwait(&stop_signals, &sig);
  std::fprintf(stderr, "serve: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
  if (!server.shutdown(3.0)) {
    std::fprintf(stderr, "serve: some connections did not close in time; exiting anyway\n");
    std::fflush(stderr);
    std::_Exit(0);
  }
  std::fprintf(stderr, "serve: stopped\n");
  return 0;
}

}  // namespace wisp::cli

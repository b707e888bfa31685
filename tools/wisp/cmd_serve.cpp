// `wisp serve -m FILE`: the OpenAI-compatible HTTP server (src/serve/server.h, docs/serve.md).
// Binds loopback by default. SIGINT/SIGTERM stop it cleanly: new connections are refused, requests
// in flight are cancelled (their clients get an error), and the process exits 0.
//
// The signals are blocked in every thread (the mask is set before any thread starts) and taken
// synchronously with sigwait() here, so no handler runs inside the server's threads.
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "args.h"
#include "commands.h"
#include "kv/kv_type.h"
#include "plan/units.h"
#include "serve/server.h"
#include "wisp/error.h"

namespace wisp::cli {

namespace {

ArgParser make_parser() {
  ArgParser p("serve",
              "An OpenAI-compatible HTTP server (chat and text completions, streaming) over the batched engine.");
  p.option("model").short_name('m').value_name("FILE").help("the GGUF model").required().group("model");
  p.option("alias").value_name("NAME").help("the model's name in answers (default: the file's name)").group("model");
  p.option("host")
      .value_name("ADDR")
      .default_value("127.0.0.1")
      .help("address to listen on (0.0.0.0: every interface)")
      .group("http");
  p.option("port", ArgKind::kInt)
      .value_name("N")
      .default_value("8080")
      .help("port to listen on (0: any free one)")
      .group("http");
  p.option("api-key")
      .value_name("KEY")
      .help("require 'Authorization: Bearer KEY' on every route but /health and /openapi.json")
      .group("http");
  p.option("max-queue", ArgKind::kInt)
      .value_name("N")
      .default_value("64")
      .help("requests that may wait beyond the running ones; more get 503 with Retry-After")
      .group("http");
  p.option("max-body").value_name("SIZE").default_value("8MiB").help("largest request body (more: 413)").group("http");
  p.option("http-threads", ArgKind::kInt)
      .value_name("N")
      .help("connection threads (default: parallel + max-queue + 16, at least 32)")
      .group("http");
  p.flag("quiet").help("no line per answer on stderr").group("http");
  p.option("parallel", ArgKind::kInt)
      .short_name('n')
      .value_name("N")
      .default_value("8")
      .help("requests running at once (continuous batching)")
      .group("engine");
  p.option("ctx", ArgKind::kInt)
      .short_name('c')
      .value_name("N")
      .help("tokens per request, prompt and answer (default: the training context, at most 4096)")
      .group("engine");
  p.option("kv-type")
      .value_name("TYPE")
      .default_value("f16")
      .help("how the KV cache stores K and V: " + kv_type_names())
      .group("engine");
  p.option("kv-mem")
      .value_name("SIZE")
      .help("KV pool size in bytes (\"512MiB\"); default: parallel * ctx tokens")
      .group("engine");
  p.option("kv-tokens", ArgKind::kInt)
      .value_name("N")
      .help("KV pool size in tokens (instead of --kv-mem)")
      .group("engine");
  p.option("kv-block", ArgKind::kInt)
      .value_name("N")
      .default_value("16")
      .help("tokens per KV block (1 to 256): prompts share their cached prefix in whole blocks")
      .group("engine");
  p.option("threads", ArgKind::kInt)
      .short_name('t')
      .value_name("N")
      .help("threads for the forward pass (default: the machine's cores)")
      .group("engine");
  p.option("step-tokens", ArgKind::kInt)
      .value_name("N")
      .default_value("512")
      .help("tokens per forward pass at most (decodes first, then prompt chunks)")
      .group("engine");
  p.option("n-predict", ArgKind::kInt)
      .value_name("N")
      .help(
          "most tokens an answer generates, whatever max_tokens asks (cut with finish_reason length; default: the "
          "context)")
      .group("engine");
  p.option("device").value_name("DEV").default_value("auto").group("engine").help(
      "where the forward pass runs: cpu, cuda, cuda:N, or auto (the first CUDA device if the build and the "
      "machine have one, else the CPU)");
  p.option("lookup", ArgKind::kInt)
      .value_name("N")
      .group("speculation")
      .help(
          "prompt-lookup speculative decoding for every request (a request's \"speculative\": {\"lookup\": N} "
          "overrides, 0 turns it off): guesses from the text's earlier occurrences of its final N tokens, verified "
          "in the batched step; answers are unchanged");
  p.option("lookup-min", ArgKind::kInt)
      .value_name("N")
      .default_value("2")
      .group("speculation")
      .help("shortest n-gram --lookup matches");
  p.option("draft-max", ArgKind::kInt)
      .value_name("K")
      .default_value("8")
      .group("speculation")
      .help("most guesses verified per step and request (the number adapts to how many are kept)");
  p.flag("exact").group("engine").help(
      "llama.cpp's batch-dependent float order (answers then depend on what they are batched with)");
  p.epilog(
      "routes: POST /v1/chat/completions, POST /v1/completions, GET /v1/models, GET /health, GET /metrics,\n"
      "        POST /tokenize, POST /detokenize, GET /openapi.json (docs/serve.md)\n"
      "example:\n"
      "  wisp serve -m models/SmolLM2-135M-Instruct.Q4_1.gguf --port 8080 &\n"
      "  curl http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \\\n"
      "       -d '{\"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}], \"max_tokens\": 32}'\n");
  return p;
}

}  // namespace

int cmd_serve(int argc, char** argv) {
  const ArgParser parser = make_parser();
  Args args = parser.parse(argc, argv);
  if (args.help_requested()) {
    std::fputs(parser.help().c_str(), stdout);
    return 0;
  }
  serve::ServeOptions o;
  o.model_path = args.str("model");
  o.alias = args.value("alias").value_or("");
  o.host = args.str("host");
  const std::int64_t port = args.int64("port");
  if (port < 0 || port > 65535) throw UsageError("--port must be between 0 and 65535, got " + std::to_string(port));
  o.port = static_cast<int>(port);
  o.api_key = args.value("api-key").value_or("");
  if (args.has("api-key") && o.api_key.empty()) throw UsageError("--api-key is empty");
  const std::int64_t max_queue = args.int64("max-queue");
  if (max_queue < 0) throw UsageError("--max-queue must be 0 or more, got " + std::to_string(max_queue));
  o.max_queue = static_cast<std::size_t>(max_queue);
  o.max_body =
      static_cast<std::size_t>(*args.convert("max-body", [](std::string_view s) { return plan::parse_size(s); }));
  if (o.max_body < 1024) throw UsageError("--max-body must be at least 1KiB");
  if (auto n = args.opt_positive("http-threads")) o.http_threads = static_cast<std::size_t>(*n);
  o.log_requests = !args.flag("quiet");
  o.parallel = static_cast<std::size_t>(args.positive("parallel"));
  if (o.parallel > 1024) throw UsageError("--parallel must be at most 1024");
  if (auto c = args.opt_positive("ctx")) o.ctx = static_cast<std::size_t>(*c);
  o.kv_type = std::string(args.convert("kv-type", [](std::string_view s) { return kv_type_by_name(s); })->name);
  if (args.has("kv-mem") && args.has("kv-tokens")) throw UsageError("give the KV pool once: --kv-mem or --kv-tokens");
  if (args.has("kv-mem")) o.kv_mem = *args.convert("kv-mem", [](std::string_view s) { return plan::parse_size(s); });
  if (auto n = args.opt_positive("kv-tokens")) o.kv_tokens = static_cast<std::size_t>(*n);
  const std::uint64_t kv_block = args.positive("kv-block");
  if (kv_block > 256) throw UsageError("--kv-block must be at most 256 tokens, got " + std::to_string(kv_block));
  o.kv_block = static_cast<std::uint32_t>(kv_block);
  if (auto t = args.opt_positive("threads")) {
    if (*t > 1024) throw UsageError("--threads must be at most 1024");
    o.threads = static_cast<int>(*t);
  }
  o.step_tokens = static_cast<std::size_t>(args.positive("step-tokens"));
  if (o.step_tokens > 512) throw UsageError("--step-tokens must be at most 512 (the engine's step)");
  if (auto n = args.opt_positive("n-predict")) o.n_predict = static_cast<std::size_t>(*n);
  o.exact = args.flag("exact");
  if (args.has("lookup")) {
    const std::int64_t n = args.int64("lookup");
    if (n < 0 || n > static_cast<std::int64_t>(kMaxLookup)) {
      throw UsageError("--lookup must be 0..64, got " + std::to_string(n));
    }
    o.lookup.ngram_max = static_cast<std::size_t>(n);
  }
  const std::int64_t n_min = args.int64("lookup-min");
  if (n_min < 1 || n_min > static_cast<std::int64_t>(kMaxLookup)) {
    throw UsageError("--lookup-min must be 1..64, got " + std::to_string(n_min));
  }
  o.lookup.ngram_min = static_cast<std::size_t>(n_min);
  const std::int64_t draft_max = args.int64("draft-max");
  if (draft_max < 1 || draft_max > static_cast<std::int64_t>(kMaxLookup)) {
    throw UsageError("--draft-max must be 1..64, got " + std::to_string(draft_max));
  }
  o.lookup.draft_max = static_cast<std::size_t>(draft_max);
  if (o.lookup.ngram_max > 0 && o.exact) throw UsageError("--lookup needs the default numerics; drop --exact");
  o.device = args.str("device");

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

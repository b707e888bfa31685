// `wisp serve`: an OpenAI-compatible HTTP server over the continuous-batching scheduler
// (src/engine/scheduler.h). One scheduler thread runs Scheduler::step() while requests are live
// and sleeps on a condition variable when none are; HTTP handler threads (cpp-httplib's pool)
// parse a request, submit it, and wait on the request's own event queue, streaming
// server-sent events as tokens arrive or answering once it is done.
//
//   wisp::serve::Server server(opts);
//   server.bind();        // the port answers now: /health says 503 "loading"
//   server.load();        // model, engine, scheduler: /health says 200
//   ...                   // until SIGINT/SIGTERM
//   server.shutdown();    // stop accepting, cancel what is in flight, join the threads
//
// Routes: POST /v1/chat/completions, POST /v1/completions, GET /v1/models, GET /health,
// GET /metrics, POST /tokenize, POST /detokenize, GET /openapi.json (docs/serve.md).
// A client that disconnects (mid-stream, or while its request waits or runs) cancels it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "engine/scheduler.h"

namespace wisp::serve {

struct ServeOptions {
  std::string model_path;
  std::string alias;  // the model's name in answers; empty: the file's base name
  std::string host = "127.0.0.1";
  int port = 8080;           // 0: any free port (see Server::port())
  std::string api_key;       // empty: no authentication
  std::size_t parallel = 8;  // requests running at once (the scheduler's max_running)
  std::size_t ctx = 0;       // tokens per request; 0: min(the training context, 4096)
  std::string kv_type = "f16";
  std::uint64_t kv_mem = 0;     // KV pool bytes; 0: see kv_tokens
  std::size_t kv_tokens = 0;    // KV pool tokens; 0 (and no kv_mem): parallel * ctx
  std::uint32_t kv_block = 16;  // tokens per KV block: the prefix cache shares whole blocks
  std::size_t max_queue = 64;   // requests waiting beyond the running ones; more get 503
  int threads = 0;              // forward-pass threads; 0: every hardware thread
  std::size_t step_tokens = 512;
  std::size_t n_predict = 0;        // most tokens generated per choice, whatever max_tokens asks; 0: the context
  std::size_t max_body = 8u << 20;  // request bodies above this get 413
  std::size_t http_threads = 0;     // 0: parallel + max_queue + 16, at least 32
  bool exact = false;               // llama.cpp's batch-dependent float order
  std::string device = "auto";      // where the forward pass runs (EngineOptions::device)
  bool log_requests = true;         // one line per answer on stderr
  // Prompt-lookup speculation for every request that does not say otherwise (ngram_max 0: off);
  // a request's "speculative" field overrides it.
  RequestParams::Lookup lookup;
  // A draft model (a GGUF with the target's vocabulary) for speculation with it: loaded once on an
  // engine of its own, whose KV pool holds as many tokens as the target's; every request drafts
  // with it unless its "speculative" field says otherwise. Empty: none.
  std::string draft_path;
  float draft_p_min = 0.5f;  // a guess the draft is less sure of ends the step's guesses
  // Speculation (either kind) only in steps with at most this many decodes (the scheduler's
  // speculate_max_decodes: beside other decodes a guess costs them more than it gains).
  std::size_t speculate_max_decodes = 1;
};

class Server {
 public:
  explicit Server(ServeOptions opts);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds host:port and starts answering (503 on every route until load()). Throws wisp::Error
  // when the address cannot be bound.
  void bind();
  int port() const;
  // Loads the model and starts the scheduler thread; throws wisp::Error (the server keeps
  // answering 503) when the model or the options are unusable.
  void load();
  // One line about what is served: model, context, pool, parallel.
  std::string describe() const;
  // Stops accepting, cancels every request in flight, closes connections and joins the threads.
  // Returns false when some connection thread did not finish within `deadline_s` (the caller
  // should then exit without running destructors).
  bool shutdown(double deadline_s = 3.0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace wisp::serve

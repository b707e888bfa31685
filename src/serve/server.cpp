#include "serve/server.h"

#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <unordered_map>

#include <httplib.h>

#include "chat/builtin_templates.h"
#include "chat/chat_template.h"
#include "engine/engine_state.h"
#include "engine/scheduler.h"
#include "model/model_state.h"
#include "serve/api.h"
#include "serve/connection_watcher.h"
#include "serve/draft_setup.h"
#include "serve/generation_job.h"
#include "serve/metrics.h"
#include "serve/openapi.h"
#include "tokenizer/tokenizer.h"
#include "wisp/engine.h"
#include "wisp/error.h"

namespace wisp::serve {

namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(50);

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string random_id(const char* prefix) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char buf[32];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(rng()));
  return std::string(prefix) + buf;
}

ApiError service_unavailable(std::string message, std::string code = {}) {
  ApiError e;
  e.status = 503;
  e.type = "unavailable_error";
  e.message = std::move(message);
  e.code = std::move(code);
  return e;
}

const char* status_type(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 404: return "not_found_error";
    case 413: return "invalid_request_error";
    case 503: return "unavailable_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace

struct Server::Impl {
  ServeOptions opts;
  std::string model_name;
  // From bind(): notices clients that hang up. Declared before `http`, so it outlives the
  // responses (and their watches) that the HTTP server's threads hold.
  std::unique_ptr<ConnectionWatcher> watcher;
  httplib::Server http;
  std::thread http_thread;
  int bound_port = -1;

  // Set once by load(); read by handlers after `ready` (acquire).
  std::shared_ptr<const Model> model;
  std::unique_ptr<Tokenizer> tokenizer;
  bool harmony_channels = false;  // the vocabulary has gpt-oss's channel markers
  std::unique_ptr<ChatTemplate> chat_template;
  std::string template_note;
  std::shared_ptr<Engine> engine;
  std::shared_ptr<Engine> draft_engine;  // with --draft
  std::string draft_note;
  std::unique_ptr<Scheduler> scheduler;
  ApiContext api;
  std::int64_t created = unix_now();
  std::atomic<bool> ready{false};
  std::atomic<bool> stopping{false};

  // The scheduler thread and its wake-up.
  std::thread sched_thread;
  std::mutex work_mu;
  std::condition_variable work_cv;
  bool kicked = false;
  bool sched_stop = false;

  std::atomic<std::size_t> inflight{0};  // scheduler requests submitted and not finished
  std::atomic<std::size_t> active_handlers{0};
  std::mutex live_mu;
  std::unordered_map<RequestId, std::weak_ptr<Job>> live;

  Metrics metrics;

  explicit Impl(ServeOptions o) : opts(std::move(o)) {
    model_name = opts.alias.empty() ? std::filesystem::path(opts.model_path).filename().string() : opts.alias;
  }

  void kick() {
    {
      std::lock_guard lock(work_mu);
      kicked = true;
    }
    work_cv.notify_one();
  }

  // --- the scheduler thread -------------------------------------------------------------------

  void publish_metrics() {
    const BlockAllocator& a = detail::engine_state(*engine).pool.allocator();
    KvSnapshot kv{a.n_blocks(), a.n_free(), a.n_cached(), a.block_size()};
    if (draft_engine) {
      const BlockAllocator& d = detail::engine_state(*draft_engine).pool.allocator();
      kv.has_draft = true;
      kv.draft_blocks_total = d.n_blocks();
      kv.draft_blocks_available = d.n_available();
    }
    metrics.set_scheduler(scheduler->stats(), kv);
  }

  void scheduler_loop() {
    for (;;) {
      {
        std::unique_lock lock(work_mu);
        work_cv.wait(lock, [&] { return kicked || sched_stop; });
        if (sched_stop && !kicked) return;
        kicked = false;
      }
      for (;;) {
        bool did = false;
        try {
          did = scheduler->step();
        } catch (const std::exception& e) {
          std::fprintf(stderr, "serve: scheduler step failed: %s; cancelling the requests in flight\n", e.what());
          cancel_all();
          did = true;
        }
        publish_metrics();
        if (!did) break;
      }
    }
  }

  void on_event(const std::shared_ptr<Job>& job, std::size_t choice, const RequestEvent& ev) {
    const auto now = Clock::now();
    if (ev.token >= 0) {
      auto& last = job->last_token[choice];
      if (!last) {
        metrics.observe_ttft(std::chrono::duration<double>(now - job->arrival).count());
      } else {
        metrics.observe_itl(std::chrono::duration<double>(now - *last).count());
      }
      last = now;
    }
    Event e;
    e.choice = choice;
    e.text = std::string(ev.text);
    if (auto& h = job->harmony[choice]) {
      HarmonyText t = h->push(ev.text);
      if (ev.finished) {
        const HarmonyText rest = h->finish();
        t.reasoning += rest.reasoning;
        t.content += rest.content;
      }
      e.text = std::move(t.content);
      e.reasoning = std::move(t.reasoning);
    }
    e.finished = ev.finished;
    e.reason = ev.reason;
    e.n_prompt = ev.n_prompt;
    e.n_cached = ev.n_cached;
    e.n_generated = ev.n_generated;
    e.n_drafted = ev.n_drafted;
    e.n_accepted = ev.n_accepted;
    if (ev.has_logprob) {
      e.has_logprob = true;
      e.logprob.token = ev.token;
      e.logprob.logprob = ev.logprob;
      e.logprob.top.assign(ev.top_logprobs.begin(), ev.top_logprobs.end());
    }
    if (ev.finished) {
      metrics.count_request_finished(ev.reason);
      inflight.fetch_sub(1);
      std::lock_guard lock(live_mu);
      live.erase(ev.id);
    }
    {
      std::lock_guard lock(job->mu);
      job->events.push_back(std::move(e));
    }
    job->cv.notify_all();
  }

  void cancel_all() {
    std::vector<RequestId> ids;
    {
      std::lock_guard lock(live_mu);
      for (const auto& [id, _] : live) ids.push_back(id);
    }
    for (RequestId id : ids) scheduler->cancel(id);
    kick();
  }

  void cancel_job(Job& job) {
    std::vector<RequestId> ids;
    {
      std::lock_guard lock(job.mu);
      ids = job.ids;
    }
    for (RequestId id : ids) scheduler->cancel(id);
    kick();
  }

  // --- submitting -----------------------------------------------------------------------------

  std::shared_ptr<Job> submit(const GenerationSpec& spec) {
    if (stopping.load()) throw service_unavailable("the server is shutting down");
    const std::size_t k = spec.prompts.size() * spec.n;
    const std::size_t limit = opts.parallel + opts.max_queue;
    if (inflight.fetch_add(k) + k > limit) {
      inflight.fetch_sub(k);
      ApiError e = service_unavailable("the server is busy: " + std::to_string(limit) +
                                           " requests are running or queued (--parallel + --max-queue); retry later",
                                       "queue_full");
      throw e;
    }
    auto job = std::make_shared<Job>();
    job->n_choices = k;
    job->last_token.assign(k, std::nullopt);
    job->harmony.resize(k);
    if (spec.endpoint == Endpoint::kChat && harmony_channels)
      for (auto& h : job->harmony) h.emplace();
    std::size_t submitted = 0;
    try {
      std::lock_guard jl(job->mu);  // events wait until every id is recorded
      for (std::size_t p = 0; p < spec.prompts.size(); ++p) {
        for (std::size_t j = 0; j < spec.n; ++j) {
          RequestParams rp = spec.params;
          rp.prompt = spec.prompts[p];
          // Prompt + answer within the context, as OpenAI counts (the scheduler would evaluate one
          // token less, the last one needing no KV slot): the answer is cut there with "length".
          const std::size_t room = api.n_ctx - rp.prompt.size();
          if (rp.max_tokens == 0 || rp.max_tokens > room) rp.max_tokens = room;
          if (opts.n_predict > 0 && rp.max_tokens > opts.n_predict)
            rp.max_tokens = opts.n_predict;  // as llama-server's -n
          rp.sampling.seed = spec.params.sampling.seed + j;
          const std::size_t choice = p * spec.n + j;
          std::lock_guard ll(live_mu);
          RequestId id = scheduler->submit(std::move(rp),
                                           [this, job, choice](const RequestEvent& ev) { on_event(job, choice, ev); });
          live.emplace(id, job);
          job->ids.push_back(id);
          ++submitted;
        }
      }
    } catch (const Error& e) {
      inflight.fetch_sub(k - submitted);
      for (RequestId id : job->ids) scheduler->cancel(id);
      kick();
      throw invalid_request(spec.endpoint == Endpoint::kChat ? "messages" : "prompt", e.what());
    }
    kick();
    return job;
  }

  // Moves the job's pending events into `choices`; returns how many choices are finished.
  static std::size_t drain(Job& job, std::vector<ChoiceState>& choices, std::vector<Event>* out) {
    std::deque<Event> evs;
    {
      std::lock_guard lock(job.mu);
      evs.swap(job.events);
    }
    for (Event& e : evs) {
      ChoiceState& c = choices[e.choice];
      c.text += e.text;
      c.reasoning += e.reasoning;
      c.n_prompt = e.n_prompt;
      c.n_cached = e.n_cached;
      c.n_generated = e.n_generated;
      c.n_drafted = e.n_drafted;
      c.n_accepted = e.n_accepted;
      if (e.has_logprob && !out) c.logprobs.push_back(e.logprob);  // streams send theirs with each chunk
      if (e.finished) {
        c.finished = true;
        c.reason = e.reason;
      }
      if (out) out->push_back(std::move(e));
    }
    std::size_t done = 0;
    for (const ChoiceState& c : choices) done += c.finished ? 1 : 0;
    return done;
  }

  static Usage usage_of(const GenerationSpec& spec, const std::vector<ChoiceState>& choices) {
    Usage u;
    for (std::size_t p = 0; p < spec.prompts.size(); ++p) {
      u.prompt_tokens += spec.prompts[p].size();  // once per prompt, whatever n is (as OpenAI counts)
      u.cached_tokens += choices[p * spec.n].n_cached;
    }
    for (const ChoiceState& c : choices) {
      u.completion_tokens += c.n_generated;
      u.drafted_tokens += c.n_drafted;
      u.accepted_tokens += c.n_accepted;
    }
    return u;
  }

  // --- handlers -------------------------------------------------------------------------------

  void send_json(httplib::Response& res, int status, const json& body) {
    res.status = status;
    res.set_content(dump_json(body), "application/json");
  }

  void send_error(httplib::Response& res, const ApiError& e) {
    if (e.status == 503) res.set_header("Retry-After", "1");
    send_json(res, e.status, error_body(e));
  }

  bool authorized(const httplib::Request& req) const {
    if (opts.api_key.empty()) return true;
    const std::string h = req.get_header_value("Authorization");
    return h == "Bearer " + opts.api_key;
  }

  // Wraps a route: authentication, the loading state, and no exception escapes as a 500 page.
  template <typename Fn>
  httplib::Server::Handler route(bool needs_model, bool needs_auth, Fn fn) {
    return [this, needs_model, needs_auth, fn](const httplib::Request& req, httplib::Response& res) {
      active_handlers.fetch_add(1);
      struct Done {
        std::atomic<std::size_t>& n;
        ~Done() { n.fetch_sub(1); }
      } done{active_handlers};
      try {
        if (needs_auth && !authorized(req)) {
          ApiError e;
          e.status = 401;
          e.type = "authentication_error";
          e.code = "invalid_api_key";
          e.message = "a valid API key is required: send 'Authorization: Bearer <key>' (the key given to --api-key)";
          send_error(res, e);
          return;
        }
        if (needs_model && !ready.load(std::memory_order_acquire)) {
          send_error(res, service_unavailable("the model is loading", "loading"));
          return;
        }
        fn(req, res);
      } catch (const ApiError& e) {
        send_error(res, e);
      } catch (const std::exception& e) {
        ApiError err;
        err.status = 500;
        err.type = "server_error";
        err.message = std::string("internal error: ") + e.what();
        send_error(res, err);
      } catch (...) {
        ApiError err;
        err.status = 500;
        err.type = "server_error";
        err.message = "internal error";
        send_error(res, err);
      }
    };
  }

  void handle_generation(const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
    const json body = parse_body(req.body);
    GenerationSpec spec =
        endpoint == Endpoint::kChat ? parse_chat_request(body, api) : parse_completion_request(body, api);
    std::shared_ptr<Job> job = submit(spec);
    const std::string id = random_id(endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-");
    const std::int64_t created = unix_now();
    auto watch = std::make_shared<const ConnectionWatcher::Watch>(watcher->watch(req.remote_addr, req.remote_port));
    if (spec.stream) {
      stream_answer(res, std::move(spec), job, id, created, watch);
    } else {
      whole_answer(res, spec, *job, id, created, *watch);
    }
  }

  void whole_answer(httplib::Response& res, const GenerationSpec& spec, Job& job, const std::string& id,
                    std::int64_t created, const ConnectionWatcher::Watch& watch) {
    std::vector<ChoiceState> choices(job.n_choices);
    for (;;) {
      if (drain(job, choices, nullptr) == choices.size()) break;
      std::unique_lock lock(job.mu);
      job.cv.wait_for(lock, kPollInterval, [&] { return !job.events.empty(); });
      lock.unlock();
      if (watch.peer_closed()) {
        cancel_job(job);
        res.status = 499;  // nobody reads it: the client is gone
        return;
      }
    }
    for (const ChoiceState& c : choices) {
      if (c.reason == FinishReason::kCancelled)
        throw service_unavailable("the request was cancelled: the server is shutting down");
    }
    std::vector<ChoiceResult> results;
    for (std::size_t i = 0; i < choices.size(); ++i) {
      const std::string& prefix = spec.echo ? spec.prompt_texts[i / spec.n] : std::string();
      ChoiceResult r{prefix + choices[i].text, choices[i].reason, choices[i].n_generated};
      r.reasoning = choices[i].reasoning;
      if (spec.params.logprobs >= 0) {
        std::size_t offset = prefix.size();
        r.logprobs = spec.endpoint == Endpoint::kChat
                         ? chat_logprobs_json(*tokenizer, choices[i].logprobs)
                         : completion_logprobs_json(*tokenizer, choices[i].logprobs, offset);
      }
      results.push_back(std::move(r));
    }
    const Usage usage = usage_of(spec, choices);
    send_json(res, 200,
              spec.endpoint == Endpoint::kChat ? chat_completion_json(id, created, model_name, results, usage)
                                               : text_completion_json(id, created, model_name, results, usage));
  }

  void stream_answer(httplib::Response& res, GenerationSpec spec_in, std::shared_ptr<Job> job, const std::string& id,
                     std::int64_t created, std::shared_ptr<const ConnectionWatcher::Watch> watch) {
    struct StreamState {
      GenerationSpec spec;
      std::vector<ChoiceState> choices;
      bool started = false;
      bool finished = false;
    };
    auto st = std::make_shared<StreamState>();
    st->spec = std::move(spec_in);
    st->choices.resize(job->n_choices);
    res.status = 200;
    res.set_header("Cache-Control", "no-cache");
    res.set_header("X-Accel-Buffering", "no");
    const bool chat = st->spec.endpoint == Endpoint::kChat;
    active_handlers.fetch_add(1);  // until the releaser: the stream outlives the handler
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, st, job, id, created, watch, chat](std::size_t, httplib::DataSink& sink) -> bool {
          auto send = [&](const json& j) {
            const std::string line = "data: " + dump_json(j) + "\n\n";
            return sink.write(line.data(), line.size());
          };
          if (!st->started) {
            st->started = true;
            for (std::size_t i = 0; i < st->choices.size(); ++i) {
              if (chat) {
                if (!send(chat_chunk_json(id, created, model_name, i, std::string_view(), true, std::nullopt)))
                  goto gone;
                st->choices[i].role_sent = true;
              } else if (st->spec.echo) {
                const std::string& prompt = st->spec.prompt_texts[i / st->spec.n];
                st->choices[i].text_offset = prompt.size();
                if (!send(text_chunk_json(id, created, model_name, i, prompt, std::nullopt))) goto gone;
              }
            }
          }
          {
            std::vector<Event> evs;
            {
              std::unique_lock lock(job->mu);
              job->cv.wait_for(lock, kPollInterval, [&] { return !job->events.empty(); });
            }
            const std::size_t done = drain(*job, st->choices, &evs);
            for (const Event& e : evs) {
              if (e.reason == FinishReason::kCancelled && e.finished) {
                // Only a shutdown cancels a request whose client is still there.
                const ApiError err = service_unavailable("the request was cancelled: the server is shutting down");
                send(error_body(err));
                continue;
              }
              if (!e.text.empty() || !e.reasoning.empty() || e.finished || e.has_logprob) {
                const std::optional<FinishReason> fin = e.finished ? std::optional(e.reason) : std::nullopt;
                json lp = nullptr;
                if (e.has_logprob) {
                  lp = chat ? chat_logprobs_json(*tokenizer, std::span(&e.logprob, 1))
                            : completion_logprobs_json(*tokenizer, std::span(&e.logprob, 1),
                                                       st->choices[e.choice].text_offset);
                }
                bool ok = true;
                if (chat) {
                  if (!e.text.empty() || !e.reasoning.empty() || e.has_logprob) {
                    // A piece of reasoning alone carries no "content" key, as other servers send it.
                    const std::optional<std::string_view> content =
                        e.text.empty() && !e.reasoning.empty() ? std::nullopt : std::optional<std::string_view>(e.text);
                    ok = send(chat_chunk_json(id, created, model_name, e.choice, content, false, std::nullopt, lp,
                                              e.reasoning));
                  }
                  if (ok && fin)
                    ok = send(chat_chunk_json(id, created, model_name, e.choice, std::nullopt, false, fin));
                } else {
                  ok = send(text_chunk_json(id, created, model_name, e.choice, e.text, fin, lp));
                }
                if (!ok) goto gone;
              }
            }
            if (done == st->choices.size()) {
              if (st->spec.include_usage) {
                if (!send(usage_chunk_json(id, created, model_name, chat, usage_of(st->spec, st->choices)))) goto gone;
              }
              const std::string end = "data: [DONE]\n\n";
              if (!sink.write(end.data(), end.size())) goto gone;
              st->finished = true;
              sink.done();
              return true;
            }
            if (watch->peer_closed() || (sink.is_writable && !sink.is_writable())) goto gone;
            return true;
          }
        gone:
          cancel_job(*job);
          return false;
        },
        [this, st, job](bool success) {
          if (!success || !st->finished) cancel_job(*job);
          active_handlers.fetch_sub(1);
        });
  }

  void install_routes() {
    http.Post("/v1/chat/completions",
              route(true, true, [this](const auto& req, auto& res) { handle_generation(req, res, Endpoint::kChat); }));
    http.Post("/chat/completions",
              route(true, true, [this](const auto& req, auto& res) { handle_generation(req, res, Endpoint::kChat); }));
    http.Post("/v1/completions", route(true, true, [this](const auto& req, auto& res) {
                handle_generation(req, res, Endpoint::kCompletion);
              }));
    http.Post("/completions", route(true, true, [this](const auto& req, auto& res) {
                handle_generation(req, res, Endpoint::kCompletion);
              }));
    auto models = route(true, true, [this](const auto&, auto& res) {
      send_json(res, 200, models_json(model_name, created, api.n_ctx, model->info()));
    });
    http.Get("/v1/models", models);
    http.Get("/models", models);
    auto health = route(false, false, [this](const auto&, auto& res) {
      if (ready.load(std::memory_order_acquire)) {
        send_json(res, 200, json{{"status", "ok"}});
      } else {
        res.set_header("Retry-After", "1");
        send_json(res, 503, json{{"status", "loading"}});
      }
    });
    http.Get("/health", health);
    http.Get("/v1/health", health);
    http.Get("/metrics", route(true, true, [this](const auto&, auto& res) {
               res.status = 200;
               res.set_content(metrics.render(inflight.load()), "text/plain; version=0.0.4");
             }));
    http.Post("/tokenize", route(true, true, [this](const auto& req, auto& res) {
                send_json(res, 200, tokenize_response(parse_body(req.body), api));
              }));
    http.Post("/detokenize", route(true, true, [this](const auto& req, auto& res) {
                send_json(res, 200, detokenize_response(parse_body(req.body), api));
              }));
    http.Get("/openapi.json", route(false, false, [this](const auto&, auto& res) {
               send_json(res, 200,
                         openapi_document(model_name, ready.load(std::memory_order_acquire) ? &api : nullptr));
             }));

    // Errors httplib produces itself (unknown route, body too large, a malformed request line)
    // get OpenAI's error shape; answers a handler wrote keep theirs.
    http.set_error_handler(
        httplib::Server::HandlerWithResponse([this](const httplib::Request& req, httplib::Response& res) {
          if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          ApiError e;
          e.status = res.status;
          e.type = status_type(res.status);
          if (res.status == 404) {
            e.message = "no route " + req.method + " " + req.path + " (GET /openapi.json lists them)";
            e.code = "not_found";
          } else if (res.status == 413) {
            e.message = "the request body is larger than " + std::to_string(opts.max_body) + " bytes";
            e.code = "payload_too_large";
          } else if (res.status == 400) {
            e.message = "malformed HTTP request (a request with a body needs Content-Length or chunked encoding)";
          } else {
            e.message = "HTTP " + std::to_string(res.status);
          }
          res.set_content(dump_json(error_body(e)), "application/json");
          return httplib::Server::HandlerResponse::Handled;
        }));
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
      ApiError e;
      e.status = 500;
      e.type = "server_error";
      e.message = "internal error";
      res.status = 500;
      res.set_content(dump_json(error_body(e)), "application/json");
    });
    http.set_logger([this](const httplib::Request& req, const httplib::Response& res) {
      metrics.count_response(res.status);
      if (opts.log_requests) {
        std::fprintf(stderr, "serve: %s %s %d\n", req.method.c_str(), req.path.c_str(), res.status);
      }
    });
  }
};

Server::Server(ServeOptions opts) : impl_(std::make_unique<Impl>(std::move(opts))) {}

Server::~Server() {
  if (impl_) shutdown();
}

void Server::bind() {
  Impl& s = *impl_;
  s.install_routes();
  s.http.set_payload_max_length(s.opts.max_body);
  // An idle keep-alive connection holds its thread until this timeout, also after stop(): it
  // bounds how long a shutdown waits for idle clients (wisp never touches the sockets httplib's
  // threads own; see connection_watcher.h).
  s.http.set_keep_alive_timeout(2);
  s.http.set_read_timeout(10);
  s.http.set_write_timeout(10);
  s.http.set_tcp_nodelay(true);
  const std::size_t n_http = s.opts.http_threads > 0
                                 ? s.opts.http_threads
                                 : std::max<std::size_t>(32, s.opts.parallel + s.opts.max_queue + 16);
  s.http.new_task_queue = [n_http] { return new httplib::ThreadPool(n_http); };
  if (s.opts.port == 0) {
    s.bound_port = s.http.bind_to_any_port(s.opts.host);
    if (s.bound_port < 0) throw Error("serve: cannot bind " + s.opts.host + " to a free port");
  } else {
    if (!s.http.bind_to_port(s.opts.host, s.opts.port)) {
      throw Error("serve: cannot bind " + s.opts.host + ":" + std::to_string(s.opts.port) +
                  " (in use, or not an address of this machine)");
    }
    s.bound_port = s.opts.port;
  }
  s.watcher = std::make_unique<ConnectionWatcher>(s.bound_port);
  s.http_thread = std::thread([&s] { s.http.listen_after_bind(); });
}

int Server::port() const { return impl_->bound_port; }

void Server::load() {
  Impl& s = *impl_;
  const ServeOptions& o = s.opts;
  if (o.parallel == 0) throw Error("serve: --parallel must be at least 1");
  s.model = Model::load(o.model_path);
  const ModelInfo& info = s.model->info();
  const GgufFile& file = detail::model_state(*s.model).file;
  s.tokenizer = std::make_unique<Tokenizer>(Tokenizer::from_gguf(file));
  const Tokenizer& tok = *s.tokenizer;
  s.harmony_channels = tok.find_token("<|channel|>") != kNoToken && tok.find_token("<|message|>") != kNoToken;
  ChosenChatTemplate chosen = load_chat_template(file.get_string_opt("tokenizer.chat_template"), file.architecture(),
                                                 [&](std::string_view t) { return tok.find_token(t) != kNoToken; });
  if (chosen.fell_back) std::fprintf(stderr, "serve: warning: %s\n", chosen.choice.reason.c_str());
  s.chat_template = std::make_unique<ChatTemplate>(std::move(chosen.parsed));
  const ChatTemplateChoice& choice = chosen.choice;
  s.template_note = choice.name + " (" + choice.reason + ")";

  std::size_t ctx = o.ctx;
  if (ctx == 0)
    ctx = info.n_ctx_train > 0 ? std::min<std::size_t>(static_cast<std::size_t>(info.n_ctx_train), 4096) : 4096;
  EngineOptions eo;
  eo.n_threads = o.threads;
  eo.kv_type = o.kv_type;
  eo.exact = o.exact;
  eo.device = o.device;
  eo.max_step_tokens = 512;
  eo.block_size = o.kv_block;
  eo.kv_resident = true;  // a fixed footprint: the prefix cache touches every block over time
  std::size_t kv_tokens = o.kv_tokens;
  if (kv_tokens == 0 && o.kv_mem > 0) {
    EngineOptions probe = eo;
    probe.kv_tokens = 16;
    probe.n_threads = 1;
    probe.device = "cpu";  // only its bytes per token, which every device shares
    const std::size_t per_token = Engine::create(s.model, probe)->kv_bytes_per_token();
    kv_tokens = static_cast<std::size_t>(o.kv_mem / per_token);
    if (kv_tokens < 16) throw Error("serve: --kv-mem holds fewer than 16 tokens");
  }
  if (kv_tokens == 0) kv_tokens = o.parallel * ctx;
  eo.kv_tokens = kv_tokens;
  s.engine = Engine::create(s.model, eo);
  std::fprintf(stderr, "serve: forward pass on %s\n", s.engine->device().c_str());
  if (ctx > s.engine->kv_capacity_tokens()) {
    std::fprintf(
        stderr, "serve: warning: the KV pool holds %zu tokens, less than --ctx %zu: requests are limited to the pool\n",
        s.engine->kv_capacity_tokens(), ctx);
    ctx = s.engine->kv_capacity_tokens();
  }
  SchedulerOptions so;
  so.step_tokens = o.step_tokens;
  so.max_running = o.parallel;
  so.max_context = ctx;
  so.speculate_max_decodes = o.speculate_max_decodes;
  if (!o.draft_path.empty()) {
    if (o.exact) throw Error("serve: --draft needs the default numerics (batch-invariant); drop --exact");
    if (o.lookup.ngram_max > 0) throw Error("serve: choose one way to draft: --lookup N or --draft FILE, not both");
    // The draft's pool holds as many tokens as the target's, so it never limits who may draft.
    DraftSetup d = load_draft(o.draft_path, tok, eo, s.engine->kv_capacity_tokens());
    s.draft_engine = std::move(d.engine);
    s.draft_note = std::move(d.note);
    so.draft = s.draft_engine;
    so.draft_p_min = o.draft_p_min;
  }
  s.scheduler = std::make_unique<Scheduler>(s.engine, tok, so);

  s.api.tokenizer = s.tokenizer.get();
  s.api.chat_template = s.chat_template.get();
  s.api.render_options = chat_render_options(tok);
  s.api.model_name = s.model_name;
  s.api.n_ctx = ctx;
  s.api.lookup = o.lookup;
  s.api.draft = s.draft_engine != nullptr;
  s.api.exact = o.exact;
  if (o.lookup.ngram_max > 0 && o.exact) {
    throw Error("serve: --lookup needs the default numerics (batch-invariant); drop --exact");
  }
  s.publish_metrics();
  s.sched_thread = std::thread([&s] { s.scheduler_loop(); });
  s.ready.store(true, std::memory_order_release);
}

std::string Server::describe() const {
  const Impl& s = *impl_;
  if (!s.ready.load()) return "loading";
  char buf[1536];
  std::snprintf(buf, sizeof buf,
                "model %s (%s), context %zu tokens per request, KV pool %zu tokens (%s, %.1f MiB), parallel %zu, "
                "queue %zu, %d threads, chat template %s%s",
                s.model_name.c_str(), s.model->info().architecture.c_str(), s.api.n_ctx, s.engine->kv_capacity_tokens(),
                std::string(s.engine->kv_type()).c_str(), s.engine->kv_bytes() / 1048576.0, s.opts.parallel,
                s.opts.max_queue, s.engine->n_threads(), s.template_note.c_str(), s.draft_note.c_str());
  return buf;
}

bool Server::shutdown(double deadline_s) {
  Impl& s = *impl_;
  if (s.stopping.exchange(true)) return true;
  const auto deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(deadline_s));
  if (s.scheduler) s.cancel_all();
  // Let the handlers see their cancellations and answer.
  while (s.active_handlers.load() > 0 && Clock::now() < deadline - std::chrono::milliseconds(500)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  s.http.stop();
  bool clean = true;
  if (s.http_thread.joinable()) {
    // listen_after_bind returns once its pool has joined every connection thread.
    auto joined = std::make_shared<std::atomic<bool>>(false);
    std::thread waiter([&s, joined] {
      s.http_thread.join();
      joined->store(true);
    });
    while (!joined->load() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (joined->load()) {
      waiter.join();
    } else {
      waiter.detach();
      clean = false;
    }
  }
  if (s.sched_thread.joinable()) {
    {
      std::lock_guard lock(s.work_mu);
      s.sched_stop = true;
    }
    s.work_cv.notify_one();
    if (clean)
      s.sched_thread.join();
    else
      s.sched_thread.detach();
  }
  if (!clean) impl_.release();  // threads still use it: leak rather than destroy under them
  return clean;
}

}  // namespace wisp::serve

// What one HTTP generation request carries between the scheduler's callbacks and the handler
// thread that answers it (serve/server.cpp): each choice's events as they are copied out of the
// scheduler, the queue they wait in, and what the handler has accumulated per choice.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "chat/harmony_reply.h"
#include "engine/scheduler.h"
#include "serve/api.h"

namespace wisp::serve {

using Clock = std::chrono::steady_clock;

// One event of one choice, copied out of the scheduler's callback.
struct Event {
  std::size_t choice = 0;
  std::string text;
  std::string reasoning;  // a harmony model's analysis channel (chat only)
  bool finished = false;
  FinishReason reason = FinishReason::kLength;
  std::size_t n_prompt = 0;
  std::size_t n_cached = 0;
  std::size_t n_generated = 0;
  std::size_t n_drafted = 0;
  std::size_t n_accepted = 0;
  bool has_logprob = false;
  TokenLogprobEntry logprob;
};

// One HTTP request's generation: its choices' scheduler requests and the queue of their events.
struct Job {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Event> events;
  std::vector<RequestId> ids;  // one per choice, in choice order
  std::size_t n_choices = 0;
  // Timing, touched only by the scheduler thread (in the callbacks).
  Clock::time_point arrival = Clock::now();
  std::vector<std::optional<Clock::time_point>> last_token;
  // Chat answers of a harmony (gpt-oss) model, per choice: the final channel is the text, the
  // analysis channel the reasoning.
  std::vector<std::optional<HarmonyReplySplitter>> harmony;
};

// What the handler thread accumulates per choice.
struct ChoiceState {
  std::string text;
  std::string reasoning;
  bool finished = false;
  bool role_sent = false;
  FinishReason reason = FinishReason::kLength;
  std::size_t n_prompt = 0;
  std::size_t n_cached = 0;
  std::size_t n_generated = 0;
  std::size_t n_drafted = 0;
  std::size_t n_accepted = 0;
  std::vector<TokenLogprobEntry> logprobs;
  std::size_t text_offset = 0;  // of the next token (completions' logprobs)
};

}  // namespace wisp::serve

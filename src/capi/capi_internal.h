// What the C API's opaque handles hold, and the guard that keeps exceptions inside the boundary.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "wisp/chat_template.h"
#include "wisp/model.h"
#include "wisp/session.h"
#include "wisp/tokenizer.h"
#include "wisp/wisp.h"

// A model with the tokenizer every call on it needs. Shared with the sessions made from it, so a
// model handle may be freed before them.
namespace wisp::capi {
struct LoadedModel {
  std::shared_ptr<const Model> model;
  Tokenizer tokenizer;
  std::optional<ChatTemplate> chat_template;  // parsed on the first wisp_chat_render
};
}  // namespace wisp::capi

struct wisp_model {
  std::shared_ptr<wisp::capi::LoadedModel> loaded;
};

struct wisp_session {
  std::shared_ptr<wisp::capi::LoadedModel> loaded;
  wisp::Session session;
  // The last generated token, not yet evaluated (wisp::generate leaves it to the caller): fed in
  // front of the next prompt so that the session holds the whole text.
  std::optional<wisp::TokenId> pending;
  // Raised by wisp_session_cancel (any thread, or a signal handler: a lock-free store), checked
  // by the generation before each token, cleared when a generation call returns.
  std::atomic<bool> cancel{false};
};

namespace wisp::capi {

// Records `message` as the calling thread's last error and returns `status`.
wisp_status fail(wisp_status status, const std::string& message);

// Runs `body` (which returns a wisp_status) and turns any exception into a status and a message:
// ChatTemplateError -> WISP_ERR_TEMPLATE, wisp::Error -> `on_error` (or WISP_ERR_CONTEXT_FULL when
// the message says the context is full), anything else -> WISP_ERR_INTERNAL.
template <class Body>
wisp_status guarded(wisp_status on_error, Body&& body) noexcept {
  try {
    return std::forward<Body>(body)();
  } catch (const ChatTemplateError& e) {
    return fail(WISP_ERR_TEMPLATE, e.what());
  } catch (const Error& e) {
    const std::string what = e.what();
    return fail(what.find("context full") != std::string::npos ? WISP_ERR_CONTEXT_FULL : on_error, what);
  } catch (const std::bad_alloc&) {
    return fail(WISP_ERR_INTERNAL, "out of memory");
  } catch (const std::exception& e) {
    return fail(WISP_ERR_INTERNAL, e.what());
  } catch (...) {
    return fail(WISP_ERR_INTERNAL, "unknown error");
  }
}

// Copies `text` into the caller's buffer under the buffer rules of wisp.h.
wisp_status copy_out(const std::string& text, char* buf, std::size_t cap, std::size_t* n_out);

}  // namespace wisp::capi

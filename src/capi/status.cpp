// The C API's version, status names and per-thread last error.
#include <cstring>
#include <string>

#include "capi/capi_internal.h"

namespace wisp::capi {

namespace {
// One message per thread, as errno: a C caller reads it right after the failed call, and two
// threads failing at once must not overwrite each other's reason.
thread_local std::string t_last_error;
}  // namespace

wisp_status fail(wisp_status status, const std::string& message) {
  try {
    t_last_error = message;
  } catch (...) {
    // No memory for the message: keep the status, lose the text.
  }
  return status;
}

wisp_status copy_out(const std::string& text, char* buf, std::size_t cap, std::size_t* n_out) {
  if (n_out == nullptr) return fail(WISP_ERR_INVALID_ARGUMENT, "n_out is NULL");
  *n_out = text.size();
  if (cap < text.size() + 1 || buf == nullptr) {
    return fail(WISP_ERR_BUFFER_TOO_SMALL, "the text is " + std::to_string(text.size()) + " bytes; the buffer needs " +
                                               std::to_string(text.size() + 1) + " with the NUL, got " +
                                               std::to_string(buf == nullptr ? 0 : cap));
  }
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  return WISP_OK;
}

}  // namespace wisp::capi

extern "C" {

const char* wisp_version(void) { return WISP_VERSION_STRING; }

const char* wisp_last_error(void) { return wisp::capi::t_last_error.c_str(); }

const char* wisp_status_name(wisp_status status) {
  switch (status) {
    case WISP_OK: return "ok";
    case WISP_ERR_INVALID_ARGUMENT: return "invalid argument";
    case WISP_ERR_LOAD: return "load failed";
    case WISP_ERR_TOKENIZE: return "tokenize failed";
    case WISP_ERR_CONTEXT_FULL: return "context full";
    case WISP_ERR_BUFFER_TOO_SMALL: return "buffer too small";
    case WISP_ERR_TEMPLATE: return "chat template failed";
    case WISP_ERR_INTERNAL: return "internal error";
  }
  return "unknown status";
}

}  // extern "C"

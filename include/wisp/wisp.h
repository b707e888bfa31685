/* wisp's C API: load a GGUF model, tokenize, render a chat, and stream a completion, from C or
 * from any language with a C FFI (the Python package in python/ uses it through ctypes).
 *
 *   wisp_model* model;
 *   if (wisp_model_load("model.gguf", &model) != WISP_OK) { fprintf(stderr, "%s\n", wisp_last_error()); ... }
 *   wisp_session* session;
 *   wisp_session_params sp = wisp_session_default_params();
 *   wisp_session_create(model, &sp, &session);
 *   wisp_generate_params gp = wisp_generate_default_params();
 *   gp.n_predict = 32;
 *   gp.sampler.temperature = 0;
 *   wisp_generate(session, "The capital of France is", &gp, on_text, user_data, NULL);
 *   wisp_session_free(session);
 *   wisp_model_free(model);
 *
 * Rules of the boundary:
 * - Every call that can fail returns a wisp_status; WISP_OK is 0. On failure the reason (naming the
 *   file, token or setting at fault) is kept for the calling thread and read with
 *   wisp_last_error(). No C++ exception ever leaves a wisp_* function.
 * - Handles are opaque. A session keeps its model alive: a model may be freed before its sessions.
 * - Output text is written into caller buffers: each such call stores the size it needs (without
 *   the terminating NUL) in *n_out and returns WISP_ERR_BUFFER_TOO_SMALL when `cap` is too small,
 *   so a caller may ask with cap = 0 first. Token lists work the same way, counted in tokens.
 * - A handle must not be used from two threads at once; distinct sessions may run on distinct
 *   threads.
 */
#ifndef WISP_WISP_H
#define WISP_WISP_H

#include <stddef.h>
#include <stdint.h>

#include "wisp/version.h"

#if defined(__GNUC__)
#define WISP_API __attribute__((visibility("default")))
#else
#define WISP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef enum wisp_status {
  WISP_OK = 0,
  WISP_ERR_INVALID_ARGUMENT = 1, /* a null handle or pointer, a setting out of range */
  WISP_ERR_LOAD = 2,             /* the model file is missing, not GGUF, or not a model wisp runs */
  WISP_ERR_TOKENIZE = 3,         /* text that is not UTF-8, a token id outside the vocabulary */
  WISP_ERR_CONTEXT_FULL = 4,     /* the prompt does not fit the session's context */
  WISP_ERR_BUFFER_TOO_SMALL = 5, /* *n_out holds the size needed */
  WISP_ERR_TEMPLATE = 6,         /* the chat template failed to parse or to render these messages */
  WISP_ERR_INTERNAL = 7          /* anything else (out of memory, a failed evaluation) */
} wisp_status;

/* Why generation stopped. */
typedef enum wisp_stop_reason {
  WISP_STOP_LENGTH = 0,       /* n_predict tokens */
  WISP_STOP_END_OF_TURN = 1,  /* the model produced an end-of-generation token */
  WISP_STOP_CANCELLED = 2,    /* wisp_session_cancel, from another thread */
  WISP_STOP_CONTEXT_FULL = 3, /* no room for another token */
  WISP_STOP_CALLBACK = 4      /* the token callback returned nonzero */
} wisp_stop_reason;

typedef struct wisp_model wisp_model;
typedef struct wisp_session wisp_session;

/* The library's version, "MAJOR.MINOR.PATCH" (WISP_VERSION_STRING of the build). */
WISP_API const char* wisp_version(void);
/* The message of the calling thread's last failed call ("" if none yet). Valid until its next
 * failed call. */
WISP_API const char* wisp_last_error(void);
/* A fixed English name for a status ("ok", "buffer too small", ...). */
WISP_API const char* wisp_status_name(wisp_status status);

/* ---- model ---- */
WISP_API wisp_status wisp_model_load(const char* path, wisp_model** out);
WISP_API void wisp_model_free(wisp_model* model); /* NULL is allowed */
WISP_API int64_t wisp_model_n_vocab(const wisp_model* model);
WISP_API int64_t wisp_model_n_ctx_train(const wisp_model* model);
/* "llama", "qwen2", "gemma3"; the string lives as long as the model. */
WISP_API const char* wisp_model_architecture(const wisp_model* model);

/* ---- tokenizer ---- */
WISP_API int32_t wisp_token_bos(const wisp_model* model); /* -1 when the model has none */
WISP_API int32_t wisp_token_eos(const wisp_model* model);
WISP_API int wisp_token_is_eog(const wisp_model* model, int32_t token); /* 1: ends generation */
/* Text (len bytes, UTF-8) to token ids. add_special: BOS/EOS as the model asks for them;
 * parse_special: "<|im_start|>" and the like become their tokens (leave 0 for untrusted text). */
WISP_API wisp_status wisp_tokenize(const wisp_model* model, const char* text, size_t len, int add_special,
                                   int parse_special, int32_t* tokens, size_t cap, size_t* n_out);
/* Token ids back to text; render_special: control tokens print their text instead of "". */
WISP_API wisp_status wisp_detokenize(const wisp_model* model, const int32_t* tokens, size_t n_tokens,
                                     int render_special, char* buf, size_t cap, size_t* n_out);

/* ---- chat template ---- */
typedef struct wisp_chat_message {
  const char* role; /* "system", "user", "assistant" */
  const char* content;
} wisp_chat_message;

/* Renders the messages with the model's chat template (its GGUF's, or the built-in one its
 * vocabulary points to), BOS/EOS text filled in; add_generation_prompt opens the assistant's turn.
 * Tokenize the result with add_special = 0, parse_special = 1. */
WISP_API wisp_status wisp_chat_render(const wisp_model* model, const wisp_chat_message* messages, size_t n_messages,
                                      int add_generation_prompt, char* buf, size_t cap, size_t* n_out);

/* ---- session and generation ---- */
typedef struct wisp_session_params {
  size_t n_ctx;        /* most tokens the session holds; 0: min(training context, 4096) */
  int n_threads;       /* 0: every hardware thread */
  int exact;           /* nonzero: llama.cpp's float orders (logits equal llama.cpp's) */
  const char* kv_type; /* "f16" (default when NULL), "f32", "q8_0", "q4" */
} wisp_session_params;

typedef struct wisp_sampler_params {
  float temperature; /* <= 0: greedy */
  int top_k;         /* <= 0: off */
  float top_p;       /* 1: off */
  float min_p;       /* 0: off */
  float repeat_penalty;
  size_t penalty_last_n;
  uint64_t seed;
} wisp_sampler_params;

typedef struct wisp_generate_params {
  size_t n_predict;  /* most tokens to generate; 0: until end of turn or context full */
  int add_special;   /* tokenize the prompt with BOS as the model asks (default 1) */
  int parse_special; /* special-token text in the prompt becomes tokens (default 1) */
  wisp_sampler_params sampler;
} wisp_generate_params;

typedef struct wisp_generate_result {
  size_t n_prompt;    /* prompt tokens evaluated */
  size_t n_generated; /* tokens sampled, an end-of-turn token included */
  wisp_stop_reason stop;
  double prompt_seconds;
  double generate_seconds;
} wisp_generate_result;

/* Called with each printable piece of the completion (complete UTF-8, not NUL-terminated) as it
 * is generated. Return 0 to go on, nonzero to stop. */
typedef int (*wisp_token_callback)(const char* text, size_t len, void* user_data);

/* Called once per sampled token, in order, with its id and the text it completes (complete UTF-8,
 * not NUL-terminated; len 0 while a character's bytes are still incomplete, and for the
 * end-of-turn token, which is reported too). Return 0 to go on, nonzero to stop. */
typedef int (*wisp_token_id_callback)(int32_t token, const char* text, size_t len, void* user_data);

WISP_API wisp_session_params wisp_session_default_params(void);
/* llama.cpp's defaults (temperature 0.8, top_k 40, top_p 0.95, min_p 0.05, seed 0). */
WISP_API wisp_generate_params wisp_generate_default_params(void);

WISP_API wisp_status wisp_session_create(wisp_model* model, const wisp_session_params* params, wisp_session** out);
WISP_API void wisp_session_free(wisp_session* session); /* NULL is allowed */
/* Forgets every token: the next generation starts from an empty context. */
WISP_API void wisp_session_reset(wisp_session* session);
WISP_API size_t wisp_session_n_past(const wisp_session* session);
WISP_API size_t wisp_session_n_ctx(const wisp_session* session);

/* Continues the session with `prompt` (tokenized per params; at least one token) and streams the
 * completion through `callback` (may be NULL). The session then holds the prompt and the
 * completion, so a later call continues the same text; wisp_session_reset starts afresh.
 * `result` may be NULL. A NULL `params` means wisp_generate_default_params(). */
WISP_API wisp_status wisp_generate(wisp_session* session, const char* prompt, const wisp_generate_params* params,
                                   wisp_token_callback callback, void* user_data, wisp_generate_result* result);
/* As wisp_generate, streamed one call per sampled token with its id (for callers that keep the
 * token sequence: to count, log or replay it). The text of all calls joined is wisp_generate's. */
WISP_API wisp_status wisp_generate_tokens(wisp_session* session, const char* prompt, const wisp_generate_params* params,
                                          wisp_token_id_callback callback, void* user_data,
                                          wisp_generate_result* result);
/* Asks the generation on `session` to stop: callable from any thread, and from a signal handler
 * (it only sets the session's atomic flag). The generation checks the flag before each token and
 * returns WISP_OK with stop WISP_STOP_CANCELLED; the text streamed so far stays in the session.
 * The flag is cleared when a generation call returns (and by wisp_session_reset), so a request
 * made while none runs stops the next call before its first token. NULL is allowed. */
WISP_API void wisp_session_cancel(wisp_session* session);

#ifdef __cplusplus
}
#endif

#endif /* WISP_WISP_H */

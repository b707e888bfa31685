/* The C API (include/wisp/wisp.h), compiled as C: versions, errors and their messages, the buffer
 * protocol, tokenization and a streamed greedy completion (as text, and as token ids with their
 * text) on the real SmolLM2 model, both checked against llama.cpp (tests/golden/capi/smollm2_greedy.h, from
 * scripts/gen_golden_capi.py), and cancellation from another thread. Usage: test_capi MODEL.gguf */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wisp/wisp.h"
#include "../golden/capi/smollm2_greedy.h"

static int failures = 0;

#define CHECK(cond)                                                            \
  do {                                                                         \
    if (!(cond)) {                                                             \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++failures;                                                              \
    }                                                                          \
  } while (0)

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

typedef struct {
  char text[4096];
  size_t len;
  int calls;
  int stop_after; /* stop (return 1) at this call; 0: never */
} Stream;

static int on_text(const char* text, size_t len, void* user) {
  Stream* s = (Stream*)user;
  if (s->len + len < sizeof(s->text)) {
    memcpy(s->text + s->len, text, len);
    s->len += len;
    s->text[s->len] = '\0';
  }
  ++s->calls;
  return s->stop_after != 0 && s->calls >= s->stop_after;
}

typedef struct {
  int ids[64];
  size_t n;
  Stream text;
} TokenStream;

static int on_token(int32_t token, const char* text, size_t len, void* user) {
  TokenStream* s = (TokenStream*)user;
  if (s->n < N_ELEMS(s->ids)) s->ids[s->n] = token;
  ++s->n;
  return on_text(text, len, &s->text);
}

/* Cancellation from another thread: the first token's callback lets the canceller thread go and
 * waits (up to 30 s) until it has called wisp_session_cancel, so the generation must stop at the
 * check before its second token whatever the scheduling. */
typedef struct {
  wisp_session* session;
  atomic_int started;   /* the first token has arrived */
  atomic_int cancelled; /* wisp_session_cancel has returned */
  int calls;
} CancelRun;

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void* canceller(void* user) {
  CancelRun* c = (CancelRun*)user;
  for (int i = 0; i < 30000 && !atomic_load(&c->started); ++i) sleep_ms(1);
  wisp_session_cancel(c->session);
  atomic_store(&c->cancelled, 1);
  return NULL;
}

static int on_text_then_wait(const char* text, size_t len, void* user) {
  (void)text;
  (void)len;
  CancelRun* c = (CancelRun*)user;
  if (++c->calls == 1) {
    atomic_store(&c->started, 1);
    for (int i = 0; i < 30000 && !atomic_load(&c->cancelled); ++i) sleep_ms(1);
  }
  return 0;
}

static void test_cancel(wisp_session* s) {
  wisp_generate_params gp = wisp_generate_default_params();
  gp.n_predict = 64;
  gp.sampler.temperature = 0;
  wisp_generate_result r;

  wisp_session_reset(s);
  CancelRun c = {.session = s};
  atomic_init(&c.started, 0);
  atomic_init(&c.cancelled, 0);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, canceller, &c) == 0);
  CHECK(wisp_generate(s, GOLDEN_PROMPT, &gp, on_text_then_wait, &c, &r) == WISP_OK);
  pthread_join(th, NULL);
  CHECK(r.stop == WISP_STOP_CANCELLED);
  CHECK(r.n_generated == 1);
  CHECK(c.calls == 1);

  /* A request made between calls stops the next one before its first token, and is consumed by
   * it: the call after that runs to its length. */
  wisp_session_reset(s);
  wisp_session_cancel(s);
  Stream none = {0};
  CHECK(wisp_generate(s, GOLDEN_PROMPT, &gp, on_text, &none, &r) == WISP_OK);
  CHECK(r.stop == WISP_STOP_CANCELLED);
  CHECK(r.n_generated == 0);
  CHECK(none.calls == 0);
  gp.n_predict = 3;
  CHECK(wisp_generate(s, " Paris", &gp, NULL, NULL, &r) == WISP_OK);
  CHECK(r.stop == WISP_STOP_LENGTH);
  CHECK(r.n_generated == 3);
  wisp_session_cancel(NULL); /* allowed */
}

static void test_version(void) {
  char expect[64];
  snprintf(expect, sizeof(expect), "%d.%d.%d", WISP_VERSION_MAJOR, WISP_VERSION_MINOR, WISP_VERSION_PATCH);
  CHECK(strcmp(wisp_version(), expect) == 0);
  CHECK(strcmp(WISP_VERSION_STRING, expect) == 0);
  CHECK(strcmp(wisp_status_name(WISP_OK), "ok") == 0);
}

static void test_errors(void) {
  wisp_model* m = (wisp_model*)1;
  CHECK(wisp_model_load("/nonexistent/model.gguf", &m) == WISP_ERR_LOAD);
  CHECK(m == NULL);
  CHECK(strstr(wisp_last_error(), "/nonexistent/model.gguf") != NULL);
  CHECK(wisp_model_load(NULL, &m) == WISP_ERR_INVALID_ARGUMENT);
  CHECK(strlen(wisp_last_error()) > 0);
  CHECK(wisp_generate(NULL, "x", NULL, NULL, NULL, NULL) == WISP_ERR_INVALID_ARGUMENT);
  CHECK(wisp_generate_tokens(NULL, "x", NULL, NULL, NULL, NULL) == WISP_ERR_INVALID_ARGUMENT);
  wisp_model_free(NULL);
  wisp_session_free(NULL);
}

static void test_model(const char* path) {
  wisp_model* m = NULL;
  wisp_status st = wisp_model_load(path, &m);
  if (st != WISP_OK) {
    fprintf(stderr, "cannot load %s: %s\n", path, wisp_last_error());
    ++failures;
    return;
  }
  CHECK(wisp_model_n_vocab(m) == 49152);
  CHECK(strcmp(wisp_model_architecture(m), "llama") == 0);

  /* Tokenize: ask for the size first, then fill; ids as llama.cpp's. */
  size_t n = 0;
  CHECK(wisp_tokenize(m, GOLDEN_PROMPT, strlen(GOLDEN_PROMPT), 1, 1, NULL, 0, &n) == WISP_ERR_BUFFER_TOO_SMALL);
  CHECK(n == N_ELEMS(GOLDEN_PROMPT_IDS));
  int32_t ids[64];
  CHECK(wisp_tokenize(m, GOLDEN_PROMPT, strlen(GOLDEN_PROMPT), 1, 1, ids, 64, &n) == WISP_OK);
  CHECK(n == N_ELEMS(GOLDEN_PROMPT_IDS));
  for (size_t i = 0; i < n && i < N_ELEMS(GOLDEN_PROMPT_IDS); ++i) CHECK(ids[i] == GOLDEN_PROMPT_IDS[i]);
  CHECK(wisp_tokenize(m, "\xff", 1, 1, 1, ids, 64, &n) == WISP_ERR_TOKENIZE); /* not UTF-8 */
  CHECK(strstr(wisp_last_error(), "UTF-8") != NULL);

  /* Detokenize llama.cpp's greedy ids: its text. */
  char buf[512];
  size_t len = 0;
  CHECK(wisp_detokenize(m, (const int32_t*)GOLDEN_GENERATED_IDS, N_ELEMS(GOLDEN_GENERATED_IDS), 0, buf, 4, &len) ==
        WISP_ERR_BUFFER_TOO_SMALL);
  CHECK(len == strlen(GOLDEN_TEXT));
  CHECK(wisp_detokenize(m, (const int32_t*)GOLDEN_GENERATED_IDS, N_ELEMS(GOLDEN_GENERATED_IDS), 0, buf, sizeof(buf),
                        &len) == WISP_OK);
  CHECK(strcmp(buf, GOLDEN_TEXT) == 0);
  int32_t bad = 1 << 30;
  CHECK(wisp_detokenize(m, &bad, 1, 0, buf, sizeof(buf), &len) == WISP_ERR_TOKENIZE);

  /* Chat: the template's markers around the messages. */
  wisp_chat_message msgs[2] = {{"system", "Be brief."}, {"user", "Hi"}};
  CHECK(wisp_chat_render(m, msgs, 2, 1, buf, sizeof(buf), &len) == WISP_OK);
  CHECK(strstr(buf, "<|im_start|>system\nBe brief.<|im_end|>") != NULL);
  CHECK(len >= strlen("<|im_start|>assistant\n") &&
        strcmp(buf + len - strlen("<|im_start|>assistant\n"), "<|im_start|>assistant\n") == 0);

  /* A streamed greedy completion with llama.cpp's numerics: llama.cpp's text. */
  wisp_session_params sp = wisp_session_default_params();
  sp.n_ctx = 256;
  sp.n_threads = 2;
  sp.exact = 1;
  wisp_session* s = NULL;
  CHECK(wisp_session_create(m, &sp, &s) == WISP_OK);
  wisp_model_free(m); /* the session keeps the model */
  if (s == NULL) return;
  wisp_generate_params gp = wisp_generate_default_params();
  gp.n_predict = GOLDEN_N_PREDICT;
  gp.sampler.temperature = 0;
  Stream out = {0};
  wisp_generate_result r;
  CHECK(wisp_generate(s, GOLDEN_PROMPT, &gp, on_text, &out, &r) == WISP_OK);
  CHECK(strcmp(out.text, GOLDEN_TEXT) == 0);
  CHECK(out.calls > 1); /* streamed, not delivered whole */
  CHECK(r.n_prompt == N_ELEMS(GOLDEN_PROMPT_IDS));
  CHECK(r.n_generated == GOLDEN_N_PREDICT);
  CHECK(r.stop == WISP_STOP_LENGTH);
  CHECK(wisp_session_n_past(s) == N_ELEMS(GOLDEN_PROMPT_IDS) + GOLDEN_N_PREDICT);

  /* The callback stops it; the session starts afresh after a reset and repeats the text. */
  wisp_session_reset(s);
  CHECK(wisp_session_n_past(s) == 0);
  Stream two = {0};
  two.stop_after = 2;
  CHECK(wisp_generate(s, GOLDEN_PROMPT, &gp, on_text, &two, &r) == WISP_OK);
  CHECK(r.stop == WISP_STOP_CALLBACK);
  CHECK(two.calls == 2);
  CHECK(strncmp(two.text, GOLDEN_TEXT, two.len) == 0);

  /* With the token ids: one call per sampled token, llama.cpp's ids, the same text; a nonzero
   * return stops it at that token. */
  wisp_session_reset(s);
  TokenStream ts = {0};
  CHECK(wisp_generate_tokens(s, GOLDEN_PROMPT, &gp, on_token, &ts, &r) == WISP_OK);
  CHECK(ts.n == N_ELEMS(GOLDEN_GENERATED_IDS));
  for (size_t i = 0; i < ts.n && i < N_ELEMS(GOLDEN_GENERATED_IDS); ++i) CHECK(ts.ids[i] == GOLDEN_GENERATED_IDS[i]);
  CHECK(strcmp(ts.text.text, GOLDEN_TEXT) == 0);
  CHECK(r.n_generated == GOLDEN_N_PREDICT);
  wisp_session_reset(s);
  TokenStream three = {0};
  three.text.stop_after = 3;
  CHECK(wisp_generate_tokens(s, GOLDEN_PROMPT, &gp, on_token, &three, &r) == WISP_OK);
  CHECK(r.stop == WISP_STOP_CALLBACK);
  CHECK(three.n == 3);
  CHECK(r.n_generated == 3);
  for (size_t i = 0; i < 3; ++i) CHECK(three.ids[i] == GOLDEN_GENERATED_IDS[i]);

  /* Bad settings and a prompt over the context are errors, not crashes. */
  gp.sampler.top_p = 2.0f;
  CHECK(wisp_generate(s, "x", &gp, NULL, NULL, NULL) == WISP_ERR_INVALID_ARGUMENT);
  CHECK(strstr(wisp_last_error(), "top_p") != NULL);
  gp.sampler.top_p = 0.95f;
  char* longp = malloc(4001);
  for (int i = 0; i < 4000; ++i) longp[i] = (i % 2) ? ' ' : 'a';
  longp[4000] = '\0';
  CHECK(wisp_generate(s, longp, &gp, NULL, NULL, NULL) == WISP_ERR_CONTEXT_FULL);
  free(longp);
  test_cancel(s);
  wisp_session_free(s);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.gguf\n", argv[0]);
    return 2;
  }
  test_version();
  test_errors();
  test_model(argv[1]);
  if (failures)
    fprintf(stderr, "%d check(s) failed\n", failures);
  else
    printf("test_capi: all checks passed\n");
  return failures ? 1 : 0;
}
